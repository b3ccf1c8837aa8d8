import path from 'node:path';
import t from 'tap';
import { localEscapeConformance } from '@ferry/testkit';
import { CryptFs } from '../src/index.js';

await localEscapeConformance(t, {
  name: 'fs-crypt',
  create: async (root, dataDir) =>
    // A cheap scrypt keeps 61 fresh instances fast; the cost parameter does not affect confinement.
    new CryptFs({ root, tempDir: path.join(dataDir, 'uploads-tmp'), passphrase: 'p', scrypt: { logN: 10, r: 8, p: 1 } }),
});
