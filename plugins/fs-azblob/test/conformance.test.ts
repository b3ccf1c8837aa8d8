import t from 'tap';
import { fsConformance } from '@ferry/testkit';
import { azUnavailable, createTestFs } from './fixtures/server.js';

const why = await azUnavailable();
if (why) {
  t.comment(`skipping the Azure Blob conformance suite: ${why}`);
  t.plan(0, why);
  process.exit(0);
}

await fsConformance(t, {
  name: 'azblob',
  create: async () => createTestFs(),
  largeFileSize: 16 * 1024 * 1024,
});
