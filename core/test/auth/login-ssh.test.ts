import t from 'tap';
import type { AddressInfo } from 'node:net';
import ssh2 from 'ssh2';
import type { AuthContext, ConnectConfig } from 'ssh2';
import { createTestApp } from '../../src/testing.js';
import { sshKeyPairs, userAdder } from '../helpers/login-fixtures.js';
import { TOKENS } from '../../src/tokens.js';
import type { LoginService } from '../../src/auth/login.service.js';
import type { EventBus } from '../../src/events/event-bus.js';
import type { LogEvent } from '../../src/events/event-types.js';
import type { LoginCredential, LoginStep } from '../../src/sdk/login.js';

// The login service behind a real SSH server (the ssh2 package, as an SFTP front-end would use it) and
// a real SSH client: public keys of every type as the client signs them, multi-step logins,
// keyboard-interactive with the second factor.
const ta = await createTestApp();
t.teardown(() => ta.close());
const login = ta.app.container.resolve<LoginService>(TOKENS.LoginService);
const logs: LogEvent[] = [];
ta.app.container.resolve<EventBus>(TOKENS.EventBus).on('log', (e) => void logs.push(e));
const adminToken = await ta.adminToken();
const json = (r: { payload: string }) => JSON.parse(r.payload) as Record<string, any>;

const keys = sshKeyPairs(384);
const addUser = userAdder(ta, adminToken);
await addUser('sam', { public_keys: [keys.ed25519.public, keys.rsa.public, keys.ecdsa.public] });
await addUser('kim', { public_keys: [keys.ed25519.public], filters: { denied_login_methods: ['publickey', 'password'] } });
await addUser('tia', {});
const tiaToken = await ta.userToken('tia', 'tia-pass-1');
const secret = json(await ta.inject('POST', '/api/v2/user/totp/generate', { token: tiaToken, payload: { config_name: 'Default' } })).secret as string;
const saved = await ta.inject('POST', '/api/v2/user/totp/save', {
  token: tiaToken,
  payload: { enabled: true, config_name: 'Default', protocols: ['SSH'], secret: { status: 'Plain', payload: secret } },
});
if (saved.statusCode !== 200) throw new Error(saved.payload);
const recovery = (json(await ta.inject('GET', '/api/v2/user/2fa/recoverycodes', { token: tiaToken })) as unknown as { secret: { payload: string } }[]).map(
  (c) => c.secret.payload,
);

/** The credential of an SSH authentication request (keyboard-interactive: asked through the context). */
async function credentialOf(ctx: AuthContext): Promise<LoginCredential | null> {
  switch (ctx.method) {
    case 'password':
      return { method: 'password', password: ctx.password };
    case 'publickey':
      return {
        method: 'publickey',
        algo: ctx.key.algo,
        key: ctx.key.data,
        ...(ctx.signature && ctx.blob ? { signed: { data: ctx.blob, signature: ctx.signature, ...(ctx.hashAlgo ? { hashAlgo: ctx.hashAlgo } : {}) } } : {}),
      };
    case 'keyboard-interactive': {
      const prompts = await login.keyboardInteractivePrompts(ctx.username, 'SFTP');
      const answers = await new Promise<string[]>((resolve) => ctx.prompt(prompts, resolve));
      return { method: 'keyboard-interactive', answers };
    }
    default:
      return null;
  }
}

// an SSH server whose every authentication request is the login service's
const server = new ssh2.Server({ hostKeys: [keys.other.private] }, (client) => {
  const passed: LoginStep[] = [];
  client.on('authentication', (ctx) => {
    void (async () => {
      const credential = await credentialOf(ctx);
      if (!credential) return ctx.reject(['publickey', 'password', 'keyboard-interactive']);
      try {
        const r = await login.authenticate({ username: ctx.username, credential, ip: '127.0.0.1', protocol: 'SFTP', passed });
        if (r.status === 'ok' || r.status === 'key-accepted') return ctx.accept();
        if (r.status === 'partial') {
          passed.push('publickey');
          return ctx.reject([...r.next], true);
        }
        ctx.reject();
      } catch {
        ctx.reject();
      }
    })();
  });
  client.on('ready', () => client.end());
  client.on('error', () => {});
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
const port = (server.address() as AddressInfo).port;

/** 'ready' when the client logged in, else the client's error. */
const connect = (o: ConnectConfig & { answers?: string[] }) =>
  new Promise<string>((resolve) => {
    const c = new ssh2.Client();
    c.on('ready', () => {
      c.end();
      resolve('ready');
    });
    c.on('error', (err) => resolve(err.message));
    c.on('keyboard-interactive', (_name, _instructions, _lang, _prompts, finish) => finish(o.answers ?? []));
    c.connect({ host: '127.0.0.1', port, readyTimeout: 20_000, ...o });
  });
const logins = (username: string) => logs.filter((e) => e.username === username && e.protocol === 'SFTP').map((e) => e.event);

t.test('public keys of every type, as the client signs them', async (t) => {
  for (const [name, key] of Object.entries({ ed25519: keys.ed25519, rsa: keys.rsa, ecdsa: keys.ecdsa })) {
    t.equal(await connect({ username: 'sam', privateKey: key.private }), 'ready', name);
  }
  t.not(await connect({ username: 'sam', privateKey: keys.other.private }), 'ready', 'a key not listed');
  // the client asks whether the key would do before signing: a key not listed never gets to a login attempt
  t.same(logins('sam'), [5, 5, 5]);
});

t.test('multi-step: the key, then the password', async (t) => {
  t.equal(await connect({ username: 'kim', privateKey: keys.ed25519.private, password: 'kim-pass-1', authHandler: ['publickey', 'password'] }), 'ready');
  t.not(await connect({ username: 'kim', password: 'kim-pass-1', authHandler: ['password'] }), 'ready', 'the password alone');
  t.not(await connect({ username: 'kim', privateKey: keys.ed25519.private, authHandler: ['publickey'] }), 'ready', 'the key alone');
  t.same(logins('kim'), [5, 1], 'one login, and the refused password alone (the key alone is a step, not a refusal)');
});

t.test('keyboard-interactive: the password and the second factor', async (t) => {
  t.equal(await connect({ username: 'tia', tryKeyboard: true, answers: ['tia-pass-1', recovery[0]!], authHandler: ['keyboard-interactive'] }), 'ready');
  t.not(
    await connect({ username: 'tia', tryKeyboard: true, answers: ['tia-pass-1', recovery[0]!], authHandler: ['keyboard-interactive'] }),
    'ready',
    'a used code',
  );
  t.not(await connect({ username: 'tia', password: 'tia-pass-1', authHandler: ['password'] }), 'ready', 'no code');
  t.same(logins('tia'), [5, 1, 1]);
});
