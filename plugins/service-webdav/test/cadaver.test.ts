import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { run, startWebdav } from './helpers.js';

// cadaver (scripts/servers/start-clients.sh) driven by a script on stdin, its credentials in the
// ~/.netrc of a temporary HOME: every command it has for files, collections, locks and properties.

t.test('cadaver: put, get, mkcol, move, copy, delete, lock/unlock, propset/propget', async (t) => {
  const h = await startWebdav(t);
  const home = await h.addUser('cad');
  const dir = t.testdir({ home: {}, work: {} });
  const HOME = path.join(dir, 'home');
  writeFileSync(path.join(HOME, '.netrc'), `machine 127.0.0.1\nlogin cad\npassword cad-pass-1\n`, { mode: 0o600 });
  const work = path.join(dir, 'work');
  writeFileSync(path.join(work, 'local.txt'), 'from cadaver\n');
  const script = [
    'mkcol docs',
    'put local.txt docs/a.txt',
    'copy docs/a.txt docs/b.txt',
    'move docs/b.txt c.txt',
    'get c.txt back.txt',
    'propset docs/a.txt color blue',
    'propget docs/a.txt color',
    'lock docs/a.txt',
    'discover docs/a.txt',
    'unlock docs/a.txt',
    'put local.txt gone.txt',
    'delete gone.txt',
    'ls docs',
    'quit',
    '',
  ].join('\n');
  const r = await run('cadaver', [`${h.base}/`], { cwd: work, env: { HOME }, input: script });
  const out = r.stdout + r.stderr;
  if (process.env.WEBDAV_SHOW_CADAVER) console.error(out);
  t.equal(r.code, 0, 'cadaver ran', { out });
  // an HTTP status is matched with its reason phrase ("403 Forbidden"): bare digits also occur in the random lock token
  t.notMatch(out, /failed|Could not|not authorized|\b[45]\d\d [A-Z]/i, 'no command failed', { out });
  t.equal(readFileSync(path.join(home, 'docs/a.txt'), 'utf8'), 'from cadaver\n', 'put');
  t.equal(readFileSync(path.join(home, 'c.txt'), 'utf8'), 'from cadaver\n', 'copy then move');
  t.notOk(existsSync(path.join(home, 'docs/b.txt')), 'moved away');
  t.equal(readFileSync(path.join(work, 'back.txt'), 'utf8'), 'from cadaver\n', 'get');
  t.notOk(existsSync(path.join(home, 'gone.txt')), 'delete');
  // (cadaver echoes each command: the checks read its result lines)
  t.equal((out.match(/\bsucceeded\./g) ?? []).length, 11, 'the eleven commands that report an outcome succeeded', { out });
  t.match(out, /Value of color is: blue/, 'propget reads the property propset wrote');
  t.match(out, /Lock token <opaquelocktoken:[0-9a-f-]+>:\s+Depth 0 on `[^']+\/docs\/a\.txt'\s+Scope: exclusive {2}Type: write/, 'discover shows the lock');
  t.match(out, /Listing collection `\/docs\/': succeeded\.\s+a\.txt\s+13 /, 'ls lists docs/a.txt, 13 bytes');

  // what the server holds after the script: the dead property, and no lock left
  const auth = 'Basic ' + Buffer.from('cad:cad-pass-1').toString('base64');
  const found = await fetch(`${h.base}/docs/a.txt`, {
    method: 'PROPFIND',
    headers: { authorization: auth, depth: '0' },
    body: '<D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>',
  });
  const body = await found.text();
  t.match(body, />blue</, 'the property is stored');
  t.notMatch(body, /activelock/, 'unlocked');
});
