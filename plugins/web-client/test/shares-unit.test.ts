/** The share form's logic (app/src/shareForm.ts): form ↔ API object, its checks, the field an API message names, links. */
import t from 'tap';
import { en as strings } from '../app/src/strings.js';
import {
  REDACTED_PASSWORD,
  bodyOf,
  defaultScope,
  endOfDay,
  fieldOfMessage,
  formOf,
  isSpent,
  localDay,
  newForm,
  pathsOf,
  ruleOf,
  scopeOffered,
  scopePolicy,
  shareLink,
  usesLeft,
  type Share,
  type SharePolicy,
} from '../app/src/shareForm.js';

const DAY = 86_400_000;
const NOW = new Date(2026, 5, 10, 12, 0, 0).getTime(); // 10 June 2026, noon local time
const messages = {
  nameRequired: strings.nameRequired,
  pathsRequired: strings.pathsRequired,
  writeNeedsOneFolder: strings.writeNeedsOneFolder,
  expiryInPast: strings.expiryInPast,
  expiryTooLate: strings.expiryTooLate,
  expiryRequired: strings.expiryRequired,
  passwordRequired: strings.passwordRequired,
  maxTokensInvalid: strings.maxTokensInvalid,
  scopeBeyondPolicy: strings.scopeBeyondPolicy,
};
const free: SharePolicy = {
  shares_allowed: true,
  password_required: false,
  default_expiration_days: 0,
  max_expiration_days: 0,
  policies: [],
  policy_change_disabled: false,
};

t.test('a new form from the chosen paths: named after a single one, the default expiry of the policy', async (t) => {
  const f = newForm(['/docs/reports'], { ...free, default_expiration_days: 7 }, NOW);
  t.equal(f.name, 'reports');
  t.equal(f.paths, '/docs/reports');
  t.equal(f.expires, '2026-06-17');
  t.equal(f.scope, 1);
  const g = newForm(['/a', '/b'], null, NOW);
  t.equal(g.name, '', 'no name guessed for several paths');
  t.equal(g.paths, '/a\n/b');
  t.equal(g.expires, '');
  t.equal(newForm(['/'], null, NOW).name, '', 'the home folder has no name to take');
});

t.test('form → API object: lists split and cleaned, expiry at the end of the chosen day, uses', async (t) => {
  const f = {
    ...newForm([], null, NOW),
    name: '  Q3 reports ',
    description: ' for the auditors ',
    paths: 'docs/q3\n/docs/q3\n\n /shared , with comma \n',
    expires: '2026-06-20',
    password: 'pw',
    maxTokens: '5',
    allowFrom: '192.0.2.0/24, 198.51.100.7\n',
    emails: 'Ann@Example.com\nbob@example.com',
  };
  const out = bodyOf(f, free, messages, NOW);
  if (!('body' in out)) throw new Error(JSON.stringify(out.errors));
  t.same(out.body, {
    name: 'Q3 reports',
    description: 'for the auditors',
    scope: 1,
    paths: ['/docs/q3', '/shared , with comma'],
    expires_at: new Date(2026, 5, 20, 23, 59, 59, 999).getTime(),
    password: 'pw',
    max_tokens: 5,
    allow_from: ['192.0.2.0/24', '198.51.100.7'],
    emails: ['ann@example.com', 'bob@example.com'],
  });
});

t.test('form checks: name, paths, one folder to write, expiry in the past, uses', async (t) => {
  const out = bodyOf({ ...newForm([], null, NOW), name: ' ', paths: '', expires: '2026-06-09', maxTokens: '1.5' }, free, messages, NOW);
  t.same('errors' in out && out.errors, {
    name: strings.nameRequired,
    paths: strings.pathsRequired,
    expires_at: strings.expiryInPast,
    max_tokens: strings.maxTokensInvalid,
  });
  const write = bodyOf({ ...newForm(['/a', '/b'], null, NOW), name: 'x', scope: 2 }, free, messages, NOW);
  t.same('errors' in write && write.errors, { paths: strings.writeNeedsOneFolder });
  const today = bodyOf({ ...newForm(['/a'], null, NOW), expires: '2026-06-10' }, free, messages, NOW);
  t.ok('body' in today, 'today is allowed: the share lasts to its end');
  t.same('errors' in bodyOf({ ...newForm(['/a'], null, NOW), maxTokens: '-1' }, free, messages, NOW) && 'max_tokens', 'max_tokens');
});

t.test('the policy: a password required, a maximum expiry (its last day capped to the limit)', async (t) => {
  const strict: SharePolicy = { ...free, password_required: true, max_expiration_days: 10 };
  const base = newForm(['/a'], strict, NOW);
  const bad = bodyOf(base, strict, messages, NOW);
  t.same('errors' in bad && bad.errors, { expires_at: strings.expiryRequired(10), password: strings.passwordRequired });
  const late = bodyOf({ ...base, expires: '2026-06-21', password: 'p' }, strict, messages, NOW);
  t.same('errors' in late && late.errors, { expires_at: strings.expiryTooLate(10) });
  const last = bodyOf({ ...base, expires: '2026-06-20', password: 'p' }, strict, messages, NOW);
  if (!('body' in last)) throw new Error('the last allowed day is refused');
  t.equal(last.body.expires_at, NOW + 10 * DAY, 'the last allowed day ends at the limit, not after it');
});

t.test('share policy rules: the longest prefix segment by segment; the scope they allow preselected, and only it offered when locked', async (t) => {
  const rules = [
    { path: '/', permissions: ['read'], scope: 1 },
    { path: '/in', permissions: ['upload'], scope: 2 },
    { path: '/in/open', permissions: ['read', 'write'], scope: 3 },
  ];
  const policy: SharePolicy = { ...free, policies: rules };
  t.same(pathsOf('in/\n/in\n  /docs//  \n'), ['/in', '/docs'], 'from the home, no trailing slash, each once');
  t.equal(ruleOf(rules, '/docs')?.path, '/');
  t.equal(ruleOf(rules, '/in/x')?.path, '/in');
  t.equal(ruleOf(rules, '/inbox')?.path, '/', '/in is not a prefix of /inbox segment-wise');
  t.equal(ruleOf(rules, '/in/open/deep')?.path, '/in/open');
  t.equal(ruleOf(rules.slice(1), '/docs'), null);

  t.same(scopePolicy(policy, ['/docs']), { allowed: 1, applies: true, locked: false });
  t.same(scopePolicy(policy, ['/docs', '/in/open']), { allowed: 1, applies: true, locked: false }, 'the rules of every path together');
  t.same(scopePolicy({ ...free, policies: rules.slice(1) }, ['/docs']), { allowed: 3, applies: false, locked: false }, 'no rule: anything');
  t.same(scopePolicy(null, ['/docs']), { allowed: 3, applies: false, locked: false });

  t.equal(newForm(['/in'], policy, NOW).scope, 2, 'upload preselected in /in');
  t.equal(newForm(['/in/open'], policy, NOW).scope, 3, 'download and upload in /in/open');
  t.equal(newForm(['/in/open/a.txt'], policy, NOW, true).scope, 1, 'a single file: download (uploads need a folder)');
  t.equal(newForm(['/docs/a.txt'], policy, NOW).scope, 1);
  t.equal(newForm(['/in/open/a', '/in/open/b'], policy, NOW).scope, 1, 'several paths: download, uploads need one folder');
  t.equal(newForm(['/docs', '/in'], policy, NOW).scope, 1, 'rules with nothing in common: download');
  t.equal(defaultScope({ allowed: 2, applies: true, locked: true }, 2), 2, 'upload only stays upload (the form then asks for one folder)');

  // without the lock every scope is offered and sent
  const open = bodyOf({ ...newForm(['/docs'], policy, NOW), scope: 3 }, policy, messages, NOW);
  t.ok('body' in open && open.body.scope === 3, 'the policy is only the default');

  const locked: SharePolicy = { ...policy, policy_change_disabled: true };
  const sp = scopePolicy(locked, ['/in']);
  t.same(
    ([1, 2, 3] as const).filter((sc) => scopeOffered(sp, sc)),
    [2],
    'only upload offered in /in',
  );
  t.same(
    ([1, 2, 3] as const).filter((sc) => scopeOffered(scopePolicy(locked, ['/in/open']), sc)),
    [1, 2, 3],
  );
  t.same(
    ([1, 2, 3] as const).filter((sc) => scopeOffered(scopePolicy(locked, ['/docs', '/in']), sc)),
    [],
    'nothing in common: nothing offered',
  );
  const beyond = bodyOf({ ...newForm(['/in'], locked, NOW), name: 'x', scope: 1 }, locked, messages, NOW);
  t.same('errors' in beyond && beyond.errors, { scope: strings.scopeBeyondPolicy }, 'a scope beyond the locked policy is not sent');
  const within = bodyOf({ ...newForm(['/in'], locked, NOW), name: 'x' }, locked, messages, NOW);
  t.ok('body' in within && within.body.scope === 2);
});

const stored: Share = {
  id: 'abcDEF123_-',
  name: 'old',
  description: 'd',
  scope: 3,
  paths: ['/up'],
  username: 'alice',
  expires_at: NOW + 3 * DAY + 1234,
  password: REDACTED_PASSWORD,
  max_tokens: 4,
  used_tokens: 1,
  allow_from: ['10.0.0.0/8'],
  emails: ['a@example.com'],
};

t.test('API object → form → API object: unchanged fields come back as they were, the password is kept', async (t) => {
  const f = formOf(stored);
  t.match(f, { name: 'old', scope: 3, paths: '/up', hasPassword: true, password: '', maxTokens: '4', allowFrom: '10.0.0.0/8', emails: 'a@example.com' });
  const out = bodyOf(f, free, messages, NOW);
  if (!('body' in out)) throw new Error(JSON.stringify(out.errors));
  t.same(out.body, {
    name: 'old',
    description: 'd',
    scope: 3,
    paths: ['/up'],
    expires_at: stored.expires_at,
    password: REDACTED_PASSWORD,
    max_tokens: 4,
    allow_from: ['10.0.0.0/8'],
    emails: ['a@example.com'],
  });
  const removed = bodyOf({ ...f, removePassword: true }, free, messages, NOW);
  t.equal('body' in removed && removed.body.password, '', 'removing the password sends none');
  const changed = bodyOf({ ...f, password: 'new' }, free, messages, NOW);
  t.equal('body' in changed && changed.body.password, 'new');
  const moved = bodyOf({ ...f, expires: localDay(NOW + 5 * DAY) }, free, messages, NOW);
  t.equal('body' in moved && moved.body.expires_at, endOfDay(localDay(NOW + 5 * DAY)), 'a new day: the end of it');
  const never = bodyOf({ ...f, expires: '' }, free, messages, NOW);
  t.equal('body' in never && never.body.expires_at, 0);
  const required = bodyOf({ ...f, removePassword: true }, { ...free, password_required: true }, messages, NOW);
  t.same('errors' in required && required.errors, { password: strings.passwordRequired });
});

t.test('the field an API message names', async (t) => {
  t.equal(fieldOfMessage('"expires_at" must be in the future'), 'expires_at');
  t.equal(fieldOfMessage('"paths": /nope does not exist'), 'paths');
  t.equal(fieldOfMessage('"allow_from[1]" must be a valid IP address or CIDR network'), 'allow_from');
  t.equal(fieldOfMessage('"emails[0]" must be a valid email'), 'emails');
  t.equal(fieldOfMessage('"password": shares of this account must have a password'), 'password');
  t.equal(fieldOfMessage('"scope": a read-write share of /docs goes beyond the share policy of "/" (permissions: read; allows read)'), 'scope');
  t.equal(fieldOfMessage('"name" length must be less than or equal to 255 characters long'), 'name');
  t.equal(fieldOfMessage('"username" is not allowed'), null, 'not a field of the form');
  t.equal(fieldOfMessage('sharing is disabled for this account'), null);
});

t.test('days, links, uses', async (t) => {
  t.equal(localDay(new Date(2026, 0, 5, 23, 59).getTime()), '2026-01-05');
  t.ok(Number.isNaN(endOfDay('2026-02-30')), 'no such day');
  t.ok(Number.isNaN(endOfDay('tomorrow')));
  t.equal(shareLink('https://ferry.example', 'a_b-C'), 'https://ferry.example/web/client/pub/a_b-C');
  t.equal(usesLeft({ max_tokens: 0, used_tokens: 9 }), null, 'unlimited');
  t.equal(usesLeft({ max_tokens: 3, used_tokens: 1 }), 2);
  t.equal(usesLeft({ max_tokens: 3, used_tokens: 5 }), 0);
  t.ok(isSpent({ max_tokens: 1, used_tokens: 1, expires_at: 0 }, NOW));
  t.ok(isSpent({ max_tokens: 0, used_tokens: 0, expires_at: NOW - 1 }, NOW));
  t.notOk(isSpent({ max_tokens: 0, used_tokens: 7, expires_at: NOW + 1 }, NOW));
});
