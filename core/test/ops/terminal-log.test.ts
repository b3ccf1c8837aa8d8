import t from 'tap';
import { Writable } from 'node:stream';
import { boundUrl } from '../../src/http/bound-url.js';
import { createLogger } from '../../src/logger.js';
import { formatBanner, formatRecord, TerminalLog } from '../../src/ops/terminal-log.js';

const time = '2026-12-03T09:56:22.123Z';

t.test('boundUrl names the address bound, not the host name', async (t) => {
  t.equal(boundUrl({ protocol: 'http', address: '127.0.0.1', port: 8080 }), 'http://127.0.0.1:8080');
  t.equal(boundUrl({ protocol: 'https', address: '::1', port: 8443 }), 'https://[::1]:8443');
  t.equal(boundUrl({ protocol: 'http', address: '0.0.0.0', port: '80' }), 'http://0.0.0.0:80');
  t.equal(boundUrl({ protocol: 'http', address: undefined, port: 1 }), 'http://0.0.0.0:1');
});

t.test('formatRecord: one readable line per record', async (t) => {
  t.equal(
    formatRecord({ level: 30, time, service: 'ferry', msg: 'database migrated', migrations: ['a', 'b'] }),
    '09:56:22 INFO  database migrated migrations=["a","b"]',
  );
  t.equal(
    formatRecord({ level: 30, time, service: 'ferry', uri: 'http://127.0.0.1:8080', serves: 'REST API', msg: 'listening' }),
    '09:56:22 INFO  listening on http://127.0.0.1:8080 (REST API)',
  );
  t.equal(
    formatRecord({ level: 30, time, component: 'httpd', reqId: 'r1', method: 'get', path: '/healthz', status: 200, ms: 3, ip: '127.0.0.1', msg: 'request' }),
    '09:56:22 INFO  [httpd] GET /healthz 200 3ms reqId=r1 ip=127.0.0.1',
  );
  t.equal(formatRecord({ level: 40, time, msg: 'slow', note: 'two words', n: 1, ok: true }), '09:56:22 WARN  slow note="two words" n=1 ok=true');
  t.equal(
    formatRecord({ level: 50, time, msg: 'request failed', err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at x (y.js:1:1)' } }),
    '09:56:22 ERROR request failed\n    Error: boom\n        at x (y.js:1:1)',
    'an error prints its stack below',
  );
  t.equal(formatRecord({ level: 60, time: Date.parse(time), msg: 'start failed' }), '09:56:22 FATAL start failed', 'epoch times too');
  const coloured = formatRecord({ level: 50, time, msg: 'x' }, (c, s) => `<${c}>${s}</>`);
  t.equal(coloured, '<dim>09:56:22</> <red>ERROR</> x');
});

t.test('formatBanner: every listening address, and the generated password only when there is one', async (t) => {
  const listening = [
    { url: 'http://127.0.0.1:8080', serves: 'REST API' },
    { url: 'sftp://127.0.0.1:2022', serves: 'SFTP' },
  ];
  t.equal(
    formatBanner(listening, { username: 'admin', password: 'Secret-1' }),
    [
      '',
      '  Ferry is ready',
      '    REST API     http://127.0.0.1:8080',
      '    SFTP         sftp://127.0.0.1:2022',
      '    first admin  admin, password Secret-1 (generated: shown only this once, change it now)',
      '',
    ].join('\n') + '\n',
  );
  t.equal(formatBanner(listening.slice(0, 1), undefined), '\n  Ferry is ready\n    REST API  http://127.0.0.1:8080\n\n', 'a later start: no password');
  t.match(formatBanner([], undefined), /listening nowhere/);
});

t.test("TerminalLog as the logger's stream: readable lines, and the banner from what was logged", async (t) => {
  let out = '';
  const terminal = new TerminalLog({ write: (s: string) => (out += s) }, { color: false });
  const logger = createLogger({ level: 'info', stream: terminal });
  logger.info({ migrations: [] }, 'database migrated');
  logger.warn({ username: 'root', generated_password: 'Gen-pass-42' }, 'created the first admin with a generated password');
  logger.child({ component: 'sftpd' }).info({ uri: 'sftp://127.0.0.1:2022', serves: 'SFTP' }, 'listening');
  logger.info({ uri: 'http://127.0.0.1:8080', serves: 'REST API' }, 'listening');
  logger.info({ password: 'never-shown' }, 'secrets stay redacted');
  const lines = out.trimEnd().split('\n');
  t.equal(lines.length, 5);
  t.match(lines[0], /^\d\d:\d\d:\d\d INFO  database migrated migrations=\[\]$/);
  t.match(lines[2], /^\d\d:\d\d:\d\d INFO  \[sftpd\] listening on sftp:\/\/127\.0\.0\.1:2022 \(SFTP\)$/);
  t.match(lines[4], /password=\[redacted\]$/);
  t.notMatch(out, /never-shown/);
  t.notMatch(out, /^\{/m, 'no JSON line');
  t.same(terminal.listening, [
    { url: 'sftp://127.0.0.1:2022', serves: 'SFTP' },
    { url: 'http://127.0.0.1:8080', serves: 'REST API' },
  ]);
  t.match(terminal.banner(), /first admin {2}root, password Gen-pass-42/);
  out = '';
  terminal.write('not json\n');
  t.equal(out, 'not json\n', 'anything else passes through');
});

t.test('without a stream the logger still writes JSON lines', async (t) => {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  const logger = createLogger({ level: 'info', stream: sink });
  logger.info({ uri: 'http://127.0.0.1:8080', serves: 'REST API' }, 'listening');
  t.match(JSON.parse(chunks.join('')), { uri: 'http://127.0.0.1:8080', serves: 'REST API', msg: 'listening', service: 'ferry' });
});
