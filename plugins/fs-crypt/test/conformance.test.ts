import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';
import { fsConformance } from '@ferry/testkit';
import { cryptFsProvider } from '../src/index.js';

const base = t.testdir({});
let n = 0;

await fsConformance(t, {
  name: 'fs-crypt',
  async create() {
    const dir = path.join(base, `instance-${n++}`);
    await mkdir(dir);
    return cryptFsProvider.create(
      { passphrase: 'correct horse battery staple' },
      { username: 'alice', root: path.join(dir, 'home'), dataDir: path.join(dir, 'data') },
    );
  },
});
