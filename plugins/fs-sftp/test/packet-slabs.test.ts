import t from 'tap';
// first: the plugin's library, as the server imports it (ssh2 through core's loader, src/ssh2-first.ts)
import '../src/lib.js';
import { createHash, randomBytes } from 'node:crypto';
import os from 'node:os';
import { Readable } from 'node:stream';
import { packetSlabs, type FsScope } from '@ferry/core';
import { closeAllPools, sftpProvider } from '../src/index.js';
import type { SftpFs } from '../src/sftp.fs.js';
import { requireSftpServer, sftpOptions } from './fixtures/sftp-server.js';

// An upload to SFTP storage sends its data in SSH packets built in reused
// buffers (core's SDK, pooledSshPackets), and the storage gets every byte.
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

if (await requireSftpServer(t)) {
  t.teardown(closeAllPools);
  t.test("an upload's packets come from reused buffers; the file arrives whole", async (t) => {
    const scope: FsScope = { username: 'tester', dataDir: os.tmpdir() };
    const fs = (await sftpProvider({ idle_timeout: 5, connect_timeout: 5 }).create(sftpOptions({}), scope)) as SftpFs;
    t.teardown(() => fs.close());
    const data = randomBytes(4 * 1024 * 1024 + 321);
    const name = `/slabs-${randomBytes(4).toString('hex')}.bin`;
    const reused = packetSlabs.reused;
    const h = await fs.openWrite(name, {});
    Readable.from([data]).pipe(h.stream);
    await h.done;
    t.ok(packetSlabs.reused - reused > 60, `the upload's packets were built in reused buffers (${packetSlabs.reused - reused})`);
    const parts: Buffer[] = [];
    for await (const c of await fs.openRead(name, {})) parts.push(c as Buffer);
    t.equal(sha(Buffer.concat(parts)), sha(data), 'the storage has the same bytes');
    await fs.remove(name);
  });
}
