import path from 'node:path';
import { Readable } from 'node:stream';
import type Mail from 'nodemailer/lib/mailer';
import { lazyModule, type UserFiles } from '@ferry/core';

/** nodemailer's MIME composer, imported when the first message is composed (not when the plugin loads). */
const mailComposer = lazyModule(() => import('nodemailer/lib/mail-composer'));

/** `1.5 MiB`: sizes in messages. */
export function humanBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${n} B` : `${v.toFixed(v < 10 ? 2 : 1)} ${units[i]}`;
}

const limitError = (limit: number, detail: string) =>
  new Error(`the attachments ${detail} exceed the size limit of ${humanBytes(limit)} (plugin config max_attachments_size)`);

/**
 * A stream opened only when the composer reaches it (one backend read at a
 * time), whose bytes are counted again while they flow against the shared
 * total (a file that grew since it was checked cannot get past the limit).
 */
function lazyStream(open: () => Promise<Readable>, count: (n: number) => void): Readable {
  return Readable.from(
    (async function* () {
      const src = await open();
      try {
        for await (const chunk of src) {
          count((chunk as Buffer).length);
          yield chunk as Buffer;
        }
      } finally {
        src.destroy();
      }
    })(),
    { objectMode: false },
  );
}

export interface MessageInput {
  from: string;
  to: string[];
  subject: string;
  body: string;
  html: boolean;
  /** Normalised virtual paths of the user's files. */
  attachments: string[];
  files?: UserFiles;
  limit: number;
  signal: AbortSignal;
}

/**
 * The RFC 5322 message: nodemailer's MailComposer streams the MIME tree,
 * reading each attachment from the user's storage as it gets there. Every
 * attachment's size is checked before anything is read. The result is one
 * Buffer because imapflow writes an APPEND literal in one piece; its size is
 * bounded by the attachment limit (base64: 4/3 of it) plus the body.
 */
export async function composeMessage(m: MessageInput): Promise<{ raw: Buffer; names: string[] }> {
  const MailComposer = (await mailComposer.load()).default;
  const atts: Mail.Attachment[] = [];
  let total = 0;
  let streamed = 0;
  const count = (n: number) => {
    streamed += n;
    if (streamed > m.limit) throw limitError(m.limit, `(${humanBytes(streamed)} read so far)`);
  };
  const streams: Readable[] = [];
  try {
    for (const vp of m.attachments) {
      m.signal.throwIfAborted();
      const files = m.files!;
      const info = await files.stat(vp, { signal: m.signal }).catch((err: Error) => {
        throw new Error(`attachment ${vp} of user "${files.username}": ${err.message}`);
      });
      if (info.isDir) throw new Error(`attachment ${vp} of user "${files.username}" is a directory: only files can be attached`);
      total += info.size;
      if (total > m.limit) throw limitError(m.limit, `(${humanBytes(total)} with ${vp})`);
      const s = lazyStream(() => files.openRead(vp, { signal: m.signal }), count);
      streams.push(s);
      atts.push({ filename: path.posix.basename(vp), content: s });
    }
    const mail = new MailComposer({
      from: m.from,
      to: m.to.length ? m.to : undefined,
      subject: m.subject,
      ...(m.html ? { html: m.body } : { text: m.body }),
      attachments: atts,
      date: new Date(),
    });
    const source = mail.compile().createReadStream();
    const chunks: Buffer[] = [];
    const max = Math.ceil((m.limit * 4) / 3) + Buffer.byteLength(m.body) * 3 + 256 * 1024;
    let size = 0;
    const onAbort = () => source.destroy(m.signal.reason instanceof Error ? m.signal.reason : new Error('aborted'));
    m.signal.addEventListener('abort', onAbort, { once: true });
    try {
      for await (const chunk of source) {
        size += (chunk as Buffer).length;
        if (size > max) throw new Error(`the message exceeds ${humanBytes(max)}`);
        chunks.push(chunk as Buffer);
      }
    } finally {
      m.signal.removeEventListener('abort', onAbort);
      source.destroy();
    }
    return { raw: Buffer.concat(chunks, size), names: atts.map((a) => a.filename as string) };
  } finally {
    for (const s of streams) s.destroy();
  }
}
