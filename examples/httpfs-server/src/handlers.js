/**
 * One handler per route of the httpfs protocol. Each gets a context with the
 * checked name (`segments`) and answers with the statuses the reference
 * lists: 200 (201 for create), 400 bad parameter, 401/403, 404, 409 with an
 * errno in `error`, 413/507 for size and space, 500, 501.
 *
 * Bodies are streamed both ways; no handler holds a whole file in memory,
 * and listings are written entry by entry.
 */
import fs from 'node:fs/promises';
import { constants as C } from 'node:fs';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { HttpError, sendJson } from './errors.js';
import { DIRECTORY_MIME, mimeTypeOf } from './mime.js';
import { parseName } from './paths.js';

/**
 * @typedef {object} Ctx
 * @property {import('node:http').IncomingMessage} req
 * @property {import('node:http').ServerResponse} res
 * @property {string[]} segments checked name, [] for the root
 * @property {string} name client-visible name ('/a/b')
 * @property {URLSearchParams} query
 * @property {import('./paths.js').Confiner} confiner
 * @property {number} maxFileSize bytes, -1 for no limit
 */

/** Go's fs.ModeDir and fs.ModeSymlink: the protocol's `mode` is a Go FileMode. */
export const GO_MODE_DIR = 0x80000000;
export const GO_MODE_SYMLINK = 0x08000000;

/** Linux open(2) flag values, as the `flags` query parameter carries them. */
const WIRE_O_CREAT = 0x40;
const WIRE_O_EXCL = 0x80;
const WIRE_O_APPEND = 0x400;
/** `checks` bit: the parent directory must already exist (always true here). */
export const CHECK_PARENT_DIR = 1;

/**
 * @param {string} name
 * @param {import('node:fs').Stats} st
 */
export function fileInfo(name, st) {
  let mode = st.mode & 0o777;
  if (st.isDirectory()) mode |= GO_MODE_DIR;
  else if (st.isSymbolicLink()) mode |= GO_MODE_SYMLINK;
  return {
    name,
    size: st.isDirectory() ? 0 : st.size,
    mode: mode >>> 0,
    last_modified: st.mtime.toISOString(),
  };
}

/**
 * @param {URLSearchParams} q
 * @param {string} key
 * @param {{ required?: boolean, min?: number, fallback?: number }} [o]
 */
function intParam(q, key, o = {}) {
  const v = q.get(key);
  if (v === null || v === '') {
    if (o.required) throw new HttpError(400, 'EINVAL', `the ${key} parameter is required`);
    return o.fallback ?? 0;
  }
  const n = /^-?\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < (o.min ?? Number.MIN_SAFE_INTEGER)) {
    throw new HttpError(400, 'EINVAL', `the ${key} parameter must be an integer${o.min === 0 ? ' >= 0' : ''}`);
  }
  return n;
}

/**
 * @param {URLSearchParams} q
 * @param {string} key
 */
function dateParam(q, key) {
  const v = q.get(key);
  const t = v ? Date.parse(v) : NaN;
  if (Number.isNaN(t)) throw new HttpError(400, 'EINVAL', `the ${key} parameter must be an RFC 3339 date-time`);
  return new Date(t);
}

/**
 * Resolves on 'drain' or when the response is gone (never hangs on a closed socket).
 * @param {import('node:http').ServerResponse} res
 */
function drained(res) {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve(undefined);
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

const baseOf = (/** @type {Ctx} */ c) => c.segments.at(-1) ?? '/';
const ok = (/** @type {Ctx} */ c, status = 200, message = 'OK') => sendJson(c.res, status, { message });

/**
 * @param {Ctx} c
 * @param {string} what
 */
function refuseRoot(c, what) {
  if (c.segments.length === 0) throw new HttpError(403, 'EPERM', `the root cannot be ${what}`);
}

/** @param {Ctx} c */
export async function stat(c) {
  const st = await fs.stat(await c.confiner.resolve(c.segments));
  sendJson(c.res, 200, fileInfo(baseOf(c), st));
}

/**
 * GET /open/{name}?offset=N: the bytes from offset to the end.
 * @param {Ctx} c
 */
export async function open(c) {
  const offset = intParam(c.query, 'offset', { min: 0 });
  const target = await c.confiner.resolve(c.segments);
  const fh = await fs.open(target, C.O_RDONLY);
  try {
    const st = await fh.stat();
    if (st.isDirectory()) throw new HttpError(409, 'EISDIR', `${c.name}: is a directory`);
    c.res.writeHead(200, {
      'content-type': 'application/octet-stream',
      'content-length': String(Math.max(0, st.size - offset)),
      'last-modified': st.mtime.toUTCString(),
    });
    if (offset >= st.size) {
      c.res.end();
      return;
    }
    // no further than the length declared: a file that grows meanwhile (an append, a truncate that
    // extends it) would otherwise send more bytes than content-length, which a keep-alive client
    // reads as the start of its next response
    const rs = fh.createReadStream({ start: offset, end: st.size - 1, autoClose: false });
    await pipeline(rs, c.res);
  } finally {
    await fh.close();
  }
}

/**
 * POST /create/{name}?flags=N&checks=N. The body is streamed to disk.
 * Without O_APPEND the file is truncated; O_CREAT|O_EXCL fails with 409 when
 * it exists. A body that does not arrive completely (client disconnect, size
 * limit) removes the file, unless the request was an append: no partial
 * file is left behind by a failed upload.
 * @param {Ctx} c
 */
export async function create(c) {
  const flags = intParam(c.query, 'flags', { min: 0 });
  intParam(c.query, 'checks', { min: 0 }); // validated; CHECK_PARENT_DIR always holds here
  refuseRoot(c, 'written');
  const target = await c.confiner.resolve(c.segments);
  const parent = await fs.stat(path.dirname(target)).catch((err) => {
    throw err.code === 'ENOENT' ? new HttpError(404, 'ENOENT', `${c.name}: parent directory not found`) : err;
  });
  if (!parent.isDirectory()) throw new HttpError(409, 'ENOTDIR', `${c.name}: parent is not a directory`);
  const append = (flags & WIRE_O_APPEND) !== 0;
  const exclusive = (flags & WIRE_O_EXCL) !== 0 && (flags & WIRE_O_CREAT) !== 0;
  const hostFlags = C.O_WRONLY | C.O_CREAT | (append ? C.O_APPEND : C.O_TRUNC) | (exclusive ? C.O_EXCL : 0) | (C.O_NOFOLLOW ?? 0);
  const limit = c.maxFileSize;
  const declared = Number(c.req.headers['content-length'] ?? NaN);
  if (limit >= 0 && declared > limit) throw new HttpError(413, 'EFBIG', `${c.name}: file too large`);
  const fh = await fs.open(target, hostFlags, 0o644);
  let written = 0;
  const counter = new Transform({
    transform(chunk, _enc, cb) {
      written += chunk.length;
      if (limit >= 0 && written > limit) cb(new HttpError(413, 'EFBIG', `${c.name}: file too large`));
      else cb(null, chunk);
    },
  });
  // req is piped rather than put in the pipeline: on a refusal (413) the
  // socket must survive long enough to carry the answer.
  const onClose = () => {
    if (!c.req.complete) counter.destroy(new HttpError(400, 'ECONNRESET', 'upload interrupted'));
  };
  c.req.once('close', onClose);
  c.req.once('error', onClose);
  // The client may have gone while the file was being opened: 'close' is past.
  if (c.req.destroyed) onClose();
  c.req.pipe(counter);
  try {
    await pipeline(counter, fh.createWriteStream()); // the stream closes fh
  } catch (err) {
    c.req.unpipe(counter);
    await fh.close().catch(() => {});
    if (!append) await fs.rm(target, { force: true }).catch(() => {});
    throw err;
  }
  ok(c, 201, 'created');
}

/**
 * PATCH /rename/{name}?target=T: POSIX rename, replacing an existing file.
 * @param {Ctx} c
 */
export async function rename(c) {
  const raw = c.query.get('target');
  if (raw === null || raw === '') throw new HttpError(400, 'EINVAL', 'the target parameter is required');
  const toSegments = parseName(raw);
  refuseRoot(c, 'renamed');
  if (toSegments.length === 0) throw new HttpError(403, 'EPERM', 'the root cannot be replaced');
  const from = await c.confiner.resolve(c.segments);
  const to = await c.confiner.resolve(toSegments);
  await fs.lstat(from);
  if (to.startsWith(from + path.sep)) {
    throw new HttpError(400, 'EINVAL', `${c.name}: cannot move a directory into itself`);
  }
  await fs.rename(from, to);
  ok(c, 200, 'renamed');
}

/**
 * DELETE /remove/{name}: a file, a symlink (not its target) or an empty directory.
 * @param {Ctx} c
 */
export async function remove(c) {
  refuseRoot(c, 'removed');
  const target = await c.confiner.resolve(c.segments);
  const st = await fs.lstat(target);
  if (st.isDirectory()) await fs.rmdir(target);
  else await fs.unlink(target);
  ok(c, 200, 'removed');
}

/**
 * POST /mkdir/{name}: one level, like mkdir(2).
 * @param {Ctx} c
 */
export async function mkdir(c) {
  if (c.segments.length === 0) throw new HttpError(409, 'EEXIST', '/: already exists');
  await fs.mkdir(await c.confiner.resolve(c.segments), { mode: 0o755 });
  ok(c, 200, 'created');
}

/**
 * PATCH /chmod/{name}?mode=N: permission bits of a Go FileMode.
 * @param {Ctx} c
 */
export async function chmod(c) {
  const mode = intParam(c.query, 'mode', { required: true, min: 0 });
  await fs.chmod(await c.confiner.resolve(c.segments), mode & 0o7777);
  ok(c);
}

/**
 * PATCH /chtimes/{name}?access_time=T&modification_time=T
 * @param {Ctx} c
 */
export async function chtimes(c) {
  const atime = dateParam(c.query, 'access_time');
  const mtime = dateParam(c.query, 'modification_time');
  await fs.utimes(await c.confiner.resolve(c.segments), atime, mtime);
  ok(c);
}

/**
 * PATCH /truncate/{name}?size=N
 * @param {Ctx} c
 */
export async function truncate(c) {
  const size = intParam(c.query, 'size', { required: true, min: 0 });
  const target = await c.confiner.resolve(c.segments);
  if ((await fs.stat(target)).isDirectory()) throw new HttpError(409, 'EISDIR', `${c.name}: is a directory`);
  await fs.truncate(target, size);
  ok(c);
}

/**
 * Describes a directory entry. Symlinks resolving inside the root are
 * followed; others are reported as links (mode has ModeSymlink) and cannot be
 * opened through the server.
 * @param {Ctx} c
 * @param {string} abs
 * @param {string} name
 */
async function describeEntry(c, abs, name) {
  const lst = await fs.lstat(abs);
  if (lst.isSymbolicLink() && (await c.confiner.resolvesInside(abs))) {
    return fileInfo(name, await fs.stat(abs).catch(() => lst));
  }
  return fileInfo(name, lst);
}

/**
 * GET /readdir/{name}: a JSON array of FileInfo, written entry by entry.
 * @param {Ctx} c
 */
export async function readdir(c) {
  const dir = await c.confiner.resolve(c.segments);
  if (!(await fs.stat(dir)).isDirectory()) throw new HttpError(409, 'ENOTDIR', `${c.name}: not a directory`);
  const handle = await fs.opendir(dir, { bufferSize: 128 });
  c.res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
  let first = true;
  let batch = '[';
  for await (const dirent of handle) {
    if (c.res.destroyed) break;
    const info = await describeEntry(c, path.join(dir, dirent.name), dirent.name).catch((err) => {
      if (err.code === 'ENOENT') return undefined; // removed meanwhile
      throw err;
    });
    if (!info) continue;
    batch += (first ? '' : ',') + JSON.stringify(info);
    first = false;
    if (batch.length >= 16384) {
      const flushed = c.res.write(batch);
      batch = '';
      if (!flushed) await drained(c.res);
    }
  }
  c.res.end(batch + ']');
}

/**
 * GET /dirsize/{name}: { files, size } of the regular files below, symlinks not followed.
 * @param {Ctx} c
 */
export async function dirsize(c) {
  const root = await c.confiner.resolve(c.segments);
  const st = await fs.stat(root);
  if (!st.isDirectory()) return sendJson(c.res, 200, { files: 1, size: st.size });
  let files = 0;
  let size = 0;
  const stack = [root];
  while (stack.length > 0) {
    if (c.res.destroyed) return;
    const dir = /** @type {string} */ (stack.pop());
    const entries = await fs.opendir(dir).catch((err) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    if (!entries) continue;
    for await (const e of entries) {
      const abs = path.join(dir, e.name);
      if (e.isDirectory()) stack.push(abs);
      else if (e.isFile()) {
        const s = await fs.lstat(abs).catch(() => undefined);
        if (s) {
          files += 1;
          size += s.size;
        }
      }
    }
  }
  sendJson(c.res, 200, { files, size });
}

/**
 * GET /mimetype/{name}
 * @param {Ctx} c
 */
export async function mimetype(c) {
  const st = await fs.stat(await c.confiner.resolve(c.segments));
  sendJson(c.res, 200, { mime: st.isDirectory() ? DIRECTORY_MIME : mimeTypeOf(baseOf(c)) });
}

/**
 * GET /statvfs/{name}: the filesystem holding name, statvfs(3) style.
 * @param {Ctx} c
 */
export async function statvfs(c) {
  const s = await fs.statfs(await c.confiner.resolve(c.segments));
  sendJson(c.res, 200, {
    bsize: s.bsize,
    frsize: s.bsize,
    blocks: s.blocks,
    bfree: s.bfree,
    bavail: s.bavail,
    files: s.files,
    ffree: s.ffree,
    favail: s.ffree,
    fsid: 0,
    flag: 0,
    namemax: 255,
  });
}
