import t from 'tap';
import os from 'node:os';
import { fsConformance } from '@ferry/testkit';
import { closeAllPools, sftpProvider } from '../src/index.js';
import { requireSftpServer, sftpOptions } from './fixtures/sftp-server.js';

if (await requireSftpServer(t)) {
  const provider = sftpProvider({ idle_timeout: 10 });
  t.teardown(closeAllPools);
  // Each create() is a fresh, empty Fs under a new random prefix (created on first use).
  await fsConformance(t, {
    name: 'sftp',
    create: async () => provider.create(sftpOptions(), { username: 'conformance', dataDir: os.tmpdir() }),
    largeFileSize: 16 * 1024 * 1024,
  });
}
