import { createFileHasher, hashFileRange, type FileHasher, type FileSession, type Logger, type Protocol } from '@ferry/core';
import type { ServerChannel } from 'ssh2';
import { runScp } from './scp.js';
import { statusOf } from './status.js';

/** The hash commands and their algorithm (as node's crypto names it). */
const HASHES: Record<string, string> = { md5sum: 'md5', sha1sum: 'sha1', sha256sum: 'sha256', sha512sum: 'sha512' };
/** The commands this module implements ('scp' runs the legacy SCP protocol). */
const IMPLEMENTED = new Set([...Object.keys(HASHES), 'cd', 'pwd', 'scp']);

/**
 * Splits a command line into words as a POSIX shell would, without one:
 * single quotes, double quotes (with \\ \" \$ \` escapes), backslashes.
 * Throws on an unterminated quote or a trailing backslash.
 */
export function splitWords(line: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === ' ' || c === '\t' || c === '\n') {
      if (word !== null) words.push(word);
      word = null;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error('unterminated quote');
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      word ??= '';
      for (i++; ; i++) {
        if (i >= line.length) throw new Error('unterminated quote');
        const d = line[i]!;
        if (d === '"') break;
        if (d === '\\' && i + 1 < line.length && '\\"$`\n'.includes(line[i + 1]!)) word += line[++i]!;
        else word += d;
      }
    } else if (c === '\\') {
      if (i + 1 >= line.length) throw new Error('trailing backslash');
      word = (word ?? '') + line[++i]!;
    } else word = (word ?? '') + c;
  }
  if (word !== null) words.push(word);
  return words;
}

/** The name of the command a command line runs ('' when it does not parse): `ssh_cmd` of its filesystem events. */
export function commandName(line: string): string {
  try {
    return (splitWords(line)[0] ?? '').slice(0, 64);
  } catch {
    return '';
  }
}

export interface CommandContext {
  channel: ServerChannel;
  /** The command line as the client sent it. */
  command: string;
  /** The commands the configuration enables. */
  enabled: readonly string[];
  /** Opens the user's file session for this command (protocol SSH or SCP). */
  open(protocol: Protocol): Promise<FileSession>;
  logger: Logger;
}

/** Runs one exec request; resolves with its exit status (never rejects). */
export async function runCommand(ctx: CommandContext): Promise<number> {
  const { channel } = ctx;
  const fail = (message: string) => (channel.stderr.write(`${message}\n`), 1);
  let words: string[];
  try {
    words = splitWords(ctx.command);
  } catch (err) {
    return fail(`ferry: ${(err as Error).message}`);
  }
  const name = words[0] ?? '';
  const printable = name.slice(0, 64);
  if (!name) return fail('ferry: no command given (no shell is served)');
  if (!ctx.enabled.includes(name) || !IMPLEMENTED.has(name)) return fail(`ferry: the command "${printable}" is not allowed (no shell is served)`);
  if (name === 'pwd') return (void channel.write('/\n'), 0);
  // no current directory to change: accepted without effect, as sftpgo does
  if (name === 'cd') return 0;
  let session: FileSession;
  try {
    session = await ctx.open(name === 'scp' ? 'SCP' : 'SSH');
  } catch (err) {
    return fail(`${name}: ${statusOf(err).message}`);
  }
  try {
    if (name === 'scp') return await runScp({ channel, args: words.slice(1), session, logger: ctx.logger });
    return await hashFiles(channel, session, HASHES[name]!, name, words.slice(1));
  } catch (err) {
    ctx.logger.info({ err, command: printable }, 'ssh command failed');
    return fail(`${name}: ${statusOf(err).message}`);
  } finally {
    await session.close().catch(() => undefined);
  }
}

/** Feeds the channel's standard input into `hash` until the client ends it. */
function hashInput(channel: ServerChannel, hash: FileHasher): Promise<void> {
  return new Promise((resolve) => {
    channel.on('data', (d: Buffer) => void hash.update(d));
    channel.once('end', resolve);
    channel.once('close', resolve);
  });
}

/** `md5sum [PATH...]` and the like: `HEX  PATH` for each file (`-` or none: standard input), an error on stderr for each one that fails. */
async function hashFiles(channel: ServerChannel, session: FileSession, algorithm: string, name: string, args: string[]): Promise<number> {
  const paths = args[0] === '--' ? args.slice(1) : args;
  // no path: standard input, as coreutils reads it (rclone detects the command by hashing an empty input)
  if (!paths.length) paths.push('-');
  let status = 0;
  for (const arg of paths) {
    let virtual = '';
    try {
      if (arg === '-') {
        const hash = createFileHasher(algorithm);
        await hashInput(channel, hash);
        channel.write(`${hash.digest().toString('hex')}  -\n`);
        continue;
      }
      virtual = session.path(arg);
      // the SDK's streamed hash of a download of the whole file (as SFTP's check-file and FTP's HASH)
      const { hashes } = await hashFileRange(session, virtual, { algorithm, start: 0, length: 0, blockSize: 0, signal: session.signal });
      channel.write(`${hashes[0]!.toString('hex')}  ${arg}\n`);
    } catch (err) {
      const message = statusOf(err).message;
      // the session's messages name the virtual path: the one the client gave is shown instead
      const reason = virtual && message.startsWith(`${virtual}: `) ? message.slice(virtual.length + 2) : message;
      channel.stderr.write(`${name}: ${arg}: ${reason}\n`);
      status = 1;
    }
  }
  return status;
}
