/**
 * Path confinement. Every `{name}` and `target` reaching the server goes
 * through `parseName` (a pure check of the spelling) and then
 * `Confiner.resolve` (a check against the disk, for symbolic links).
 *
 * Rules, in order:
 * 1. The raw path parameter is percent-decoded exactly once; a malformed
 *    escape is a 400.
 * 2. Control characters (NUL included) are a 400.
 * 3. Backslashes, `..` (and any all-dots segment), and percent-encoded dots,
 *    slashes, backslashes or percent signs left after decoding (a
 *    double-encoding attempt) are a 403. Nothing is ever "resolved": a name
 *    with `..` is refused even when it would stay inside the root.
 * 4. The joined path must lie under the root (defence in depth).
 * 5. The deepest existing ancestor, resolved with realpath, must lie under the
 *    real root, and no missing component may be a dangling symlink: a
 *    symlink pointing outside the root is a 403 whether it is the target
 *    itself or one of its parents. Files are created with O_NOFOLLOW too.
 *
 * Limit (documented in the README): a local user who can swap a directory
 * for a symlink between the check and the use can still race the server.
 * The protocol itself cannot create symlinks.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { HttpError } from './errors.js';

const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;
const ENCODED_SPECIAL = /%(2e|2f|5c|25)/i;
const WINDOWS_RESERVED = /[:*?"<>|]/;

/**
 * Decodes the raw (still percent-encoded) `{name}` path parameter.
 * @param {string} raw
 * @returns {string}
 */
export function decodePathParam(raw) {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new HttpError(400, 'EINVAL', 'malformed percent-encoding in the name');
  }
}

/**
 * Splits an already decoded name into safe segments ([] is the root).
 * @param {string} decoded
 * @returns {string[]}
 */
export function parseName(decoded) {
  if (CONTROL_CHARS.test(decoded)) {
    throw new HttpError(400, 'EINVAL', 'the name contains control characters');
  }
  if (decoded.includes('\\')) {
    throw new HttpError(403, 'EPATH', 'backslashes are not allowed in names');
  }
  if (ENCODED_SPECIAL.test(decoded)) {
    throw new HttpError(403, 'EPATH', 'the name contains an encoded dot, slash or percent sign');
  }
  /** @type {string[]} */
  const segments = [];
  for (const seg of decoded.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (/^\.{2,}$/.test(seg.trim())) {
      throw new HttpError(403, 'EPATH', "'..' segments are not allowed");
    }
    if (process.platform === 'win32' && WINDOWS_RESERVED.test(seg)) {
      throw new HttpError(403, 'EPATH', 'the name contains a reserved character');
    }
    segments.push(seg);
  }
  return segments;
}

/** Client-visible spelling of a segment list ('/a/b'). */
export function displayName(/** @type {string[]} */ segments) {
  return '/' + segments.join('/');
}

/**
 * @param {string} parent absolute, resolved
 * @param {string} child absolute, resolved
 */
function isInside(parent, child) {
  return child === parent || child.startsWith(parent.endsWith(path.sep) ? parent : parent + path.sep);
}

export class Confiner {
  /** @param {string} realRoot the root directory, already passed through realpath */
  constructor(realRoot) {
    this.root = realRoot;
  }

  /**
   * Resolves and checks the root once at startup.
   * @param {string} root
   */
  static async create(root) {
    const real = await fs.realpath(path.resolve(root));
    const st = await fs.stat(real);
    if (!st.isDirectory()) throw new Error('the root is not a directory');
    return new Confiner(real);
  }

  /**
   * Maps safe segments to an absolute path under the root, refusing symlink
   * escapes (rule 5).
   * @param {string[]} segments
   * @returns {Promise<string>}
   */
  async resolve(segments) {
    const target = path.join(this.root, ...segments);
    if (!isInside(this.root, target)) {
      throw new HttpError(403, 'EPATH', 'the name escapes the root');
    }
    let probe = target;
    for (;;) {
      let real;
      try {
        real = await fs.realpath(probe);
      } catch (err) {
        const code = /** @type {NodeJS.ErrnoException} */ (err).code;
        if ((code !== 'ENOENT' && code !== 'ENOTDIR') || probe === this.root) throw err;
        // Missing: it must not be a dangling symlink (creating through it would escape).
        if (await lexists(probe)) {
          throw new HttpError(403, 'EPATH', 'the name goes through a symbolic link');
        }
        probe = path.dirname(probe);
        continue;
      }
      if (!isInside(this.root, real)) {
        throw new HttpError(403, 'EPATH', 'the name resolves outside the root');
      }
      return target;
    }
  }

  /**
   * True when an absolute path already checked lies under the root once
   * resolved (used for symlinks met while listing or walking).
   * @param {string} abs
   */
  async resolvesInside(abs) {
    try {
      return isInside(this.root, await fs.realpath(abs));
    } catch {
      return false;
    }
  }
}

/** @param {string} p */
async function lexists(p) {
  try {
    await fs.lstat(p);
    return true;
  } catch {
    return false;
  }
}
