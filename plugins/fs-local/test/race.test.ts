import path from 'node:path';
import t from 'tap';
import { localRaceConformance } from '@ferry/testkit';
import { LocalFs } from '../src/index.js';

await localRaceConformance(t, {
  name: 'fs-local',
  create: async (root, dataDir) => new LocalFs({ root, tempDir: path.join(dataDir, 'uploads-tmp') }),
});
