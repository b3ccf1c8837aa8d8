import t from 'tap';
import { fsConformance } from '@ferry/testkit';
import { gcsProvider } from '../src/index.js';
import { ENDPOINT, freshBucket, gcsOptions, requireGcsServer } from './fixtures/gcs-server.js';

if (await requireGcsServer(t)) {
  // 4 MB upload parts, so the large file goes out as a multi-request resumable upload.
  const provider = gcsProvider({ endpoint: ENDPOINT });
  await fsConformance(t, {
    name: 'gcs',
    // Each create() is a fresh, empty Fs: a new bucket (the emulator makes it on first use) and key prefix.
    create: async () => provider.create(gcsOptions({ bucket: freshBucket(), upload_part_size: 4 }), { username: 'conformance', dataDir: '.' }),
    largeFileSize: 16 * 1024 * 1024,
  });
}
