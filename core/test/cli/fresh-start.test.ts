import t from 'tap';
import path from 'node:path';
import { filesystemOfEachProvider, userOn } from '../helpers/provider-options.js';
import { startServe } from '../helpers/serve.js';

// A fresh `ferry serve` with the shipped configuration (config/default.yaml,
// no --config file: only where to keep its data, its port and the first
// admin come from the environment) creates users on every storage provider
// 0-6, without any edit of the plugin list.

t.test('a fresh start on the shipped configuration creates users on providers 0-6', async (t) => {
  const dir = t.testdir({});
  const { base, stop } = await startServe(t, {
    SERVICE_COMMON__DATA_DIR: path.join(dir, 'data'),
    SERVICE_HTTPD__BINDINGS__0__PORT: '0',
    SERVICE_DEFAULT_ADMIN_USERNAME: 'admin',
    SERVICE_DEFAULT_ADMIN_PASSWORD: 'Fresh-Start-Pw-1',
  });

  const tok = await fetch(`${base}/api/v2/token`, { headers: { authorization: 'Basic ' + Buffer.from('admin:Fresh-Start-Pw-1').toString('base64') } });
  t.equal(tok.status, 200, 'the first admin gets a token');
  const headers = { authorization: `Bearer ${((await tok.json()) as { access_token: string }).access_token}`, 'content-type': 'application/json' };
  for (const [kind, filesystem] of filesystemOfEachProvider()) {
    const body = userOn(kind, filesystem, path.join(dir, 'homes'));
    const r = await fetch(`${base}/api/v2/users`, { method: 'POST', headers, body: JSON.stringify(body) });
    const text = await r.text();
    t.equal(r.status, 201, `a user on provider ${String(filesystem.provider)} (${kind}) is created${r.status === 201 ? '' : `: ${text}`}`);
    const back = await fetch(`${base}/api/v2/users/${String(body.username)}`, { headers });
    t.match(await back.json(), { filesystem: { provider: filesystem.provider } }, `stored on provider ${String(filesystem.provider)}`);
  }
  t.equal(await stop(), 0, 'stops cleanly');
});
