/**
 * ICAP/1.0 message syntax (RFC 3507): heads (start line + headers, with
 * folded and repeated headers), the Encapsulated header, and chunk framing.
 * Pure functions over buffers and strings; no I/O.
 */

/** Largest ICAP or encapsulated HTTP head accepted (status line and headers). */
export const MAX_HEAD_BYTES = 64 * 1024;

/** Header fields of a head. Names are case-insensitive; a repeated field keeps every value. */
export class HeaderFields {
  private readonly map = new Map<string, string[]>();

  add(name: string, value: string): void {
    const k = name.toLowerCase();
    const list = this.map.get(k);
    if (list) list.push(value);
    else this.map.set(k, [value]);
  }

  has(name: string): boolean {
    return this.map.has(name.toLowerCase());
  }

  /** Every value of a field, in order. */
  all(name: string): string[] {
    return this.map.get(name.toLowerCase()) ?? [];
  }

  /** The values of a field joined with ', ' (RFC 7230 3.2.2), or undefined when absent. */
  get(name: string): string | undefined {
    const list = this.map.get(name.toLowerCase());
    return list ? list.join(', ') : undefined;
  }

  /** An integer field, or undefined when absent or not a decimal integer. */
  int(name: string): number | undefined {
    const v = this.all(name)[0]?.trim();
    return v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined;
  }

  /** Comma-separated tokens of every value of a field. */
  tokens(name: string): string[] {
    return this.all(name)
      .flatMap((v) => v.split(','))
      .map((s) => s.trim())
      .filter(Boolean);
  }
}

export class IcapProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IcapProtocolError';
  }
}

export interface ParsedHead {
  /** The start line as received. */
  startLine: string;
  headers: HeaderFields;
}

/**
 * Parses a head (without its final empty line): a start line, then fields.
 * A line starting with a space or tab continues the previous field (obsolete
 * line folding, which c-icap uses for X-Violations-Found): it is joined to
 * it with '\n' so callers can still tell the folded lines apart.
 */
export function parseHead(text: string): ParsedHead {
  const lines = text.split(/\r?\n/);
  while (lines.length && lines[0] === '') lines.shift(); // tolerate stray CRLFs before a message
  const startLine = lines.shift();
  if (!startLine) throw new IcapProtocolError('empty message head');
  const headers = new HeaderFields();
  let last: { name: string; value: string } | undefined;
  const flush = () => {
    if (last) headers.add(last.name, last.value);
  };
  for (const line of lines) {
    if (line === '') continue;
    if (line[0] === ' ' || line[0] === '\t') {
      if (!last) throw new IcapProtocolError(`header continuation line without a field: ${JSON.stringify(line.slice(0, 80))}`);
      last.value += `\n${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) throw new IcapProtocolError(`malformed header line: ${JSON.stringify(line.slice(0, 80))}`);
    flush();
    last = { name: line.slice(0, colon).trim(), value: line.slice(colon + 1).trim() };
  }
  flush();
  return { startLine, headers };
}

export interface StatusLine {
  version: string;
  status: number;
  reason: string;
}

/** `ICAP/1.0 204 No Content` or `HTTP/1.1 403 Forbidden`. */
export function parseStatusLine(line: string, protocol: 'ICAP' | 'HTTP'): StatusLine {
  const m = new RegExp(`^(${protocol}/\\d+\\.\\d+)\\s+(\\d{3})(?:\\s+(.*))?$`).exec(line.trim());
  if (!m) throw new IcapProtocolError(`not an ${protocol} status line: ${JSON.stringify(line.slice(0, 80))}`);
  return { version: m[1]!, status: Number(m[2]), reason: m[3] ?? '' };
}

/** One entity of the Encapsulated header, e.g. `res-body=137`. */
export interface EncapsulatedPart {
  name: 'req-hdr' | 'res-hdr' | 'req-body' | 'res-body' | 'null-body' | 'opt-body';
  offset: number;
}

const PART_NAMES = new Set(['req-hdr', 'res-hdr', 'req-body', 'res-body', 'null-body', 'opt-body']);

/** Parses `Encapsulated: req-hdr=0, res-hdr=45, res-body=120` (offsets ascending, one body entity last). */
export function parseEncapsulated(value: string): EncapsulatedPart[] {
  const parts: EncapsulatedPart[] = [];
  for (const item of value.split(',')) {
    const m = /^\s*([a-z-]+)\s*=\s*(\d+)\s*$/i.exec(item);
    if (!m || !PART_NAMES.has(m[1]!.toLowerCase())) throw new IcapProtocolError(`malformed Encapsulated header: ${JSON.stringify(value)}`);
    const offset = Number(m[2]);
    if (parts.length && offset < parts[parts.length - 1]!.offset)
      throw new IcapProtocolError(`Encapsulated offsets are not ascending: ${JSON.stringify(value)}`);
    parts.push({ name: m[1]!.toLowerCase() as EncapsulatedPart['name'], offset });
  }
  if (!parts.length) throw new IcapProtocolError('empty Encapsulated header');
  const bodies = parts.filter((p) => p.name.endsWith('-body'));
  if (bodies.length > 1 || (bodies.length === 1 && parts[parts.length - 1] !== bodies[0])) {
    throw new IcapProtocolError(`Encapsulated must end with exactly one body entity: ${JSON.stringify(value)}`);
  }
  return parts;
}

/** Formats an Encapsulated header value from the byte lengths of the heads that precede the body. */
export function formatEncapsulated(heads: { name: 'req-hdr' | 'res-hdr'; length: number }[], body: EncapsulatedPart['name']): string {
  let offset = 0;
  const items: string[] = [];
  for (const h of heads) {
    items.push(`${h.name}=${offset}`);
    offset += h.length;
  }
  items.push(`${body}=${offset}`);
  return items.join(', ');
}

/** The size line of a chunk. */
export function chunkSizeLine(size: number): string {
  return `${size.toString(16)}\r\n`;
}

/** Ends a chunked body; `ieof` marks the end of a preview that holds the whole body. */
export function lastChunk(ieof = false): string {
  return ieof ? '0; ieof\r\n\r\n' : '0\r\n\r\n';
}

export interface ChunkSize {
  size: number;
  /** The chunk extension `ieof` was present (only meaningful on the last chunk). */
  ieof: boolean;
}

/** Parses a chunk-size line (without CRLF): hex size, then optional `;ext` extensions. */
export function parseChunkSize(line: string): ChunkSize {
  const [sizePart, ...exts] = line.split(';');
  const hex = sizePart!.trim();
  if (!/^[0-9a-fA-F]{1,12}$/.test(hex)) throw new IcapProtocolError(`malformed chunk size line: ${JSON.stringify(line.slice(0, 40))}`);
  return { size: parseInt(hex, 16), ieof: exts.some((e) => e.trim().toLowerCase() === 'ieof') };
}

/** Threat names announced by a response's headers, the first found being the main one. */
export function threatNames(h: HeaderFields): string[] {
  const out: string[] = [];
  // X-Infection-Found: Type=0; Resolution=2; Threat=Eicar-Test-Signature;
  for (const v of h.all('X-Infection-Found')) {
    const m = /(?:^|;)\s*Threat=([^;]*)/i.exec(v);
    if (m?.[1]?.trim()) out.push(m[1].trim());
  }
  // X-Violations-Found: <count>, then per violation 4 folded lines: filename, threat name, id, resolution
  for (const v of h.all('X-Violations-Found')) {
    const lines = v.split('\n').map((s) => s.trim());
    for (let i = 1; i + 1 < lines.length; i += 4) if (lines[i + 1]) out.push(lines[i + 1]!);
  }
  for (const v of h.all('X-Virus-ID')) if (v.trim()) out.push(v.trim());
  return [...new Set(out)];
}

/** True when the headers carry a block signal of their own (an infection or violation reported). */
export function hasBlockHeader(h: HeaderFields): boolean {
  if (h.has('X-Infection-Found') || h.has('X-Virus-ID')) return true;
  const v = h.all('X-Violations-Found')[0];
  if (v === undefined) return false;
  const count = /^\s*(\d+)/.exec(v);
  return !count || Number(count[1]) > 0;
}
