import t from 'tap';
import { fsConformance } from '@ferry/testkit';
import { createTestFs, s3Unavailable } from './fixtures/server.js';

const why = await s3Unavailable();
if (why) {
  t.comment(`skipping the S3 conformance suite: ${why}`);
  t.plan(0, why);
  process.exit(0);
}

await fsConformance(t, {
  name: 's3',
  create: async () => createTestFs(),
  largeFileSize: 16 * 1024 * 1024,
});
