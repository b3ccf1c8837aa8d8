import t from 'tap';
import { TOKENS, type ActionTypeDef } from '@ferry/core';
import { createTestApp } from '@ferry/core/testing';
import { actionConformance } from '@ferry/testkit';
import { ANYPASS, HOST, PORT, USER, readFolder, requireDovecot, SilentServer, uniqueFolder } from './fixtures/dovecot.js';

// The type as the server registers it (plugin config: the test Dovecot as the
// default server), appending to real folders read back with imapflow.
if (await requireDovecot(t)) {
  const silent = await new SilentServer().start();
  t.teardown(() => silent.stop());
  const ta = await createTestApp({
    plugins: [{ name: '@ferry/action-imap', config: { host: HOST, port: PORT, tls: 0, username: USER.user, password: USER.pass, timeout: 30 } }],
  });
  t.teardown(() => ta.close());
  const def = ta.app.container.resolve<{ actionType(n: number): ActionTypeDef | undefined }>(TOKENS.Plugins).actionType(16)!;
  const folder = uniqueFolder('conformance');
  const stalled = { host: HOST, port: silent.port, tls: 0, username: 'x@imap.test', password: { status: 'Plain', payload: 'x' } };

  await actionConformance(t, {
    name: 'action-imap',
    def,
    valid: { subject: 'valid', body: 'body', target_folder: folder },
    invalid: [
      { options: { body: 'b' }, field: 'subject' },
      { options: { subject: 's' }, field: 'body' },
      { options: { subject: 's', body: 'b', email: ['not an address'] }, field: 'email[0]' },
      { options: { subject: 's', body: 'b', attachments: ['/a/../../b'] }, field: 'attachments[0]' },
      { options: { subject: 's', body: 'b', target_folder: 'a//b' }, field: 'target_folder' },
      { options: { subject: 's', body: 'b', host: 'imap.example.com' }, field: 'username' },
      { options: { subject: 's', body: 'b', host: 'imap.example.com', username: 'u' }, field: 'password' },
      { options: { subject: 's', body: 'b', port: 70000 }, field: 'port' },
      { options: { subject: 's', body: 'b', tls: 5 }, field: 'tls' },
      { options: { subject: 's', body: 'b', timeout: 0 }, field: 'timeout' },
      // an unknown member (flags) is dropped, never used: refused here for the known one
      { options: { subject: 's', body: 'b', flags: ['\\Seen'], port: 70001 }, field: 'port' },
    ],
    template: {
      options: (tpl) => ({ subject: 'template', body: tpl, target_folder: folder }),
      observe: async () => ((await readFolder(folder)).at(-1)?.parsed.text ?? '').replace(/\n$/, ''),
    },
    failing: {
      options: { subject: 's', body: 'b', host: HOST, port: PORT, tls: 0, username: USER.user, password: { status: 'Plain', payload: 'wrong' } },
      reason: /authentication failed/,
    },
    // a server that accepts the connection and never greets: only the action's timeout ends the run
    hanging: { options: { ...stalled, timeout: 1, subject: 's', body: 'b' }, within: 4000 },
    longRunning: { ...stalled, timeout: 120, subject: 's', body: 'b' },
    secret: {
      options: (password) => ({ host: HOST, port: PORT, tls: 0, username: ANYPASS, password, subject: 'secret', body: 'b', target_folder: folder }),
      failingOptions: (password) => ({ host: HOST, port: 1, tls: 0, username: ANYPASS, password, subject: 's', body: 'b' }),
    },
    afterStop: async (t) => {
      for (let i = 0; i < 50 && silent.sockets.size; i++) await new Promise((r) => setTimeout(r, 20));
      t.equal(silent.sockets.size, 0, 'no connection left open to the stalled server');
    },
  });
}
