import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import t from 'tap';
import { PASSWORD, run, startFtp } from './helpers.js';

// Python's ftplib as the client: each step is a command line sent as is (its
// reply, or "error <reply>" for a refusal), or a RETR after RANG read from the
// data connection ("data <base64>").
const CLIENT = `
import base64, ftplib, json, sys
port, user, password = sys.argv[1:4]
steps = json.load(sys.stdin)
ftp = ftplib.FTP(timeout=30)
ftp.connect("127.0.0.1", int(port))
ftp.login(user, password)
out = []
for step in steps:
    try:
        if step.startswith("GET "):
            rang, name = step[4:].split(" ", 2)[:2], step[4:].split(" ", 2)[2]
            ftp.voidcmd("TYPE I")
            ftp.sendcmd("RANG " + " ".join(rang))
            conn = ftp.transfercmd("RETR " + name)
            got = b""
            while True:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                got += chunk
            conn.close()
            ftp.voidresp()
            out.append("data " + base64.b64encode(got).decode())
        else:
            out.append(ftp.sendcmd(step))
    except ftplib.Error as e:
        out.append("error " + str(e))
ftp.quit()
print(json.dumps(out))
`;

const hex = (algo: string, b: Buffer) => {
  if (algo !== 'crc32') return createHash(algo).update(b).digest('hex');
  return crc32(b).toString(16).padStart(8, '0');
};

t.test('file hashes over FTP: HASH, OPTS HASH, RANG and the X commands with ftplib', async (t) => {
  const h = await startFtp(t, { ftp: { bindings: [{ address: '127.0.0.1', port: 0, tls_mode: 'plain' }] } });
  const vault = path.join(h.ta.dataDir, 'vault');
  mkdirSync(vault, { recursive: true });
  const folder = await h.ta.inject('POST', '/api/v2/folders', { token: h.token, payload: { name: 'vault', mapped_path: vault } });
  t.equal(folder.statusCode, 201, folder.payload);
  const home = await h.addUser('hugo', {
    permissions: { '/': ['*'], '/listonly': ['list'] },
    filters: { file_patterns: [{ path: '/', denied_patterns: ['*.secret'] }] },
    virtual_folders: [{ name: 'vault', virtual_path: '/vault', quota_size: -1, quota_files: -1 }],
  });
  mkdirSync(path.join(home, 'dir'), { recursive: true });
  mkdirSync(path.join(home, 'listonly'), { recursive: true });
  const data = randomBytes(300 * 1024 + 17);
  const small = Buffer.from('The quick brown fox jumps over the lazy dog');
  writeFileSync(path.join(home, 'f.bin'), data);
  writeFileSync(path.join(home, 'dir', 'my file 2.txt'), small);
  writeFileSync(path.join(home, 'listonly', 'x.bin'), small);
  writeFileSync(path.join(home, 'hidden.secret'), small);
  writeFileSync(path.join(home, 'empty'), '');
  writeFileSync(path.join(vault, 'v.bin'), data.subarray(0, 5000));

  const client = async (steps: string[]) => {
    const r = await run('python3', ['-c', CLIENT, String(h.port), 'hugo', PASSWORD('hugo')], { input: JSON.stringify(steps) });
    if (r.code !== 0) throw new Error(r.stderr);
    return JSON.parse(r.stdout) as string[];
  };

  t.test('FEAT advertises HASH (the selected algorithm starred), RANG and the X commands', async (t) => {
    const [feat, opts, after, back, current] = await client(['FEAT', 'OPTS HASH md5', 'FEAT', 'OPTS HASH SHA-256', 'OPTS HASH']);
    t.match(feat, /^ HASH SHA-256\*;SHA-512;SHA-1;MD5;CRC32$/m);
    for (const x of ['XCRC', 'XMD5', 'XSHA1', 'XSHA256', 'XSHA512', 'RANG STREAM']) t.match(feat, new RegExp(`^ ${x}$`, 'm'), x);
    t.equal(opts, '200 MD5', 'OPTS HASH is case-insensitive');
    t.match(after, /^ HASH SHA-256;SHA-512;SHA-1;MD5\*;CRC32$/m, 'FEAT follows the selection');
    t.equal(back, '200 SHA-256');
    t.equal(current, '200 SHA-256', 'OPTS HASH alone names the algorithm in use');
  });

  t.test('HASH with every algorithm, compared with node:crypto', async (t) => {
    const names = { 'SHA-256': 'sha256', 'SHA-512': 'sha512', 'SHA-1': 'sha1', MD5: 'md5', CRC32: 'crc32' };
    const steps = Object.keys(names).flatMap((n) => [`OPTS HASH ${n}`, 'HASH f.bin', 'HASH /dir/my file 2.txt', 'HASH empty']);
    const replies = await client(['HASH f.bin', ...steps, 'OPTS HASH whirlpool', 'HASH f.bin']);
    t.equal(replies[0], `213 SHA-256 0-${data.length} ${hex('sha256', data)} f.bin`, 'SHA-256 by default');
    Object.entries(names).forEach(([name, algo], i) => {
      const [opts, whole, spaced, empty] = replies.slice(1 + i * 4, 5 + i * 4);
      t.equal(opts, `200 ${name}`);
      t.equal(whole, `213 ${name} 0-${data.length} ${hex(algo, data)} f.bin`, name);
      t.equal(spaced, `213 ${name} 0-${small.length} ${hex(algo, small)} /dir/my file 2.txt`, `${name}: a path with spaces`);
      t.equal(empty, `213 ${name} 0-0 ${hex(algo, Buffer.alloc(0))} empty`, `${name}: an empty file`);
    });
    t.match(replies.at(-2), /^error 504 Unknown hash algorithm whirlpool/, 'an unknown algorithm');
    t.match(replies.at(-1), /^213 CRC32 /, 'the selection is kept after a refused OPTS HASH');
  });

  t.test('RANG: HASH and RETR of a byte range', async (t) => {
    const [rang, hashed, reset, full, bad, past, cleared, got] = await client([
      'RANG 10 1009',
      'HASH f.bin',
      'RANG 1 0',
      'HASH f.bin',
      'RANG 9 3',
      'RANG 1000000 2000000',
      'HASH f.bin',
      'GET 100 199 f.bin',
    ]);
    t.equal(rang, '350 Restarting at 10. Ending at 1009.');
    t.equal(hashed, `213 SHA-256 10-1010 ${hex('sha256', data.subarray(10, 1010))} f.bin`, 'the range, end exclusive in the reply');
    t.match(reset, /^350 /, 'RANG 1 0 clears the range');
    t.equal(full, `213 SHA-256 0-${data.length} ${hex('sha256', data)} f.bin`, 'the whole file after RANG 1 0');
    t.match(bad, /^error 501 /, 'an end before the start');
    t.match(past, /^350 /);
    t.equal(cleared, `213 SHA-256 ${data.length}-${data.length} ${hex('sha256', Buffer.alloc(0))} f.bin`, 'a range past the end: nothing hashed');
    t.same(Buffer.from(got!.slice(5), 'base64'), data.subarray(100, 200), 'RETR after RANG 100 199 sends those 100 bytes');
    const [once, again] = await client(['RANG 0 9', 'NOOP', 'HASH f.bin']).then((r) => [r[1], r[2]]);
    t.match(once, /^200 /);
    t.equal(again, `213 SHA-256 0-${data.length} ${hex('sha256', data)} f.bin`, 'RANG applies to the next transfer or HASH only');
    const [, stor] = await client(['RANG 0 9', 'STOR x.bin']);
    t.match(stor, /^error 503 RANG applies to RETR and HASH only/);
  });

  t.test('XMD5, XSHA1, XSHA256, XSHA512, XCRC: whole files and ranges', async (t) => {
    const legacy = { XMD5: 'md5', XSHA1: 'sha1', XSHA256: 'sha256', XSHA512: 'sha512', XCRC: 'crc32' };
    for (const [verb, algo] of Object.entries(legacy)) {
      const [whole, end, both, commas, quoted, zeroEnd] = await client([
        `${verb} f.bin`,
        `${verb} f.bin 4096`,
        `${verb} f.bin 100 4096`,
        `${verb} f.bin,100,4096`,
        `${verb} "/dir/my file 2.txt"`,
        `${verb} f.bin 100 0`,
      ]);
      t.equal(whole, `250 ${hex(algo, data)}`, `${verb}: the whole file`);
      t.equal(end, `250 ${hex(algo, data.subarray(0, 4096))}`, `${verb} path end`);
      t.equal(both, `250 ${hex(algo, data.subarray(100, 4096))}`, `${verb} path start end`);
      t.equal(commas, `250 ${hex(algo, data.subarray(100, 4096))}`, `${verb} path,start,end`);
      t.equal(quoted, `250 ${hex(algo, small)}`, `${verb}: a quoted name ending in a number`);
      t.equal(zeroEnd, `250 ${hex(algo, data.subarray(100))}`, `${verb}: end 0 is the end of the file`);
    }
    const [backwards, none] = await client(['XMD5 f.bin 100 50', 'XMD5']);
    t.match(backwards, /^error 501 /, 'an end before the start');
    t.match(none, /^error 501 /, 'no path');
  });

  t.test('refusals: no download permission, a hidden name, a missing file, a directory', async (t) => {
    const cmds = ['HASH', 'XMD5', 'XSHA1', 'XSHA256', 'XSHA512', 'XCRC'];
    const replies = await client(cmds.flatMap((c) => [`${c} listonly/x.bin`, `${c} hidden.secret`, `${c} nothere.bin`, `${c} dir`, `${c} /`]));
    cmds.forEach((c, i) => {
      const [denied, hidden, missing, dir, root] = replies.slice(i * 5, i * 5 + 5);
      t.match(denied, /^error 550 Cannot hash \/listonly\/x\.bin: permission denied: .*"download"/, `${c}: no download permission`);
      t.match(hidden, /^error 550 Cannot hash \/hidden\.secret: /, `${c}: a name the file patterns deny`);
      t.match(missing, /^error 550 Cannot hash \/nothere\.bin: /, `${c}: a missing file`);
      t.equal(dir, 'error 550 /dir is a directory: only files have hashes.', `${c}: a directory`);
      t.equal(root, 'error 550 / is a directory: only files have hashes.', `${c}: the root`);
    });
  });

  t.test('a file of a virtual folder', async (t) => {
    const part = data.subarray(0, 5000);
    const [hashed, x, ranged] = await client(['HASH /vault/v.bin', 'XSHA512 vault/v.bin', 'XCRC vault/v.bin 10 20']);
    t.equal(hashed, `213 SHA-256 0-5000 ${hex('sha256', part)} /vault/v.bin`);
    t.equal(x, `250 ${hex('sha512', part)}`);
    t.equal(ranged, `250 ${hex('crc32', part.subarray(10, 20))}`);
  });

  t.test('hashes are downloads: the events say so', async (t) => {
    t.ok(
      h.fsEvents.some((e) => e.action === 'download' && e.protocol === 'FTP' && e.virtual_path === '/vault/v.bin'),
      'a download event with protocol FTP for the hashed file',
    );
  });
});
