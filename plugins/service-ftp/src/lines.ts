/** What the line reader hands over: a command line, or a line it refused (with the FTP reply to send). */
export type LineItem = { line: string } | { refused: string };

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Splits the control connection's bytes into command lines (CRLF, or a bare
 * LF): Telnet IAC sequences are dropped (clients send IP/DM before ABOR),
 * lines longer than `maxLength` bytes, with a NUL or with invalid UTF-8 are
 * refused with a 500/501 reply rather than parsed.
 */
export class LineReader {
  private parts: Buffer[] = [];
  private length = 0;
  /** The current line went over the limit: its bytes are skipped up to its end. */
  private skipping = false;

  constructor(private readonly maxLength: number) {}

  /** Feeds bytes; returns the lines completed by them, in order. */
  push(chunk: Buffer): LineItem[] {
    const out: LineItem[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl < 0 ? chunk.length : nl;
      if (!this.skipping) {
        this.length += end - start;
        if (this.length > this.maxLength) {
          this.skipping = true;
          this.parts = [];
        } else if (end > start) this.parts.push(chunk.subarray(start, end));
      }
      if (nl < 0) break;
      out.push(this.finish());
      start = nl + 1;
    }
    return out;
  }

  private finish(): LineItem {
    const skipped = this.skipping;
    const bytes = stripTelnet(Buffer.concat(this.parts));
    this.parts = [];
    this.length = 0;
    this.skipping = false;
    if (skipped) return { refused: `500 Command line too long (at most ${this.maxLength} bytes).` };
    const body = bytes.length && bytes[bytes.length - 1] === 0x0d ? bytes.subarray(0, -1) : bytes;
    if (body.includes(0)) return { refused: '501 NUL byte in the command line.' };
    let line: string;
    try {
      line = decoder.decode(body);
    } catch {
      return { refused: '501 The command line is not valid UTF-8.' };
    }
    if (/[\r\u0000-\u0008\u000b-\u001f\u007f]/.test(line)) return { refused: '501 Control character in the command line.' };
    return { line };
  }
}

/** Removes Telnet IAC sequences (IAC IAC stands for a 0xFF byte). */
function stripTelnet(b: Buffer): Buffer {
  if (!b.includes(0xff)) return b;
  const out: number[] = [];
  for (let i = 0; i < b.length; i++) {
    if (b[i] !== 0xff) out.push(b[i]!);
    else if (b[i + 1] === 0xff) {
      out.push(0xff);
      i += 1;
    } else if (b[i + 1] !== undefined && b[i + 1]! >= 0xfb && b[i + 1]! <= 0xfe) i += 2;
    else i += 1;
  }
  return Buffer.from(out);
}

/** Splits a command line into its verb (upper case) and argument (as sent, '' for none). */
export function parseCommand(line: string): { verb: string; arg: string } {
  const sp = line.indexOf(' ');
  const verb = (sp < 0 ? line : line.slice(0, sp)).toUpperCase();
  return { verb, arg: sp < 0 ? '' : line.slice(sp + 1) };
}
