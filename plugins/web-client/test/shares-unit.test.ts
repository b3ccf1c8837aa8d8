/** The share form's logic (app/src/shareForm.ts): form ↔ API object, its checks, the field an API message names, links. */
import t from 'tap';
import { en as strings } from '../app/src/strings.js';
import {
  REDACTED_PASSWORD,
  bodyOf,
  endOfDay,
  fieldOfMessage,
  formOf,
  isSpent,
  localDay,
  newForm,
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
};
const free: SharePolicy = { shares_allowed: true, password_required: false, default_expiration_days: 0, max_expiration_days: 0 };

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
  const strict: SharePolicy = { shares_allowed: true, password_required: true, default_expiration_days: 0, max_expiration_days: 10 };
  const base = newForm(['/a'], strict, NOW);
  const bad = bodyOf(base, strict, messages, NOW);
  t.same('errors' in bad && bad.errors, { expires_at: strings.expiryRequired(10), password: strings.passwordRequired });
  const late = bodyOf({ ...base, expires: '2026-06-21', password: 'p' }, strict, messages, NOW);
  t.same('errors' in late && late.errors, { expires_at: strings.expiryTooLate(10) });
  const last = bodyOf({ ...base, expires: '2026-06-20', password: 'p' }, strict, messages, NOW);
  if (!('body' in last)) throw new Error('the last allowed day is refused');
  t.equal(last.body.expires_at, NOW + 10 * DAY, 'the last allowed day ends at the limit, not after it');
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
