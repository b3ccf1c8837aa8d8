import t from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { sftpBatch, sshKey, startSftp } from './helpers.js';

// The same users and the same OpenSSH client on every storage backend: fs-local, fs-crypt (provider 4),
// S3 (the s3rver of scripts/servers/start-s3.sh) and SFTP (provider 5: the sshd of start-sftp.sh).
// put/get/ls/rename/rm/mkdir/rmdir byte for byte everywhere; reput (resume) where the backend writes at
// an offset, OP_UNSUPPORTED where it cannot.
const S3_ENDPOINT = `http://127.0.0.1:${Number(process.env.FERRY_S3_PORT ?? 19000)}`;
/** The second sshd of scripts/servers/start-sftp.sh and where it keeps its user's home (lib.sh's default). */
const SFTP_SERVER = { port: 19022, user: 'ferrysftp', password: 'ferrysftp-pass' };
const SFTP_HOME = path.join(process.env.FERRY_SERVERS_DIR ?? '/var/lib/ferry-test-servers', 'sftp', 'home', SFTP_SERVER.user);
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const run = randomBytes(6).toString('hex');

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port, timeout: 1000 });
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
    s.once('timeout', () => (s.destroy(), resolve(false)));
  });
}

interface Backend {
  name: string;
  filesystem?: Record<string, unknown>;
  /** The port of the server it needs. */
  needs?: number;
  /** Writes at an offset: reput resumes. */
  resumes: boolean;
  /** Copies on the storage: copy-data (OpenSSH's cp) works, else it is refused as unsupported. */
  copies: boolean;
  /** The stored file of a virtual path, where the test can read it behind Ferry's back. */
  stored?: (home: string, vpath: string) => string;
}

const SFTP_PREFIX = `ferry-test/service-sftp-${run}`;
const BACKENDS: Backend[] = [
  { name: 'fs-local', resumes: true, copies: true, stored: (home, p) => path.join(home, p) },
  {
    name: 'fs-crypt',
    filesystem: { provider: 4, cryptconfig: { passphrase: { status: 'Plain', payload: `crypt-${run}` } } },
    resumes: false,
    copies: true,
    stored: (home, p) => path.join(home, p),
  },
  {
    name: 'S3',
    needs: 19000,
    filesystem: {
      provider: 1,
      s3config: {
        bucket: 'ferry-test',
        endpoint: S3_ENDPOINT,
        region: 'us-east-1',
        access_key: 'S3RVER',
        access_secret: { status: 'Plain', payload: 'S3RVER' },
        force_path_style: true,
        key_prefix: `service-sftp-${run}/`,
      },
    },
    resumes: false,
    copies: true,
  },
  {
    name: 'SFTP',
    needs: SFTP_SERVER.port,
    filesystem: {
      provider: 5,
      sftpconfig: {
        endpoint: `127.0.0.1:${SFTP_SERVER.port}`,
        username: SFTP_SERVER.user,
        password: { status: 'Plain', payload: SFTP_SERVER.password },
        prefix: SFTP_PREFIX,
      },
    },
    resumes: true,
    copies: false,
    stored: (_home, p) => path.join(SFTP_HOME, SFTP_PREFIX, p),
  },
];

t.test('the same users on every backend', async (t) => {
  const h = await startSftp(t, { backends: ['@ferry/fs-local', '@ferry/fs-crypt', '@ferry/fs-s3', '@ferry/fs-sftp'] });
  t.teardown(() => rmSync(path.join(SFTP_HOME, SFTP_PREFIX), { recursive: true, force: true }));
  const dir = t.testdir({});
  const key = await sshKey(dir);
  const data = randomBytes(3 * 1024 * 1024 + 7);
  writeFileSync(path.join(dir, 'f.bin'), data);
  const kept = 1024 * 1024 + 3;
  // the part already on the server is marked: a resumed upload keeps it, a new whole one would not
  const resumed = Buffer.concat([Buffer.alloc(kept, 0x55), data.subarray(kept)]);
  writeFileSync(path.join(dir, 'marked-part.bin'), resumed.subarray(0, kept));

  for (const b of BACKENDS) {
    await t.test(b.name, async (t) => {
      if (b.needs && !(await portOpen(b.needs))) {
        const why = `nothing listens on 127.0.0.1:${b.needs} (bash scripts/servers/up.sh)`;
        if (process.env.CI === 'true') throw new Error(why);
        t.plan(0, why);
        return;
      }
      const user = `u-${b.name.toLowerCase().replace(/[^a-z0-9]/g, '')}`;
      const home = await h.addUser(user, { public_keys: [key.pub], ...(b.filesystem ? { filesystem: b.filesystem } : {}) });
      const local = (name: string) => path.join(dir, `${user}-${name}`);
      const sftp = (lines: string[]) => sftpBatch({ port: h.port, user, key: key.file, dir, lines });

      const r = await sftp([
        'mkdir /d',
        'put f.bin /d/f.bin',
        'ls -l /d',
        `get /d/f.bin ${local('back.bin')}`,
        'rename /d/f.bin /d/g.bin',
        `get /d/g.bin ${local('renamed.bin')}`,
        'ls /d',
      ]);
      t.equal(r.code, 0, r.stderr);
      t.match(r.stdout, new RegExp(`${data.length} .* f\\.bin`), 'ls -l: the size');
      t.match(r.stdout, /ls \/d\n\/d\/g\.bin\s*\n/, 'ls after the rename: the new name only');
      t.equal(sha(readFileSync(local('back.bin'))), sha(data), 'get: the bytes put');
      t.equal(sha(readFileSync(local('renamed.bin'))), sha(data), 'the renamed file: the same bytes');
      if (b.stored) {
        const stored = readFileSync(b.stored(home, '/d/g.bin'));
        if (b.name === 'fs-crypt') {
          t.ok(stored.length > data.length, 'stored encrypted (larger than the plaintext)');
          t.equal(stored.indexOf(data.subarray(0, 64)), -1, 'no plaintext on disk');
        } else t.equal(sha(stored), sha(data), 'stored as sent');
        t.notOk(existsSync(b.stored(home, '/d/f.bin')), 'the old name is gone from the storage');
      }

      const part = await sftp(['put marked-part.bin /d/part.bin']);
      t.equal(part.code, 0, part.stderr);
      const reput = await sftp(['reput f.bin /d/part.bin']);
      const after = await sftp([`get /d/part.bin ${local('part.bin')}`]);
      t.equal(after.code, 0, after.stderr);
      if (b.resumes) {
        t.equal(reput.code, 0, reput.stderr);
        t.equal(sha(readFileSync(local('part.bin'))), sha(resumed), 'resumed: the part kept, the rest appended');
        if (b.stored) t.equal(statSync(b.stored(home, '/d/part.bin')).size, data.length);
      } else {
        t.not(reput.code, 0, 'reput is refused');
        t.match(reput.stderr, /not supported|unsupported/i, 'as unsupported');
        t.equal(sha(readFileSync(local('part.bin'))), sha(resumed.subarray(0, kept)), 'the part is left as it was');
      }

      // copy-data: OpenSSH's cp, done by the storage (a local copy, S3's CopyObject) or refused as unsupported
      const cp = await sftp(['cp /d/g.bin /d/copy.bin', `get /d/copy.bin ${local('copy.bin')}`]);
      if (b.copies) {
        t.equal(cp.code, 0, cp.stderr);
        t.equal(sha(readFileSync(local('copy.bin'))), sha(data), 'cp: the same bytes');
      } else {
        t.not(cp.code, 0, 'cp is refused');
        t.match(cp.stderr, /unsupported/i, 'as unsupported');
        t.notOk(existsSync(local('copy.bin')), 'nothing was copied');
      }
      // a refused cp leaves the target it opened empty, as OpenSSH's sftp-server does
      t.equal((await sftp(['-rm /d/copy.bin'])).code, 0);

      const notEmpty = await sftp(['rmdir /d']);
      t.not(notEmpty.code, 0, 'rmdir of a directory that is not empty fails');
      const cleaned = await sftp(['rm /d/g.bin', 'rm /d/part.bin', 'rmdir /d', 'ls -a /']);
      t.equal(cleaned.code, 0, cleaned.stderr);
      const missing = await sftp(['ls /d']);
      t.not(missing.code, 0, 'the directory is gone');
      if (b.stored) t.notOk(existsSync(b.stored(home, '/d')), 'and gone from the storage');
    });
  }
});
