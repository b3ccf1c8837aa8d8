/**
 * ICAP scanning end to end, through HTTP against a real `ferry serve`
 * process: a rule on every upload runs an ICAP action (type 17) with
 * `execute_before_file_publish` against c-icap's antivirus service (virus_scan
 * over a private clamd whose only signature is the EICAR one:
 * scripts/servers/start-icap.sh), with `block_action` 3 (quarantine), and as
 * its failure action an IMAP action (type 16) that appends an alert naming
 * the threat to a folder of the private Dovecot (scripts/servers/start-dovecot.sh),
 * read back with imapflow. An EICAR upload is refused (the client gets the
 * error), never listed, never downloadable, quarantined byte for byte, and
 * alerted; a clean upload goes through untouched and alerts nothing.
 */
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ImapFlow } from 'imapflow';
import { simpleParser } from 'mailparser';
import { call, serve, token, writeConfig, ADMIN } from './helpers/server.js';

const EICAR = Buffer.from('X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*', 'latin1');
const THREAT = 'Eicar-Test-Signature-Local.UNOFFICIAL';
const IMAP = { host: '127.0.0.1', port: 1143, user: 'ferry@imap.test', pass: 'ferry-imap-pass' };

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
const down = [
  !(await listening(11344)) && 'c-icap (127.0.0.1:11344, scripts/servers/start-icap.sh)',
  !(await listening(IMAP.port)) && 'dovecot (127.0.0.1:1143, scripts/servers/start-dovecot.sh)',
].filter(Boolean);
if (down.length) {
  const why = `not running: ${down.join(', ')}`;
  if (process.env.CI === 'true') throw new Error(why);
  t.plan(0, why);
  process.exit(0);
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'ferry-e2e-icap-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const config = writeConfig(dir, {
  plugins: ['@ferry/fs-local', '@ferry/action-icap', '@ferry/action-imap'],
  extra: 'event_manager:\n  rules_cache_ttl: 0\n',
});
const server = await serve(config);
t.teardown(() => server.kill());
const base = server.url;
const admin = await token(base, 'admin', ADMIN.username, ADMIN.password);
const api = async (method: string, url: string, body?: unknown) => {
  const r = await call(`${base}${url}`, method, { token: admin, body });
  if (r.status >= 300) throw new Error(`${method} ${url}: ${r.status} ${r.text}`);
  return r;
};

const home = path.join(dir, 'homes', 'scanned');
mkdirSync(home, { recursive: true });
await api('POST', '/api/v2/users', { username: 'scanned', password: 'scanned-password-1', status: 1, home_dir: home, permissions: { '/': ['*'] } });
const user = await token(base, 'user', 'scanned', 'scanned-password-1');
const q = encodeURIComponent;
const asUser = (method: string, url: string, body?: Uint8Array, headers: Record<string, string> = {}) =>
  fetch(`${base}${url}`, { method, headers: { authorization: `Bearer ${user}`, ...headers }, body });
const upload = (p: string, body: Buffer) =>
  asUser('POST', `/api/v2/user/files/upload?path=${q(p)}&mkdir_parents=true`, body, { 'content-type': 'application/octet-stream' });
const listing = async (d: string) => ((await (await asUser('GET', `/api/v2/user/dirs?path=${q(d)}`)).json()) as { name: string }[]).map((e) => e.name);
const quarantineDir = path.join(dir, 'data', 'icap-quarantine', 'scanned');
const quarantined = () => (existsSync(quarantineDir) ? readdirSync(quarantineDir).filter((f) => !f.endsWith('.json')) : []);
const folder = `ferry-e2e-icap-${randomBytes(4).toString('hex')}`;

async function readFolder(): Promise<{ subject: string; text: string; to: string }[]> {
  const c = new ImapFlow({ host: IMAP.host, port: IMAP.port, secure: false, doSTARTTLS: false, auth: { user: IMAP.user, pass: IMAP.pass }, logger: false });
  await c.connect();
  try {
    if (!(await c.list()).some((m) => m.path === folder)) return [];
    const lock = await c.getMailboxLock(folder);
    try {
      const out: { subject: string; text: string; to: string }[] = [];
      // FETCH 1:* of an empty folder is a BAD command ("Invalid messageset")
      if (c.mailbox === false || c.mailbox.exists === 0) return out;
      for await (const m of c.fetch('1:*', { source: true })) {
        if (!m.source) continue;
        const p = await simpleParser(m.source);
        out.push({ subject: p.subject ?? '', text: p.text ?? '', to: Array.isArray(p.to) ? '' : (p.to?.text ?? '') });
      }
      return out;
    } finally {
      lock.release();
    }
  } finally {
    await c.logout().catch(() => c.close());
  }
}

t.test('types 16 and 17 are accepted, the rule scans every upload before it is published', async (t) => {
  const scan = await call(`${base}/api/v2/eventactions`, 'POST', {
    token: admin,
    body: {
      name: 'antivirus',
      type: 17,
      options: {
        icap_config: {
          endpoint: 'icap://127.0.0.1:11344/avscan',
          method: 'RESPMOD',
          timeout: 30,
          paths: ['{{.VirtualPath}}'],
          block_action: 3,
          adapt_action: 1,
          failure_policy: 3,
        },
      },
    },
  });
  t.equal(scan.status, 201, scan.text);
  const alert = await call(`${base}/api/v2/eventactions`, 'POST', {
    token: admin,
    body: {
      name: 'virus-alert',
      type: 16,
      options: {
        imap_config: {
          host: IMAP.host,
          port: IMAP.port,
          tls: 0,
          username: IMAP.user,
          password: { status: 'Plain', payload: IMAP.pass },
          email: ['security@example.com'],
          subject: 'Blocked upload {{.VirtualPath}} by {{.Name}}: {{.IcapThreat}}',
          body: 'ICAP outcome {{.IcapOutcome}}, threat {{.IcapThreat}}{{range .IcapScans}}, quarantined as {{.QuarantineFile}}{{end}}',
          target_folder: folder,
        },
      },
    },
  });
  t.equal(alert.status, 201, alert.text);
  const rule = await call(`${base}/api/v2/eventrules`, 'POST', {
    token: admin,
    body: {
      name: 'scan-uploads',
      status: 1,
      trigger: 1,
      conditions: { fs_events: ['upload'] },
      actions: [
        { name: 'antivirus', order: 1, relation_options: { execute_before_file_publish: true } },
        { name: 'virus-alert', order: 2, relation_options: { is_failure_action: true } },
      ],
    },
  });
  t.equal(rule.status, 201, rule.text);
});

t.test('an EICAR upload is refused, never listed nor downloadable, quarantined and alerted', async (t) => {
  const r = await upload('/inbox/eicar.com', EICAR);
  t.equal(r.status, 403, 'the client gets the error');
  t.equal(((await r.json()) as { message: string }).message, 'rejected by event rule "scan-uploads": action "antivirus" failed');
  t.notOk((await listing('/inbox').catch((): string[] => [])).includes('eicar.com'), 'never listed');
  t.equal((await asUser('GET', `/api/v2/user/files?path=${q('/inbox/eicar.com')}`)).status, 404, 'never downloadable');
  t.notOk(existsSync(path.join(home, 'inbox', 'eicar.com')), 'not on disk');
  const files = quarantined();
  t.equal(files.length, 1, 'quarantined');
  t.same(readFileSync(path.join(quarantineDir, files[0]!)), EICAR, 'byte for byte');
  t.match(JSON.parse(readFileSync(path.join(quarantineDir, `${files[0]}.json`), 'utf8')), {
    username: 'scanned',
    path: '/inbox/eicar.com',
    outcome: 'blocked',
    threat: THREAT,
  });
  // the failure action runs in the background: wait for the message
  let mails: Awaited<ReturnType<typeof readFolder>> = [];
  for (let i = 0; i < 100 && !mails.length; i++) {
    mails = await readFolder();
    if (!mails.length) await new Promise((res) => setTimeout(res, 100));
  }
  t.equal(mails.length, 1, 'one alert appended');
  t.equal(mails[0]?.subject, `Blocked upload /inbox/eicar.com by scanned: ${THREAT}`);
  t.match(mails[0]?.text, `ICAP outcome blocked, threat ${THREAT}, quarantined as scanned/${files[0]}`);
  t.match(mails[0]?.to, 'security@example.com');
});

t.test('a clean upload goes through untouched', async (t) => {
  const body = randomBytes(3 * 1024 * 1024);
  const r = await upload('/inbox/report.bin', body);
  t.equal(r.status, 201, await r.text());
  t.ok((await listing('/inbox')).includes('report.bin'));
  const d = await asUser('GET', `/api/v2/user/files?path=${q('/inbox/report.bin')}`);
  t.equal(d.status, 200);
  t.ok(Buffer.from(await d.arrayBuffer()).equals(body), 'downloaded byte for byte');
  t.equal(quarantined().length, 1, 'nothing more quarantined');
  await new Promise((res) => setTimeout(res, 300));
  t.equal((await readFolder()).length, 1, 'no alert for a clean file');
});
