import path from 'node:path';
import type { LoadedRule, TriggerEvent } from './types.js';

/**
 * The template context (`.Name`, `.VirtualPath`, ...) an action of a rule
 * renders against. Documented in docs/event-manager.md; values follow the Go
 * value model of the template engine (plain objects are maps, bigint is an
 * int, Date is a time.Time, null is nil).
 */
export function buildParams(
  ev: TriggerEvent,
  rule: LoadedRule,
  state: { uid: string; outputs: Record<string, unknown>; errors: string[] },
): Record<string, unknown> {
  const p: Record<string, unknown> = {
    Name: '',
    Event: '',
    Status: 1,
    StatusString: 'OK',
    VirtualPath: '',
    VirtualTargetPath: '',
    FsPath: '',
    FsTargetPath: '',
    ObjectName: '',
    ObjectType: '',
    ObjectBaseName: '',
    ExtName: '',
    FileSize: 0,
    Elapsed: 0,
    Protocol: '',
    IP: '',
    Role: '',
    Email: '',
    SessionID: '',
    Bucket: '',
    Endpoint: '',
    IDPFields: {},
    Timestamp: BigInt(Math.round(ev.timestamp)),
    Rule: rule.name,
    Trigger: rule.trigger,
    UID: state.uid,
    Initiator: {
      User: ev.initiator.user ? { Username: ev.initiator.user.username, Role: ev.initiator.user.role, Email: ev.initiator.user.email ?? '' } : null,
      Admin: ev.initiator.user ? null : { Username: ev.initiator.admin?.username ?? '', Role: ev.initiator.admin?.role ?? '' },
    },
    Object: { User: null, Admin: null, Group: null, Share: null, JSON: '' },
    RetentionChecks: [],
    EventReports: [],
    Shares: [],
    Errors: [...state.errors],
    ErrorString: state.errors.join(', '),
  };
  const setPathInfo = (vp: string) => {
    const base = path.posix.basename(vp);
    p.ObjectName = base;
    p.ObjectBaseName = base.includes('.') && !base.startsWith('.') ? base.slice(0, base.lastIndexOf('.')) : base;
    p.ExtName = path.posix.extname(base);
  };
  if (ev.fs) {
    const e = ev.fs;
    Object.assign(p, {
      Name: e.username,
      Event: e.action,
      Status: e.status,
      StatusString: e.status === 1 ? 'OK' : 'KO',
      VirtualPath: e.virtual_path,
      VirtualTargetPath: e.virtual_target_path ?? '',
      FsPath: e.fs_path,
      FsTargetPath: e.fs_target_path ?? '',
      ObjectType: e.object_type ?? (e.action === 'mkdir' || e.action === 'rmdir' ? 'directory' : 'file'),
      FileSize: e.file_size,
      Elapsed: e.elapsed,
      Protocol: e.protocol,
      IP: e.ip,
      Role: e.role ?? '',
      SessionID: e.session_id,
      Bucket: e.bucket ?? '',
      Endpoint: e.endpoint ?? '',
    });
    setPathInfo(e.virtual_path);
  } else if (ev.provider) {
    const e = ev.provider;
    Object.assign(p, {
      Name: e.object_name,
      Event: e.action,
      ObjectName: e.object_name,
      ObjectType: e.object_type,
      IP: e.ip,
      Role: e.role ?? '',
    });
    const obj = p.Object as Record<string, unknown>;
    const key = { user: 'User', admin: 'Admin', group: 'Group', share: 'Share' }[e.object_type as string];
    if (key) obj[key] = e.object_data;
    obj.JSON = JSON.stringify(e.object_data ?? {});
    if (e.object_type === 'user' && typeof e.object_data?.email === 'string') p.Email = e.object_data.email;
  } else if (ev.ipBlocked) {
    Object.assign(p, { Name: ev.ipBlocked.ip, Event: 'IP Blocked', IP: ev.ipBlocked.ip, Protocol: ev.ipBlocked.protocol ?? '' });
  } else if (ev.certificate) {
    const ok = ev.certificate.status !== 'failed';
    Object.assign(p, {
      Name: ev.certificate.names.join(','),
      Event: `Certificate ${ev.certificate.status}`,
      Status: ok ? 1 : 2,
      StatusString: ok ? 'OK' : 'KO',
    });
    if (ev.certificate.error && !state.errors.length) p.ErrorString = ev.certificate.error;
  } else if (ev.idp) {
    const e = ev.idp;
    Object.assign(p, {
      Name: e.username,
      Event: e.kind === 'admin' ? 'IDP login admin' : 'IDP login user',
      IP: e.ip,
      Role: e.role ?? '',
      Email: e.email ?? '',
      IDPFields: e.fields ?? {},
      Protocol: 'OIDC',
    });
  } else if (ev.trigger === 3) {
    Object.assign(p, { Name: rule.name, Event: 'Schedule' });
  } else if (ev.trigger === 6) {
    Object.assign(p, { Name: rule.name, Event: 'On-Demand' });
  }
  for (const [k, v] of Object.entries(state.outputs)) p[k] = v;
  return p;
}
