/**
 * The event action conformance suite every action plugin runs, and
 * `runAction()`, which runs an action the way the server does.
 *
 * Both go through the core's own steps (exported by `@ferry/core/testing`):
 * save-time validation (`validateActionOptions`: the joi schema with the
 * API's 400 text; Plain secrets encrypted; `checkActionTemplates`), then at
 * run time the execution context of the event manager (`buildParams` on a
 * real trigger event and rule), secrets decrypted and templateFields
 * rendered by the Go-template renderer (`prepareActionOptions`), the
 * runner created and executed with `buildActionContext`'s context.
 *
 * ```ts
 * import t from 'tap';
 * import { actionConformance } from '@ferry/testkit';
 *
 * await actionConformance(t, {
 *   name: 'action-http',
 *   def: httpActionDef({ allowLinkLocal: false }, host),
 *   valid: { endpoint: `${base}/ok`, method: 'POST', timeout: 5 },
 *   invalid: [{ options: { endpoint: 'ftp://x', method: 'POST' }, field: 'endpoint' }],
 *   template: { options: (tpl) => ({ endpoint: `${base}/t`, method: 'POST', body: tpl }), observe: async () => server.last().body },
 *   failing: { options: { endpoint: `${base}/500`, method: 'GET' }, reason: /500/ },
 *   hanging: { options: { endpoint: `${base}/hang`, method: 'GET', timeout: 1 }, within: 5000 },
 *   longRunning: { endpoint: `${base}/hang`, method: 'GET', timeout: 60 },
 *   secret: {
 *     options: (password) => ({ endpoint: `${base}/ok`, method: 'GET', username: 'u', password }),
 *     failingOptions: (password) => ({ endpoint: `${base}/500`, method: 'GET', username: 'u', password }),
 *   },
 * });
 * ```
 *
 * Options are the type's options sub-object (`options.<optionsKey>`) as the
 * REST API receives it; a Secret field takes the value the `secret` hooks
 * put there (`{ status: 'Plain', payload }`).
 *
 * Checks, each a `t.test` subtest:
 * - **contract**: type number, key, optionsKey, secretFields and
 *   templateFields well formed (a field is never both secret and templated,
 *   every path names a key of the options schema).
 * - **save-time validation**: `valid` and the template options are accepted;
 *   every `invalid` entry is refused with a message naming its field; an
 *   unparsable template in a templated field is refused.
 * - **templated fields**: a template using `.Name`, `.VirtualPath`,
 *   `.ObjectName`, `.Event`, `.FileSize`, `.Rule`, `.UID` and `toJson` is
 *   rendered from a real upload event (a path with quotes, backslash,
 *   `<&>` and non-ASCII) and `observe()` sees exactly the rendered text.
 * - **failure reporting**: `failing` rejects with an Error whose message
 *   matches `reason`.
 * - **timeout**: `hanging` (the action's own timeout set short) rejects
 *   within `within` ms with a message saying it timed out.
 * - **cancellation**: `longRunning` (a timeout far away) rejects soon after
 *   the execution's AbortSignal is aborted.
 * - **secrets** (skipped for a type without secretFields): with a secret set, a succeeding and a failing run write
 *   neither the secret (nor `forbidden` strings derived from it, e.g. a
 *   basic-auth header) to any log line, nor to the failure message.
 * After the timeout and cancellation cases, `afterStop()` may check that
 * nothing is left behind (processes, sockets).
 */
import crypto from 'node:crypto';
import type { Test } from 'tap';
import { isSecret, RESERVED_ACTION_TYPES, silentLogger, type ActionResult, type ActionTypeDef, type FsEvent, type Logger } from '@ferry/core';
import {
  buildActionContext,
  buildParams,
  captureLogger,
  checkActionTemplates,
  LocalSecretsService,
  mapField,
  normalizeConditions,
  prepareActionOptions,
  validateActionOptions,
  type LoadedRule,
  type TriggerEvent,
} from '@ferry/core/testing';

type Obj = Record<string, unknown>;

const secrets = new LocalSecretsService('action-conformance-master-key');

/** A Secret as the REST API receives it. */
export const plainSecret = (payload: string) => ({ status: 'Plain' as const, payload });

export interface RunActionOptions {
  /** The filesystem event the rule fired on (an upload by default; see `defaultEvent`). */
  event?: Partial<FsEvent>;
  /** Rule name and trigger (default 'conformance-rule', 1). */
  rule?: { name?: string; trigger?: number };
  actionName?: string;
  signal?: AbortSignal;
  logger?: Logger;
  /** Outputs of earlier actions of the execution (`.RetentionChecks`, ...). */
  outputs?: Obj;
}

/** The upload event runAction fires on unless told otherwise. */
export const defaultEvent = (): FsEvent => ({
  timestamp: Date.now() * 1_000_000,
  action: 'upload',
  username: 'conformance-user',
  fs_path: '/srv/conformance-user/in/data.csv',
  virtual_path: '/in/data.csv',
  file_size: 1234,
  elapsed: 12,
  status: 1,
  protocol: 'HTTP',
  ip: '127.0.0.1',
  session_id: 'session-1',
  fs_provider: 0,
  instance_id: 'conformance',
});

/**
 * Saves `options` (the options sub-object) as the action service does:
 * schema validation, Plain secrets encrypted, templates parsed. Throws with
 * the API's 400 text; returns the stored `options` object (`{ [optionsKey]: sub }`).
 */
export async function saveActionOptions(def: ActionTypeDef<any>, options: Obj): Promise<Obj> {
  let sub = validateActionOptions(def, structuredClone(options));
  sub = structuredClone(sub);
  for (const f of def.secretFields ?? []) {
    await mapField(sub, f, async (v) => {
      if (v === undefined || v === null || v === '') return undefined;
      if (isSecret(v) && v.status === 'Plain') return v.payload ? secrets.encrypt(v.payload) : undefined;
      return v;
    });
  }
  await checkActionTemplates(def, sub);
  return def.optionsKey ? { [def.optionsKey]: sub } : {};
}

/**
 * Saves then runs an action exactly as a rule execution does (see the file
 * comment); resolves with the runner's result or rejects with its error.
 */
export async function runAction(def: ActionTypeDef<any>, options: Obj, o: RunActionOptions = {}): Promise<ActionResult | void> {
  const stored = await saveActionOptions(def, options);
  const fs: FsEvent = { ...defaultEvent(), ...o.event };
  const ev: TriggerEvent = {
    trigger: 1,
    timestamp: fs.timestamp,
    fs,
    initiator: { user: { username: fs.username, role: fs.role ?? '' } },
    username: fs.username,
  };
  const rule: LoadedRule = {
    id: 1,
    name: o.rule?.name ?? 'conformance-rule',
    trigger: o.rule?.trigger ?? 1,
    conditions: normalizeConditions({ fs_events: [fs.action] }),
    actions: [],
  };
  const uid = crypto.randomUUID();
  const params = buildParams(ev, rule, { uid, outputs: o.outputs ?? {}, errors: [] });
  const opts = await prepareActionOptions(def, stored, params, (s) => secrets.decrypt(s));
  const runner = await def.create(opts);
  const ctx = buildActionContext({
    rule,
    actionName: o.actionName ?? 'conformance-action',
    ev,
    params,
    uid,
    failed: [],
    signal: o.signal ?? new AbortController().signal,
    logger: o.logger ?? silentLogger(),
  });
  return runner.execute(ctx);
}

export interface ActionConformanceOptions {
  name: string;
  def: ActionTypeDef<any>;
  /** Options that save and run successfully. */
  valid: Obj;
  /** Options refused at save time, each with the field its message must name. */
  invalid: { options: Obj; field: string }[];
  template: {
    /** Valid options with `tpl` in one of the templateFields. */
    options(tpl: string): Obj;
    /** What the action produced from that field in the last run (the body a server received, a file a command wrote...). */
    observe(): Promise<string>;
  };
  /** Options that save but fail at run time; the failure message must match `reason`. */
  failing: { options: Obj; reason: RegExp };
  /** Options whose run hangs until the action's own (short) timeout; it must reject within `within` ms. */
  hanging: { options: Obj; within: number; message?: RegExp };
  /** Options whose run lasts far longer than the test (a long timeout): cancelled through the signal. */
  longRunning: Obj;
  /** Milliseconds after the abort within which the cancelled run must settle (default 3000). */
  cancelWithin?: number;
  /** Required when the type declares secretFields (the case is skipped, with the reason printed, for a type without secrets). */
  secret?: {
    /** Valid, succeeding options carrying `secret` (a Plain Secret) in a secretFields entry. */
    options(secret: { status: 'Plain'; payload: string }): Obj;
    /** The same secret in options that fail at run time. */
    failingOptions(secret: { status: 'Plain'; payload: string }): Obj;
    /** Strings derived from the secret value that must not leak either (e.g. a basic-auth header). */
    forbidden?(value: string): string[];
  };
  /** Checks after the timeout and cancellation cases that nothing was left running. */
  afterStop?(t: Test): Promise<void>;
}

interface JoiDescription {
  type?: string;
  keys?: Record<string, JoiDescription>;
  items?: JoiDescription[];
  matches?: { schema?: JoiDescription }[];
  whens?: { then?: JoiDescription; otherwise?: JoiDescription; switch?: { then?: JoiDescription; otherwise?: JoiDescription }[] }[];
}

/** True when a templateFields / secretFields path ('a.b', 'list[].value') names a key of the schema. */
function schemaReaches(desc: JoiDescription | undefined, path: string): boolean {
  const segs = path
    .split('.')
    .flatMap((x) => (x.endsWith('[]') ? [x.slice(0, -2), '[]'] : [x]))
    .filter(Boolean);
  const walk = (d: JoiDescription | undefined, i: number): boolean => {
    if (!d) return false;
    if (i === segs.length) return true;
    // Joi.when(): the field exists when one of the branches has it
    const branches = (d.whens ?? []).flatMap((w) => [w.then, w.otherwise, ...(w.switch ?? []).flatMap((c) => [c.then, c.otherwise])]);
    if (branches.some((b) => walk(b, i))) return true;
    if (d.type === 'alternatives') return (d.matches ?? []).some((m) => walk(m.schema, i));
    const seg = segs[i]!;
    if (seg === '[]') return d.type === 'array' && (d.items ?? []).some((it) => walk(it, i + 1));
    return d.type === 'object' && !!d.keys && walk(d.keys[seg], i + 1);
  };
  return walk(desc, 0);
}

async function settle(p: Promise<unknown>): Promise<{ ok: true } | { ok: false; err: unknown }> {
  try {
    await p;
    return { ok: true };
  } catch (err) {
    return { ok: false, err };
  }
}

/** Runs the action conformance suite as `t.test` subtests under `actionConformance: <name>`. */
export async function actionConformance(t: Test, o: ActionConformanceOptions): Promise<void> {
  const def = o.def;
  await t.test(`actionConformance: ${o.name}`, async (t) => {
    await t.test('contract', async (t) => {
      t.ok(Number.isInteger(def.type) && def.type > 0, 'type is a positive integer');
      t.notOk(RESERVED_ACTION_TYPES.has(def.type), 'type is not reserved');
      t.match(def.key, /^[a-z][a-z0-9-]*$/, 'key is a short lowercase name');
      if (def.optionsSchema || def.secretFields?.length || def.templateFields?.length) {
        t.type(def.optionsKey, 'string', 'optionsKey names the options sub-object');
      }
      const secret = new Set(def.secretFields ?? []);
      for (const f of def.templateFields ?? []) t.notOk(secret.has(f), `${f} is not both a secret and a template`);
      t.type(def.create, 'function');
      if (def.optionsSchema) {
        const desc = def.optionsSchema.describe() as JoiDescription;
        for (const f of [...(def.templateFields ?? []), ...(def.secretFields ?? [])]) {
          t.ok(schemaReaches(desc, f), `${f} is a field of the options schema (a misspelt path would never be rendered or decrypted)`);
        }
      }
    });

    await t.test('save-time validation', async (t) => {
      await t.resolves(saveActionOptions(def, o.valid), 'valid options are accepted');
      await t.resolves(saveActionOptions(def, o.template.options('{{.Name}}')), 'the template options are accepted');
      // clients of other API revisions send members this one lacks: dropped, not refused
      const stored = await saveActionOptions(def, { ...o.valid, ferry_conformance_unknown: 1 }).catch((e: unknown) => e);
      t.notOk(stored instanceof Error, `an unknown member is accepted${stored instanceof Error ? `: ${stored.message}` : ''}`);
      if (!(stored instanceof Error) && def.optionsKey) {
        t.notOk('ferry_conformance_unknown' in ((stored as Obj)[def.optionsKey] as Obj), 'and dropped from what is stored');
      }
      for (const bad of o.invalid) {
        const r = await settle(saveActionOptions(def, bad.options));
        t.notOk(r.ok, `refused: ${JSON.stringify(bad.options)}`);
        if (!r.ok) {
          const msg = (r.err as Error).message;
          t.ok(r.err instanceof Error, 'refused with an Error');
          t.match(msg, new RegExp(`options\\.${def.optionsKey ?? ''}`), 'the message names the options sub-object');
          t.ok(msg.includes(bad.field), `the message names "${bad.field}": ${msg}`);
        }
      }
      const r = await settle(saveActionOptions(def, o.template.options('{{.Name')));
      t.notOk(r.ok, 'an unparsable template is refused');
      if (!r.ok) t.match((r.err as Error).message, /invalid template/);
    });

    await t.test('templated fields are rendered from the execution context', async (t) => {
      const vpath = '/in/a "quoted" \\ <&> é 😀.csv';
      const tpl = '{{.Name}}|{{.VirtualPath}}|{{.ObjectName}}|{{.Event}}|{{.FileSize}}|{{.Rule}}|{{.UID}}|{{toJson .VirtualPath}}';
      let uid = '';
      const run = runAction(def, o.template.options(tpl), {
        event: { username: 'tpl-user', virtual_path: vpath, file_size: 98765 },
        rule: { name: 'tpl-rule' },
      });
      await run;
      const seen = await o.template.observe();
      const parts = seen.split('|');
      uid = parts[6] ?? '';
      t.equal(
        seen,
        `tpl-user|${vpath}|a "quoted" \\ <&> é 😀.csv|upload|98765|tpl-rule|${uid}|${JSON.stringify(vpath).replace(/[<>&]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`)}`,
        'every field rendered as Go would',
      );
      t.match(uid, /^[0-9a-f-]{36}$/, '.UID is the execution id');
    });

    await t.test('failure reporting', async (t) => {
      const r = await settle(runAction(def, o.failing.options));
      t.notOk(r.ok, 'the run rejects');
      if (!r.ok) {
        t.ok(r.err instanceof Error, 'with an Error');
        t.match((r.err as Error).message, o.failing.reason, `the message says why: ${(r.err as Error).message}`);
      }
    });

    await t.test('timeout', async (t) => {
      const started = Date.now();
      const r = await settle(runAction(def, o.hanging.options));
      const elapsed = Date.now() - started;
      t.notOk(r.ok, 'the run rejects');
      t.ok(elapsed < o.hanging.within, `within ${o.hanging.within} ms (${elapsed} ms)`);
      if (!r.ok) t.match((r.err as Error).message, o.hanging.message ?? /time(d)? ?out/i, `the message says it timed out: ${(r.err as Error).message}`);
      if (o.afterStop) await o.afterStop(t);
    });

    await t.test('cancellation through the execution signal', async (t) => {
      const ac = new AbortController();
      const run = runAction(def, o.longRunning, { signal: ac.signal });
      const early = await Promise.race([settle(run), new Promise((r) => setTimeout(r, 300, 'running'))]);
      t.equal(early, 'running', 'the long run is still going after 300 ms');
      const abortedAt = Date.now();
      ac.abort(new Error('server stopping'));
      const r = await settle(run);
      const elapsed = Date.now() - abortedAt;
      t.notOk(r.ok, 'the cancelled run rejects');
      const within = o.cancelWithin ?? 3000;
      t.ok(elapsed < within, `settled ${elapsed} ms after the abort (< ${within})`);
      if (!r.ok) t.ok(r.err instanceof Error, 'with an Error');
      if (o.afterStop) await o.afterStop(t);
    });

    const noSecrets = !(def.secretFields ?? []).length;
    await t.test('secrets never reach logs or failure messages', { skip: noSecrets ? `${o.name} declares no secretFields` : false }, async (t) => {
      if (!o.secret) {
        t.fail('the type declares secretFields: pass the secret hooks');
        return;
      }
      const hooks = o.secret;
      const value = `s3cr3t-${crypto.randomBytes(9).toString('hex')}`;
      const forbidden = [value, Buffer.from(value).toString('base64'), ...(hooks.forbidden?.(value) ?? [])];
      const { logger, lines } = captureLogger();
      const ok = await settle(runAction(def, hooks.options(plainSecret(value)), { logger }));
      t.ok(ok.ok, `the run with the secret succeeds${ok.ok ? '' : `: ${(ok.err as Error).message}`}`);
      const bad = await settle(runAction(def, hooks.failingOptions(plainSecret(value)), { logger }));
      t.notOk(bad.ok, 'the failing run with the secret rejects');
      const texts = [...lines];
      if (!bad.ok) {
        const e = bad.err as Error;
        texts.push(e.message, String(e.stack ?? ''), JSON.stringify(e), String((e as { cause?: unknown }).cause ?? ''));
      }
      t.comment(`${lines.length} log lines captured`);
      for (const s of forbidden) {
        const leaks = texts.filter((x) => x.includes(s));
        t.same(leaks, [], `no log line or failure text contains ${s === value ? 'the secret' : 'a string derived from it'}`);
      }
    });
  });
}
