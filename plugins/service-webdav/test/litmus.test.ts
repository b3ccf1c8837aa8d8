import t from 'tap';
import { run, startWebdav } from './helpers.js';

/** litmus, the WebDAV protocol test suite (Debian package litmus): every suite with 0 failures. */
const SUITES = ['basic', 'copymove', 'props', 'locks', 'http'];

t.test('litmus on fs-local', async (t) => {
  const h = await startWebdav(t);
  await h.addUser('lit');
  // litmus writes debug.log and child.log into its working directory
  const cwd = t.testdir({});
  for (const suite of SUITES) {
    const r = await run('litmus', ['--keep-going', `${h.base}/`, 'lit', 'lit-pass-1'], { cwd, env: { TESTS: suite, HOME: h.ta.dataDir } });
    const summary = /<- summary for `(\w+)': of (\d+) tests run: (\d+) passed, (\d+) failed\. ([\d.]+)%(?:\n-> (\d+) warnings? issued)?/.exec(r.stdout);
    t.ok(summary, `${suite}: litmus printed its summary`);
    if (!summary) {
      t.comment(r.stdout + r.stderr);
      continue;
    }
    t.equal(summary[4], '0', `${suite}: ${summary[3]}/${summary[2]} passed, ${summary[4]} failed${summary[6] ? `, ${summary[6]} warnings` : ''}`);
    t.equal(r.code, 0, `${suite}: litmus exits 0`);
    if (summary[4] !== '0') t.comment(r.stdout);
    const warnings = r.stdout.split('\n').filter((l) => l.includes('WARNING'));
    t.comment(`${suite} warnings: ${warnings.length ? warnings.join(' | ') : 'none'}`);
  }
});
