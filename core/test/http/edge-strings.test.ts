import t from 'tap';
import { addUser, fileApp, PASSWORD } from '../helpers/user-files.js';
import { TOKENS } from '../../src/tokens.js';
import type { EventBus } from '../../src/events/event-bus.js';
import type { ProviderEvent } from '../../src/events/event-types.js';
import { RoleService } from '../../src/accounts/role.service.js';
import { GroupService } from '../../src/accounts/group.service.js';
import { FolderService } from '../../src/accounts/folder.service.js';
import { UserService } from '../../src/accounts/user.service.js';
import { AdminService } from '../../src/accounts/admin.service.js';
import { EventActionService } from '../../src/event-manager/event-action.service.js';
import { EventRuleService } from '../../src/event-manager/event-rule.service.js';

/**
 * Strings are checked once at the edge (core/src/http/input-check.ts and
 * core/src/auth/basic-header.ts): a NUL or a lone UTF-16 surrogate in path
 * parameters, query or payload is a 400, bad basic credentials a 401, before
 * anything is stored; a create either stores its object and answers 201 with
 * a Location, or stores nothing.
 */
const ACTIONS = { name: 'fixture-test-actions', path: 'core/test/fixtures/plugins/test-actions' };
const ta = await fileApp({ plugins: [{ name: '@ferry/fs-local' }, ACTIONS] });
t.teardown(() => ta.close());
const token = await ta.adminToken();
await addUser(ta, { username: 'alice' });
const alice = await ta.userToken('alice', PASSWORD);
const events: ProviderEvent[] = [];
ta.app.container.resolve<EventBus>(TOKENS.EventBus).on('provider', (e) => void events.push(e));
await ta.inject('POST', '/api/v2/eventactions', { token, payload: { name: 'base-action', type: 101 } });

const TABLES = [
  'users',
  'groups',
  'folders',
  'admins',
  'roles',
  'api_keys',
  'shares',
  'event_actions',
  'event_rules',
  'event_rules_actions',
  'ip_lists',
  'users_groups',
  'users_folders',
  'groups_folders',
  'admins_groups',
];

/** Every row of the tables the API writes, as text: a refused request leaves it the same. */
async function snapshot(): Promise<string> {
  const conn = ta.app.orm.em.fork().getConnection();
  const out: Record<string, unknown> = {};
  for (const table of TABLES) out[table] = await conn.execute(`select * from ${table} order by 1`);
  return JSON.stringify(out);
}

/** A raw JSON request: `body` is sent as written, so `\ud800` reaches the server as a JSON escape. */
function rawJson(method: string, url: string, body: string, auth: { token?: string } = { token }) {
  return ta.inject(method, url, { ...auth, payload: body, headers: { 'content-type': 'application/json' } });
}

const json = (r: { payload: string }) => JSON.parse(r.payload) as { message: string; error: string };
const basic = (raw: Buffer | string) => ({ authorization: `Basic ${Buffer.from(raw).toString('base64')}` });

t.test('basic credentials no account can have: 401, never a 500, nothing looked up', async (t) => {
  const cases: [string, Record<string, string>, RegExp][] = [
    ['NUL username (ADp4)', { authorization: 'Basic ADp4' }, /the username contains a NUL character/],
    ['admin\\0', basic('admin\0:admin-password-1'), /the username contains a NUL character/],
    ['NUL in the password', basic('admin:admin-password-1\0'), /the password contains a NUL character/],
    ['control character', basic('ad\u0001min:x'), /the username contains control characters/],
    ['bytes that are not UTF-8', basic(Buffer.from([0xff, 0xfe, 0x3a, 0x78])), /not valid UTF-8/],
    ['an encoded lone surrogate (CESU-8)', basic(Buffer.concat([Buffer.from([0xed, 0xa0, 0x80]), Buffer.from(':x')])), /not valid UTF-8/],
    ['truncated UTF-8', basic(Buffer.concat([Buffer.from('admin'), Buffer.from([0xc3]), Buffer.from(':x')])), /not valid UTF-8/],
  ];
  const before = await snapshot();
  for (const url of ['/api/v2/token', '/api/v2/user/token']) {
    for (const [what, headers, re] of cases) {
      const r = await ta.inject('GET', url, { headers });
      t.equal(r.statusCode, 401, `${url}: ${what}`);
      t.match(json(r), { message: re, error: 'Unauthorized' }, `${url}: ${what}`);
    }
  }
  t.equal(await snapshot(), before, 'nothing changed');
  // well-formed credentials still work, non-ASCII ones included
  t.equal((await ta.inject('GET', '/api/v2/token', { basic: { username: 'admin', password: 'admin-password-1' } })).statusCode, 200);
  t.equal((await ta.inject('GET', '/api/v2/user/token', { basic: { username: 'alice', password: PASSWORD } })).statusCode, 200);
  t.equal((await ta.inject('GET', '/api/v2/token', { basic: { username: 'jösé', password: 'wrong' } })).statusCode, 401, 'unknown account');
});

/** One create per resource, with a placeholder where the bad string goes. */
const CREATES: { what: string; url: string; body: (bad: string) => string; auth?: { token?: string } }[] = [
  { what: 'role', url: '/api/v2/roles', body: (b) => `{"name":"fzsur${b}"}` },
  { what: 'group', url: '/api/v2/groups', body: (b) => `{"name":"fzsur${b}"}` },
  { what: 'folder', url: '/api/v2/folders', body: (b) => `{"name":"fzsur${b}","mapped_path":"/srv/f"}` },
  { what: 'admin', url: '/api/v2/admins', body: (b) => `{"username":"fzsur${b}","password":"pw-12345678","permissions":["*"]}` },
  { what: 'user', url: '/api/v2/users', body: (b) => `{"username":"fzsur${b}","password":"pw-12345678","home_dir":"/srv/u","permissions":{"/":["*"]}}` },
  { what: 'API key', url: '/api/v2/apikeys', body: (b) => `{"name":"fzsur${b}","scope":1,"admin":"admin"}` },
  { what: 'event action', url: '/api/v2/eventactions', body: (b) => `{"name":"fzsur${b}","type":101}` },
  {
    what: 'event rule',
    url: '/api/v2/eventrules',
    body: (b) =>
      `{"name":"fzsur${b}","trigger":3,"conditions":{"schedules":[{"hour":"1","day_of_week":"*","day_of_month":"*","month":"*"}]},"actions":[{"name":"base-action"}]}`,
  },
  { what: 'IP list entry', url: '/api/v2/iplists/1', body: (b) => `{"ipornet":"192.0.2.7","description":"fzsur${b}"}` },
  { what: 'share', url: '/api/v2/user/shares', body: (b) => `{"name":"fzsur${b}","scope":1,"paths":["/"]}`, auth: { token: alice } },
];

t.test('a lone surrogate or NUL in a created name: 400 and nothing stored, on every resource', async (t) => {
  const before = await snapshot();
  events.length = 0;
  for (const c of CREATES) {
    for (const [bad, re] of [
      ['\\ud800', /payload "(name|username|description)" is not well-formed Unicode \(lone UTF-16 surrogate\)/],
      ['\\udc00x', /is not well-formed Unicode/],
      ['x\\udbff', /is not well-formed Unicode/],
      ['\\u0000', /payload "(name|username|description)" contains a NUL character/],
    ] as const) {
      const r = await rawJson('POST', c.url, c.body(bad), c.auth);
      t.equal(r.statusCode, 400, `${c.what} ${bad}: ${r.payload}`);
      t.match(json(r), { message: re, error: 'Bad Request' }, `${c.what} ${bad}`);
      t.notOk(r.headers.location, 'no Location');
    }
  }
  t.equal(await snapshot(), before, 'nothing stored, nothing altered');
  t.same(events, [], 'no provider event');
});

t.test('the same creates with well-formed names (astral characters are pairs) are stored, under the name sent', async (t) => {
  for (const c of CREATES) {
    const r = await rawJson('POST', c.url, c.body('\\ud83d\\ude00'), c.auth);
    t.equal(r.statusCode, 201, `${c.what}: ${r.payload}`);
  }
  const conn = ta.app.orm.em.fork().getConnection();
  for (const [table, col] of [
    ['roles', 'name'],
    ['groups', 'name'],
    ['folders', 'name'],
    ['admins', 'username'],
    ['users', 'username'],
    ['api_keys', 'name'],
    ['event_actions', 'name'],
    ['event_rules', 'name'],
    ['ip_lists', 'description'],
    ['shares', 'name'],
  ]) {
    const rows: { v: string }[] = await conn.execute(`select ${col} as v from ${table} where ${col} like ?`, ['fzsur%']);
    t.same(
      rows.map((x) => x.v),
      ['fzsur😀'],
      table,
    );
  }
});

t.test('a JSON body whose bytes are not UTF-8: 400, never a name with U+FFFD', async (t) => {
  const before = await snapshot();
  const bodies = [
    Buffer.concat([Buffer.from('{"name":"fzbad'), Buffer.from([0xff]), Buffer.from('"}')]),
    Buffer.concat([Buffer.from('{"name":"fzbad'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]), // a surrogate as CESU-8
    Buffer.concat([Buffer.from('{"name":"fzbad'), Buffer.from([0xc3]), Buffer.from('"}')]), // a character cut short
  ];
  for (const body of bodies) {
    const r = await ta.inject('POST', '/api/v2/roles', { token, payload: body, headers: { 'content-type': 'application/json; charset=utf-8' } });
    t.equal(r.statusCode, 400, r.payload);
    t.match(json(r), { message: 'the payload is not valid UTF-8', error: 'Bad Request' });
  }
  t.equal(await snapshot(), before);
  const ok = await ta.inject('POST', '/api/v2/roles', {
    token,
    payload: Buffer.from('{"name":"fzbytes-é😀"}'),
    headers: { 'content-type': 'application/json' },
  });
  t.equal(ok.statusCode, 201, 'UTF-8 bytes are fine');
  t.equal(ok.headers.location, `/api/v2/roles/${encodeURIComponent('fzbytes-é😀')}`);
  t.equal((await ta.inject('DELETE', String(ok.headers.location), { token })).statusCode, 200);
});

t.test('object keys are checked too, at any depth', async (t) => {
  const before = await snapshot();
  for (const [url, body, re] of [
    ['/api/v2/roles', '{"name":"k1","\\ud800":1}', /payload key "\\ud800" is not well-formed Unicode/],
    [
      '/api/v2/users',
      '{"username":"k2","password":"pw-12345678","home_dir":"/srv/k2","permissions":{"/":["*"],"/a\\u0000":["*"]}}',
      /payload key "permissions\.\/a\\u0000" contains a NUL character/,
    ],
    [
      '/api/v2/eventactions',
      '{"name":"k3","type":101,"options":{"test_config":{"list":["a","b\\udfff"]}}}',
      /payload "options\.test_config\.list\[1\]" is not well-formed Unicode/,
    ],
  ] as const) {
    const r = await rawJson('POST', url, body);
    t.equal(r.statusCode, 400, body);
    t.match(json(r).message, re);
  }
  // deep nesting: found without exhausting the stack, and the message stays short
  const depth = 20000;
  const deep = await rawJson('POST', '/api/v2/eventactions', `{"name":"k4","type":101,"options":{"x":${'['.repeat(depth)}"\\u0000"${']'.repeat(depth)}}}`);
  t.equal(deep.statusCode, 400, deep.payload.slice(0, 300));
  t.match(json(deep).message, /^payload "\.\.\.[[\]0]+" contains a NUL character$/);
  t.ok(deep.payload.length < 400, 'short message');
  t.equal(await snapshot(), before);
});

t.test('updates, path parameters and queries: 400 before any change', async (t) => {
  const before = await snapshot();
  events.length = 0;
  const cases: [string, string, string | undefined, RegExp][] = [
    ['PUT', '/api/v2/roles/fzsur%F0%9F%98%80', '{"name":"fzsur\\ud83d\\ude00","description":"x\\ud800"}', /payload "description" is not well-formed/],
    ['PUT', '/api/v2/users/alice', '{"username":"alice","description":"a\\u0000b","permissions":{"/":["*"]}}', /payload "description" contains a NUL/],
    ['GET', '/api/v2/roles/a%00b', undefined, /path parameter "name" contains a NUL character/],
    ['DELETE', '/api/v2/users/alice%00', undefined, /path parameter "username" contains a NUL character/],
    ['DELETE', '/api/v2/iplists/1/192.0.2.7%00', undefined, /path parameter "ipornet" contains a NUL/],
    ['GET', '/api/v2/roles?order=ASC%00', undefined, /query parameter "order" contains a NUL character/],
    ['GET', '/api/v2/roles?order=%FF', undefined, /the query string is not valid UTF-8 once percent-decoded/],
    ['GET', '/api/v2/roles?order=%ED%A0%80', undefined, /not valid UTF-8/],
    ['DELETE', '/api/v2/roles/x?a%00=1', undefined, /query parameter key "a\\u0000" contains a NUL/],
    // a "%" that starts no escape: the URL is malformed, whether the member is known or not
    ['GET', '/api/v2/roles?limit=1&%2=1', undefined, /the query string has a "%" that starts no percent-escape: "%2="/],
    ['GET', '/api/v2/roles?limit=1&%G1=1', undefined, /"%G1"/],
    ['GET', '/api/v2/roles?order=ASC%', undefined, /the query string has a "%" that starts no percent-escape: "%"$/],
    ['GET', '/api/v2/roles/fz%G1', undefined, /^the path has a "%" that starts no percent-escape: "%G1"$/],
    ['GET', '/api/v2/roles/fz%', undefined, /^the path has a "%" that starts no percent-escape: "%"$/],
    ['DELETE', '/api/v2/users/fz%FF', undefined, /^the path is not valid UTF-8 once percent-decoded$/],
    ['GET', '/api/v2/users/fz%ED%A0%80', undefined, /^the path is not valid UTF-8 once percent-decoded$/],
  ];
  for (const [method, url, body, re] of cases) {
    const r = body === undefined ? await ta.inject(method, url, { token }) : await rawJson(method, url, body);
    t.equal(r.statusCode, 400, `${method} ${url}: ${r.payload}`);
    t.match(json(r), { message: re, error: 'Bad Request' }, `${method} ${url}`);
  }
  // the file API: a path with NUL never reaches the storage
  const r = await ta.inject('GET', '/api/v2/user/dirs?path=%2Fa%00b', { token: alice });
  t.equal(r.statusCode, 400, r.payload);
  t.match(json(r).message, /query parameter "path" contains a NUL character/);
  t.equal(await snapshot(), before, 'nothing changed');
  t.same(events, []);
});

t.test('Location of created objects: names with characters URLs escape lead back to the object', async (t) => {
  for (const name of [`it's "q" ?&#% $1 _`, 'é 😀 +=;']) {
    const c = await ta.inject('POST', '/api/v2/roles', { token, payload: { name, description: 'd\\e' } });
    t.equal(c.statusCode, 201, c.payload);
    const location = String(c.headers.location);
    t.equal(location, `/api/v2/roles/${encodeURIComponent(name)}`);
    const g = await ta.inject('GET', location, { token });
    t.equal(g.statusCode, 200, location);
    t.match(g.result, { name, description: 'd\\e' });
  }
  const g = await ta.inject('POST', '/api/v2/groups', { token, payload: { name: `g?"'%_$1` } });
  t.equal(g.statusCode, 201);
  t.equal((await ta.inject('GET', String(g.headers.location), { token })).statusCode, 200);
  const ip = await ta.inject('POST', '/api/v2/iplists/1', { token, payload: { ipornet: '198.51.100.0/24' } });
  t.equal(ip.statusCode, 201);
  t.equal(ip.headers.location, '/api/v2/iplists/1/198.51.100.0%2F24');
});

t.test('creates refused after their input was read leave nothing stored, on every resource', async (t) => {
  await ta.inject('POST', '/api/v2/roles', { token, payload: { name: 'dup-role' } });
  await ta.inject('POST', '/api/v2/iplists/1', { token, payload: { ipornet: '203.0.113.9' } });
  const before = await snapshot();
  events.length = 0;
  const cases: [string, string, Record<string, unknown>, number, RegExp, string?][] = [
    [
      'admin, unknown group',
      '/api/v2/admins',
      { username: 'adm-g', password: 'pw-12345678', permissions: ['*'], groups: [{ name: 'no-such-group', options: { add_to_users_as: 1 } }] },
      400,
      /group "no-such-group" does not exist/,
    ],
    ['admin, unknown role', '/api/v2/admins', { username: 'adm-r', password: 'pw-12345678', permissions: ['*'], role: 'no-such-role' }, 400, /no-such-role/],
    [
      'user, unknown group',
      '/api/v2/users',
      { username: 'usr-g', password: 'pw-12345678', home_dir: '/srv/usr-g', permissions: { '/': ['*'] }, groups: [{ name: 'no-such-group', type: 1 }] },
      400,
      /no-such-group/,
    ],
    [
      'user, unknown folder',
      '/api/v2/users',
      {
        username: 'usr-f',
        password: 'pw-12345678',
        home_dir: '/srv/usr-f',
        permissions: { '/': ['*'] },
        virtual_folders: [{ name: 'no-such-folder', virtual_path: '/v' }],
      },
      400,
      /no-such-folder/,
    ],
    ['group, unknown folder', '/api/v2/groups', { name: 'grp-f', virtual_folders: [{ name: 'no-such-folder', virtual_path: '/v' }] }, 400, /no-such-folder/],
    ['role, duplicate', '/api/v2/roles', { name: 'dup-role' }, 400, /already exists/],
    ['API key, unknown admin', '/api/v2/apikeys', { name: 'key-a', scope: 1, admin: 'no-such-admin' }, 400, /no-such-admin/],
    ['event action, duplicate', '/api/v2/eventactions', { name: 'base-action', type: 101 }, 400, /already exists/],
    [
      'event rule, unknown action',
      '/api/v2/eventrules',
      {
        name: 'rule-a',
        trigger: 3,
        conditions: { schedules: [{ hour: '1', day_of_week: '*', day_of_month: '*', month: '*' }] },
        actions: [{ name: 'no-such-action' }],
      },
      400,
      /no-such-action/,
    ],
    ['IP list entry, duplicate', '/api/v2/iplists/1', { ipornet: '203.0.113.9' }, 409, /already on IP list 1/],
    ['share, missing path', '/api/v2/user/shares', { name: 'sh', scope: 1, paths: ['/no/such/file'] }, 400, /./, alice],
  ];
  for (const [what, url, payload, status, re, tok] of cases) {
    const r = await ta.inject('POST', url, { token: tok ?? token, payload });
    t.equal(r.statusCode, status, `${what}: ${r.payload}`);
    t.match(json(r).message, re, what);
  }
  t.equal(await snapshot(), before, 'nothing stored');
  t.same(events, [], 'no provider event');
});

t.test('an answer that fails after the object was stored removes it again', async (t) => {
  // the create renders the object once for its provider event; the second rendering, for the answer, fails
  const failing: [string, { prototype: { render: (...a: never[]) => unknown } }, string, Record<string, unknown>][] = [
    ['role', RoleService, '/api/v2/roles', { name: 'undo-role' }],
    ['group', GroupService, '/api/v2/groups', { name: 'undo-group' }],
    ['folder', FolderService, '/api/v2/folders', { name: 'undo-folder', mapped_path: '/srv/undo' }],
    ['user', UserService, '/api/v2/users', { username: 'undo-user', password: 'pw-12345678', home_dir: '/srv/undo-user', permissions: { '/': ['*'] } }],
    ['admin', AdminService, '/api/v2/admins', { username: 'undo-admin', password: 'pw-12345678', permissions: ['*'] }],
    ['event action', EventActionService, '/api/v2/eventactions', { name: 'undo-action', type: 101 }],
    [
      'event rule',
      EventRuleService,
      '/api/v2/eventrules',
      {
        name: 'undo-rule',
        trigger: 3,
        conditions: { schedules: [{ hour: '1', day_of_week: '*', day_of_month: '*', month: '*' }] },
        actions: [{ name: 'base-action' }],
      },
    ],
  ];
  const before = await snapshot();
  for (const [what, Service, url, payload] of failing) {
    const render = Service.prototype.render;
    let calls = 0;
    Service.prototype.render = function (this: unknown, ...a: never[]) {
      if (++calls === 2) throw new Error('rendering failed');
      return render.apply(this, a);
    };
    try {
      const r = await ta.inject('POST', url, { token, payload });
      t.equal(r.statusCode, 500, `${what}: ${r.payload}`);
      t.equal(calls >= 2, true, `${what}: the answer was rendered after the store`);
    } finally {
      Service.prototype.render = render;
    }
    t.equal(await snapshot(), before, `${what}: nothing left stored`);
  }
});
