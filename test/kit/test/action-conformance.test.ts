import t from 'tap';
import Joi from 'joi';
import type { ActionTypeDef } from '@ferry/core';
import { actionConformance, runAction } from '../src/index.js';

/**
 * A minimal action on which the suite itself is checked: `note` (templated)
 * is recorded, `fail` makes the run fail, `wait` (ms) makes it last, bounded
 * by `timeout` (ms) and cancelled by the execution's signal; `token` is a Secret.
 */
interface NoteOptions {
  note?: string;
  fail?: boolean;
  wait?: number;
  timeout?: number;
  token?: string;
}

let last = '';
const noteDef: ActionTypeDef<NoteOptions> = {
  type: 9001,
  key: 'note',
  optionsKey: 'note_config',
  optionsSchema: Joi.object<NoteOptions>({
    note: Joi.string().allow(''),
    fail: Joi.boolean(),
    wait: Joi.number().integer().min(0),
    timeout: Joi.number().integer().min(1).max(60_000).default(1000),
    token: Joi.object({ status: Joi.string(), payload: Joi.string().allow(''), key: Joi.string(), additional_data: Joi.string(), mode: Joi.number() }),
  }),
  secretFields: ['token'],
  templateFields: ['note'],
  create(o) {
    return {
      async execute(ctx) {
        ctx.logger.info({ note: o.note }, 'note action running');
        if (o.wait) {
          await new Promise<void>((resolve, reject) => {
            const timer = setTimeout(resolve, o.wait);
            const stop = setTimeout(() => {
              clearTimeout(timer);
              reject(new Error(`note timed out after ${o.timeout} ms`));
            }, o.timeout);
            ctx.signal.addEventListener('abort', () => {
              clearTimeout(timer);
              clearTimeout(stop);
              reject(new Error('note cancelled'));
            });
          });
        }
        if (o.fail) throw new Error('note refused: fail is set');
        last = o.note ?? '';
      },
    };
  },
};

await actionConformance(t, {
  name: 'note (kit self-test)',
  def: noteDef,
  valid: { note: 'hello' },
  invalid: [
    { options: { wait: -1 }, field: 'wait' },
    { options: { timeout: 0 }, field: 'timeout' },
  ],
  template: { options: (tpl) => ({ note: tpl }), observe: async () => last },
  failing: { options: { fail: true }, reason: /fail is set/ },
  hanging: { options: { wait: 60_000, timeout: 200 }, within: 2000 },
  longRunning: { wait: 60_000, timeout: 60_000 },
  secret: { options: (token) => ({ note: 'x', token }), failingOptions: (token) => ({ fail: true, token }) },
});

t.test('runAction renders against the event it is given', async (t) => {
  await runAction(noteDef, { note: '{{.Event}} {{.VirtualPath}} {{.ExtName}}' }, { event: { action: 'delete', virtual_path: '/x/y.txt' } });
  t.equal(last, 'delete /x/y.txt .txt');
});

t.test('runAction refuses what the API refuses, with its message', async (t) => {
  await t.rejects(runAction(noteDef, { wait: 'soon' }), { message: 'options.note_config: "wait" must be a number' });
});
