// @ferry-test database-independent: the account lives in the database only as settings; what is
// fuzzed is the SFTP service's parsing and its handles (runs once in CI, on SQLite).
import t from 'tap';
import { mkdirSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { captureLogger, createTestApp } from '@ferry/core/testing';
import ssh2, { type ClientChannel } from 'ssh2';
import { fuzzSeed, Rng } from './helpers/prng.js';
import { ANSWERS, REPLY, type FuzzPacket, generateSession } from './helpers/sftp-packets.js';

// Malformed SFTP packets over real SSH sessions: raw bytes on the `sftp`
// subsystem channel of an ssh2 client (bad lengths, truncated packets,
// lengths past the maximum, unknown types, huge counts and ids, invalid
// UTF-8 and NUL in names, wrong handles, huge read lengths, extended
// requests with garbage, INIT twice, requests before INIT). Each session is
// a seeded list of packets (helpers/sftp-packets.ts) sent one at a time:
// every well-formed request must be answered (a reply with its id) or end
// the channel, never leave the client waiting; the SSH connection must
// survive its channels. Afterwards: no descriptor into the user's tree is
// left open, no connection is listed, a normal SFTP session works, and no
// log line holds an error stack.

const seed = fuzzSeed(0x5eed5f79);
const SESSIONS = Number(process.env.FERRY_FUZZ_SFTP ?? 300);
const only = process.env.FERRY_FUZZ_ONLY?.split(',').map(Number);
/** SSH connections sending sessions concurrently. */
const WORKERS = 3;
/** Silence after which a packet counts as unanswered (far past any answer on 127.0.0.1). */
const SILENCE_MS = 10_000;

const { logger, lines } = captureLogger();
const ta = await createTestApp({
  plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/service-sftp', config: { bindings: [{ address: '127.0.0.1', port: 0 }] } }],
  logger,
});
t.teardown(() => ta.close());
await ta.app.start();
const admin = await ta.adminToken();
const status = await ta.inject('GET', '/api/v2/status', { token: admin });
const port = (status.result as { ssh: { bindings: { port: number }[] } }).ssh.bindings[0]!.port;
const home = path.join(ta.dataDir, 'homes', 'fuzzy');
mkdirSync(path.join(home, 'dir/sub'), { recursive: true });
writeFileSync(path.join(home, 'f1.txt'), Buffer.alloc(300 * 1024, 'f'));
writeFileSync(path.join(home, 'dir/f2.txt'), 'f2');
for (let i = 0; i < 300; i++) writeFileSync(path.join(home, `dir/many-${i}.txt`), String(i));
const user = await ta.inject('POST', '/api/v2/users', {
  token: admin,
  payload: { username: 'fuzzy', password: 'fuzzy-pass-1', status: 1, home_dir: home, permissions: { '/': ['*'] } },
});
if (user.statusCode !== 201) throw new Error(user.payload);

/** Descriptors of this process (the server's) open into the user's tree: what they point at. */
const openIntoHome = () =>
  readdirSync('/proc/self/fd')
    .map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return '';
      }
    })
    .filter((target) => target.startsWith(home))
    .map((target) => path.relative(home, target) || '.');
const fdsIntoHome = () => openIntoHome().length;

function connect(): Promise<ssh2.Client> {
  return new Promise((resolve, reject) => {
    const c = new ssh2.Client();
    c.once('ready', () => resolve(c));
    c.once('error', reject);
    c.connect({ host: '127.0.0.1', port, username: 'fuzzy', password: 'fuzzy-pass-1', readyTimeout: 20_000 });
  });
}

/** The `sftp` subsystem as a raw channel: bytes in, replies parsed by id. */
class RawSftp {
  private buf = Buffer.alloc(0);
  private readonly waiting = new Map<number, (reply: { type: number; body: Buffer }) => void>();
  closed = false;
  private onClose: (() => void)[] = [];
  /** Handles the server gave (HANDLE replies): the generator uses them. */
  readonly handles: Buffer[] = [];
  /** Replies whose framing did not parse (a server defect). */
  readonly garbled: string[] = [];

  constructor(readonly ch: ClientChannel) {
    ch.on('data', (d: Buffer) => this.data(d));
    ch.stderr.on('data', () => undefined);
    ch.on('close', () => {
      this.closed = true;
      for (const f of this.onClose) f();
    });
  }

  static open(c: ssh2.Client): Promise<RawSftp> {
    return new Promise((resolve, reject) => c.subsys('sftp', (err, ch) => (err ? reject(err) : resolve(new RawSftp(ch)))));
  }

  private data(d: Buffer): void {
    this.buf = Buffer.concat([this.buf, d]);
    while (this.buf.length >= 4) {
      const len = this.buf.readUInt32BE(0);
      if (len < 1 || len > 256 * 1024 + 1024) {
        this.garbled.push(`a reply of length ${len}`);
        this.buf = Buffer.alloc(0);
        return;
      }
      if (this.buf.length < 4 + len) return;
      const type = this.buf[4]!;
      const body = this.buf.subarray(5, 4 + len);
      this.buf = this.buf.subarray(4 + len);
      if (type === REPLY.HANDLE && body.length >= 8) this.handles.push(body.subarray(8, 8 + body.readUInt32BE(4)));
      const id = type === REPLY.VERSION ? -1 : body.length >= 4 ? body.readUInt32BE(0) : -2;
      const w = this.waiting.get(id);
      this.waiting.delete(id);
      w?.({ type, body });
    }
  }

  /** Sends bytes; resolves with the reply to `answerId` ('closed' when the channel ended first, 'silent' after SILENCE_MS). */
  send(bytes: Buffer, answerId: number | null): Promise<'answered' | 'closed' | 'silent' | 'sent'> {
    if (this.closed) return Promise.resolve('closed');
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = (r: 'answered' | 'closed' | 'silent' | 'sent') => {
        if (timer) clearTimeout(timer);
        this.onClose = this.onClose.filter((f) => f !== closed);
        if (answerId !== null) this.waiting.delete(answerId);
        resolve(r);
      };
      const closed = () => done('closed');
      this.onClose.push(closed);
      if (answerId !== null) {
        this.waiting.set(answerId, () => done('answered'));
        timer = setTimeout(() => done('silent'), SILENCE_MS);
      }
      this.ch.write(bytes);
      if (answerId === null) setImmediate(() => done('sent'));
    });
  }

  /** Ends our side and waits for the channel to close (the server ends its side in answer). */
  end(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.onClose.push(resolve);
      this.ch.end();
    });
  }
}

const stats = { sessions: 0, packets: 0, answered: 0, closedChannel: 0, sent: 0 };
const byKind = new Map<string, number>();
/** The packets whose channel ended under them, by kind. */
const endedBy = new Map<string, number>();
const problems: string[] = [];

/** One SFTP channel: the session's packets one at a time, then our end of the channel. */
async function session(conn: ssh2.Client, s: number, rng: Rng): Promise<void> {
  const started = Date.now();
  const raw = await RawSftp.open(conn);
  stats.sessions++;
  const packets: FuzzPacket[] = generateSession(rng, raw.handles);
  for (let i = 0; i < packets.length && !raw.closed; i++) {
    const p = packets[i]!;
    const bytes = p.build();
    stats.packets++;
    byKind.set(p.kind, (byKind.get(p.kind) ?? 0) + 1);
    const r = await raw.send(bytes, p.answers === ANSWERS.ID ? p.id! : p.answers === ANSWERS.VERSION ? -1 : null);
    if (process.env.FERRY_FUZZ_TIMES) console.error(`  ${s}.${i} ${p.kind} id ${p.id}: ${r} ${bytes.subarray(0, 48).toString('hex')}`);
    if (r === 'answered') stats.answered++;
    else if (r === 'closed') {
      stats.closedChannel++;
      endedBy.set(p.kind, (endedBy.get(p.kind) ?? 0) + 1);
    } else if (r === 'sent') stats.sent++;
    else problems.push(`FERRY_FUZZ_SEED=${seed} FERRY_FUZZ_ONLY=${s}: packet ${i} (${p.kind}) unanswered: ${bytes.subarray(0, 64).toString('hex')}`);
  }
  await raw.end();
  if (raw.garbled.length) problems.push(`FERRY_FUZZ_SEED=${seed} FERRY_FUZZ_ONLY=${s}: ${raw.garbled[0]}`);
  if (process.env.FERRY_FUZZ_TIMES) console.error(`session ${s}: ${packets.length} packets, ${Date.now() - started} ms, fds ${openIntoHome().join(',')}`);
}

t.test(`${SESSIONS} sessions of malformed SFTP packets`, async (t) => {
  const root = new Rng(seed);
  // each session's packets come from its own generator, forked in order whatever runs concurrently
  const rngs = Array.from({ length: SESSIONS }, () => root.fork());
  const baseline = fdsIntoHome();
  let next = 0;
  /** One SSH connection taking sessions in turn (WORKERS of them: a channel's file session takes a while to open). */
  const worker = async () => {
    let conn = await connect();
    let connClosed = false;
    const watch = (c: ssh2.Client) => c.once('close', () => (connClosed = true));
    watch(conn);
    for (let s = next++; s < SESSIONS; s = next++) {
      if (only && !only.includes(s)) continue;
      if (connClosed) {
        problems.push(`session ${s}: the SSH connection had closed (after an earlier session of its worker)`);
        conn = await connect();
        connClosed = false;
        watch(conn);
      }
      await session(conn, s, rngs[s]!);
    }
    conn.end();
    await new Promise<void>((resolve) => (connClosed ? resolve() : conn.once('close', () => resolve())));
  };
  await Promise.all(Array.from({ length: WORKERS }, worker));
  t.comment(`seed ${seed} (FERRY_FUZZ_SEED=${seed} replays it): ${JSON.stringify(stats)}`);
  for (const [k, n] of [...byKind].sort()) t.comment(`  ${k}: ${n} sent${endedBy.has(k) ? `, ${endedBy.get(k)} ended their channel` : ''}`);
  t.ok(only || stats.packets >= 3000, `${stats.packets} packets sent`);
  t.ok(only || (stats.answered > stats.packets / 3 && stats.closedChannel > 10), 'the packets were parsed: many answered, some ended their channel');
  t.same(problems.slice(0, 10), [], 'every request answered or its channel ended; the connection survived its channels');
  // the server closes the file sessions of the channels as they end: wait (bounded) for the last ones
  const list = async () => JSON.parse((await ta.inject('GET', '/api/v2/connections', { token: admin })).payload) as unknown[];
  for (let i = 0; i < 400 && ((await list()).length > 0 || fdsIntoHome() > baseline); i++) await new Promise((r) => setTimeout(r, 25));
  t.equal(fdsIntoHome(), baseline, `no descriptor into the user's tree left open (${baseline} before): ${openIntoHome().slice(0, 10).join(', ')}`);
  t.same(await list(), [], 'no connection left');
});

t.test('the server still serves a normal SFTP session', async (t) => {
  const c = await connect();
  t.teardown(() => c.end());
  const sftp = await new Promise<ssh2.SFTPWrapper>((resolve, reject) => c.sftp((err, s) => (err ? reject(err) : resolve(s))));
  const data = Buffer.from('after the fuzz');
  await new Promise<void>((resolve, reject) => sftp.writeFile('/after.txt', data, (err) => (err ? reject(err) : resolve())));
  const back = await new Promise<Buffer>((resolve, reject) => sftp.readFile('/after.txt', (err, b) => (err ? reject(err) : resolve(b))));
  t.same(back, data, 'written and read back');
  // a directory the fuzz never saw (it may have renamed or removed what it found)
  mkdirSync(path.join(home, 'after'));
  for (let i = 0; i < 300; i++) writeFileSync(path.join(home, `after/n-${i}.txt`), String(i));
  const names = await new Promise<string[]>((resolve, reject) => sftp.readdir('/after', (err, l) => (err ? reject(err) : resolve(l.map((e) => e.filename)))));
  t.equal(names.length, 300, '/after listed whole');
});

t.test('no error stack in any log line', async (t) => {
  const stacks = lines.filter((l) => /"stack"|\n\s+at /.test(l));
  t.same(
    stacks.slice(0, 3).map((l) => l.slice(0, 600)),
    [],
    `${lines.length} log lines, none with a stack`,
  );
  t.same(lines.filter((l) => /"level":(50|60)/.test(l)).slice(0, 3), [], 'no error or fatal line');
});
