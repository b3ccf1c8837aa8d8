// A fake Google service-account key for the GCS emulator of scripts/servers
// (start-gcs.sh), shared by the fs-gcs tests and the benchmarks. Plain
// JavaScript (types beside it) so that benchmarks load it without a build.
import { generateKeyPairSync, randomBytes } from 'node:crypto';

let cached;

/**
 * Base64 of a service-account key that parses (a fresh 2048-bit RSA key): the
 * plugin requires credentials, the emulator checks none. Without `extra` the
 * same key is returned each call; with `extra` (members to set, e.g. another
 * client_email) a new one.
 */
export function fakeGcsServiceAccountB64(extra = {}) {
  const custom = Object.keys(extra).length > 0;
  if (cached && !custom) return cached;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const json = {
    type: 'service_account',
    project_id: 'demo-ferry',
    private_key_id: randomBytes(20).toString('hex'),
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: 'ferry-test@demo-ferry.iam.gserviceaccount.com',
    client_id: '1234567890',
    token_uri: 'https://oauth2.googleapis.com/token',
    ...extra,
  };
  const b64 = Buffer.from(JSON.stringify(json)).toString('base64');
  if (!custom) cached = b64;
  return b64;
}
