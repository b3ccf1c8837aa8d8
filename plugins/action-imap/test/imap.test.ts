import t from 'tap';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { TOKENS, type ActionTypeDef, type EventManager } from '@ferry/core';
import { createTestApp } from '@ferry/core/testing';
import { plainSecret, runAction, saveActionOptions } from '@ferry/testkit';
import { imapActionDef, pluginConfigSchema, type ImapPluginConfig } from '../src/index.js';
import { HOST, OTHER, PORT, TLS_PORT, USER, folderInfo, readFolder, requireDovecot, uniqueFolder } from './fixtures/dovecot.js';

if (await requireDovecot(t)) {
  const LIMIT = 3 * 1024 * 1024;
  const ta = await createTestApp({
    plugins: [
      { name: '@ferry/fs-local' },
      { name: '@ferry/fs-crypt' },
      {
        name: '@ferry/action-imap',
        config: {
          host: HOST,
          port: PORT,
          tls: 0,
          username: USER.user,
          password: USER.pass,
          from: 'ferry@ferry.test',
          max_attachments_size: LIMIT,
          timeout: 10,
        },
      },
    ],
  });
  t.teardown(() => ta.close());
  const admin = await ta.adminToken();
  const def = ta.app.container.resolve<{ actionType(n: number): ActionTypeDef | undefined }>(TOKENS.Plugins).actionType(16)!;
  const mgr = ta.app.container.resolve<EventManager>(TOKENS.EventManager);

  const addUser = async (username: string, provider: 0 | 4): Promise<string> => {
    const filesystem = provider === 0 ? { provider: 0 } : { provider: 4, cryptconfig: { passphrase: { status: 'Plain', payload: 'crypt-passphrase-1' } } };
    const r = await ta.inject('POST', '/api/v2/users', {
      token: admin,
      payload: {
        username,
        password: `${username}-password-1`,
        status: 1,
        home_dir: path.join(ta.dataDir, 'homes', username),
        permissions: { '/': ['*'] },
        filesystem,
      },
    });
    if (r.statusCode !== 201) throw new Error(r.payload);
    return ta.userToken(username, `${username}-password-1`);
  };
  const upload = async (token: string, vpath: string, body: Buffer) => {
    const r = await ta.inject('POST', `/api/v2/user/files/upload?path=${encodeURIComponent(vpath)}`, {
      token,
      payload: body,
      headers: { 'content-type': 'application/octet-stream' },
    });
    if (r.statusCode !== 201) throw new Error(`upload ${vpath}: ${r.statusCode} ${r.payload}`);
  };
  const run = (options: Record<string, unknown>, username = 'alice') => runAction(def, options, { event: { username, virtual_path: '/in/data.csv' } });
  const addrs = (a: unknown) => ([] as { value: { address?: string }[] }[]).concat((a as never) ?? []).flatMap((x) => x.value.map((v) => v.address));

  const alice = await addUser('alice', 0);
  const crypto = await addUser('crypto', 4);
  const bin = randomBytes(1024 * 1024 + 33);
  const enc = randomBytes(300 * 1024);
  await ta.inject('POST', '/api/v2/user/dirs?path=%2Fin', { token: alice });
  await upload(alice, '/in/data.bin', bin);
  await upload(alice, '/in/ünï näme.txt', Buffer.from('grüße\n'));
  await upload(crypto, '/secret.bin', enc);

  t.test('a message with streamed attachments is appended to a folder created when missing', async (t) => {
    const base = uniqueFolder('new');
    t.equal(await folderInfo(`${base}/alice`), undefined, 'the folder does not exist yet');
    await run({
      email: ['ops@ferry.test', '{{.Name}}@ferry.test', '{{.Email}}'],
      subject: 'Upload {{.ObjectName}} by {{.Name}}',
      body: 'File {{.VirtualPath}} ({{.FileSize}} bytes)\n',
      attachments: ['/in/data.bin', '/in/ünï näme.txt'],
      target_folder: `${base}/{{.Name}}`,
    });
    const info = await folderInfo(`${base}/alice`);
    t.same(info, { path: `${base}/alice`, subscribed: true }, 'created (with its parent) and subscribed');
    const msgs = await readFolder(`${base}/alice`);
    t.equal(msgs.length, 1, 'one message');
    const m = msgs[0]!.parsed;
    t.equal(m.subject, 'Upload data.csv by alice');
    t.same(addrs(m.to), ['ops@ferry.test', 'alice@ferry.test'], 'To: the rendered addresses (an empty one skipped)');
    t.same(addrs(m.from), ['ferry@ferry.test'], 'From: the plugin config');
    t.equal(m.text?.trim(), 'File /in/data.csv (1234 bytes)');
    t.same(
      m.attachments.map((a) => a.filename),
      ['data.bin', 'ünï näme.txt'],
    );
    t.ok(m.attachments[0]!.content.equals(bin), 'binary attachment byte-exact');
    t.equal(m.attachments[1]!.content.toString('utf8'), 'grüße\n');
    await run({ subject: 'second', body: 'b', target_folder: `${base}/alice` });
    t.equal((await readFolder(`${base}/alice`)).length, 2, 'an existing folder is reused');
  });

  t.test('INBOX by default; HTML body; encrypted backend decrypted byte-exact', async (t) => {
    const subject = `inbox-${randomBytes(4).toString('hex')}`;
    await run({ subject, body: '<p>Hi <b>{{.Name}}</b></p>', content_type: 1, attachments: ['/secret.bin'] }, 'crypto');
    const m = (await readFolder('INBOX')).find((x) => x.parsed.subject === subject)!;
    t.ok(m, 'in INBOX');
    t.equal(m.parsed.html, '<p>Hi <b>crypto</b></p>');
    t.ok(m.parsed.attachments[0]!.content.equals(enc), 'plaintext of the fs-crypt file');
    const detected = `detected-${randomBytes(4).toString('hex')}`;
    await run({ subject: detected, body: '<div>{{.Name}}</div>' });
    t.equal(
      ((await readFolder('INBOX')).find((x) => x.parsed.subject === detected)?.parsed.html || '').trim(),
      '<div>alice</div>',
      'without content_type a body starting with an HTML tag is HTML',
    );
  });

  t.test('connection of the action: implicit TLS and STARTTLS, certificate checks, another account', async (t) => {
    const folder = uniqueFolder('tls');
    const own = { host: HOST, username: OTHER.user, password: plainSecret(OTHER.pass) };
    await run({ ...own, port: TLS_PORT, tls: 1, skip_tls_verify: true, subject: 'implicit', body: 'b', target_folder: folder });
    await run({ ...own, port: PORT, tls: 2, skip_tls_verify: true, subject: 'starttls', body: 'b', target_folder: folder });
    t.same(
      (await readFolder(folder, OTHER)).map((m) => m.parsed.subject),
      ['implicit', 'starttls'],
      "appended to the other account's folder",
    );
    t.same(await readFolder(folder), [], 'nothing in the default account');
    await t.rejects(
      run({ ...own, port: TLS_PORT, tls: 1, subject: 's', body: 'b' }),
      /cannot connect to the IMAP server 127\.0\.0\.1:1993: .*self-signed certificate/,
    );
    await t.rejects(
      run({ ...own, port: PORT, tls: 2, subject: 's', body: 'b' }),
      /cannot connect to the IMAP server 127\.0\.0\.1:1143: .*self-signed certificate/,
    );
  });

  t.test('a wrong password is a clear failure, not a hang', async (t) => {
    const started = Date.now();
    await t.rejects(
      run({ host: HOST, port: PORT, tls: 0, username: USER.user, password: plainSecret('wrong-password'), subject: 's', body: 'b' }),
      /IMAP login of "ferry@imap\.test" on 127\.0\.0\.1:1143 failed: authentication failed/,
    );
    t.ok(Date.now() - started < 8000, `settled in ${Date.now() - started} ms (Dovecot delays a failed login ~2 s)`);
  });

  t.test('attachment limits and failures; nothing appended', async (t) => {
    const folder = uniqueFolder('limit');
    await upload(alice, '/in/big.bin', randomBytes(LIMIT - 512 * 1024));
    await t.rejects(
      run({ subject: 's', body: 'b', attachments: ['/in/data.bin', '/in/big.bin'], target_folder: folder }),
      /exceed the size limit of 3\.00 MiB \(plugin config max_attachments_size\)/,
    );
    await t.rejects(run({ subject: 's', body: 'b', attachments: ['/in/missing'], target_folder: folder }), /attachment \/in\/missing of user "alice"/);
    await t.rejects(run({ subject: 's', body: 'b', attachments: ['/in'], target_folder: folder }), /is a directory/);
    await t.rejects(run({ subject: 's', body: 'b', target_folder: 'a//{{.Name}}' }), /target_folder rendered to "a\/\/alice", which has an empty level/);
    t.equal(await folderInfo(folder), undefined, 'no folder created');
    await run({ subject: 's', body: 'b', attachments: ['/in/big.bin'], target_folder: folder });
    t.equal((await readFolder(folder)).length, 1, 'under the limit it goes');
  });

  t.test('save-time validation', async (t) => {
    const bare = imapActionDef(pluginConfigSchema.validate({}).value as ImapPluginConfig, ta.app.container.resolve(TOKENS.Plugins) as never);
    await t.rejects(saveActionOptions(bare, { subject: 's', body: 'b' }), /"host" is required: no IMAP server is set in the action nor in the plugin config/);
    await t.rejects(saveActionOptions(def, { host: 'imap.example.com', subject: 's', body: 'b' }), /"username" is required with "host"/);
    await t.rejects(saveActionOptions(def, { username: 'u', subject: 's', body: 'b' }), /"password" is required with "username"/);
    await t.rejects(saveActionOptions(def, { password: plainSecret('x'), subject: 's', body: 'b' }), /"password" is set without "username"/);
    await t.rejects(saveActionOptions(def, { host: 'http://x', username: 'u', password: plainSecret('p'), subject: 's', body: 'b' }), /"host"/);
    await t.rejects(saveActionOptions(def, { tls: 3, subject: 's', body: 'b' }), /"tls" must be one of/);
    await t.rejects(saveActionOptions(def, { subject: 's', body: 'b', target_folder: 'a/%' }), /"target_folder" holds a control character or an IMAP wildcard/);
    await t.rejects(saveActionOptions(def, { subject: 's', body: 'b', email: ['x'] }), /"email\[0\]" is not an email address/);
    await t.rejects(saveActionOptions(def, { subject: 's', body: 'b', timeout: 601 }), /"timeout"/);
  });

  t.test('POST /api/v2/eventactions type 16: password encrypted at rest, never returned; a rule that appends on upload', async (t) => {
    const folder = uniqueFolder('rule');
    const r = await ta.inject('POST', '/api/v2/eventactions', {
      token: admin,
      payload: {
        name: 'imap-alert',
        type: 16,
        options: {
          imap_config: {
            host: HOST,
            port: PORT,
            tls: 0,
            username: OTHER.user,
            password: plainSecret(OTHER.pass),
            email: ['{{.Name}}@ferry.test'],
            subject: 'Uploaded {{.ObjectName}}',
            body: '{{.VirtualPath}}',
            attachments: ['{{.VirtualPath}}'],
            target_folder: `${folder}/{{.Name}}`,
          },
        },
      },
    });
    t.equal(r.statusCode, 201, r.payload);
    const got = await ta.inject('GET', '/api/v2/eventactions/imap-alert', { token: admin });
    t.notOk(got.payload.includes(OTHER.pass), 'the password is not in the answer');
    t.same(JSON.parse(got.payload).options.imap_config.password, { status: 'AES-256-GCM' }, 'only its status');
    const rows = (await ta.app.orm.em.fork().getConnection().execute("select options from event_actions where name = 'imap-alert'")) as { options: unknown }[];
    const raw = rows[0]!.options;
    const stored = typeof raw === 'string' ? raw : JSON.stringify(raw);
    t.notOk(stored.includes(OTHER.pass), 'not stored in clear');
    t.match(stored, /"status":"AES-256-GCM"/);
    const bad = await ta.inject('POST', '/api/v2/eventactions', {
      token: admin,
      payload: { name: 'imap-bad', type: 16, options: { imap_config: { host: 'x.example', subject: 's', body: 'b' } } },
    });
    t.equal(bad.statusCode, 400);
    t.match(JSON.parse(bad.payload).message, /options\.imap_config: "username" is required with "host"/);
    const rule = await ta.inject('POST', '/api/v2/eventrules', {
      token: admin,
      payload: {
        name: 'imap-upload',
        status: 1,
        trigger: 1,
        conditions: { fs_events: ['upload'], options: { fs_paths: [{ pattern: '/in/*.csv' }] } },
        actions: [{ name: 'imap-alert', order: 1, relation_options: { execute_sync: true } }],
      },
    });
    t.equal(rule.statusCode, 201, rule.payload);
    const csv = Buffer.from(`a,b\n${randomBytes(2000).toString('hex')}\n`);
    await upload(alice, '/in/x.csv', csv);
    await mgr.idle();
    const msgs = await readFolder(`${folder}/alice`, OTHER);
    t.equal(msgs.length, 1, 'appended by the rule');
    t.equal(msgs[0]!.parsed.subject, 'Uploaded x.csv');
    t.same(addrs(msgs[0]!.parsed.to), ['alice@ferry.test']);
    t.ok(msgs[0]!.parsed.attachments[0]!.content.equals(csv), 'the uploaded file byte-exact');
  });
}
