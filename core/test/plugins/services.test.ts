import t, { type Test } from 'tap';
import { createTestApp } from '../../src/testing.js';

type Call = [string, string, Record<string, unknown>?];
const calls = (): Call[] => ((globalThis as { ferryServiceFixture?: Call[] }).ferryServiceFixture ??= []);
const fixture = (services: Record<string, unknown>[]) => ({ name: 'fixture-service', path: 'core/test/fixtures/plugins/service', config: { services } });

async function startFails(t: Test, services: Record<string, unknown>[], pattern: RegExp) {
  await t.rejects(createTestApp({ plugins: [fixture(services)] }), pattern);
}

t.beforeEach(() => void calls().splice(0));

t.test('a service definition the core refuses stops the start, naming the plugin and the service', async (t) => {
  await startFails(t, [{ name: 'a', statusKey: 'defender' }], /plugin fixture-service: service a: the \/status section "defender" belongs to the core/);
  await startFails(
    t,
    [
      { name: 'a', statusKey: 'ftp' },
      { name: 'b', statusKey: 'ftp' },
    ],
    /plugin fixture-service: service b: the \/status section "ftp" is already filled by service a of plugin fixture-service/,
  );
  await startFails(
    t,
    [
      { name: 'a', statusKey: 'ftp' },
      { name: 'a', statusKey: 'webdav' },
    ],
    /plugin fixture-service: service a is registered twice/,
  );
  await startFails(
    t,
    [{ name: 'a', statusKey: 'Not A Key' }],
    /plugin fixture-service: invalid service definition: "statusKey" with value "Not A Key" fails to match/,
  );
  await startFails(
    t,
    [{ name: 'a', statusKey: 'ftp', raw: { stop: 'later' } }],
    /plugin fixture-service: invalid service definition: "stop" must be of type function/,
  );
  t.same(calls(), [], 'nothing was started');
});

t.test('/status: each service fills its section, the API sections nobody fills stay inactive', async (t) => {
  const ta = await createTestApp({
    plugins: [
      fixture([
        { name: 'ftpd', statusKey: 'ftp' },
        { name: 'custom', statusKey: 'custom' },
        { name: 'broken', statusKey: 'webdav', failStatus: true },
      ]),
    ],
  });
  t.teardown(() => ta.close());
  const token = await ta.adminToken();
  const status = async () => {
    const r = await ta.inject('GET', '/api/v2/status', { token });
    t.equal(r.statusCode, 200, r.payload);
    return r.result as Record<string, unknown>;
  };
  const before = await status();
  t.same(before.ftp, { is_active: false, bindings: null }, 'registered, not started yet: inactive');
  t.same(before.custom, { is_active: false, bindings: null });
  t.same(before.ssh, { is_active: false, bindings: null, host_keys: null });
  await ta.app.start();
  t.same(
    calls().map((c) => c.slice(0, 2)),
    [
      ['ftpd', 'start'],
      ['custom', 'start'],
      ['broken', 'start'],
    ],
    'started in registration order',
  );
  const after = await status();
  t.same(after.ftp, { is_active: true, bindings: [{ address: '127.0.0.1', port: 2121, tls: 0 }] });
  t.same(after.custom, { is_active: true, bindings: [{ address: '127.0.0.1', port: 2121, tls: 0 }] });
  t.same(after.webdav, { is_active: false, bindings: null, error: 'status unavailable' }, 'a status() that throws: inactive with its error');
  t.same(after.ssh, { is_active: false, bindings: null, host_keys: null }, 'no service fills ssh');
  t.equal((after.data_provider as { is_active: boolean }).is_active, true, 'the core sections are still there');
});

t.test('a service that fails to start stops the start and the services already started', async (t) => {
  const ta = await createTestApp({
    plugins: [
      fixture([
        { name: 'first', statusKey: 'ftp' },
        { name: 'second', statusKey: 'webdav', failStart: true },
        { name: 'third', statusKey: 'ssh' },
      ]),
    ],
  });
  t.teardown(() => ta.close());
  await t.rejects(ta.app.start(), /plugin fixture-service: service second failed to start: cannot bind 127.0.0.1:1/);
  t.same(
    calls().map((c) => c.slice(0, 2)),
    [
      ['first', 'start'],
      ['second', 'start'],
      ['first', 'stop'],
    ],
    'the third never started, the first was stopped',
  );
  const token = await ta.adminToken();
  const r = await ta.inject('GET', '/api/v2/status', { token });
  const result = r.result as Record<string, unknown>;
  t.same(result.webdav, { is_active: false, bindings: null, error: 'cannot bind 127.0.0.1:1' }, '/status shows why');
  t.same(result.ftp, { is_active: false, bindings: null });
});

t.test('stop: every service gets the grace period, then its signal is aborted', async (t) => {
  const ta = await createTestApp({
    config: { common: { shutdown_grace_period: 0.05 } },
    plugins: [
      fixture([
        { name: 'quick', statusKey: 'ftp' },
        { name: 'slow', statusKey: 'webdav', waitForAbort: true },
      ]),
    ],
  });
  await ta.app.start();
  const before = Date.now();
  await ta.close();
  const stops = calls().filter((c) => c[1] === 'stop');
  t.same(
    stops.map((c) => [c[0], c[2]!.aborted]),
    [
      ['slow', false],
      ['quick', false],
    ],
    'stopped in reverse order, the signal not aborted yet',
  );
  for (const s of stops) t.ok((s[2]!.deadline as number) >= before, 'the deadline is the end of the grace period');
  t.same(calls().at(-1), ['slow', 'aborted'], 'the slow service was told the grace period is over');
});
