import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { fsConformance } from '@ferry/testkit';
import { startHttpFsServer, type RunningHttpFsServer } from '../../../examples/httpfs-server/src/server.js';
import { AgentPool, createHttpProvider } from '../src/index.js';
import { basicOptions, PASSWORD, USER } from './fixtures/server.js';

// Every create() gets a fresh reference server on a fresh root, all closed at the end.
const running: { srv: RunningHttpFsServer; root: string }[] = [];
const provider = createHttpProvider({}, new AgentPool(8));
t.teardown(async () => {
  await provider.agents.destroy();
  for (const { srv, root } of running) {
    await srv.close();
    await rm(root, { recursive: true, force: true });
  }
});

await fsConformance(t, {
  name: 'http',
  largeFileSize: 16 * 1024 * 1024,
  create: async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'ferry-httpfs-conf-'));
    const srv = await startHttpFsServer({ root, username: USER, password: PASSWORD });
    running.push({ srv, root });
    return provider.create(basicOptions(srv.url), { username: 'conformance', dataDir: os.tmpdir() });
  },
});
