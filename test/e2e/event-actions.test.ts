/**
 * Event actions end to end, through HTTP against a real `ferry serve`
 * process: a rule on the upload of a `*.csv` file (trigger 1, every action
 * execute_sync) PGP-encrypts the file to `/encrypted/{{.Name}}.pgp`
 * (action 9, sub-type 7), deletes the original (9, sub-type 2), posts a JSON
 * webhook (1) and emails the encrypted file as an attachment (3). Each step
 * is checked where it lands: the file API and the disk, a node:http
 * receiver, an in-process SMTP server (smtp-server, STARTTLS disabled) whose
 * messages are parsed with mailparser, and openpgp with the private key.
 *
 * `.Name` is the user's name for filesystem events (api-spec: template
 * context), so the encrypted file of user `csvuser` is `/encrypted/csvuser.pgp`.
 */
import t from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as openpgp from 'openpgp';
import { SMTPServer } from 'smtp-server';
import { simpleParser } from 'mailparser';
import { call, serve, token, writeConfig, ADMIN } from './helpers/server.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

// ---- receivers on 127.0.0.1 ----
const hooks: { method: string; url: string; headers: http.IncomingHttpHeaders; body: Buffer }[] = [];
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    hooks.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
    res.writeHead(204).end();
  });
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
t.teardown(() => new Promise<void>((r) => receiver.close(() => r())));
const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/upload`;

const mails: { from: string; to: string[]; raw: Buffer }[] = [];
const smtp = new SMTPServer({
  secure: false,
  disabledCommands: ['STARTTLS', 'AUTH'],
  authOptional: true,
  logger: false,
  onData(stream, session, cb) {
    const chunks: Buffer[] = [];
    stream.on('data', (d: Buffer) => chunks.push(d));
    stream.on('end', () => {
      mails.push({
        from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
        to: session.envelope.rcptTo.map((r) => r.address),
        raw: Buffer.concat(chunks),
      });
      cb();
    });
  },
});
await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
t.teardown(() => new Promise<void>((r) => smtp.close(() => r())));
const smtpPort = (smtp.server.address() as AddressInfo).port;

// ---- the server, with the four action plugins ----
const dir = mkdtempSync(path.join(os.tmpdir(), 'ferry-e2e-actions-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const config = writeConfig(dir, {
  plugins: ['@ferry/fs-local', '@ferry/action-fs', '@ferry/action-http', '@ferry/action-email'],
  extra: `smtp:\n  host: 127.0.0.1\n  port: ${smtpPort}\n  from: "Ferry <ferry@example.com>"\n  encryption: 0\nevent_manager:\n  rules_cache_ttl: 0\n`,
});
const server = await serve(config);
t.teardown(() => server.kill());
const base = server.url;
const admin = await token(base, 'admin', ADMIN.username, ADMIN.password);
const api = async (method: string, url: string, body?: unknown) => {
  const r = await call(`${base}${url}`, method, { token: admin, body });
  if (r.status >= 300) throw new Error(`${method} ${url}: ${r.status} ${r.text}`);
  return r;
};

const keys = await openpgp.generateKey({ type: 'ecc', curve: 'curve25519Legacy', userIDs: [{ name: 'Ops', email: 'ops@example.com' }], format: 'armored' });
const home = path.join(dir, 'homes', 'csvuser');
mkdirSync(home, { recursive: true });
await api('POST', '/api/v2/users', { username: 'csvuser', password: 'csv-user-password-1', status: 1, home_dir: home, permissions: { '/': ['*'] } });
const user = await token(base, 'user', 'csvuser', 'csv-user-password-1');
const asUser = (method: string, url: string, body?: Uint8Array, headers: Record<string, string> = {}) =>
  fetch(`${base}${url}`, { method, headers: { authorization: `Bearer ${user}`, ...headers }, body });
const mk = await asUser('POST', `/api/v2/user/dirs?path=${encodeURIComponent('/encrypted')}`);
if (mk.status >= 300) throw new Error(`mkdir /encrypted: ${mk.status} ${await mk.text()}`);

t.test('the four action types are accepted by POST /api/v2/eventactions', async (t) => {
  const actions = [
    {
      name: 'encrypt-csv',
      type: 9,
      options: {
        fs_config: { type: 7, pgp: { mode: 1, paths: [{ key: '{{.VirtualPath}}', value: '/encrypted/{{.Name}}.pgp' }], public_keys: [keys.publicKey] } },
      },
    },
    { name: 'delete-original', type: 9, options: { fs_config: { type: 2, deletes: ['{{.VirtualPath}}'] } } },
    {
      name: 'webhook',
      type: 1,
      options: {
        http_config: {
          endpoint: hookUrl,
          method: 'POST',
          timeout: 10,
          headers: [{ key: 'Content-Type', value: 'application/json' }],
          body: '{"name":{{toJson .Name}},"virtual_path":{{toJson .VirtualPath}},"file_size":{{.FileSize}},"event":"{{toJsonUnquoted .Event}}"}',
        },
      },
    },
    {
      name: 'mail-encrypted',
      type: 3,
      options: {
        email_config: {
          recipients: ['ops@example.com'],
          bcc: ['audit@example.com'],
          subject: 'Encrypted upload {{.VirtualPath}} by {{.Name}}',
          body: 'The file {{.VirtualPath}} ({{.FileSize}} bytes) was encrypted to /encrypted/{{.Name}}.pgp',
          attachments: ['/encrypted/{{.Name}}.pgp'],
        },
      },
    },
  ];
  for (const a of actions) {
    const r = await call(`${base}/api/v2/eventactions`, 'POST', { token: admin, body: a });
    t.equal(r.status, 201, `${a.name} (type ${a.type}): ${r.status === 201 ? 'created' : r.text}`);
  }
  const rule = await call(`${base}/api/v2/eventrules`, 'POST', {
    token: admin,
    body: {
      name: 'csv-pipeline',
      status: 1,
      trigger: 1,
      conditions: { fs_events: ['upload'], options: { fs_paths: [{ pattern: '**/*.csv' }] } },
      actions: ['encrypt-csv', 'delete-original', 'webhook', 'mail-encrypted'].map((name, i) => ({
        name,
        order: i + 1,
        relation_options: { execute_sync: true, stop_on_failure: true },
      })),
    },
  });
  t.equal(rule.status, 201, `the rule is created${rule.status === 201 ? '' : `: ${rule.text}`}`);
});

t.test('uploading a .csv runs the pipeline: encrypted, original deleted, webhook posted, mail with the encrypted file', async (t) => {
  const content = Buffer.concat([Buffer.from('id,name,amount\r\n1,"Zoë, ""the"" first",10.5\r\n'), randomBytes(300_000)]);
  const up = await asUser('POST', `/api/v2/user/files/upload?path=${encodeURIComponent('/in/report.csv')}&mkdir_parents=true`, content, {
    'content-type': 'application/octet-stream',
  });
  t.equal(up.status, 201, `upload answered ${up.status} ${up.status === 201 ? '' : await up.text()}`);

  // 1. encrypted to /encrypted/csvuser.pgp, decrypting to the upload
  const enc = await asUser('GET', `/api/v2/user/files?path=${encodeURIComponent('/encrypted/csvuser.pgp')}`);
  t.equal(enc.status, 200, 'the encrypted file is there');
  const encrypted = Buffer.from(await enc.arrayBuffer());
  t.same(readFileSync(path.join(home, 'encrypted', 'csvuser.pgp')), encrypted, 'on disk in the home directory');
  const priv = await openpgp.readPrivateKey({ armoredKey: keys.privateKey });
  const { data } = await openpgp.decrypt({
    message: await openpgp.readMessage({ binaryMessage: new Uint8Array(encrypted) }),
    decryptionKeys: priv,
    format: 'binary',
  });
  t.equal(sha(Buffer.from(data as Uint8Array)), sha(content), 'it decrypts, with the private key, to the uploaded bytes');

  // 2. the original is gone
  t.equal((await asUser('GET', `/api/v2/user/files?path=${encodeURIComponent('/in/report.csv')}`)).status, 404, 'the original is deleted');
  t.notOk(existsSync(path.join(home, 'in', 'report.csv')));

  // 3. the webhook
  t.equal(hooks.length, 1, 'one webhook call');
  const hook = hooks[0]!;
  t.equal(hook.method, 'POST');
  t.equal(hook.url, '/hooks/upload');
  t.equal(hook.headers['content-type'], 'application/json');
  t.same(JSON.parse(hook.body.toString('utf8')), { name: 'csvuser', virtual_path: '/in/report.csv', file_size: content.length, event: 'upload' });

  // 4. the mail, with the encrypted file attached byte for byte
  t.equal(mails.length, 1, 'one message');
  const mail = mails[0]!;
  t.same(mail.to.sort(), ['audit@example.com', 'ops@example.com'], 'delivered to the recipient and the bcc');
  t.equal(mail.from, 'ferry@example.com');
  const parsed = await simpleParser(mail.raw);
  t.equal(parsed.subject, 'Encrypted upload /in/report.csv by csvuser');
  t.match(parsed.to, { text: 'ops@example.com' });
  t.notOk(mail.raw.toString('latin1').toLowerCase().includes('audit@example.com'), 'the bcc is not in the message headers');
  t.match(parsed.text ?? '', `The file /in/report.csv (${content.length} bytes) was encrypted to /encrypted/csvuser.pgp`);
  t.equal(parsed.attachments.length, 1, 'one attachment');
  const att = parsed.attachments[0]!;
  t.equal(att.filename, 'csvuser.pgp');
  t.equal(sha(att.content), sha(encrypted), 'the attachment is the encrypted file, byte-exact');
});

t.test('a file not matching the rule is left alone', async (t) => {
  const before = { hooks: hooks.length, mails: mails.length };
  const up = await asUser('POST', `/api/v2/user/files/upload?path=${encodeURIComponent('/in/notes.txt')}`, Buffer.from('plain'), {
    'content-type': 'application/octet-stream',
  });
  t.equal(up.status, 201);
  t.equal((await asUser('GET', `/api/v2/user/files?path=${encodeURIComponent('/in/notes.txt')}`)).status, 200, 'still there');
  t.same({ hooks: hooks.length, mails: mails.length }, before, 'no webhook, no mail');
});
