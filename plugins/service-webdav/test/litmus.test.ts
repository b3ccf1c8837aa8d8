import { randomBytes } from 'node:crypto';
import net from 'node:net';
import t from 'tap';
import type { Test } from 'tap';
import { run, startWebdav, type Harness } from './helpers.js';

/** litmus, the WebDAV protocol test suite (Debian package litmus): every suite with 0 failures. */
const SUITES = ['basic', 'copymove', 'props', 'locks', 'http'];
const S3_PORT = Number(process.env.FERRY_S3_PORT ?? 19000);

async function litmus(t: Test, h: Harness, user: string): Promise<void> {
  // litmus writes debug.log and child.log into its working directory
  const cwd = t.testdir({});
  for (const suite of SUITES) {
    const r = await run('litmus', ['--keep-going', `${h.base}/`, user, `${user}-pass-1`], { cwd, env: { TESTS: suite, HOME: h.ta.dataDir } });
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
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port, timeout: 1000 });
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
    s.once('timeout', () => (s.destroy(), resolve(false)));
  });
}

t.test('litmus on fs-local', async (t) => {
  const h = await startWebdav(t);
  await h.addUser('lit');
  await litmus(t, h, 'lit');
});

t.test('litmus on S3 (the s3rver of scripts/servers/start-s3.sh)', async (t) => {
  if (!(await portOpen(S3_PORT))) {
    const why = `nothing listens on 127.0.0.1:${S3_PORT} (bash scripts/servers/up.sh)`;
    if (process.env.CI === 'true') throw new Error(why);
    return void t.plan(0, why);
  }
  const h = await startWebdav(t, { backends: ['@ferry/fs-local', '@ferry/fs-s3'] });
  await h.addUser('lit3', {
    filesystem: {
      provider: 1,
      s3config: {
        bucket: 'ferry-test',
        endpoint: `http://127.0.0.1:${S3_PORT}`,
        region: 'us-east-1',
        access_key: 'S3RVER',
        access_secret: { status: 'Plain', payload: 'S3RVER' },
        force_path_style: true,
        key_prefix: `service-webdav-${randomBytes(6).toString('hex')}/`,
      },
    },
  });
  await litmus(t, h, 'lit3');
});
