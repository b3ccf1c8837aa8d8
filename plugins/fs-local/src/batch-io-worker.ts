// The batch I/O worker's code (batch-io.ts holds what the server asks of it and why): one
// message, one group of system calls through a directory's descriptor, one answer. It runs
// only where @ferry/dir-calls's addon is not built (or FERRY_DIR_CALLS=off): with the addon,
// the same groups are jobs of the addon's native I/O thread, and this worker never starts.

/** The worker: plain JavaScript, so it runs the same from the sources (tests) and from dist. */
export const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const failed = (err) => ({ k: 'error', code: err && err.code ? String(err.code) : 'EIO', message: err && err.message ? String(err.message) : String(err) });
function read(dir, names, max, flags) {
  const results = [];
  const chunks = [];
  let total = 0;
  for (const name of names) {
    let fd;
    try {
      fd = fs.openSync(dir + '/' + name, flags);
      const st = fs.fstatSync(fd);
      if (st.isDirectory()) { results.push({ k: 'error', code: 'EISDIR', message: 'is a directory' }); continue; }
      if (!st.isFile()) { results.push({ k: 'error', code: 'NOTREG', message: 'not a regular file' }); continue; }
      if (st.size > max) { results.push({ k: 'large' }); continue; }
      // one byte more than the size: a file that grew since is seen as such
      const buf = Buffer.allocUnsafe(st.size + 1);
      let n = 0;
      for (;;) {
        const got = fs.readSync(fd, buf, n, buf.length - n, n);
        if (got === 0 || (n += got) === buf.length) break;
      }
      if (n > max || n === buf.length) { results.push({ k: 'large' }); continue; }
      chunks.push(buf.subarray(0, n));
      results.push({ k: 'read', at: total, size: n, mtimeMs: st.mtimeMs, mode: st.mode });
      total += n;
    } catch (err) {
      results.push(failed(err));
    } finally {
      if (fd !== undefined) try { fs.closeSync(fd); } catch {}
    }
  }
  const all = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) { all.set(c, at); at += c.length; }
  return { results, data: all.buffer };
}
// lstat and unlink answer in bulk: lstat's figures in one Float64Array (mode, size, mtimeMs per
// entry, NaN mode for a failed one) and only the failures as objects, so a group of 1,024 costs
// one transferred buffer, not 1,024 objects cloned on each side
function lstat(dir, names) {
  const figures = new Float64Array(names.length * 3);
  const errors = [];
  names.forEach((name, i) => {
    try {
      const st = fs.lstatSync(dir + '/' + name);
      figures[3 * i] = st.mode;
      figures[3 * i + 1] = st.size;
      figures[3 * i + 2] = st.mtimeMs;
    } catch (err) {
      figures[3 * i] = NaN;
      errors.push([i, failed(err)]);
    }
  });
  return { results: errors, data: figures.buffer };
}
// a whole small directory: its names read and lstat'ed in one go, as lstat() answers them;
// a directory of more than max entries is left to the caller (more: true, nothing stat'ed)
function list(dir, max) {
  const d = fs.opendirSync(dir, { bufferSize: Math.min(max + 1, 1024) });
  const names = [];
  try {
    for (let e = d.readSync(); e !== null; e = d.readSync()) {
      if (names.length === max) return { results: [], more: true };
      names.push(e.name);
    }
  } finally {
    d.closeSync();
  }
  return { ...lstat(dir, names), names };
}
// fn(path through the descriptor, real location) of a directory opened by its path (links on the
// way followed by the kernel), its real location read from /proc while the descriptor is open
function openedAt(dir, fn) {
  const fd = fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    return fn('/proc/self/fd/' + fd, fs.readlinkSync('/proc/self/fd/' + fd));
  } finally {
    fs.closeSync(fd);
  }
}
// listed as list() does through that descriptor: the caller checks the location and discards the
// answer when it is outside the root
function listAt(dir, max) {
  return openedAt(dir, (at, real) => ({ ...list(at, max), real }));
}
// read() through that descriptor only when it really is at that path (then link-free, where the
// server expects it); anywhere else nothing is opened in it, and the server takes its usual path
function readAt(dir, names, max, flags) {
  return openedAt(dir, (at, real) => (real === dir ? { ...read(at, names, max, flags), real } : { results: [], real }));
}
// a removed tree's files, one group at a time: up to max entries of the directory that are not in
// skip (the subdirectories and failures of the groups before; what was removed is gone, so each
// group reads from the start), each lstat'ed when counted (the removed regular files' names and
// sizes are answered) and unlinked; a subdirectory is answered, not entered. The lstat and the
// unlink of a file through /proc/self/fd (no *at calls in node) cost some 6 us each: two
// workers sweep the two parts of a large directory at once (the addon's sweep makes fstatat and
// unlinkat on the names, about half the time)
// part [k, n]: only the entries whose name hashes to k of n (the parts of one directory swept at
// once by different workers never take the same entry)
// (the hash of the name's UTF-8 bytes, as @ferry/dir-calls's native sweep computes it: a
// directory's parts are the same whichever of the two sweeps each worker runs)
const partOf = (name, n) => {
  let h = 0;
  let ascii = true;
  for (let i = 0; i < name.length && ascii; i++) {
    const c = name.charCodeAt(i);
    if (c > 127) ascii = false;
    else h = (Math.imul(h, 31) + c) | 0;
  }
  if (!ascii) {
    h = 0;
    for (const b of Buffer.from(name, 'utf8')) h = (Math.imul(h, 31) + b) | 0;
  }
  return (h >>> 0) % n;
};
function sweep(dir, skip, max, count, part) {
  const skipped = new Set(skip);
  const errors = [];
  const files = [];
  const sizes = [];
  const dirs = [];
  let taken = 0;
  let more = false;
  const d = fs.opendirSync(dir, { bufferSize: 1024 });
  try {
    for (let e = d.readSync(); e !== null; e = d.readSync()) {
      if (skipped.has(e.name) || (part && partOf(e.name, part[1]) !== part[0])) continue;
      if (taken === max) { more = true; break; }
      taken++;
      if (e.isDirectory()) { dirs.push(e.name); continue; }
      const entry = dir + '/' + e.name;
      try {
        const st = count ? fs.lstatSync(entry) : undefined;
        if (st && st.isDirectory()) { dirs.push(e.name); continue; }
        fs.unlinkSync(entry);
        if (st && st.isFile()) { files.push(e.name); sizes.push(st.size); }
      } catch (err) {
        errors.push([e.name, failed(err)]);
      }
    }
  } finally {
    d.closeSync();
  }
  return { results: errors, names: files, data: Float64Array.from(sizes).buffer, dirs, more };
}
// a small upload's temporary file: created (never an existing one), written and closed in one
// go; on a failure it is removed again when it was created
function put(file, data) {
  let fd;
  try {
    fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o666);
  } catch (err) {
    return { results: [], failed: failed(err) };
  }
  try {
    const bytes = new Uint8Array(data);
    for (let at = 0; at < bytes.length; ) at += fs.writeSync(fd, bytes, at, bytes.length - at);
    const f = fd;
    fd = undefined;
    fs.closeSync(f);
    return { results: [] };
  } catch (err) {
    if (fd !== undefined) try { fs.closeSync(fd); } catch {}
    try { fs.unlinkSync(file); } catch {}
    return { results: [], failed: failed(err) };
  }
}
// a publication: what the destination held (a regular file's size, else -1), then the rename onto it
function replace(from, to) {
  let replaced = -1;
  try {
    const st = fs.lstatSync(to);
    if (st.isFile()) replaced = st.size;
  } catch (err) {
    if (err.code !== 'ENOENT') return { results: [], failed: failed(err) };
  }
  try {
    fs.renameSync(from, to);
  } catch (err) {
    return { results: [], failed: failed(err) };
  }
  return { results: [], replaced };
}
// a small upload published as it is put: the two above in one message (which of them failed is told)
function putReplace(file, to, data) {
  const created = put(file, data);
  if (created.failed) return { ...created, step: 'put' };
  const placed = replace(file, to);
  return placed.failed ? { ...placed, step: 'replace' } : placed;
}
parentPort.on('message', ({ id, op, dir, names, max, flags, count, part, data }) => {
  let answer;
  try {
    if (op === 'put') {
      parentPort.postMessage({ id, ...put(dir, data) });
      return;
    }
    if (op === 'putReplace') {
      parentPort.postMessage({ id, ...putReplace(dir, names[0], data) });
      return;
    }
    if (op === 'replace') {
      parentPort.postMessage({ id, ...replace(dir, names[0]) });
      return;
    }
    if (op !== 'read' && op !== 'readAt' && op !== 'lstat' && op !== 'sweep' && op !== 'list' && op !== 'listAt') throw new Error('unknown operation');
    answer =
      op === 'read'
        ? read(dir, names, max, flags)
        : op === 'readAt'
          ? readAt(dir, names, max, flags)
          : op === 'lstat'
            ? lstat(dir, names)
            : op === 'list'
              ? list(dir, max)
              : op === 'listAt'
                ? listAt(dir, max)
                : sweep(dir, names, max, count, part);
  } catch (err) {
    if (op === 'list' || op === 'listAt' || op === 'readAt' || op === 'sweep') {
      parentPort.postMessage({ id, results: [], failed: failed(err) });
      return;
    }
    // every name failed, in the shape of its operation's answer
    const e = failed(err);
    answer = op === 'read' ? { results: names.map(() => e) } : { results: names.map((_, i) => [i, e]), data: op === 'lstat' ? new Float64Array(names.length * 3).fill(NaN).buffer : undefined };
  }
  parentPort.postMessage({ id, ...answer }, answer.data ? [answer.data] : []);
});
`;
