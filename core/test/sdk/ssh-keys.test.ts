import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import ssh2 from 'ssh2';
import type { ParsedKey } from 'ssh2';
import t from 'tap';
import { generateSshKeyPair, type SshKeyType } from '../../src/sdk/ssh-keys.js';

const run = promisify(execFile);
const parse = (data: string): ParsedKey | Error => {
  const k = ssh2.utils.parseKey(data);
  return Array.isArray(k) ? k[0]! : k;
};

/** Every way ssh2 could refuse a pair: parsing either half, the halves disagreeing, or a signature not verifying. */
function problemsOf(pair: { private: string; public: string }): string[] {
  const priv = parse(pair.private);
  const pub = parse(pair.public);
  if (priv instanceof Error) return [`private: ${priv.message}`];
  if (pub instanceof Error) return [`public: ${pub.message}`];
  const problems: string[] = [];
  if (!priv.isPrivateKey()) problems.push('private key parsed as public');
  if (!priv.getPublicSSH().equals(pub.getPublicSSH())) problems.push('the halves are different keys');
  if (!pub.getPublicSSH().equals(Buffer.from(pair.public.split(' ')[1]!, 'base64'))) problems.push('public blob re-encoded differently');
  const data = Buffer.from('signed by the generated key');
  const signature = priv.sign(data);
  if (signature instanceof Error || !pub.verify(data, signature)) problems.push('signature does not verify');
  return problems;
}

// ssh2's own generator fails about once in 256 ed25519 keys (a public key with a leading zero byte is
// shortened), so 2,000 keys all parse only when the encoding is right (ssh2's would fail 2,000 with p > 0.999)
t.test('ssh2 reads every generated key back and signs with it', async (t) => {
  const cases: [SshKeyType, number | undefined, number][] = [
    ['ed25519', undefined, 2000],
    ['ecdsa', 256, 40],
    ['ecdsa', 384, 20],
    ['ecdsa', 521, 20],
    ['rsa', 2048, 3],
  ];
  for (const [type, bits, count] of cases) {
    const failures: string[] = [];
    for (let i = 0; i < count; i++) failures.push(...problemsOf(generateSshKeyPair(type, { bits })));
    t.same(failures, [], `${type}${bits ? ` ${bits}` : ''}: ${count} keys`);
  }
});

t.test('OpenSSH reads the private key files and derives the same public keys', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'ferry-ssh-keys-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  for (const [type, bits, expected] of [
    ['ed25519', undefined, 'ssh-ed25519'],
    ['ecdsa', 256, 'ecdsa-sha2-nistp256'],
    ['ecdsa', 521, 'ecdsa-sha2-nistp521'],
    ['rsa', 2048, 'ssh-rsa'],
  ] as const) {
    const pair = generateSshKeyPair(type, { bits, comment: 'ferry@test' });
    const file = path.join(dir, `${type}-${bits ?? 0}`);
    await writeFile(file, pair.private, { mode: 0o600 });
    t.equal(pair.public.split(' ')[0], expected, `${type}: the key type`);
    t.equal(pair.public.split(' ')[2], 'ferry@test', `${type}: the comment follows the public key`);
    // -P '': a file ssh-keygen cannot read fails instead of prompting for a passphrase (which would wait forever)
    const derived = (await run('ssh-keygen', ['-y', '-P', '', '-f', file], { timeout: 60_000 })).stdout.trim();
    t.equal(derived.split(' ').slice(0, 2).join(' '), pair.public.split(' ').slice(0, 2).join(' '), `${type}: ssh-keygen -y derives the public key`);
    const listed = (await run('ssh-keygen', ['-l', '-f', file], { timeout: 60_000 })).stdout;
    t.match(listed, /ferry@test/, `${type}: ssh-keygen -l reads the comment stored in the private key`);
  }
});

t.test('sizes the format has no curve or safe modulus for are refused', async (t) => {
  t.throws(() => generateSshKeyPair('ecdsa', { bits: 255 }), /256, 384 or 521/);
  t.throws(() => generateSshKeyPair('rsa', { bits: 1024 }), /at least 2048/);
  t.throws(() => generateSshKeyPair('dsa' as SshKeyType), /unknown SSH key type/);
});
