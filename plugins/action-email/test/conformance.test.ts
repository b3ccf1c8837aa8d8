import t from 'tap';
import { TOKENS, type ActionTypeDef } from '@ferry/core';
import { createTestApp } from '@ferry/core/testing';
import { actionConformance } from '@ferry/testkit';
import { TestSmtp } from './fixtures/smtp.js';

// The type as the server registers it (plugin config timeout 2 s), sending
// through the core's real mailer to an in-process SMTP server.
const smtp = await new TestSmtp().start();
t.teardown(() => smtp.stop());
const ta = await createTestApp({
  plugins: [{ name: '@ferry/action-email', config: { timeout: 2 } }],
  config: { smtp: { host: '127.0.0.1', port: smtp.port, from: 'ferry@ferry.test' } },
});
t.teardown(() => ta.close());
const def = ta.app.container.resolve<{ actionType(n: number): ActionTypeDef | undefined }>(TOKENS.Plugins).actionType(3)!;

await actionConformance(t, {
  name: 'action-email',
  def,
  valid: { recipients: ['ok@ferry.test'], subject: 'subject', body: 'body' },
  invalid: [
    { options: { subject: 's', body: 'b' }, field: 'recipients' },
    { options: { recipients: ['nope'], subject: 's', body: 'b' }, field: 'recipients[0]' },
    { options: { bcc: ['a@b.test', 'x y'], subject: 's', body: 'b' }, field: 'bcc[1]' },
    { options: { recipients: ['a@b.test'], body: 'b' }, field: 'subject' },
    { options: { recipients: ['a@b.test'], subject: 's' }, field: 'body' },
    { options: { recipients: ['a@b.test'], subject: 's', body: 'b', content_type: 3 }, field: 'content_type' },
    { options: { recipients: ['a@b.test'], subject: 's', body: 'b', attachments: ['/x/../../y'] }, field: 'attachments[0]' },
    { options: { recipients: ['a@b.test'], subject: 's', body: 'b', attachments: ['/a', '/a'] }, field: 'attachments' },
    // an unknown member (cc) is dropped, never used: refused here for the known one
    { options: { recipients: ['a@b.test', ''], subject: 's', body: 'b', cc: ['c@b.test'] }, field: 'recipients[1]' },
  ],
  template: {
    options: (tpl) => ({ recipients: ['tpl@ferry.test'], subject: 'template', body: tpl }),
    observe: async () => (smtp.last().parsed.text ?? '').replace(/\n$/, ''),
  },
  failing: { options: { recipients: ['reject@ferry.test'], subject: 's', body: 'b' }, reason: /all recipients were rejected: 550 mailbox unavailable/ },
  // the receiver never answers RCPT TO for hang@: only the plugin's timeout (2 s) ends the send
  hanging: { options: { recipients: ['hang@ferry.test'], subject: 's', body: 'b' }, within: 4000 },
  longRunning: { recipients: ['hang@ferry.test'], subject: 's', body: 'b' },
  afterStop: async (t) => {
    for (let i = 0; i < 100 && smtp.open > 0; i++) await new Promise((r) => setTimeout(r, 20));
    t.equal(smtp.open, 0, 'the mail connection of the stopped send is closed');
  },
});
