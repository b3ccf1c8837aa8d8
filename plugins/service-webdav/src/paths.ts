/** Maps request URLs to virtual paths and back, under the configured prefix. */

/** A bad request path or Destination (400), outside the prefix (403 / 404) or on another host (502). */
export class PathError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'PathError';
  }
}

export class Paths {
  /** The prefix without its trailing slash ('' for '/'). */
  private readonly base: string;
  constructor(prefix: string) {
    this.base = prefix.replace(/\/+$/, '');
  }

  /**
   * The virtual path of a request target (the raw path of the URL, query
   * cut; a target in absolute form, `http://host/path`, which HTTP/1.1
   * servers must accept, gives its path). Every segment is decoded on its
   * own: an encoded '/' (%2F), a backslash, a NUL, '.' or '..' in a segment
   * are refused (400), never resolved; null when the path is not under the
   * prefix.
   */
  toVirtual(raw: string): string | null {
    const q = raw.indexOf('?');
    let p = q >= 0 ? raw.slice(0, q) : raw;
    const absolute = /^https?:\/\/[^/]*/i.exec(p);
    if (absolute) p = p.slice(absolute[0].length) || '/';
    if (!p.startsWith('/')) throw new PathError(400, 'the request path must start with /');
    if (this.base) {
      if (p !== this.base && !p.startsWith(this.base + '/')) return null;
      p = p.slice(this.base.length) || '/';
    }
    const segments: string[] = [];
    for (const s of p.split('/')) {
      if (s === '') continue;
      let d: string;
      try {
        d = decodeURIComponent(s);
      } catch {
        throw new PathError(400, 'the request path has a malformed percent-encoding');
      }
      if (d === '.' || d === '..' || /[/\\\0]/.test(d)) throw new PathError(400, `the path segment ${JSON.stringify(d.slice(0, 100))} is not allowed`);
      segments.push(d);
    }
    return '/' + segments.join('/');
  }

  /**
   * The virtual path a Destination header (or an If header resource tag)
   * names: an absolute URL must be on the request's host (502 otherwise),
   * and every path must be under the prefix (403 otherwise).
   */
  destination(value: string, host: string | undefined): string {
    let raw = value.trim();
    const abs = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)(.*)$/i.exec(raw);
    if (abs) {
      if (!/^https?$/i.test(abs[1]!) || !host || abs[2]!.toLowerCase() !== host.toLowerCase()) {
        throw new PathError(502, 'the destination is on another server');
      }
      raw = abs[3] || '/';
    }
    const v = this.toVirtual(raw);
    if (v === null) throw new PathError(403, 'the destination is outside the WebDAV prefix');
    return v;
  }

  /** The href of a virtual path (each segment percent-encoded; collections end with '/'). */
  href(vpath: string, isDir: boolean): string {
    const enc = vpath.split('/').filter(Boolean).map(hrefSegment).join('/');
    const p = `${this.base}/${enc}`;
    return isDir && !p.endsWith('/') ? p + '/' : p;
  }
}

/** One path segment as it appears in an href: percent-encoded, with !'()* too. */
export const hrefSegment = (s: string): string => {
  const e = encodeURIComponent(s);
  return /[!'()*]/.test(e) ? e.replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase()) : e;
};

export const parentOf = (vpath: string): string => {
  const i = vpath.lastIndexOf('/');
  return i <= 0 ? '/' : vpath.slice(0, i);
};
export const baseName = (vpath: string): string => vpath.slice(vpath.lastIndexOf('/') + 1);
export const isWithin = (path: string, root: string): boolean => path === root || root === '/' || path.startsWith(root + '/');
