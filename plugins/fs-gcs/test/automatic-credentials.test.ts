import { writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { readFile, setEnvForTest, startFormStub, writeFile } from '@ferry/testkit';
import { gcsProvider, type GcsFs } from '../src/index.js';
import { clearClients } from '../src/gcs-client.js';
import { BUCKET, RecordingRelay, randomPrefix, requireGcsServer } from './fixtures/gcs-server.js';

// automatic_credentials: 1 uses Application Default Credentials, here found through
// GOOGLE_APPLICATION_CREDENTIALS. A service-account key cannot be used offline (its
// token endpoint is fixed to Google's), so the file is an `external_account`
// (workload identity federation) configuration whose `token_url` points at a local
// wire-protocol stub of Google's STS token exchange (RFC 8693 form POST, JSON answer).
// The access token it issues must then appear on every request to the emulator.

t.test('automatic_credentials through GOOGLE_APPLICATION_CREDENTIALS', async (t) => {
  if (!(await requireGcsServer(t))) return;
  const exchanges: URLSearchParams[] = [];
  const sts = await startFormStub(t, (params, req) => {
    exchanges.push(params);
    if (req.method !== 'POST' || params.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:token-exchange') {
      return { status: 400, contentType: 'application/json', body: JSON.stringify({ error: 'invalid_grant' }) };
    }
    return {
      status: 200,
      contentType: 'application/json',
      body: JSON.stringify({
        access_token: 'ferry-adc-access-token',
        issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        token_type: 'Bearer',
        expires_in: 3600,
      }),
    };
  });

  const dir = t.testdir({ 'subject-token.jwt': 'ferry-subject-token' });
  const file = path.join(dir, 'adc.json');
  writeFileSync(
    file,
    JSON.stringify({
      type: 'external_account',
      audience: '//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/ferry/providers/test',
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      token_url: `${sts.url}/v1/token`,
      credential_source: { file: path.join(dir, 'subject-token.jwt') },
    }),
  );
  setEnvForTest(t, 'GOOGLE_APPLICATION_CREDENTIALS', file);
  t.teardown(() => clearClients());

  const relay = await new RecordingRelay().start();
  t.teardown(() => relay.stop());
  const provider = gcsProvider({ endpoint: relay.endpoint, endpoint_auth: true });
  t.error(provider.optionsSchema.validate({ bucket: BUCKET, automatic_credentials: 1 }).error, 'no credentials needed in the options');
  const fs = (await provider.create({ bucket: BUCKET, automatic_credentials: 1, key_prefix: randomPrefix('adc') }, { username: 'u', dataDir: dir })) as GcsFs;
  t.teardown(async () => {
    await fs.remove('/', { recursive: true }).catch(() => undefined);
    await fs.close();
  });
  await writeFile(fs, '/adc.txt', 'written with application default credentials');
  t.equal((await readFile(fs, '/adc.txt')).toString(), 'written with application default credentials');

  t.ok(exchanges.length >= 1, 'the credentials file was used: a token exchange happened');
  t.equal(exchanges[0]?.get('subject_token'), 'ferry-subject-token', 'with the subject token of the file');
  t.ok(relay.requests.length > 0);
  t.ok(
    relay.requests.every((r) => r.headers.authorization === 'Bearer ferry-adc-access-token'),
    'every storage request carries the access token from ADC',
  );
});
