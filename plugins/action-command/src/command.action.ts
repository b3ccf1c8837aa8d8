import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import Joi from 'joi';
import { onAbort, type ActionContext, type ActionTypeDef } from '@ferry/core';

/** A configured environment variable (KeyValue). */
export interface EnvVar {
  key: string;
  value: string;
}

/** The `cmd_config` options sub-object (EventActionCommandConfig). */
export interface CommandOptions {
  /** Absolute path of the executable; must be listed in hook.enabled_action_commands. */
  cmd: string;
  /** Arguments, one array element per argument, each a Go template; never through a shell. */
  args: string[];
  /** Seconds, 1 to 120 (default 30). At the timeout the whole process group is killed. */
  timeout: number;
  /** Variables added to the minimal environment; values are Go templates. */
  env_vars: EnvVar[];
}

export interface CommandActionSettings {
  /** The allow list (hook.enabled_action_commands), read at save and at run time. */
  allowed(): readonly string[];
  /** Bytes of stdout and of stderr kept for the log (the rest is counted, not kept). */
  outputLimit: number;
  /** Milliseconds between SIGTERM and SIGKILL of the process group at a timeout or cancellation. */
  killGraceMs: number;
}

export const SETTING = 'hook.enabled_action_commands (SERVICE_HOOK__ENABLED_ACTION_COMMANDS)';
export const MAX_TIMEOUT = 120;
export const DEFAULT_TIMEOUT = 30;
/** Server variables the child inherits when the server has them; everything else is dropped. */
export const INHERITED_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'] as const;
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** Characters of stderr quoted in a failure message. */
const FAILURE_EXCERPT = 512;

/** The environment a command starts with: the INHERITED_ENV the server has (PATH always set), then the configured variables. */
export function childEnv(vars: EnvVar[], from: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of INHERITED_ENV) {
    const v = from[k];
    if (v !== undefined) env[k] = v;
  }
  env.PATH ??= DEFAULT_PATH;
  for (const { key, value } of vars) env[key] = value;
  return env;
}

/** The options schema; the allow list is read when a value is validated. */
export function commandOptionsSchema(allowed: () => readonly string[]): Joi.ObjectSchema<CommandOptions> {
  return Joi.object<CommandOptions>({
    cmd: Joi.string()
      .required()
      .custom((v: string, h) => {
        if (!path.isAbsolute(v)) return h.message({ custom: '{{#label}} must be an absolute path' });
        if (!allowed().includes(v)) return h.message({ custom: `{{#label}} "${v}" is not allowed: add it to ${SETTING}` });
        return v;
      }),
    args: Joi.array().items(Joi.string().allow('').max(65536)).max(256).default([]),
    timeout: Joi.number().integer().min(1).max(MAX_TIMEOUT).default(DEFAULT_TIMEOUT).messages({
      'number.min': '{{#label}} must be between 1 and 120 seconds',
      'number.max': '{{#label}} must be between 1 and 120 seconds',
    }),
    env_vars: Joi.array()
      .items(
        Joi.object<EnvVar>({
          key: Joi.string()
            .pattern(/^[A-Za-z_][A-Za-z0-9_]*$/)
            .max(256)
            .required()
            .messages({ 'string.pattern.base': '{{#label}} must be a variable name (letters, digits, _; not starting with a digit)' }),
          value: Joi.string().allow('').max(65536).default(''),
        }),
      )
      .max(256)
      .unique('key')
      .default([]),
  });
}

interface Captured {
  keep: Buffer[];
  kept: number;
  total: number;
}

function capture(limit: number): Captured & { push(b: Buffer): void; text(): string } {
  const c = {
    keep: [] as Buffer[],
    kept: 0,
    total: 0,
    push(b: Buffer) {
      c.total += b.length;
      if (c.kept < limit) {
        const part = b.subarray(0, limit - c.kept);
        c.keep.push(part);
        c.kept += part.length;
      }
    },
    text() {
      return Buffer.concat(c.keep).toString('utf8');
    },
  };
  return c;
}

/** Kills every process of the group led by `pid` (ESRCH, an empty group, is fine). */
function killGroup(pid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, sig);
    return true;
  } catch {
    return false;
  }
}

/** Runs one command; resolves on exit code 0, rejects with the reason otherwise. */
export async function runCommand(o: CommandOptions, ctx: ActionContext, s: CommandActionSettings): Promise<void> {
  if (!s.allowed().includes(o.cmd)) throw new Error(`command "${o.cmd}" is not allowed: it is not listed in ${SETTING}`);
  if (ctx.signal.aborted) throw new Error(`command "${o.cmd}" not started: the execution was cancelled`);
  const started = Date.now();
  const child = spawn(o.cmd, o.args, {
    shell: false,
    detached: true, // its own process group, killed as a whole
    env: childEnv(o.env_vars),
    cwd: os.tmpdir(),
    stdio: ['ignore', 'pipe', 'pipe'],
    windowsHide: true,
  });
  const out = capture(s.outputLimit);
  const err = capture(s.outputLimit);
  child.stdout.on('data', (b: Buffer) => out.push(b));
  child.stderr.on('data', (b: Buffer) => err.push(b));

  let stopReason: 'timeout' | 'cancelled' | undefined;
  let killTimer: NodeJS.Timeout | undefined;
  const stop = (why: 'timeout' | 'cancelled') => {
    if (stopReason || child.pid === undefined) return;
    stopReason = why;
    killGroup(child.pid, 'SIGTERM');
    killTimer = setTimeout(() => child.pid !== undefined && killGroup(child.pid, 'SIGKILL'), s.killGraceMs);
    killTimer.unref();
  };
  const timer = setTimeout(() => stop('timeout'), o.timeout * 1000);
  const offAbort = onAbort(ctx.signal, () => stop('cancelled'));

  let result: { code: number | null; signal: NodeJS.Signals | null };
  try {
    result = await new Promise((resolve, reject) => {
      child.once('error', reject);
      // 'exit', not 'close': a grandchild that keeps the pipes open must not hold the action
      child.once('exit', (code, signal) => resolve({ code, signal }));
    });
  } catch (e) {
    throw new Error(`cannot run command "${o.cmd}": ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  } finally {
    clearTimeout(timer);
    offAbort();
    if (child.pid !== undefined) {
      // whatever the command left running in its group goes with it
      killGroup(child.pid, 'SIGKILL');
    }
    if (killTimer) clearTimeout(killTimer);
    child.stdout.destroy();
    child.stderr.destroy();
  }
  const elapsed = Date.now() - started;
  const stdout = out.text();
  const stderr = err.text();
  ctx.logger.info(
    {
      cmd: o.cmd,
      exit_code: result.code,
      signal: result.signal,
      elapsed,
      stdout,
      stderr,
      stdout_bytes: out.total,
      stderr_bytes: err.total,
      truncated: out.total > out.kept || err.total > err.kept,
    },
    'command action finished',
  );
  if (stopReason === 'timeout') throw new Error(`command "${o.cmd}" timed out after ${o.timeout} s: its process group was killed`);
  if (stopReason === 'cancelled') throw new Error(`command "${o.cmd}" cancelled: its process group was killed`);
  if (result.code === 0) return;
  const excerpt = stderr.trim().slice(0, FAILURE_EXCERPT);
  const how = result.code !== null ? `exited with code ${result.code}` : `was killed by ${result.signal}`;
  throw new Error(`command "${o.cmd}" ${how}${excerpt ? `: ${excerpt}${stderr.trim().length > FAILURE_EXCERPT ? '…' : ''}` : ''}`);
}

/** Event action type 2: runs an allowed executable without a shell. */
export function commandActionDef(s: CommandActionSettings): ActionTypeDef<CommandOptions> {
  return {
    type: 2,
    key: 'command',
    optionsKey: 'cmd_config',
    optionsSchema: commandOptionsSchema(() => s.allowed()),
    templateFields: ['args[]', 'env_vars[].value'],
    create: (o) => ({ execute: (ctx) => runCommand(o, ctx, s) }),
  };
}
