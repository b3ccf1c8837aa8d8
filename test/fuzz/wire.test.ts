import t from 'tap';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { fuzzSeed, Rng } from './helpers/prng.js';
import { verdict, type FuzzRequest } from './helpers/fuzz.js';
import { createWorld, snapshot, fileTree, PASSWORD, SHARE_PASSWORD } from './helpers/world.js';

// Wire-level bad requests over real sockets to 127.0.0.1, where hapi's inject
// cannot go: raw non-UTF-8 and NUL bytes in headers and URLs, framing that
// contradicts itself, bodies cut short, connections dropped mid-upload,
// oversized heads. Every answer the server gives must be a 4xx (an
// ApiResponse when it comes from the application); no exchange may leave
// anything behind, and the server must keep answering.

const seed = fuzzSeed(0x5eed0003);
const COUNT = Number(process.env.FERRY_FUZZ_WIRE ?? 400);

interface WireCase {
  n: number;
  kind: string;
  /** Raw bytes of the request (head and whatever body is sent). */
  data: Buffer;
  /** Drop the connection after sending instead of waiting for the answer. */
  cut?: boolean;
}

interface Answer {
  status?: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends raw bytes, half-closes or cuts, and reads whatever answer comes back. */
function exchange(port: number, c: WireCase): Promise<Answer> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      sock.destroy();
      const raw = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})[^\r\n]*\r\n((?:[^\r\n]+\r\n)*)\r\n([\s\S]*)$/.exec(raw);
      if (!m) return resolve({ headers: {}, body: raw });
      const headers: Record<string, string> = {};
      for (const line of m[2]!.split('\r\n')) {
        const i = line.indexOf(':');
        if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      let body = m[3]!;
      if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
        // de-chunk
        let out = '';
        let rest = body;
        for (;;) {
          const j = rest.indexOf('\r\n');
          if (j < 0) break;
          const size = parseInt(rest.slice(0, j), 16);
          if (!size) break;
          out += rest.slice(j + 2, j + 2 + size);
          rest = rest.slice(j + 2 + size + 2);
        }
        body = out;
      }
      resolve({ status: Number(m[1]), headers, body: Buffer.from(body, 'latin1').toString('utf8') });
    };
    sock.on('data', (d: Buffer) => chunks.push(d));
    sock.on('end', finish);
    sock.on('close', finish);
    sock.on('error', finish);
    sock.on('connect', () => {
      sock.write(c.data, () => {
        if (c.cut) setImmediate(finish);
        else sock.end();
      });
    });
  });
}

const w = await createWorld();
t.teardown(() => w.ta.close());
await w.server.start();
const port = w.server.info.port as number;
const bearer = `Bearer ${w.adminToken}`;
const userBearer = `Bearer ${w.userToken}`;
const b64 = (b: Buffer | string) => Buffer.from(b).toString('base64');

function head(lines: (string | Buffer)[], body: Buffer | string = ''): Buffer {
  const parts = lines.map((l) => (Buffer.isBuffer(l) ? Buffer.concat([l, Buffer.from('\r\n')]) : Buffer.from(l + '\r\n', 'latin1')));
  return Buffer.concat([...parts, Buffer.from('\r\n'), Buffer.isBuffer(body) ? body : Buffer.from(body, 'latin1')]);
}
const latin = (s: string) => Buffer.from(s, 'latin1');

function gen(r: Rng, n: number): WireCase {
  const host = 'Host: 127.0.0.1';
  const make = (kind: string, data: Buffer, cut = false): WireCase => ({ n, kind, data, cut });
  const junkBytes = () => Buffer.from(Array.from({ length: r.range(1, 12) }, () => r.pick([0x00, 0x80, 0xc0, 0xc3, 0xed, 0xa0, 0xfe, 0xff, 0x0b, 0x7f])));
  return r.pick<() => WireCase>([
    // basic auth with raw NUL and non-UTF-8 bytes inside the base64 credentials (token routes)
    () => {
      const user = r.chance(0.5) ? Buffer.concat([Buffer.from('admin'), junkBytes()]) : Buffer.from('admin');
      const pass = Buffer.concat([Buffer.from('admin-password-1'), junkBytes()]);
      const url = r.pick(['/api/v2/token', '/api/v2/user/token']);
      return make(
        'basic: raw bytes in credentials',
        head([`GET ${url} HTTP/1.1`, host, `Authorization: Basic ${b64(Buffer.concat([user, Buffer.from(':'), pass]))}`, 'Connection: close']),
      );
    },
    // the same on a password share
    () =>
      make(
        'basic: raw bytes on a share',
        head([
          `GET /api/v2/shares/${w.shares.writePw}/dirs HTTP/1.1`,
          host,
          `Authorization: Basic ${b64(Buffer.concat([Buffer.from('x:'), junkBytes(), Buffer.from(SHARE_PASSWORD)]))}`,
          'Connection: close',
        ]),
      ),
    // raw (not base64) bytes in the Authorization and API key headers
    () => {
      const v = Buffer.concat([latin(r.pick(['Basic ', 'Bearer ', ''])), junkBytes().filter((b) => b !== 0 && b !== 0x0b && b !== 0x7f)]);
      const name = r.pick(['Authorization', 'X-SERVICE-API-KEY']);
      return make(
        'header: raw non-UTF-8 bytes',
        head([
          `GET ${r.pick(['/api/v2/users', '/api/v2/user/dirs', '/api/v2/token'])} HTTP/1.1`,
          host,
          Buffer.concat([latin(`${name}: `), v]),
          'Connection: close',
        ]),
      );
    },
    // NUL and control characters raw in header values and names (refused by the HTTP parser)
    () =>
      make(
        'header: NUL or control byte',
        head([
          `GET /api/v2/users HTTP/1.1`,
          host,
          `Authorization: ${bearer}`,
          r.pick(['X-Fz: a\u0000b', 'X-Fz: a\u000bb', 'X\u0000Fz: 1', 'X Fz: 1', ': empty']),
          'Connection: close',
        ]),
      ),
    // raw non-ASCII and NUL bytes in the URL
    () => {
      const path = Buffer.concat([
        latin(r.pick(['/api/v2/users/', '/api/v2/user/files?path=', '/api/v2/shares/', '/api/v2/folders/'])),
        junkBytes().filter((b) => b !== 0x20),
      ]);
      return make(
        'url: raw bytes',
        head([
          Buffer.concat([latin('GET '), path, latin(' HTTP/1.1')]),
          host,
          `Authorization: ${path.includes(latin('/user/')) ? userBearer : bearer}`,
          'Connection: close',
        ]),
      );
    },
    // percent-encoded invalid UTF-8, overlong and surrogate sequences
    () => {
      const enc = r.pick(['%FF', '%C0%AE%C0%AE', '%ED%A0%80', '%E0%80%AF', '%F4%90%80%80', '%00', '%', '%G1', '%2', '%C3']);
      const url = r.pick([
        `/api/v2/users/fz${enc}`,
        `/api/v2/user/files?path=/${enc}`,
        `/api/v2/user/dirs?path=${enc}`,
        `/api/v2/folders?limit=1&${enc}=1`,
        `/api/v2/shares/${w.shares.read}/dirs?path=${enc}`,
      ]);
      return make(
        'url: invalid UTF-8 encoding',
        head([`GET ${url} HTTP/1.1`, host, `Authorization: ${url.includes('/user/') ? userBearer : bearer}`, 'Connection: close']),
      );
    },
    // framing that contradicts itself
    () => {
      const body = '{"name":"fz-wire-role"}';
      const framing = r.pick([
        ['Content-Length: 5', 'Transfer-Encoding: chunked'],
        [`Content-Length: ${body.length}`, `Content-Length: ${body.length + 3}`],
        ['Content-Length: -1'],
        ['Content-Length: abc'],
        ['Content-Length: 1e3'],
        ['Transfer-Encoding: chunked, identity'],
        ['Transfer-Encoding: gzip'],
      ]);
      return make(
        'framing: contradictory',
        head(['POST /api/v2/roles HTTP/1.1', host, `Authorization: ${bearer}`, 'Content-Type: application/json', ...framing, 'Connection: close'], body),
      );
    },
    // broken chunked bodies
    () => {
      const bad = r.pick([
        'zz\r\n{}\r\n0\r\n\r\n',
        '5\r\n{"na"\r\n',
        'ffffffffffffffffff\r\n{}\r\n0\r\n\r\n',
        '2;ext=' + 'x'.repeat(5000) + '\r\n{}\r\n0\r\n\r\n',
        '-1\r\n\r\n',
        '2\r\n{}0\r\n\r\n',
      ]);
      return make(
        'framing: broken chunks',
        head(
          [
            'POST /api/v2/roles HTTP/1.1',
            host,
            `Authorization: ${bearer}`,
            'Content-Type: application/json',
            'Transfer-Encoding: chunked',
            'Connection: close',
          ],
          bad,
        ),
      );
    },
    // a body shorter than its Content-Length, then the connection ends
    () => {
      const target = r.pick([
        ['POST /api/v2/roles', bearer, 'application/json', '{"name":"fz-cut-role"'],
        ['POST /api/v2/users', bearer, 'application/json', '{"username":"fz-cut","password":"x"'],
        ['POST /api/v2/user/files/upload?path=/fz-cut-upload.bin', userBearer, 'application/octet-stream', 'partial bytes'],
        [
          'POST /api/v2/user/files?path=/docs',
          userBearer,
          'multipart/form-data; boundary=fzcut',
          '--fzcut\r\nContent-Disposition: form-data; name="filenames"; filename="fz-cut.txt"\r\n\r\npartial',
        ],
        [`POST /api/v2/shares/${w.shares.writePw}/files/fz-cut-share.bin`, `Basic ${b64('x:' + SHARE_PASSWORD)}`, 'application/octet-stream', 'partial'],
      ]);
      return make(
        'body: cut short',
        head(
          [
            `${target[0]} HTTP/1.1`,
            host,
            `Authorization: ${target[1]}`,
            `Content-Type: ${target[2]}`,
            `Content-Length: ${target[3]!.length + r.range(1, 100_000)}`,
          ],
          target[3],
        ),
        r.chance(0.5),
      );
    },
    // a chunked upload dropped mid-stream
    () => {
      const url = r.pick(['/api/v2/user/files/upload?path=/fz-drop.bin', `/api/v2/user/files/upload?path=/docs/fz-drop-${r.int(100)}.bin`]);
      return make(
        'body: dropped mid-upload',
        head(
          [`POST ${url} HTTP/1.1`, host, `Authorization: ${userBearer}`, 'Content-Type: application/octet-stream', 'Transfer-Encoding: chunked'],
          `1000\r\n${'d'.repeat(r.range(1, 4000))}`,
        ),
        true,
      );
    },
    // oversized heads and URLs
    () => {
      const big = r.pick([
        () => head([`GET /api/v2/users/${'u'.repeat(r.pick([20_000, 70_000]))} HTTP/1.1`, host, `Authorization: ${bearer}`, 'Connection: close']),
        () => head(['GET /api/v2/users HTTP/1.1', host, `Authorization: ${bearer}`, `X-Fz: ${'h'.repeat(r.pick([17_000, 80_000]))}`, 'Connection: close']),
        () =>
          head([
            'GET /api/v2/users HTTP/1.1',
            host,
            `Authorization: ${bearer}`,
            ...Array.from({ length: 2500 }, (_, i) => `X-Fz-${i}: 1`),
            'Connection: close',
          ]),
        () =>
          head([
            `GET /api/v2/user/dirs?${Array.from({ length: 5000 }, (_, i) => `p${i}=1`).join('&')} HTTP/1.1`,
            host,
            `Authorization: ${userBearer}`,
            'Connection: close',
          ]),
      ])();
      return make('head: oversized', big);
    },
    // not HTTP/1.1 as the server knows it
    () =>
      make(
        'request line: malformed',
        latin(
          r.pick([
            'FOO /api/v2/users HTTP/1.1\r\nHost: x\r\n\r\n',
            'GET /api/v2/users\r\n\r\n',
            'GET /api/v2/users HTTP/9.9\r\nHost: x\r\n\r\n',
            '\r\n\r\n',
            'GET  HTTP/1.1\r\n\r\n',
            'GET /api/v2/users HTTP/1.1\nHost: x\n\n',
            '\u0016\u0003\u0001\u0002\u0000\u0001\u0000\u0001\u00fc\u0003\u0003',
            'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
          ]),
        ),
      ),
  ])();
}

const r = new Rng(seed);
const cases = Array.from({ length: COUNT }, (_, n) => gen(r.fork(), n));
const only = process.env.FERRY_FUZZ_ONLY ? new Set(process.env.FERRY_FUZZ_ONLY.split(',').map(Number)) : undefined;
const run = only ? cases.filter((c) => only.has(c.n)) : cases;
t.comment(`wire: seed ${seed} (FERRY_FUZZ_SEED=${seed} replays it), ${run.length} exchanges`);

const before = await snapshot(w);
const failures: string[] = [];
const kinds = new Map<string, number>();
let next = 0;
await Promise.all(
  Array.from({ length: 6 }, async () => {
    while (next < run.length) {
      const c = run[next++]!;
      kinds.set(c.kind, (kinds.get(c.kind) ?? 0) + 1);
      const a = await exchange(port, c);
      if (c.cut && a.status === undefined) continue;
      // the HTTP parser refuses some requests before hapi sees them: a bare 4xx, or the connection closed
      if (a.status === undefined) {
        if (a.body.length) failures.push(`${describe(c)}\n  answer is not HTTP: ${JSON.stringify(a.body.slice(0, 200))}`);
        continue;
      }
      const fromApp = (a.headers['content-type'] ?? '').startsWith('application/json') || a.body.length > 0;
      const req = { n: c.n, kind: c.kind, route: '', method: 'GET', url: '', headers: {} } as FuzzRequest;
      const why = fromApp ? verdict(req, a.status, a.headers, a.body) : a.status >= 400 && a.status < 500 ? undefined : `status ${a.status}, expected a 4xx`;
      if (why) failures.push(`${why}\n${describe(c)}\n  answer ${a.status}: ${a.body.slice(0, 300)}`);
    }
  }),
);
t.comment(`kinds: ${[...kinds.entries()].map(([k, n]) => `${k} ${n}`).join(', ')}`);

function describe(c: WireCase): string {
  const text = c.data.subarray(0, 600).toString('latin1');
  return `FERRY_FUZZ_SEED=${seed} FERRY_FUZZ_ONLY=${c.n} [${c.kind}]${c.cut ? ' (cut)' : ''}\n  bytes: ${JSON.stringify(text)}${c.data.length > 600 ? ` … (${c.data.length} bytes)` : ''}`;
}

t.test('every answer is a 4xx (an ApiResponse from the application), never a 5xx', async (t) => {
  for (const f of failures.slice(0, 30)) t.fail(f);
  t.equal(failures.length, 0, `${failures.length} of ${run.length} exchanges answered wrongly`);
});

type Snapshot = { dump: { users?: Record<string, unknown>[] }; files: Record<string, string> };

/**
 * A snapshot without what a cut exchange changes by design: the bytes an
 * upload received before its client left count in the user's upload
 * transfer (docs/file-api.md: the bytes moved are counted, also for failed
 * transfers; compared on their own below), and the process's own folder in
 * the temp area stays once an upload wrote there (the folder only: a file
 * left in it is still a difference).
 */
function comparable(s: Record<string, unknown>): Snapshot {
  const c = structuredClone(s) as Snapshot;
  for (const u of c.dump.users ?? []) delete u.used_upload_data_transfer;
  c.files = Object.fromEntries(Object.entries(c.files).filter(([k, v]) => !(v === 'dir' && /^uploads-tmp\/[^/]+$/.test(k))));
  return c;
}

const uploaded = (s: Record<string, unknown>) =>
  Object.fromEntries(((s as Snapshot).dump.users ?? []).map((u) => [u.username as string, Number(u.used_upload_data_transfer)]));

t.test('cut and refused exchanges leave nothing behind', async (t) => {
  // uploads cut mid-body are cleaned up once the server notices the closed socket: wait for it to drop them
  const open = () => new Promise<number>((res, rej) => w.server.listener.getConnections((e, n) => (e ? rej(e) : res(n))));
  for (let i = 0; i < 200 && (await open()) > 0; i++) await sleep(25);
  let after = await snapshot(w);
  for (let i = 0; i < 100 && JSON.stringify(comparable(after).files) !== JSON.stringify(comparable(before).files); i++) {
    await sleep(50);
    after = await snapshot(w);
  }
  t.same(comparable(after), comparable(before));
  const [was, is] = [uploaded(before), uploaded(after)];
  for (const [name, bytes] of Object.entries(was)) {
    t.ok(is[name]! >= bytes, `${name}: the upload transfer counter only grows (${bytes} -> ${is[name]})`);
    if (name !== w.user) t.equal(is[name], bytes, `${name}, who sent nothing: unchanged`);
  }
  t.same(
    fileTree(w.otherHome),
    { 'secret.txt': before.files && (before.files as Record<string, string>)['homes/fz-other/secret.txt'] },
    "the other user's home is untouched",
  );
});

t.test('the server still answers', async (t) => {
  const res = await fetch(`http://127.0.0.1:${port}/api/v2/user/dirs?path=/docs`, { headers: { authorization: userBearer } });
  t.equal(res.status, 200);
  const tok = await fetch(`http://127.0.0.1:${port}/api/v2/user/token`, { headers: { authorization: `Basic ${b64(`${w.user}:${PASSWORD}`)}` } });
  t.equal(tok.status, 200);
});
