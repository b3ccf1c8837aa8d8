import t from 'tap';
import { appWithSearch, bus, fsEvent, logEvent, providerEvent, search, settled } from './helpers.js';

// Filters, cursors, CSV export, role scoping and validation over events published on the bus with
// known fields and timestamps (the recording of real traffic is in recording.test.ts).
const ta = await appWithSearch({ retention_days: 0 });
t.teardown(() => ta.close());
const token = await ta.adminToken();
const b = bus(ta);
const SEC = 1e9;
const base = Math.floor(Date.now() / 1000 - 3600) * SEC;
const at = (i: number) => base + i * SEC;

// 12 fs events, each with distinct values so each filter selects a known subset
const fsSpecs = [
  { action: 'upload', username: 'alice', protocol: 'HTTP', status: 1, ip: '10.0.0.1', instance_id: 'node-a' },
  { action: 'download', username: 'alice', protocol: 'SFTP', status: 1, ip: '10.0.0.2', instance_id: 'node-a' },
  { action: 'upload', username: 'bob', protocol: 'HTTP', status: 3, ip: '10.0.0.1', instance_id: 'node-b', role: 'r1' },
  { action: 'delete', username: 'bob', protocol: 'DAV', status: 2, ip: '10.0.0.3', instance_id: 'node-b', role: 'r1' },
  { action: 'rename', username: 'carol', protocol: 'FTP', status: 1, ip: '10.0.0.4', instance_id: 'node-c', virtual_target_path: '/b.txt' },
  { action: 'mkdir', username: 'carol', protocol: 'HTTP', status: 1, ip: '10.0.0.4', instance_id: 'node-c', role: 'r2' },
  { action: 'rmdir', username: 'dave', protocol: 'SSH', status: 1, ip: '10.0.0.5', instance_id: 'node-a' },
  { action: 'ssh_cmd', username: 'dave', protocol: 'SSH', status: 1, ip: '10.0.0.5', instance_id: 'node-a', ssh_cmd: 'sha256sum' },
  {
    action: 'first-upload',
    username: 'erin',
    protocol: 'HTTPShare',
    status: 1,
    ip: '10.0.0.6',
    instance_id: 'node-b',
    fs_provider: 1,
    bucket: 'bkt',
    endpoint: 'https://s3.example',
  },
  { action: 'first-download', username: 'erin', protocol: 'HTTP', status: 1, ip: '10.0.0.6', instance_id: 'node-b', fs_provider: 1, bucket: 'bkt2' },
  { action: 'upload', username: 'alice', protocol: 'DataRetention', status: 1, ip: '10.0.0.1', instance_id: 'node-a', role: 'r1' },
  { action: 'download', username: 'alice', protocol: 'HTTP', status: 2, ip: '10.0.0.1', instance_id: 'node-c', open_flags: 'r' },
] as const;
fsSpecs.forEach((s, i) => b.publish('fs', fsEvent({ ...s, timestamp: at(i), file_size: 100 + i, elapsed: i, session_id: `sess-${i}` })));
const provSpecs = [
  { action: 'add', object_type: 'user', object_name: 'alice', username: 'admin' },
  { action: 'update', object_type: 'user', object_name: 'alice', username: 'admin', role: 'r1' },
  { action: 'delete', object_type: 'group', object_name: 'g1', username: 'root' },
  { action: 'add', object_type: 'share', object_name: 'sh1', username: 'alice', role: 'r1' },
] as const;
provSpecs.forEach((s, i) =>
  b.publish(
    'provider',
    providerEvent({
      ...s,
      timestamp: at(i),
      object_data: { name: s.object_name, password: 'p4ss-w0rd', filesystem: { s3config: { access_secret: { status: 'Plain', payload: 'TOPSECRET' } } } },
    }),
  ),
);
const logSpecs = [
  { event: 5, protocol: 'HTTP', username: 'alice' },
  { event: 1, protocol: 'HTTP', username: 'alice', role: 'r1' },
  { event: 2, protocol: 'SSH', username: 'ghost' },
  { event: 3, protocol: 'FTP', username: '' },
  { event: 5, protocol: 'OIDC', username: 'bob', role: 'r1' },
] as const;
logSpecs.forEach((s, i) => b.publish('log', logEvent({ ...s, timestamp: at(i) })));
await settled(ta);

/** Indexes of the fs specs matching `pred`, newest first (the default order). */
const expectFs = (pred: (s: (typeof fsSpecs)[number] & Record<string, unknown>, i: number) => boolean) =>
  fsSpecs
    .map((s, i) => ({ s: s as (typeof fsSpecs)[number] & Record<string, unknown>, i }))
    .filter(({ s, i }) => pred(s, i))
    .map(({ i }) => `sess-${i}`)
    .reverse();
// the searches below are bounded to the test's time range: the admin's own login events are fs-free but log events exist
const range = `start_timestamp=${at(0)}&end_timestamp=${at(100)}`;
const fsSessions = async (q: string, bounded = true) =>
  (await search<{ session_id: string }>(ta, token, `/api/v2/events/fs?${bounded ? range + '&' : ''}${q}`)).map((e) => e.session_id);

t.test('fs events: every field is returned', async (t) => {
  const [e] = await search(ta, token, `/api/v2/events/fs?${range}&limit=1&order=ASC`);
  t.match(e, {
    timestamp: at(0),
    action: 'upload',
    username: 'alice',
    fs_path: '/srv/u1/a.txt',
    virtual_path: '/a.txt',
    file_size: 100,
    elapsed: 0,
    status: 1,
    protocol: 'HTTP',
    ip: '10.0.0.1',
    session_id: 'sess-0',
    fs_provider: 0,
    instance_id: 'node-a',
  });
  t.match(e!.id, /^[0-9a-f]{32}$/);
});

t.test('fs filters', async (t) => {
  t.same(
    await fsSessions(''),
    expectFs(() => true),
    'no filter: all, DESC',
  );
  t.same(
    await fsSessions('username=alice'),
    expectFs((s) => s.username === 'alice'),
  );
  t.same(
    await fsSessions('ip=10.0.0.1'),
    expectFs((s) => s.ip === '10.0.0.1'),
  );
  t.same(await fsSessions('ip=10.0.0'), [], 'ip is an exact match');
  t.same(
    await fsSessions('actions=upload,delete'),
    expectFs((s) => s.action === 'upload' || s.action === 'delete'),
  );
  t.same(
    await fsSessions('actions=first-upload'),
    expectFs((s) => s.action === 'first-upload'),
  );
  t.same(
    await fsSessions('protocols=SSH,DAV'),
    expectFs((s) => s.protocol === 'SSH' || s.protocol === 'DAV'),
  );
  t.same(
    await fsSessions('statuses=2,3'),
    expectFs((s) => s.status !== 1),
  );
  t.same(
    await fsSessions('instance_ids=node-b,node-c'),
    expectFs((s) => s.instance_id !== 'node-a'),
  );
  t.same(
    await fsSessions('ssh_cmd=sha256sum'),
    expectFs((s) => s.ssh_cmd === 'sha256sum'),
  );
  t.same(
    await fsSessions('fs_provider=1'),
    expectFs((s) => s.fs_provider === 1),
  );
  t.same(
    await fsSessions('fs_provider=0'),
    expectFs((s) => !s.fs_provider),
  );
  t.same(
    await fsSessions('bucket=bkt'),
    expectFs((s) => s.bucket === 'bkt'),
  );
  t.same(
    await fsSessions('endpoint=https%3A%2F%2Fs3.example'),
    expectFs((s) => s.endpoint === 'https://s3.example'),
  );
  t.same(
    await fsSessions('role=r1'),
    expectFs((s) => s.role === 'r1'),
  );
  t.same(
    await fsSessions('username=alice&actions=download&protocols=HTTP'),
    expectFs((s) => s.username === 'alice' && s.action === 'download' && s.protocol === 'HTTP'),
  );
  t.same(
    await fsSessions('username=&ip=&actions='),
    expectFs(() => true),
    'empty filters are ignored',
  );
});

t.test('timestamps: Unix nanoseconds, both bounds inclusive', async (t) => {
  t.same(await fsSessions(`start_timestamp=${at(3)}&end_timestamp=${at(5)}`, false), ['sess-5', 'sess-4', 'sess-3']);
  t.same(await fsSessions(`start_timestamp=${at(11)}`, false), ['sess-11']);
  t.same(await fsSessions(`end_timestamp=${at(2)}`, false), ['sess-2', 'sess-1', 'sess-0']);
  t.same(await fsSessions(`end_timestamp=${at(0)}&start_timestamp=${at(0)}`, false), ['sess-0']);
  t.same(await fsSessions(`start_timestamp=${at(3) + 1e6}&end_timestamp=${at(4)}`, false), ['sess-4'], 'a ms after an event excludes it');
  t.same(await fsSessions(`start_timestamp=${at(3)}&end_timestamp=${at(4) - 1e6}`, false), ['sess-3'], 'a ms before an event excludes it');
  // a timestamp as the API returned it selects that event
  const [e] = await search<{ timestamp: number }>(ta, token, `/api/v2/events/fs?${range}&order=ASC&limit=1`);
  t.same(await fsSessions(`start_timestamp=${e!.timestamp}&end_timestamp=${e!.timestamp}`, false), ['sess-0']);
});

t.test('limit and order', async (t) => {
  t.same(await fsSessions('limit=2'), ['sess-11', 'sess-10']);
  t.same(await fsSessions('limit=2&order=ASC'), ['sess-0', 'sess-1']);
  const r = await ta.inject('GET', '/api/v2/events/fs', { token });
  t.ok((JSON.parse(r.payload) as unknown[]).length <= 100);
});

t.test('from_id cursor pages through every event in both orders', async (t) => {
  for (const order of ['DESC', 'ASC'] as const) {
    const all = expectFs(() => true);
    if (order === 'ASC') all.reverse();
    const seen: string[] = [];
    let fromId = '';
    for (let pages = 0; pages < 10; pages++) {
      const page = await search<{ id: string; session_id: string }>(
        ta,
        token,
        `/api/v2/events/fs?${range}&limit=5&order=${order}${fromId ? `&from_id=${fromId}` : ''}`,
      );
      seen.push(...page.map((e) => e.session_id));
      if (page.length < 5) break;
      fromId = page[page.length - 1]!.id;
    }
    t.same(seen, all, `${order}: every event once, in order`);
  }
  // the cursor combines with filters
  const first = await search<{ id: string; session_id: string }>(ta, token, `/api/v2/events/fs?${range}&username=alice&limit=2`);
  const next = await search<{ session_id: string }>(ta, token, `/api/v2/events/fs?${range}&username=alice&limit=2&from_id=${first[1]!.id}`);
  t.same(
    [...first, ...next].map((e) => e.session_id),
    expectFs((s) => s.username === 'alice'),
  );
});

t.test('provider events: filters, object_data redacted and omittable', async (t) => {
  const all = await search<{ object_name: string; object_data?: string; action: string }>(ta, token, `/api/v2/events/provider?${range}`);
  t.same(
    all.map((e) => e.object_name),
    ['sh1', 'g1', 'alice', 'alice'],
  );
  const data = Buffer.from(all[0]!.object_data!, 'base64').toString('utf8');
  t.same(
    JSON.parse(data),
    { name: 'sh1', filesystem: { s3config: { access_secret: { status: 'Redacted' } } } },
    'object_data: base64 JSON without secrets or passwords',
  );
  t.notMatch(data, /p4ss-w0rd|TOPSECRET/);
  const names = async (q: string) =>
    (await search<{ object_name: string; action: string }>(ta, token, `/api/v2/events/provider?${range}&${q}`)).map((e) => `${e.action}:${e.object_name}`);
  t.same(await names('actions=add'), ['add:sh1', 'add:alice']);
  t.same(await names('actions=update,delete'), ['delete:g1', 'update:alice']);
  t.same(await names('object_name=alice'), ['update:alice', 'add:alice']);
  t.same(await names('object_types=group,share'), ['add:sh1', 'delete:g1']);
  t.same(await names('username=root'), ['delete:g1']);
  t.same(await names('role=r1&order=ASC'), ['update:alice', 'add:sh1']);
  const omitted = await search<Record<string, unknown>>(ta, token, `/api/v2/events/provider?${range}&omit_object_data=true`);
  t.equal(omitted.length, 4);
  t.ok(
    omitted.every((e) => !('object_data' in e)),
    'omit_object_data=true leaves object_data out',
  );
});

t.test('log events: filters', async (t) => {
  const names = async (q: string) =>
    (await search<{ event: number; username: string }>(ta, token, `/api/v2/events/logs?${range}&${q}`)).map((e) => `${e.event}:${e.username}`);
  t.same(await names(''), ['5:bob', '3:', '2:ghost', '1:alice', '5:alice']);
  t.same(await names('events=1,2'), ['2:ghost', '1:alice']);
  t.same(await names('events=3'), ['3:']);
  t.same(await names('protocols=OIDC,FTP'), ['5:bob', '3:']);
  t.same(await names('username=alice&events=5'), ['5:alice']);
  t.same(await names('role=r1&order=ASC'), ['1:alice', '5:bob']);
  const [e] = await search(ta, token, `/api/v2/events/logs?${range}&limit=1`);
  t.match(e, { event: 5, protocol: 'OIDC', username: 'bob', ip: '10.0.0.1', message: 'user login', role: 'r1', instance_id: 'node-a', timestamp: at(4) });
});

t.test('csv_export streams text/csv of every matching event', async (t) => {
  const r = await ta.inject('GET', `/api/v2/events/fs?${range}&csv_export=true&username=alice&order=ASC&limit=1`, { token });
  t.equal(r.statusCode, 200);
  t.match(r.headers['content-type'], /^text\/csv/);
  t.match(r.headers['content-disposition'], /attachment; filename="fs-events.csv"/);
  const lines = r.payload.trim().split('\r\n');
  t.equal(
    lines[0],
    'id,timestamp,action,username,fs_path,fs_target_path,virtual_path,virtual_target_path,ssh_cmd,file_size,elapsed,status,protocol,ip,session_id,fs_provider,bucket,endpoint,open_flags,role,instance_id',
  );
  t.equal(lines.length - 1, expectFs((s) => s.username === 'alice').length, 'limit does not cut an export');
  t.match(lines[1], new RegExp(`^[0-9a-f]{32},${at(0)},upload,alice,`));
  const p = await ta.inject('GET', `/api/v2/events/provider?${range}&csv_export=1&omit_object_data=1`, { token });
  t.equal(p.payload.split('\r\n')[0], 'id,timestamp,action,username,ip,object_type,object_name,role,instance_id');
  const l = await ta.inject('GET', `/api/v2/events/logs?${range}&csv_export=true&events=3`, { token });
  t.equal(l.payload.split('\r\n').filter(Boolean).length, 2);
});

t.test('csv_export pages through more events than one query reads', async (t) => {
  const start = base - 10_000 * SEC;
  for (let i = 0; i < 2500; i++) b.publish('log', logEvent({ timestamp: start + i * 1000, username: 'bulk', message: i % 2 ? '=cmd|x' : 'a,"b"' }));
  await settled(ta);
  const r = await ta.inject('GET', `/api/v2/events/logs?csv_export=true&username=bulk&order=ASC`, { token });
  const lines = r.payload.split('\r\n').filter(Boolean);
  t.equal(lines.length, 2501);
  t.ok(lines[1]!.endsWith(`,"a,""b""",,node-a`), 'quotes escaped');
  t.ok(lines[2]!.includes(`,'=cmd|x,`), 'a formula is neutralised');
  const ts = lines.slice(1).map((l) => Number(l.split(',')[1]));
  t.ok(
    ts.every((v, i) => i === 0 || v >= ts[i - 1]!),
    'in order',
  );
});

t.test('a role admin only sees the events of their role', async (t) => {
  await ta.inject('POST', '/api/v2/roles', { token, payload: { name: 'r1' } });
  const c = await ta.inject('POST', '/api/v2/admins', {
    token,
    payload: { username: 'radm', password: 'radm-password', status: 1, permissions: ['view_events'], role: 'r1' },
  });
  t.equal(c.statusCode, 201, c.payload);
  const rt = await ta.adminToken('radm', 'radm-password');
  const mine = await search<{ session_id: string }>(ta, rt, `/api/v2/events/fs?${range}`);
  t.same(
    mine.map((e) => e.session_id),
    expectFs((s) => s.role === 'r1'),
  );
  const ignored = await search<{ session_id: string }>(ta, rt, `/api/v2/events/fs?${range}&role=r2`);
  t.same(
    ignored.map((e) => e.session_id),
    expectFs((s) => s.role === 'r1'),
    'the role parameter is ignored',
  );
  t.same(
    (await search<{ object_name: string }>(ta, rt, `/api/v2/events/provider?${range}`)).map((e) => e.object_name),
    ['sh1', 'alice'],
  );
  t.same(
    (await search<{ username: string }>(ta, rt, `/api/v2/events/logs?${range}`)).map((e) => e.username),
    ['bob', 'alice'],
  );
  const csv = await ta.inject('GET', `/api/v2/events/fs?${range}&csv_export=true&role=r2`, { token: rt });
  t.equal(csv.payload.split('\r\n').filter(Boolean).length - 1, expectFs((s) => s.role === 'r1').length, 'CSV export too');
});

t.test('permissions and authentication', async (t) => {
  await ta.inject('POST', '/api/v2/admins', { token, payload: { username: 'noview', password: 'noview-password', status: 1, permissions: ['view_users'] } });
  const nt = await ta.adminToken('noview', 'noview-password');
  for (const p of ['fs', 'provider', 'logs']) {
    const f = await ta.inject('GET', `/api/v2/events/${p}`, { token: nt });
    t.equal(f.statusCode, 403, `${p}: 403 without view_events`);
    t.match(JSON.parse(f.payload), { message: String, error: String });
    const u = await ta.inject('GET', `/api/v2/events/${p}`);
    t.equal(u.statusCode, 401, `${p}: 401 without credentials`);
  }
});

t.test('invalid queries answer 400 naming the field', async (t) => {
  const cases: [string, RegExp][] = [
    ['/api/v2/events/fs?limit=0', /"limit"/],
    ['/api/v2/events/fs?limit=1001', /"limit"/],
    ['/api/v2/events/fs?order=UP', /"order"/],
    ['/api/v2/events/fs?actions=upload,explode', /"actions" has an unknown value "explode"/],
    ['/api/v2/events/fs?statuses=4', /"statuses" has an unknown value "4"/],
    ['/api/v2/events/fs?protocols=http', /"protocols"/],
    ['/api/v2/events/fs?start_timestamp=-1', /"start_timestamp"/],
    ['/api/v2/events/fs?end_timestamp=yesterday', /"end_timestamp"/],
    ['/api/v2/events/fs?fs_provider=x', /"fs_provider"/],
    ['/api/v2/events/fs?csv_export=maybe', /"csv_export"/],
    ['/api/v2/events/fs?from_id=nope', /"from_id" is not an event id/],
    ['/api/v2/events/provider?object_types=planet', /"object_types" has an unknown value "planet"/],
    ['/api/v2/events/provider?actions=upload', /"actions"/],
    ['/api/v2/events/provider?omit_object_data=perhaps', /"omit_object_data"/],
    ['/api/v2/events/logs?events=6', /"events" has an unknown value "6"/],
    ['/api/v2/events/logs?from_id=zz', /"from_id"/],
  ];
  for (const [url, msg] of cases) {
    const r = await ta.inject('GET', url, { token });
    t.equal(r.statusCode, 400, url);
    t.match(JSON.parse(r.payload), { message: msg, error: String }, url);
  }
});
