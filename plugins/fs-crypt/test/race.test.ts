import path from 'node:path';
import t from 'tap';
import { localRaceConformance } from '@ferry/testkit';
import { CryptFs } from '../src/index.js';

await localRaceConformance(t, {
  name: 'fs-crypt',
  create: async (root, dataDir) => new CryptFs({ root, tempDir: path.join(dataDir, 'uploads-tmp'), passphrase: 'p', scrypt: { logN: 10, r: 8, p: 1 } }),
});
