/**
 * Seeded malformed SFTP v3 packets (not a test file): a session is an INIT
 * (usually: sometimes none, a bad version, or requests before it), then
 * requests of every type whose fields are fuzzed (invalid UTF-8 and NUL in
 * names, string lengths past the packet, huge ids, offsets and read
 * lengths, wrong handles, attributes with garbage flags and huge extended
 * counts, extended requests with garbage), INIT again, and possibly a last
 * packet that breaks the framing (length 0, a request without an id, a
 * length past the maximum, a truncated packet, an unknown or a reply type).
 */
import type { Rng } from './prng.js';

/** Request types of SFTP v3 (draft-ietf-secsh-filexfer-02). */
export const REQ = {
  INIT: 1,
  OPEN: 3,
  CLOSE: 4,
  READ: 5,
  WRITE: 6,
  LSTAT: 7,
  FSTAT: 8,
  SETSTAT: 9,
  FSETSTAT: 10,
  OPENDIR: 11,
  READDIR: 12,
  REMOVE: 13,
  MKDIR: 14,
  RMDIR: 15,
  REALPATH: 16,
  STAT: 17,
  RENAME: 18,
  READLINK: 19,
  SYMLINK: 20,
  EXTENDED: 200,
} as const;

export const REPLY = { VERSION: 2, STATUS: 101, HANDLE: 102, DATA: 103, NAME: 104, ATTRS: 105, EXTENDED_REPLY: 201 } as const;

/** What the server owes a packet: a reply with its id, the VERSION, or nothing in particular (it may end the channel). */
export const ANSWERS = { NONE: 0, ID: 1, VERSION: 2 } as const;

export interface FuzzPacket {
  kind: string;
  id?: number;
  answers: number;
  /** The bytes, built when sent (handles the server gave earlier in the session may be used). */
  build(): Buffer;
}

const u8 = (n: number) => Buffer.from([n & 0xff]);
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};
const u64 = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt.asUintN(64, n));
  return b;
};
/** An SFTP string with its right length. */
const str = (b: Buffer | string) => {
  const v = Buffer.isBuffer(b) ? b : Buffer.from(b);
  return Buffer.concat([u32(v.length), v]);
};
/** A framed packet: length, type, body. */
export const sftpPacket = (type: number, body: Buffer) => Buffer.concat([u32(body.length + 1), u8(type), body]);

const NAMES: (string | Buffer)[] = [
  '/',
  '.',
  '',
  '/f1.txt',
  'f1.txt',
  '/dir',
  'dir/f2.txt',
  '/dir/sub',
  '/dir/many-7.txt',
  '../../../../etc/passwd',
  '/..',
  'a\u0000b',
  '/f1.txt\u0000.jpg',
  '\u0000',
  '/dir/\n',
  '\\..\\..\\windows',
  'ü/ñ/漢字',
  Buffer.from([0xc3, 0x28]),
  Buffer.from([0xff, 0xfe, 0xfd, 0x2f, 0x61]),
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0x2f, 0xc0, 0xae, 0xc0, 0xae, 0x2f]),
  Buffer.from([0x2f, 0x80]),
];

export function generateSession(rng: Rng, handles: readonly Buffer[]): FuzzPacket[] {
  const ids = new Set<number>();
  const nextId = () => {
    for (;;) {
      const id = rng.weighted<number>([
        [6, rng.int(1000)],
        [1, 0],
        [2, 0xffffffff - rng.int(64)],
        [1, 0x80000000 + rng.int(64)],
      ]);
      if (!ids.has(id)) return (ids.add(id), id);
    }
  };
  /** A string field: the right length mostly, else a length past the packet or short of it. */
  const field = (v: Buffer | string): Buffer => {
    const s = str(v);
    return rng.weighted<() => Buffer>([
      [200, () => s],
      [1, () => Buffer.concat([u32(0xffffffff), s.subarray(4)])],
      [1, () => Buffer.concat([u32(s.length + rng.range(1, 64)), s.subarray(4)])],
      [1, () => (s.length > 4 ? Buffer.concat([u32(s.length - 5), s.subarray(4)]) : s)],
    ])();
  };
  const name = () =>
    field(
      rng.weighted<() => Buffer | string>([
        [12, () => rng.pick(NAMES)],
        [2, () => `/new-${rng.int(50)}${rng.chance(0.5) ? '.txt' : ''}`],
        [1, () => 'x'.repeat(rng.pick([255, 256, 4096, 70_000]))],
        [1, () => Buffer.from(Array.from({ length: rng.range(1, 40) }, () => rng.int(256)))],
      ])(),
    );
  const handle = () =>
    field(
      rng.weighted<() => Buffer>([
        [6, () => (handles.length ? rng.pick(handles) : u32(rng.int(8)))],
        [2, () => u32(rng.u32())],
        [1, () => Buffer.alloc(0)],
        [1, () => Buffer.alloc(rng.pick([3, 5, 256, 300]), rng.int(256))],
      ])(),
    );
  const offset = () => rng.pick([0n, 1n, 4096n, 300n * 1024n, 1n << 31n, 1n << 32n, (1n << 53n) + 1n, (1n << 63n) - 1n, (1n << 64n) - 1n, BigInt(rng.u32())]);
  const attrs = (): Buffer => {
    const flags = rng.weighted<number>([
      [4, 0],
      [2, 8],
      [1, 1 | 2 | 4 | 8],
      [1, 0x80000000],
      [1, rng.u32()],
    ]);
    const parts: Buffer[] = [u32(flags)];
    if (flags & 1) parts.push(u64(offset()));
    if (flags & 2) parts.push(u32(rng.u32()), u32(rng.u32()));
    if (flags & 4) parts.push(u32(rng.pick([0o644, 0o777, 0o4755, 0xffffffff, rng.u32()])));
    if (flags & 8) parts.push(u32(rng.u32()), u32(rng.pick([0, 1_000_000_000, 0xffffffff, rng.u32()])));
    if (flags & 0x80000000) {
      const count = rng.pick([0, 1, 3, 0xffff, 0xffffffff]);
      parts.push(u32(count));
      for (let i = 0; i < Math.min(count, 3); i++) parts.push(field('x@example.com'), field(Buffer.alloc(rng.int(64), 0x41)));
    }
    // attributes cut short (the packet ends inside them)
    return rng.chance(0.01) ? Buffer.concat(parts).subarray(0, rng.int(Buffer.concat(parts).length)) : Buffer.concat(parts);
  };
  const extended = (): Buffer => {
    const ext = rng.pick<string | Buffer>([
      'posix-rename@openssh.com',
      'limits@openssh.com',
      'statvfs@openssh.com',
      'fstatvfs@openssh.com',
      'hardlink@openssh.com',
      'fsync@openssh.com',
      'lsetstat@openssh.com',
      'expand-path@openssh.com',
      'copy-data',
      'check-file-name',
      'home-directory',
      '',
      Buffer.from([0xff, 0x00, 0xfe]),
      'x'.repeat(5000),
    ]);
    const data = rng.weighted<() => Buffer>([
      [2, () => Buffer.concat([name(), name()])],
      [1, () => name()],
      [1, () => Buffer.concat([handle(), u64(offset()), u64(offset()), handle(), u64(offset())])],
      [1, () => Buffer.alloc(0)],
      [1, () => Buffer.from(Array.from({ length: rng.int(100) }, () => rng.int(256)))],
    ])();
    return Buffer.concat([field(ext), data]);
  };
  const bodies: Record<string, () => Buffer> = {
    OPEN: () => Buffer.concat([name(), u32(rng.pick([1, 2, 3, 0x1a, 0x2a, 0x0a, 0x3f, 0, rng.u32()])), attrs()]),
    CLOSE: handle,
    READ: () => Buffer.concat([handle(), u64(offset()), u32(rng.pick([0, 1, 32768, 255 * 1024, 256 * 1024 + 1, 0x7fffffff, 0xffffffff]))]),
    WRITE: () => Buffer.concat([handle(), u64(offset()), field(Buffer.alloc(rng.pick([0, 1, 100, 4096, 40_000]), 0x57))]),
    LSTAT: name,
    FSTAT: handle,
    SETSTAT: () => Buffer.concat([name(), attrs()]),
    FSETSTAT: () => Buffer.concat([handle(), attrs()]),
    OPENDIR: name,
    READDIR: handle,
    REMOVE: name,
    MKDIR: () => Buffer.concat([name(), attrs()]),
    RMDIR: name,
    REALPATH: () => (rng.chance(0.8) ? name() : Buffer.concat([name(), u8(rng.int(4)), name()])),
    STAT: name,
    RENAME: () => Buffer.concat([name(), name()]),
    READLINK: name,
    SYMLINK: () => Buffer.concat([name(), name()]),
    EXTENDED: extended,
  };
  const request = (kindPrefix = ''): FuzzPacket => {
    const kind = rng.pick(Object.keys(bodies)) as keyof typeof bodies;
    const id = nextId();
    const trailing = rng.chance(0.05) ? Buffer.alloc(rng.range(1, 32), 0x5a) : Buffer.alloc(0);
    return {
      kind: `${kindPrefix}${kind}`,
      id,
      answers: ANSWERS.ID,
      build: () => sftpPacket(REQ[kind as keyof typeof REQ], Buffer.concat([u32(id), bodies[kind]!(), trailing])),
    };
  };
  const init = (version: number, kind = 'INIT'): FuzzPacket => ({
    kind,
    answers: ANSWERS.VERSION,
    build: () =>
      sftpPacket(
        REQ.INIT,
        Buffer.concat([
          u32(version),
          // extension pairs (ignored), rarely a name without its data
          ...(rng.chance(0.1) ? [str('ext@example.com'), str('1')] : []),
          ...(rng.chance(0.02) ? [str('lone@example.com')] : []),
        ]),
      ),
  });

  const out: FuzzPacket[] = [];
  rng.weighted<() => void>([
    [17, () => out.push(init(3))],
    [1, () => out.push({ ...init(rng.pick([0, 1, 2, 6, 0xffffffff]), 'INIT (other version)'), answers: ANSWERS.NONE })],
    [1, () => out.push({ ...request('before INIT: '), answers: ANSWERS.NONE })],
    [1, () => out.push({ kind: 'INIT (cut short)', answers: ANSWERS.NONE, build: () => sftpPacket(REQ.INIT, Buffer.from([0, 0])) })],
  ])();
  const n = rng.range(10, 40);
  for (let i = 0; i < n; i++) {
    if (rng.chance(0.03)) out.push({ ...init(3, 'INIT again'), answers: ANSWERS.NONE });
    else out.push(request());
  }
  if (rng.chance(0.6)) out.push(breaker(rng));
  return out;
}

/** A last packet that breaks the framing or the protocol: the server may end the channel, never crash. */
function breaker(rng: Rng): FuzzPacket {
  const body = () => Buffer.from(Array.from({ length: rng.int(40) }, () => rng.int(256)));
  return rng.pick<FuzzPacket>([
    { kind: 'frame: length 0', answers: ANSWERS.NONE, build: () => u32(0) },
    { kind: 'frame: a type without an id', answers: ANSWERS.NONE, build: () => Buffer.concat([u32(1), u8(rng.pick([3, 4, 5, 17, 200]))]) },
    {
      kind: 'frame: length past the maximum',
      answers: ANSWERS.NONE,
      build: () => Buffer.concat([u32(rng.pick([0x7fffffff, 0xffffffff, 256 * 1024 + 100])), u8(REQ.STAT), body()]),
    },
    { kind: 'frame: truncated', answers: ANSWERS.NONE, build: () => Buffer.concat([u32(100), u8(REQ.STAT), u32(7), str('/f1')]) },
    { kind: 'frame: 3 bytes of a length', answers: ANSWERS.NONE, build: () => Buffer.from([0, 0, 1]) },
    {
      kind: 'unknown type',
      answers: ANSWERS.NONE,
      build: () => sftpPacket(rng.pick([0, 21, 99, 150, 199, 202, 255]), Buffer.concat([u32(rng.u32()), body()])),
    },
    {
      kind: 'a reply type sent as a request',
      answers: ANSWERS.NONE,
      build: () => sftpPacket(rng.pick([2, 101, 102, 103, 104, 105, 201]), Buffer.concat([u32(rng.u32()), body()])),
    },
    { kind: 'random bytes', answers: ANSWERS.NONE, build: () => Buffer.from(Array.from({ length: rng.range(1, 200) }, () => rng.int(256))) },
  ]);
}
