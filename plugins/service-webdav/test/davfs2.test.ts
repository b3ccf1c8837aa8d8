import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { run, startWebdav } from './helpers.js';

// davfs2 (Debian's package, installed by scripts/servers/start-clients.sh) mounts Ferry's WebDAV
// service as a Linux filesystem through FUSE, as a user of a mounted drive has it: files written,
// read, renamed, deleted and directories made through the kernel, checked on Ferry's side.
// Mounting needs root and /dev/fuse: where either is missing (an unprivileged container) the test
// says so and is skipped; the machines of this project's CI have both.

const mountable = process.getuid?.() === 0 && existsSync('/dev/fuse') && existsSync('/usr/sbin/mount.davfs');

t.test(
  'davfs2: a mounted drive writes, reads, renames, deletes and makes directories',
  { skip: mountable ? false : 'davfs2 needs root, /dev/fuse and /usr/sbin/mount.davfs here' },
  async (t) => {
    const h = await startWebdav(t);
    const home = await h.addUser('mnt');
    const dir = t.testdir({ mnt: {} });
    const mnt = path.join(dir, 'mnt');
    const url = `${h.base}/`;
    const secrets = path.join(dir, 'secrets');
    writeFileSync(secrets, `${url} mnt mnt-pass-1\n`, { mode: 0o600 });
    const conf = path.join(dir, 'davfs2.conf');
    // no wait before a closed file goes up, no questions (the cache is davfs2's own, /var/cache/davfs2, a directory per mount point)
    writeFileSync(conf, [`secrets ${secrets}`, 'ask_auth 0', 'delay_upload 0', 'use_locks 1', ''].join('\n'));
    // a file Ferry holds before the mount (davfs2 keeps its view of a directory for a minute)
    mkdirSync(home, { recursive: true });
    writeFileSync(path.join(home, 'from-ferry.txt'), 'on the server side');
    const mounted = await run('mount', ['-t', 'davfs', '-o', `conf=${conf},uid=0,gid=0`, url, mnt], {});
    t.equal(mounted.code, 0, 'mounted', { out: mounted.stdout + mounted.stderr });
    if (mounted.code !== 0) return;
    let unmounted = false;
    const unmount = async () => {
      if (unmounted) return;
      unmounted = true;
      // umount waits until davfs2 has uploaded what is still in its cache
      const r = await run('umount', [mnt], {});
      t.equal(r.code, 0, 'unmounted', { out: r.stdout + r.stderr });
    };
    t.teardown(async () => {
      if (!unmounted) execFileSync('umount', ['-l', mnt], { stdio: 'ignore' });
    });

    // (asynchronous calls only: a synchronous one on the mount would block this process, Ferry's
    // too, while davfs2 waits for Ferry's answer)
    const payload = Buffer.alloc(3 * 1024 * 1024 + 17, 'davfs2 ');
    await fsp.mkdir(path.join(mnt, 'docs/inner'), { recursive: true });
    await fsp.writeFile(path.join(mnt, 'docs/inner/big.bin'), payload);
    await fsp.writeFile(path.join(mnt, 'docs/note.txt'), 'written through the kernel\n');
    await fsp.writeFile(path.join(mnt, 'gone.txt'), 'short-lived');
    await fsp.rename(path.join(mnt, 'docs/note.txt'), path.join(mnt, 'docs/renamed.txt'));
    await fsp.rm(path.join(mnt, 'gone.txt'));
    await fsp.mkdir(path.join(mnt, 'empty'));
    await fsp.rmdir(path.join(mnt, 'empty'));
    // (no readdir: davfs2 1.6.1 answers EINVAL to every directory read on this kernel's FUSE, against
    // any server: rclone's `serve webdav` too; lookups by name work)
    t.ok((await fsp.stat(path.join(mnt, 'docs/inner'))).isDirectory(), 'a directory made through the mount is one through it');
    t.equal(await fsp.readFile(path.join(mnt, 'from-ferry.txt'), 'utf8'), 'on the server side', 'a file of the server is read through the mount');
    t.ok((await fsp.readFile(path.join(mnt, 'docs/inner/big.bin'))).equals(payload), 'the file written reads back through the mount');
    t.equal((await fsp.stat(path.join(mnt, 'docs/renamed.txt'))).size, 27, 'the renamed file has its size through the mount');
    await unmount();

    t.ok(readFileSync(path.join(home, 'docs/inner/big.bin')).equals(payload), 'the file written through the mount is on the server, byte for byte');
    t.equal(readFileSync(path.join(home, 'docs/renamed.txt'), 'utf8'), 'written through the kernel\n', 'renamed on the server');
    t.notOk(existsSync(path.join(home, 'docs/note.txt')), 'the old name is gone');
    t.notOk(existsSync(path.join(home, 'gone.txt')), 'deleted on the server');
    t.notOk(existsSync(path.join(home, 'empty')), 'the directory made and removed is not there');
    t.ok(statSync(path.join(home, 'docs/inner')).isDirectory(), 'nested directories made through the mount');
  },
);
