import type { Readable } from 'node:stream';
import type { ActionContext, ActionTypeDef, PendingUpload, PluginHost, UserFiles } from '@ferry/core';
import { normalizeVirtualPath } from '@ferry/core';
import { FileAction, icapOptionsSchema, type IcapActionOptions } from './config.schema.js';
import { contentTypeOf } from './content-type.js';
import type { IcapAgent, ScanResult } from './icap/client.js';
import { parseIcapUrl, type IcapEndpoint } from './icap/endpoint.js';
import { quarantineFile } from './quarantine.js';
import { overwriteAtomically } from './storage.js';

export type ScanOutcome = 'clean' | 'blocked' | 'adapted' | 'failed';
/** What was done with the file: kept as it is, deleted, quarantined, overwritten with the adapted content, or (a pending upload) rejected. */
export type Disposition = 'kept' | 'deleted' | 'quarantined' | 'overwritten' | 'rejected';

/** One scanned path, as the action's outputs list it (`.IcapScans`). */
export interface IcapScanOutput {
  Username: string;
  Path: string;
  Outcome: ScanOutcome;
  /** Threat or violation name of a block ('' otherwise). */
  Threat: string;
  Disposition: Disposition;
  /** File name inside the quarantine directory ('' when not quarantined). */
  QuarantineFile: string;
  /** Why the scan failed, or why the disposition could not be applied. */
  Error: string;
  Size: number;
}

/** Worst first: the outcome the action reports as `.IcapOutcome`. */
const SEVERITY: ScanOutcome[] = ['blocked', 'failed', 'adapted', 'clean'];

export interface IcapActionDeps {
  host: PluginHost;
  agent: IcapAgent;
  quarantineDir: string;
}

/** Users whose files the paths name: the event's user, or for scheduled and on-demand rules those matching the rule's conditions. */
async function targetUsers(ctx: ActionContext, host: PluginHost): Promise<string[]> {
  if (ctx.trigger === 3 || ctx.trigger === 6) return (await host.accounts.users({ conditions: ctx.conditions })).map((u) => u.username);
  return ctx.username ? [ctx.username] : [];
}

interface Source {
  size: number;
  open(): Promise<Readable>;
  /** The pending upload of a before-publish run: it cannot be changed, only rejected. */
  pending?: PendingUpload;
  /** Otherwise the user's files, where the file is. */
  files?: UserFiles;
}

/**
 * Type 17: sends files to an ICAP service (RFC 3507) and acts on the answer.
 * A block is a failure of the action (a pending upload is rejected); an
 * adaptation is applied per adapt_action; a service failure follows
 * failure_policy, the action failing unless the policy is ignore.
 */
export function icapAction(deps: IcapActionDeps): ActionTypeDef<IcapActionOptions> {
  return {
    type: 17,
    key: 'icap',
    optionsKey: 'icap_config',
    optionsSchema: icapOptionsSchema,
    templateFields: ['paths[]'],
    triggers: [1, 2, 3, 6, 7],
    providerObjects: ['user'],
    create: (o) => ({ execute: (ctx) => new IcapRun(deps, o, ctx).run() }),
  };
}

class IcapRun {
  private readonly ep: IcapEndpoint;
  private readonly results: IcapScanOutput[] = [];
  private readonly errors: string[] = [];

  constructor(
    private readonly deps: IcapActionDeps,
    private readonly o: IcapActionOptions,
    private readonly ctx: ActionContext,
  ) {
    this.ep = parseIcapUrl(o.endpoint);
  }

  private outputs(): Record<string, unknown> {
    const worst = SEVERITY.find((s) => this.results.some((r) => r.Outcome === s)) ?? 'clean';
    return {
      IcapScans: this.results,
      IcapOutcome: worst,
      IcapThreat: this.results.find((r) => r.Threat)?.Threat ?? '',
    };
  }

  async run(): Promise<{ outputs: Record<string, unknown> }> {
    const users = await targetUsers(this.ctx, this.deps.host);
    if (!users.length) throw new Error('no user to scan files for: the event concerns no user and the rule selects none');
    for (const username of users) await this.runUser(username);
    if (this.errors.length) throw Object.assign(new Error(this.errors.join('; ')), { outputs: this.outputs() });
    return { outputs: this.outputs() };
  }

  private async runUser(username: string): Promise<void> {
    let storage: UserFiles | undefined;
    try {
      for (const raw of this.o.paths) {
        if (this.ctx.signal.aborted) throw new Error('aborted: the server is stopping');
        const out: IcapScanOutput = {
          Username: username,
          Path: raw,
          Outcome: 'failed',
          Threat: '',
          Disposition: 'kept',
          QuarantineFile: '',
          Error: '',
          Size: 0,
        };
        this.results.push(out);
        let source: Source | undefined;
        try {
          out.Path = normalizeVirtualPath(raw);
          source = await this.source(username, out.Path, async () => (storage ??= await this.deps.host.files.open(username)));
          out.Size = source.size;
          await this.scanOne(out, source);
        } catch (err) {
          // a pending upload the action fails on is refused by the core: it never becomes visible
          if (source?.pending) out.Disposition = 'rejected';
          out.Error ||= (err as Error).message;
          this.errors.push(out.Error.startsWith(`${out.Path}:`) ? out.Error : `${out.Path}: ${out.Error}`);
        }
        this.log(out);
      }
    } finally {
      await storage?.close();
    }
  }

  private async source(username: string, vpath: string, storage: () => Promise<UserFiles>): Promise<Source> {
    const pending = this.ctx.file?.pending;
    const eventPath = typeof this.ctx.params.VirtualPath === 'string' ? this.ctx.params.VirtualPath : undefined;
    if (pending && username === this.ctx.username && eventPath && normalizeVirtualPath(eventPath) === vpath) {
      return { size: pending.size, open: () => pending.openRead(), pending };
    }
    const files = await storage();
    const info = await files.stat(vpath, { signal: this.ctx.signal });
    if (info.isDir) throw new Error('is a directory: ICAP scans files');
    return { size: info.size, open: () => files.openRead(vpath, { signal: this.ctx.signal }), files };
  }

  private async scanOne(out: IcapScanOutput, src: Source): Promise<void> {
    let result: ScanResult;
    try {
      result = await this.deps.agent.scan(
        this.ep,
        { method: this.o.method, path: out.Path, size: src.size, contentType: contentTypeOf(out.Path), open: src.open },
        this.o.timeout * 1000,
        this.ctx.signal,
      );
    } catch (err) {
      out.Outcome = 'failed';
      out.Error = `ICAP service ${this.ep.url} failed: ${(err as Error).message}`;
      // cancelled (the server is stopping): no verdict, the file is left alone
      if (this.ctx.signal.aborted) throw new Error(out.Error);
      await this.dispose(out, src, this.o.failure_policy);
      // fail-open: an ignored failure leaves the file (and a pending upload goes through)
      if (this.o.failure_policy !== FileAction.Ignore) throw new Error(out.Error);
      return;
    }
    out.Outcome = result.outcome;
    if (result.outcome === 'clean') return;
    if (result.outcome === 'blocked') {
      out.Threat = result.threat;
      await this.dispose(out, src, this.o.block_action);
      throw new Error(`blocked by the ICAP service: ${result.threat}`);
    }
    try {
      if (this.o.adapt_action === FileAction.Overwrite) {
        if (src.pending) throw new Error('the adapted content cannot replace an upload that is not published yet: the upload is rejected');
        await overwriteAtomically(src.files!, out.Path, result.content.open(), result.content.size, this.ctx.signal);
        out.Disposition = 'overwritten';
        out.Size = result.content.size;
      } else await this.dispose(out, src, this.o.adapt_action);
    } finally {
      await result.content.dispose();
    }
    if (src.pending && out.Disposition === 'rejected') throw new Error('the ICAP service modified the upload: rejected');
  }

  /** Applies an ignore / delete / quarantine decision to a file (a pending upload is rejected instead of deleted). */
  private async dispose(out: IcapScanOutput, src: Source, action: number): Promise<void> {
    if (action === FileAction.Ignore) return;
    try {
      if (action === FileAction.Quarantine) {
        out.QuarantineFile = await quarantineFile(
          this.deps.quarantineDir,
          {
            username: out.Username,
            path: out.Path,
            outcome: out.Outcome as 'blocked' | 'adapted' | 'failed',
            threat: out.Threat,
            error: out.Error,
            endpoint: this.ep.url,
            quarantined_at: Date.now(),
            size: src.size,
          },
          src.open,
        );
      }
      if (src.pending) {
        out.Disposition = 'rejected';
        return;
      }
      // the core's user files credit the storage quota
      await src.files!.remove(out.Path, { signal: this.ctx.signal });
      out.Disposition = action === FileAction.Quarantine ? 'quarantined' : 'deleted';
    } catch (err) {
      const what = action === FileAction.Quarantine ? 'quarantine' : 'delete';
      const msg = `cannot ${what} the file: ${(err as Error).message}`;
      out.Error = out.Error ? `${out.Error}; ${msg}` : msg;
      throw new Error(out.Error);
    }
  }

  private log(out: IcapScanOutput): void {
    const fields = {
      username: out.Username,
      path: out.Path,
      outcome: out.Outcome,
      threat: out.Threat || undefined,
      disposition: out.Disposition,
      quarantine_file: out.QuarantineFile || undefined,
      error: out.Error || undefined,
      endpoint: this.ep.url,
    };
    if (out.Outcome === 'clean') this.ctx.logger.info(fields, 'icap scan: clean');
    else if (out.Outcome === 'adapted') this.ctx.logger.info(fields, 'icap scan: adapted');
    else this.ctx.logger.warn(fields, `icap scan: ${out.Outcome}`);
  }
}
