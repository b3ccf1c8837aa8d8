import t from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sftpBatch, sshKey, startSftp } from './helpers.js';

// The same OpenSSH client on a backend without writes at an offset (S3, on the s3rver the test
// servers run): whole uploads and downloads work, a resumed upload is refused clearly.
const S3_ENDPOINT = `http://127.0.0.1:${Number(process.env.FERRY_S3_PORT ?? 19000)}`;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

t.test('S3: put, get and cp (copy-data); reput is OP_UNSUPPORTED', async (t) => {
  const h = await startSftp(t, { backends: ['@ferry/fs-local', '@ferry/fs-s3'] });
  const dir = t.testdir({});
  const key = await sshKey(dir);
  await h.addUser('stan', {
    public_keys: [key.pub],
    filesystem: {
      provider: 1,
      s3config: {
        bucket: 'ferry-test',
        endpoint: S3_ENDPOINT,
        region: 'us-east-1',
        access_key: 'S3RVER',
        access_secret: { status: 'Plain', payload: 'S3RVER' },
        force_path_style: true,
        key_prefix: `service-sftp-${randomBytes(6).toString('hex')}/`,
      },
    },
  });
  const data = randomBytes(3 * 1024 * 1024 + 7);
  writeFileSync(path.join(dir, 'f.bin'), data);
  const sftp = (lines: string[]) => sftpBatch({ port: h.port, user: 'stan', key: key.file, dir, lines });
  const r = await sftp(['put f.bin /f.bin', 'get /f.bin back.bin', 'ls -l /']);
  t.equal(r.code, 0, r.stderr);
  t.equal(sha(readFileSync(path.join(dir, 'back.bin'))), sha(data), 'the same bytes back');
  t.match(r.stdout, /f\.bin/);
  writeFileSync(path.join(dir, 'half.bin'), data.subarray(0, 1024 * 1024));
  const resume = await sftp(['put half.bin /part.bin', 'reput f.bin /part.bin']);
  t.not(resume.code, 0, 'resuming is refused');
  t.match(resume.stderr, /not supported|unsupported/i);
  // copy-data: OpenSSH's cp, done by S3 (CopyObject)
  const cp = await sftp(['cp /f.bin /copy.bin', 'get /copy.bin copy.bin', 'rm /copy.bin']);
  t.equal(cp.code, 0, cp.stderr);
  t.equal(sha(readFileSync(path.join(dir, 'copy.bin'))), sha(data), 'cp: copied by the storage');
  const after = await sftp(['get /f.bin again.bin', 'rm /f.bin', 'rm /part.bin']);
  t.equal(after.code, 0, after.stderr);
  t.equal(sha(readFileSync(path.join(dir, 'again.bin'))), sha(data), 'the file is as it was');
});
