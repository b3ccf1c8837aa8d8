import t from 'tap';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { TOKENS, type ActionTypeDef, type EventManager } from '@ferry/core';
import { createTestApp, type TestApp } from '@ferry/core/testing';
import { runAction, saveActionOptions } from '@ferry/testkit';
import { TestSmtp } from './fixtures/smtp.js';

const smtp = await new TestSmtp().start();
t.teardown(() => smtp.stop());

const LIMIT = 3 * 1024 * 1024;
const ta = await createTestApp({
  plugins: [
    { name: '@ferry/fs-local' },
    { name: '@ferry/fs-crypt' },
    { name: '@ferry/fs-s3' },
    { name: '@ferry/actions-builtin' },
    { name: '@ferry/action-email', config: { max_attachments_size: LIMIT, timeout: 5 } },
  ],
  config: { smtp: { host: '127.0.0.1', port: smtp.port, from: 'ferry@ferry.test' } },
});
t.teardown(() => ta.close());
const admin = await ta.adminToken();
const def = ta.app.container.resolve<{ actionType(n: number): ActionTypeDef | undefined }>(TOKENS.Plugins).actionType(3)!;
const mgr = ta.app.container.resolve<EventManager>(TOKENS.EventManager);

const S3_PORT = Number(process.env.FERRY_S3_PORT ?? 19000);
/** The s3rver of scripts/servers/start-s3.sh, under a key prefix of its own. */
const S3 = {
  provider: 1,
  s3config: {
    bucket: 'ferry-test',
    endpoint: `http://127.0.0.1:${S3_PORT}`,
    region: 'us-east-1',
    access_key: 'S3RVER',
    access_secret: { status: 'Plain', payload: 'S3RVER' },
    force_path_style: true,
    key_prefix: `action-email-${randomBytes(4).toString('hex')}/`,
  },
};
const s3Up = await new Promise<boolean>((resolve) => {
  const sock = net.connect({ host: '127.0.0.1', port: S3_PORT, timeout: 1000 });
  sock.once('connect', () => (sock.destroy(), resolve(true)));
  sock.once('error', () => resolve(false));
  sock.once('timeout', () => (sock.destroy(), resolve(false)));
});

/** A user through the REST API, on fs-local, fs-crypt or S3; returns its token. */
async function addUser(username: string, provider: 0 | 1 | 4): Promise<string> {
  const home = path.join(ta.dataDir, 'homes', username);
  const filesystem =
    provider === 0 ? { provider: 0 } : provider === 1 ? S3 : { provider: 4, cryptconfig: { passphrase: { status: 'Plain', payload: 'crypt-passphrase-1' } } };
  const r = await ta.inject('POST', '/api/v2/users', {
    token: admin,
    payload: { username, password: `${username}-password-1`, status: 1, home_dir: home, permissions: { '/': ['*'] }, filesystem },
  });
  if (r.statusCode !== 201) throw new Error(r.payload);
  return ta.userToken(username, `${username}-password-1`);
}
const upload = async (token: string, vpath: string, body: Buffer) => {
  const r = await ta.inject('POST', `/api/v2/user/files/upload?path=${encodeURIComponent(vpath)}`, {
    token,
    payload: body,
    headers: { 'content-type': 'application/octet-stream' },
  });
  if (r.statusCode !== 201) throw new Error(`upload ${vpath}: ${r.statusCode} ${r.payload}`);
};
const mkdir = async (token: string, vpath: string) => {
  const r = await ta.inject('POST', `/api/v2/user/dirs?path=${encodeURIComponent(vpath)}`, { token });
  if (r.statusCode !== 201) throw new Error(`mkdir ${vpath}: ${r.payload}`);
};
const run = (options: Record<string, unknown>, username = 'alice', outputs?: Record<string, unknown>) =>
  runAction(def, options, { event: { username, virtual_path: '/in/data.csv' }, outputs });
const addrs = (a: unknown) => ([] as { value: { address?: string }[] }[]).concat((a as never) ?? []).flatMap((x) => x.value.map((v) => v.address));

const aliceToken = await addUser('alice', 0);
const cryptToken = await addUser('crypto', 4);
const bin1 = randomBytes(1024 * 1024 + 17);
const bin2 = randomBytes(700 * 1024);
await mkdir(aliceToken, '/in');
await upload(aliceToken, '/in/report.bin', bin1);
await upload(aliceToken, '/in/ünïcødé näme.txt', Buffer.from('héllo wörld\n'));
await mkdir(cryptToken, '/docs');
await upload(cryptToken, '/docs/secret.bin', bin2);

t.test('recipients, bcc, subject, text body and attachments (fs-local) byte-exact', async (t) => {
  const before = smtp.mails.length;
  await run({
    recipients: ['to1@ferry.test', '{{.Name}}@ferry.test', '{{if false}}x{{end}}'],
    bcc: ['hidden@ferry.test'],
    subject: 'Upload {{.ObjectName}} by {{.Name}}',
    body: 'File {{.VirtualPath}} ({{.FileSize}} bytes)\n',
    attachments: ['/in/report.bin', '/in/{{"ünïcødé näme.txt"}}', '{{if false}}/in/report.bin{{end}}'],
  });
  t.equal(smtp.mails.length, before + 1, 'one mail');
  const m = smtp.last();
  t.same(m.rcptTo.sort(), ['alice@ferry.test', 'hidden@ferry.test', 'to1@ferry.test'], 'envelope: recipients and bcc (an empty rendering is skipped)');
  t.equal(m.from, 'ferry@ferry.test');
  t.same(addrs(m.parsed.to).sort(), ['alice@ferry.test', 'to1@ferry.test'], 'To header');
  t.notOk(m.raw.toString('latin1').match(/^bcc:/im), 'no Bcc header in the message');
  t.equal(m.parsed.subject, 'Upload data.csv by alice');
  t.equal(m.parsed.text?.trim(), 'File /in/data.csv (1234 bytes)');
  t.notOk(m.parsed.html, 'text only');
  t.equal(m.parsed.attachments.length, 2, 'an attachment that renders empty is skipped');
  t.equal(m.parsed.attachments[0]!.filename, 'report.bin');
  t.ok(m.parsed.attachments[0]!.content.equals(bin1), 'binary attachment byte-exact');
  t.equal(m.parsed.attachments[1]!.filename, 'ünïcødé näme.txt', 'non-ASCII file name kept');
  t.equal(m.parsed.attachments[1]!.content.toString('utf8'), 'héllo wörld\n');
});

t.test('HTML body (content_type 1, here detected from the body); attachment from an encrypted backend (fs-crypt) decrypted byte-exact', async (t) => {
  await run({ recipients: ['html@ferry.test'], subject: 'html', body: '<p>Hello <b>{{.Name}}</b></p>', attachments: ['/docs/secret.bin'] }, 'crypto');
  const m = smtp.last();
  t.equal(m.parsed.html, '<p>Hello <b>crypto</b></p>');
  t.match(m.raw.toString('latin1'), /Content-Type: text\/html/i);
  t.equal(m.parsed.attachments.length, 1);
  t.ok(m.parsed.attachments[0]!.content.equals(bin2), 'the plaintext, not the stored ciphertext');
});

t.test('attachment from S3 (s3rver) byte-exact', async (t) => {
  if (!s3Up) {
    const why = `s3rver is not listening on 127.0.0.1:${S3_PORT} (bash scripts/servers/start-s3.sh)`;
    if (process.env.CI === 'true') t.fail(why);
    else t.plan(0, why);
    return;
  }
  const tok = await addUser('ons3', 1);
  const data = randomBytes(2 * 1024 * 1024 + 5);
  await upload(tok, '/s3-file.bin', data);
  await run({ recipients: ['s3@ferry.test'], subject: 's3', body: 'b', attachments: ['/s3-file.bin'] }, 'ons3');
  const a = smtp.last().parsed.attachments;
  t.equal(a[0]!.filename, 's3-file.bin');
  t.ok(a[0]!.content.equals(data), 'the object, byte-exact');
});

t.test('attachment size limit (plugin config), checked before anything is sent', async (t) => {
  const before = smtp.mails.length;
  await upload(aliceToken, '/in/big.bin', randomBytes(LIMIT - 1024 * 1024));
  await t.rejects(
    run({ recipients: ['x@ferry.test'], subject: 's', body: 'b', attachments: ['/in/report.bin', '/in/big.bin'] }),
    /exceed the size limit of 3\.00 MiB \(plugin config max_attachments_size\)/,
  );
  t.equal(smtp.mails.length, before, 'nothing sent');
  await t.resolves(run({ recipients: ['x@ferry.test'], subject: 's', body: 'b', attachments: ['/in/big.bin'] }), 'under the limit it goes');
});

t.test('attachment failures name the file', async (t) => {
  const before = smtp.mails.length;
  await t.rejects(
    run({ recipients: ['x@ferry.test'], subject: 's', body: 'b', attachments: ['/in/missing.bin'] }),
    /attachment \/in\/missing\.bin of user "alice"/,
  );
  await t.rejects(run({ recipients: ['x@ferry.test'], subject: 's', body: 'b', attachments: ['/in'] }), /\/in of user "alice" is a directory/);
  await t.rejects(run({ recipients: ['x@ferry.test'], subject: 's', body: 'b', attachments: ['{{.VirtualPath}}/../../etc/passwd'] }), /is not a valid path/);
  await t.rejects(run({ recipients: ['x@ferry.test'], subject: 's', body: 'b', attachments: ['/in/report.bin'] }, 'nobody'), /nobody/);
  t.equal(smtp.mails.length, before, 'nothing sent');
});

t.test('rendered addresses', async (t) => {
  await t.rejects(run({ recipients: ['{{.Name}}'], subject: 's', body: 'b' }), /recipients\[0\] rendered to "alice", which is not an email address/);
  await t.rejects(run({ recipients: ['{{.Email}}'], subject: 's', body: 'b' }), /no recipient/);
  await t.rejects(
    run({ recipients: ['reject@ferry.test'], subject: 's', body: 'b' }),
    /unable to send the email: .*all recipients were rejected: 550 mailbox unavailable/,
  );
});

t.test('.RetentionChecks and .EventReports of earlier actions are attached as generated files', async (t) => {
  const checks = [
    {
      Username: 'alice',
      ActionName: 'ret',
      Type: 'Data retention',
      Results: [{ Path: '/logs', Retention: 24, DeletedFiles: 2, DeletedSize: 20, Elapsed: 3, Info: '' }],
      Error: '',
    },
  ];
  const dir = path.join(ta.dataDir, 'reports');
  mkdirSync(dir, { recursive: true });
  const zip = randomBytes(5000);
  writeFileSync(path.join(dir, 'r-a-1.zip'), zip);
  writeFileSync(path.join(dir, 'r-a-1-fs.csv'), 'timestamp,action\r\n');
  const reports = [
    { Type: 'fs,log', Path: path.join(dir, 'r-a-1.zip'), Name: 'r-a-1.zip', Format: 'zip' },
    { Type: 'fs', Path: path.join(dir, 'r-a-1-fs.csv'), Name: 'r-a-1-fs.csv', Format: 'csv' },
  ];
  const saved = await saveActionOptions(def, {
    recipients: ['x@ferry.test'],
    subject: 's',
    body: 'b',
    attachments: ['{{ .RetentionChecks }}', '.EventReports', '/in/report.bin'],
  });
  t.same(
    (saved.email_config as { attachments: string[] }).attachments,
    ['.RetentionChecks', '.EventReports', '/in/report.bin'],
    'stored under their canonical names',
  );
  await run({ recipients: ['x@ferry.test'], subject: 's', body: 'b', attachments: ['{{.RetentionChecks}}', '.EventReports', '/in/report.bin'] }, 'alice', {
    RetentionChecks: checks,
    EventReports: reports,
  });
  const a = smtp.last().parsed.attachments;
  t.same(
    a.map((x) => x.filename),
    ['retention-checks.json', 'r-a-1.zip', 'r-a-1-fs.csv', 'report.bin'],
  );
  t.same(JSON.parse(a[0]!.content.toString('utf8')), checks, 'the checks as JSON');
  t.ok(a[1]!.content.equals(zip), 'report zip byte-exact');
  t.equal(a[2]!.content.toString(), 'timestamp,action\r\n');
  t.ok(a[3]!.content.equals(bin1));
  await t.rejects(
    run({ recipients: ['x@ferry.test'], subject: 's', body: 'b', attachments: ['.RetentionChecks'] }),
    /no data retention check ran before this action/,
  );
  await t.rejects(
    run({ recipients: ['x@ferry.test'], subject: 's', body: 'b', attachments: ['.EventReports'] }),
    /no event report was written before this action/,
  );
});

t.test('POST /api/v2/eventactions type 3', async (t) => {
  const post = (name: string, email_config: unknown) =>
    ta.inject('POST', '/api/v2/eventactions', { token: admin, payload: { name, type: 3, options: { email_config } } });
  const ok = await post('mail-ok', {
    recipients: ['a@ferry.test'],
    bcc: ['{{.Email}}'],
    subject: 'Hi {{.Name}}',
    body: 'b',
    attachments: ['/in/{{.ObjectName}}'],
  });
  t.equal(ok.statusCode, 201, ok.payload);
  const got = JSON.parse((await ta.inject('GET', '/api/v2/eventactions/mail-ok', { token: admin })).payload);
  t.same(got.options.email_config, {
    recipients: ['a@ferry.test'],
    bcc: ['{{.Email}}'],
    subject: 'Hi {{.Name}}',
    body: 'b',
    content_type: 0,
    attachments: ['/in/{{.ObjectName}}'],
  });
  const html = await post('mail-html', { recipients: ['a@ferry.test'], subject: 's', body: '  <p>Hello {{.Name}}</p>' });
  t.equal(html.statusCode, 201, html.payload);
  t.equal(JSON.parse(html.payload).options.email_config.content_type, 1, 'no content_type and a body starting with an HTML tag: stored as HTML');
  const forced = await post('mail-text', { recipients: ['a@ferry.test'], subject: 's', body: '<p>shown as text</p>', content_type: 0 });
  t.equal(JSON.parse(forced.payload).options.email_config.content_type, 0, 'an explicit content_type is kept');
  const text = await post('mail-text2', { recipients: ['a@ferry.test'], subject: 's', body: 'a < b and <p> later' });
  t.equal(JSON.parse(text.payload).options.email_config.content_type, 0, 'text otherwise');
  const cases: [unknown, RegExp][] = [
    [{ subject: 's', body: 'b' }, /at least one address in "recipients" or "bcc"/],
    [{ recipients: ['not an address'], subject: 's', body: 'b' }, /"recipients\[0\]" is not an email address/],
    [{ recipients: ['a@ferry.test'], body: 'b' }, /"subject" is required/],
    [{ recipients: ['a@ferry.test'], subject: 's' }, /"body" is required/],
    [{ recipients: ['a@ferry.test'], subject: 's', body: 'b', content_type: 2 }, /"content_type" must be one of \[0, 1\]/],
    [{ recipients: ['a@ferry.test'], subject: 's', body: 'b', attachments: ['/a/../../b'] }, /"attachments\[0\]" is not a valid virtual path/],
    [{ recipients: ['a@ferry.test'], subject: '{{.Name', body: 'b' }, /options\.email_config\.subject: invalid template/],
  ];
  for (const [cfg, msg] of cases) {
    const r = await post('mail-bad', cfg);
    t.equal(r.statusCode, 400, JSON.stringify(cfg));
    t.match(JSON.parse(r.payload).message ?? r.payload, msg);
  }
});

t.test('without a mail server, an email action or a rule using one is refused at save time', async (t) => {
  const bare: TestApp = await createTestApp({ plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/action-email' }] });
  t.teardown(() => bare.close());
  const tok = await bare.adminToken();
  const r = await bare.inject('POST', '/api/v2/eventactions', {
    token: tok,
    payload: { name: 'm', type: 3, options: { email_config: { recipients: ['a@ferry.test'], subject: 's', body: 'b' } } },
  });
  t.equal(r.statusCode, 400);
  t.match(r.payload, /event action type 3 \(email\) cannot be used: no mail server is configured: set smtp\.host/);
  // an email action saved while a mail server was configured (the configuration changed since)
  await bare.app.orm.em
    .fork()
    .getConnection()
    .execute("insert into event_actions (name, description, type, options, created_at, updated_at) values ('old-mail', '', 3, ?, 0, 0)", [
      JSON.stringify({ email_config: { recipients: ['a@ferry.test'], subject: 's', body: 'b', content_type: 0, attachments: [], bcc: [] } }),
    ]);
  const rule = await bare.inject('POST', '/api/v2/eventrules', { token: tok, payload: { name: 'r', trigger: 6, actions: [{ name: 'old-mail', order: 1 }] } });
  t.equal(rule.statusCode, 400);
  t.match(JSON.parse(rule.payload).message, /action "old-mail" \(type 3, email\) cannot be used: no mail server is configured/);
});

t.test('a rule on upload of *.csv really sends the uploaded file', async (t) => {
  const post = async (url: string, payload: unknown) => {
    const r = await ta.inject('POST', url, { token: admin, payload });
    t.equal(r.statusCode, 201, r.payload);
  };
  await post('/api/v2/eventactions', {
    name: 'mail-upload',
    type: 3,
    options: {
      email_config: {
        recipients: ['ops@ferry.test'],
        subject: 'New {{.ObjectName}} from {{.Name}}',
        body: '{{.VirtualPath}} {{.FileSize}}',
        attachments: ['{{.VirtualPath}}'],
      },
    },
  });
  await post('/api/v2/eventrules', {
    name: 'csv-mail',
    status: 1,
    trigger: 1,
    conditions: { fs_events: ['upload'], options: { names: [{ pattern: 'alice' }], fs_paths: [{ pattern: '/in/*.csv' }] } },
    actions: [{ name: 'mail-upload', order: 1, relation_options: { execute_sync: true, stop_on_failure: true } }],
  });
  const csv = Buffer.from(`id,name\n1,ä\n${randomBytes(3000).toString('base64')}\n`);
  const before = smtp.mails.length;
  const execs: string[] = [];
  mgr.onExecution((e) => execs.push(`${e.rule}/${e.action}: ${e.ok ? 'ok' : e.error}`));
  await upload(aliceToken, '/in/data-1.csv', csv);
  await upload(aliceToken, '/in/skip.txt', Buffer.from('x'));
  await mgr.idle();
  const sent = smtp.mails.slice(before);
  t.same(execs, ['csv-mail/mail-upload: ok'], 'the action ran once, on the csv');
  t.equal(sent.length, 1, 'one mail: the .txt upload does not match *.csv');
  const m = sent[0]!;
  t.equal(m.parsed.subject, 'New data-1.csv from alice');
  t.same(m.rcptTo, ['ops@ferry.test']);
  t.equal(m.parsed.text?.trim(), `/in/data-1.csv ${csv.length}`);
  t.equal(m.parsed.attachments[0]!.filename, 'data-1.csv');
  t.ok(m.parsed.attachments[0]!.content.equals(csv), 'the uploaded bytes');
});

t.test('an on-demand rule: data retention (8) and event report (19), then an email attaching .RetentionChecks and .EventReports', async (t) => {
  const post = async (url: string, payload: unknown) => {
    const r = await ta.inject('POST', url, { token: admin, payload });
    t.equal(r.statusCode, 201, r.payload);
  };
  await post('/api/v2/eventactions', { name: 'ret', type: 8, options: { retention_config: { folders: [{ path: '/in', retention: 24 }] } } });
  await post('/api/v2/eventactions', { name: 'report', type: 19, options: { event_report_config: { hours: 1, event_types: ['fs'], compress: true } } });
  await post('/api/v2/eventactions', {
    name: 'mail-reports',
    type: 3,
    options: {
      email_config: {
        recipients: ['reports@ferry.test'],
        subject: 'Reports of {{.Rule}}',
        body: '{{len .RetentionChecks}} checks',
        attachments: ['{{.RetentionChecks}}', '{{.EventReports}}'],
      },
    },
  });
  await post('/api/v2/eventrules', {
    name: 'reports-rule',
    status: 1,
    trigger: 6,
    conditions: { options: { names: [{ pattern: 'alice' }] } },
    actions: [
      { name: 'ret', order: 1 },
      { name: 'report', order: 2 },
      { name: 'mail-reports', order: 3 },
    ],
  });
  const before = smtp.mails.length;
  const r = await ta.inject('POST', '/api/v2/eventrules/run/reports-rule', { token: admin });
  t.equal(r.statusCode, 202, r.payload);
  await mgr.idle();
  t.equal(smtp.mails.length, before + 1, 'one mail');
  const m = smtp.last().parsed;
  t.equal(m.subject, 'Reports of reports-rule');
  t.equal(m.text?.trim(), '1 checks');
  t.equal(m.attachments.length, 2);
  const [checks, zip] = m.attachments;
  t.equal(checks!.filename, 'retention-checks.json');
  t.match(JSON.parse(checks!.content.toString('utf8')), [
    { Username: 'alice', ActionName: 'ret', Type: 'Data retention', Results: [{ Path: '/in', Retention: 24 }] },
  ]);
  t.match(zip!.filename, /^reports-rule-report-\d{8}T\d{6}-[0-9a-f]{8}\.zip$/);
  t.equal(zip!.content.subarray(0, 2).toString('latin1'), 'PK', 'the report zip');
});
