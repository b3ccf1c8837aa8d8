import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type * as openpgp from 'openpgp';
import { FsError, FsErrorCode, lazyModule, type FileInfo } from '@ferry/core';
import { ensureParent, type FsRun } from './ops.js';
import { PgpMode, type PgpConfig } from './schema.js';

const ARMOR_START = '-----BEGIN PGP';

/**
 * openpgp (about 2.3 MB of source, 5-8 MB of memory once compiled), imported
 * when a PGP action first runs: a server that never runs one never loads it.
 */
const openpgpModule = lazyModule<typeof openpgp>(() => import('openpgp'));

/**
 * openpgp settings of every call: the data of a non-AEAD (SEIPDv1) message
 * is released while it is decrypted instead of being buffered whole until
 * its integrity is checked (that would hold a file larger than memory).
 * The check still runs at the end of the data: a failure errors the
 * stream, which aborts the write, so a tampered message never leaves a
 * visible target (writes publish only when complete).
 */
const CONFIG: openpgp.PartialConfig = { allowUnauthenticatedStream: true };

/** The keys of every armored block (one block may hold several keys). */
export async function readPublicKeys(armored: string[]): Promise<openpgp.Key[]> {
  const pgp = await openpgpModule.load();
  const out: openpgp.Key[] = [];
  for (const [i, a] of armored.entries()) {
    try {
      out.push(...(await pgp.readKeys({ armoredKeys: a })));
    } catch (err) {
      throw new Error(`public_keys[${i}]: not a readable public key (${(err as Error).message})`, { cause: err });
    }
  }
  return out;
}

/** The private key, decrypted with its passphrase when it is protected. */
export async function unlockPrivateKey(armored: string, passphrase: string | undefined): Promise<openpgp.PrivateKey> {
  const pgp = await openpgpModule.load();
  let key: openpgp.PrivateKey;
  try {
    key = await pgp.readPrivateKey({ armoredKey: armored });
  } catch (err) {
    throw new Error(`private_key: not a readable private key (${(err as Error).message})`, { cause: err });
  }
  if (key.isDecrypted()) return key;
  if (!passphrase) throw new Error('private_key is protected by a passphrase and no passphrase is set');
  try {
    return await pgp.decryptKey({ privateKey: key, passphrase });
  } catch (err) {
    // openpgp's text ("Incorrect key passphrase") never contains the passphrase
    throw new Error(`private_key: cannot unlock it with the passphrase (${(err as Error).message})`, { cause: err });
  }
}

/** Splits off the first chunk of a stream (to look at it) and gives back a stream of every byte. */
async function peek(rs: Readable): Promise<{ head: Buffer; stream: Readable }> {
  const it = rs[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const first = await it.next();
  const head = first.done ? Buffer.alloc(0) : first.value;
  const stream = Readable.from(
    (async function* () {
      try {
        if (!first.done) yield head;
        for (;;) {
          const n = await it.next();
          if (n.done) return;
          yield n.value;
        }
      } finally {
        await it.return?.();
      }
    })(),
    { objectMode: false },
  );
  return { head, stream };
}

/**
 * Chunks handed to openpgp and to the target: part of openpgp's cost is per
 * chunk (every packet layer is a stream stage) and so is a backend's (a
 * write, a request part), so small chunks (16 KiB network reads, ~20 KiB
 * decrypted output) are joined. Not more: measured with bench/action-pgp.bench.mjs on
 * a 1 GiB file, 1 MiB chunks cost ~15% less CPU than 64 KiB ones but raise
 * the server's peak RSS by ~40 MB (large buffers are freed only by full
 * garbage collections), 256 KiB by ~30 MB.
 */
const CHUNK = 64 * 1024;

/** The bytes of a stream in chunks of about CHUNK bytes (one chunk buffered at most). */
function coalesce(rs: Readable): Readable {
  return Readable.from(
    (async function* () {
      let parts: Buffer[] = [];
      let n = 0;
      for await (const chunk of rs as AsyncIterable<Buffer | string>) {
        const c = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        parts.push(c);
        n += c.length;
        if (n >= CHUNK) {
          yield parts.length === 1 ? parts[0]! : Buffer.concat(parts, n);
          parts = [];
          n = 0;
        }
      }
      if (n) yield Buffer.concat(parts, n);
    })(),
    { objectMode: false, highWaterMark: 1 },
  );
}

const toWeb = (rs: Readable) => Readable.toWeb(coalesce(rs)) as unknown as ReadableStream<Uint8Array>;
/** openpgp's output as a Node stream, in CHUNK-sized chunks (decryption emits ~20 KiB ones: one write each otherwise). */
const fromWeb = (ws: ReadableStream<Uint8Array> | ReadableStream<string>) => coalesce(Readable.fromWeb(ws as unknown as WebReadableStream));

/** The encrypted form of a plaintext stream. */
export async function encryptStream(
  source: Readable,
  o: { keys: openpgp.Key[]; password?: string; armor: boolean; filename?: string; date?: Date },
): Promise<Readable> {
  const pgp = await openpgpModule.load();
  const message = await pgp.createMessage({ binary: toWeb(source), filename: o.filename, date: o.date });
  const common = {
    message,
    ...(o.keys.length ? { encryptionKeys: o.keys } : {}),
    ...(o.password ? { passwords: [o.password] } : {}),
    config: CONFIG,
  };
  const out = o.armor ? await pgp.encrypt({ ...common, format: 'armored' }) : await pgp.encrypt({ ...common, format: 'binary' });
  return fromWeb(out as ReadableStream<Uint8Array> | ReadableStream<string>);
}

/** The plaintext of an encrypted stream, armored or binary (found from its first bytes). */
export async function decryptStream(source: Readable, o: { key?: openpgp.PrivateKey; password?: string }): Promise<Readable> {
  const pgp = await openpgpModule.load();
  const { head, stream } = await peek(source);
  const armored = head.subarray(0, 64).toString('latin1').trimStart().startsWith(ARMOR_START);
  const web = toWeb(stream);
  const message = armored
    ? await pgp.readMessage({ armoredMessage: web.pipeThrough(new TextDecoderStream()) as ReadableStream<string>, config: CONFIG })
    : await pgp.readMessage({ binaryMessage: web, config: CONFIG });
  const { data } = await pgp.decrypt({
    message,
    ...(o.key ? { decryptionKeys: o.key } : {}),
    ...(o.password ? { passwords: [o.password] } : {}),
    format: 'binary',
    config: CONFIG,
  });
  return fromWeb(data as ReadableStream<Uint8Array>);
}

/**
 * 7: encrypts or decrypts each source file (key) to its target (value),
 * streamed from the source's backend through openpgp into the target's, so
 * files larger than memory go through with flat memory. Targets' missing
 * parents are created and an existing target file is replaced.
 */
export async function pgpAll(r: FsRun, cfg: PgpConfig): Promise<void> {
  const keys = cfg.mode === PgpMode.Encrypt ? await readPublicKeys(cfg.public_keys) : [];
  const key = cfg.mode === PgpMode.Decrypt && cfg.private_key ? await unlockPrivateKey(cfg.private_key, cfg.passphrase) : undefined;
  for (const p of cfg.paths) {
    const src = r.files.path(p.key);
    const dst = r.files.path(p.value);
    try {
      if (src === dst) throw new FsError(FsErrorCode.Invalid, 'the source and the target are the same file');
      const info: FileInfo = await r.files.stat(src, { signal: r.signal });
      if (info.isDir) throw new FsError(FsErrorCode.IsDirectory, `${src} is a directory`, { path: src });
      await ensureParent(r, dst);
      const rs = await r.files.openRead(src, { signal: r.signal });
      let out: Readable;
      try {
        out =
          cfg.mode === PgpMode.Encrypt
            ? await encryptStream(rs, { keys, password: cfg.password, armor: cfg.armor, filename: info.name, date: info.mtime })
            : await decryptStream(rs, { key, password: cfg.password });
      } catch (err) {
        rs.destroy();
        throw err;
      }
      await r.files.write(dst, out, { signal: r.signal });
    } catch (err) {
      const what = cfg.mode === PgpMode.Encrypt ? 'encrypt' : 'decrypt';
      throw new Error(`pgp ${what} ${src} -> ${dst}: ${(err as Error).message}`, { cause: err });
    }
  }
}
