import crypto from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { onAbort, type ActionContext, type ActionTypeDef } from '@ferry/core';
import { checkHost, guardedLookup } from './address-guard.js';
import { BAD_HEADER_VALUE, httpOptionsSchema, TEMPLATE_FIELDS, type HttpOptions, type HttpPart } from './options.js';

/** What the action needs to stream a part's file from the event user's storage (PluginHost.files fits). */
export interface FileSource {
  open(username: string): Promise<{
    stat(vpath: string, o?: { signal?: AbortSignal }): Promise<{ isDir: boolean }>;
    openRead(vpath: string, o?: { signal?: AbortSignal }): Promise<Readable>;
    close(): Promise<void>;
  }>;
}

export interface HttpActionSettings {
  /** Plugin config `allow_link_local`: allow link-local and cloud metadata destinations. */
  allowLinkLocal: boolean;
  files: () => FileSource;
  /** Name resolution (tests inject one); default dns.lookup. */
  lookup?: Parameters<typeof guardedLookup>[0];
}

/** Characters of the answer quoted in a failure message. */
export const EXCERPT_CHARS = 512;
const EXCERPT_BYTES = 4096;

/** The endpoint as messages and logs show it: no query (it may carry tokens), no credentials. */
function shownUrl(u: URL): string {
  return `${u.protocol}//${u.host}${u.pathname}`;
}

/** Replaces every occurrence of the secrets in a text. */
function redact(text: string, secrets: string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 3) out = out.split(s).join('[redacted]');
  return out;
}

function printable(s: string): string {
  return s
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '?')
    .replace(/\s+/g, ' ')
    .trim();
}

/** A quoted-string parameter of Content-Disposition as browsers write it (RFC 7578 4.2 / WHATWG). */
function dispositionParam(v: string): string {
  return v.replace(/\r/g, '%0D').replace(/\n/g, '%0A').replace(/"/g, '%22');
}

function checkHeaderValues(list: { key: string; value: string }[], where: string): void {
  list.forEach((h, i) => {
    if (BAD_HEADER_VALUE.test(h.value)) throw new Error(`${where}[${i}] (${h.key}) contains a line break once rendered`);
  });
}

/** The multipart/form-data body, produced part by part; file parts are read from storage as the request consumes them. */
async function* multipartBody(parts: HttpPart[], boundary: string, openFile: (p: HttpPart) => Promise<Readable>): AsyncGenerator<Buffer> {
  for (const p of parts) {
    const head = [`--${boundary}`];
    const disp =
      `form-data; name="${dispositionParam(p.name)}"` + (p.filepath !== undefined ? `; filename="${dispositionParam(path.posix.basename(p.filepath))}"` : '');
    head.push(`Content-Disposition: ${disp}`);
    const hasType = p.headers.some((h) => h.key.toLowerCase() === 'content-type');
    for (const h of p.headers) head.push(`${h.key}: ${h.value}`);
    if (p.filepath !== undefined && !hasType) head.push('Content-Type: application/octet-stream');
    yield Buffer.from(head.join('\r\n') + '\r\n\r\n', 'utf8');
    if (p.filepath !== undefined) {
      const src = await openFile(p);
      try {
        for await (const chunk of src) yield chunk as Buffer;
      } finally {
        src.destroy();
      }
    } else {
      yield Buffer.from(p.body ?? '', 'utf8');
    }
    yield Buffer.from('\r\n', 'utf8');
  }
  yield Buffer.from(`--${boundary}--\r\n`, 'utf8');
}

/** Runs one request; resolves on a 2xx answer, rejects with the reason otherwise. Never retries. */
export async function runHttp(o: HttpOptions, ctx: ActionContext, s: HttpActionSettings): Promise<void> {
  const secrets = o.password ? [o.password, Buffer.from(`${o.username ?? ''}:${o.password}`).toString('base64')] : [];
  let url: URL;
  try {
    url = new URL(o.endpoint);
  } catch {
    throw new Error('endpoint is not a valid URL once rendered');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`endpoint must be http or https once rendered, not ${url.protocol}`);
  if (url.username || url.password) throw new Error('endpoint must not hold credentials once rendered');
  for (const q of o.query_parameters) url.searchParams.append(q.key, q.value);
  checkHeaderValues(o.headers, 'headers');
  o.parts.forEach((p, i) => checkHeaderValues(p.headers, `parts[${i}].headers`));
  if (!s.allowLinkLocal) checkHost(url.hostname);

  const target = `HTTP ${o.method} ${shownUrl(url)}`;
  // one controller for the run: the timeout, or the execution's (long-lived) signal through onAbort
  const ac = new AbortController();
  const signal = ac.signal;
  let timedOut = false;
  const deadline = setTimeout(() => {
    timedOut = true;
    ac.abort(new Error('timeout'));
  }, o.timeout * 1000);
  const offAbort = onAbort(ctx.signal, (reason) => ac.abort(reason));
  const why = (err: unknown): Error => {
    if (timedOut) return new Error(`${target} timed out after ${o.timeout} s`);
    if (ctx.signal.aborted) return new Error(`${target} cancelled`);
    const e = err as NodeJS.ErrnoException;
    return new Error(`${target} failed: ${redact(e.message ?? String(err), secrets)}`);
  };

  const headers: Record<string, string | string[]> = {};
  for (const h of o.headers) {
    const k = h.key.toLowerCase();
    const prev = headers[k];
    headers[k] = prev === undefined ? h.value : [...(Array.isArray(prev) ? prev : [prev]), h.value];
  }
  if (o.username) headers.authorization = `Basic ${Buffer.from(`${o.username}:${o.password ?? ''}`).toString('base64')}`;

  // the user's files: opened once, every file part checked before anything is sent
  let files: Awaited<ReturnType<FileSource['open']>> | undefined;
  const fileParts = o.parts.filter((p) => p.filepath !== undefined);
  let source: Readable | undefined;
  try {
    if (fileParts.length) {
      if (!ctx.username) throw new Error(`${target}: file parts need the event's user and this execution has none (trigger ${ctx.trigger})`);
      try {
        files = await s.files().open(ctx.username);
      } catch (err) {
        throw new Error(`${target}: cannot open the files of user "${ctx.username}": ${(err as Error).message}`);
      }
      for (const p of fileParts) {
        let isDir: boolean;
        try {
          isDir = (await files.stat(p.filepath!, { signal })).isDir;
        } catch (err) {
          if (signal.aborted) throw why(err);
          throw new Error(`${target}: cannot read the file of part "${p.name}" (${p.filepath}): ${(err as Error).message}`);
        }
        if (isDir) throw new Error(`${target}: the file of part "${p.name}" (${p.filepath}) is a directory`);
      }
    }
    if (o.parts.length) {
      const boundary = `----FerryFormBoundary${crypto.randomBytes(16).toString('hex')}`;
      headers['content-type'] = `multipart/form-data; boundary=${boundary}`;
      const f = files;
      source = Readable.from(
        multipartBody(o.parts, boundary, async (p) => {
          try {
            return await f!.openRead(p.filepath!, { signal });
          } catch (err) {
            throw new Error(`cannot read the file of part "${p.name}" (${p.filepath}): ${(err as Error).message}`);
          }
        }),
        { objectMode: false },
      );
    } else if (o.body !== undefined && o.body !== '') {
      const b = Buffer.from(o.body, 'utf8');
      headers['content-length'] = String(b.length);
      source = Readable.from([b]);
    } else if (o.method !== 'GET') {
      headers['content-length'] = '0';
    }

    const started = Date.now();
    const mod = url.protocol === 'https:' ? https : http;
    const req = mod.request(url, {
      method: o.method,
      headers,
      agent: false, // one connection per run, nothing pooled, no hidden retry
      lookup: s.allowLinkLocal ? undefined : guardedLookup(s.lookup),
      rejectUnauthorized: !o.skip_tls_verify,
      signal,
    });
    const answered = new Promise<http.IncomingMessage>((resolve, reject) => {
      req.once('response', resolve);
      req.once('error', reject);
    });
    let uploadError: unknown;
    const upload = source
      ? pipeline(source, req).catch((err: unknown) => {
          uploadError = err;
          req.destroy(err as Error);
        })
      : Promise.resolve(req.end());
    let res: http.IncomingMessage;
    try {
      res = await answered;
    } catch (err) {
      await upload;
      const cause = uploadError ?? err;
      if (signal.aborted) throw why(cause);
      if (uploadError) throw new Error(`${target} failed: ${redact((uploadError as Error).message, secrets)}`);
      throw why(cause);
    }
    const status = res.statusCode ?? 0;
    ctx.logger.debug({ method: o.method, url: shownUrl(url), status, elapsed: Date.now() - started }, 'http action answered');
    if (status >= 200 && status < 300) {
      res.destroy();
      req.destroy();
      await upload;
      return;
    }
    // the answer's start, bounded in bytes and in time (the run's deadline)
    const chunks: Buffer[] = [];
    let got = 0;
    try {
      for await (const c of res) {
        chunks.push(c as Buffer);
        got += (c as Buffer).length;
        if (got >= EXCERPT_BYTES) break;
      }
    } catch {
      /* the excerpt is best effort */
    }
    res.destroy();
    req.destroy();
    await upload;
    const text = printable(redact(Buffer.concat(chunks).toString('utf8'), secrets));
    const excerpt = text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}…` : text;
    throw new Error(`${target} answered ${status} ${res.statusMessage ?? ''}`.trimEnd() + (excerpt ? `: ${excerpt}` : ''));
  } finally {
    clearTimeout(deadline);
    offAbort();
    source?.destroy();
    await files?.close().catch(() => undefined);
  }
}

/** Event action type 1: an HTTP request (webhook). */
export function httpActionDef(s: HttpActionSettings): ActionTypeDef<HttpOptions> {
  return {
    type: 1,
    key: 'http',
    optionsKey: 'http_config',
    optionsSchema: httpOptionsSchema,
    secretFields: ['password'],
    templateFields: TEMPLATE_FIELDS,
    create: (o) => ({ execute: (ctx) => runHttp(o, ctx, s) }),
  };
}
