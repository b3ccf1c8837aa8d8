import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { normalizeVirtualPath, TOKENS, type ActionTypeDef } from '@ferry/core';
import { createTestApp } from '@ferry/core/testing';
import { actionConformance } from '@ferry/testkit';
import { startTinyIcapServer } from './helpers/tiny-icap-server.js';

// The test kit's action conformance suite on type 17, the plugin as the
// loader registered it, real users with local homes, and the tiny ICAP
// server (so the suite needs no c-icap): /continue answers 204, /folded
// blocks, /silent never answers (the timeout and the cancellation).

const tiny = await startTinyIcapServer();
t.teardown(() => tiny.close());
const ta = await createTestApp({ plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/action-icap' }] });
t.teardown(() => ta.close());
const admin = await ta.adminToken();
const homes: Record<string, string> = {};
for (const username of ['conformance-user', 'tpl-user']) {
  const home = path.join(ta.dataDir, 'homes', username);
  mkdirSync(home, { recursive: true });
  homes[username] = home;
  const r = await ta.inject('POST', '/api/v2/users', {
    token: admin,
    payload: { username, password: 'password-123', status: 1, home_dir: home, permissions: { '/': ['*'] } },
  });
  if (r.statusCode !== 201) throw new Error(r.payload);
}
const put = (username: string, vpath: string, body: string) => {
  const file = path.join(homes[username]!, ...normalizeVirtualPath(vpath).split('/').filter(Boolean));
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, body);
};
put('conformance-user', '/in/data.csv', 'id,value\n1,2\n');
put('conformance-user', '/in/hang.csv', 'never answered\n');
put('conformance-user', '/in/long.csv', 'cancelled\n');

const registry = ta.app.container.resolve<{ actionType(n: number): ActionTypeDef<any> | undefined }>(TOKENS.Plugins);
const real = registry.actionType(17)!;
// The template case renders paths[0] into a path made of the event's fields: the wrapper puts a file
// there (for tpl-user, as the normalised path the action will read) so the real run scans it.
let rendered = '';
const def: ActionTypeDef<any> = {
  ...real,
  create: (o: { paths: string[] }) => {
    if (o.paths[0]?.startsWith('/tpl/')) {
      rendered = o.paths[0];
      put('tpl-user', rendered, 'template target');
    }
    return real.create(o);
  },
};
const icap = (service: string) => `icap://127.0.0.1:${tiny.port}/${service}`;

await actionConformance(t, {
  name: 'action-icap',
  def,
  valid: { endpoint: icap('continue'), paths: ['{{.VirtualPath}}'], block_action: 3 },
  invalid: [
    { options: { endpoint: 'http://127.0.0.1/avscan', paths: ['/a'] }, field: 'endpoint' },
    { options: { endpoint: icap('continue'), paths: [] }, field: 'paths' },
    { options: { endpoint: icap('continue'), paths: ['/a'], method: 'GET' }, field: 'method' },
    { options: { endpoint: icap('continue'), paths: ['/a'], block_action: 4 }, field: 'block_action' },
    { options: { endpoint: icap('continue'), paths: ['/a'], adapt_action: 0 }, field: 'adapt_action' },
    { options: { endpoint: icap('continue'), paths: ['/a'], failure_policy: 9 }, field: 'failure_policy' },
    { options: { endpoint: icap('continue'), paths: ['/a'], timeout: 0 }, field: 'timeout' },
  ],
  template: {
    options: (tpl) => ({ endpoint: icap('continue'), paths: [`/tpl/${tpl}`] }),
    async observe() {
      const req = tiny.requests.at(-1);
      if (!req || req.body.toString() !== 'template target') throw new Error('the run did not scan the rendered path');
      return rendered.slice('/tpl/'.length);
    },
  },
  failing: { options: { endpoint: icap('folded'), paths: ['{{.VirtualPath}}'] }, reason: /blocked by the ICAP service: Tiny\.Test\.Virus/ },
  hanging: { options: { endpoint: icap('silent'), paths: ['/in/hang.csv'], timeout: 1, failure_policy: 2 }, within: 5000 },
  longRunning: { endpoint: icap('silent'), paths: ['/in/long.csv'], timeout: 600, failure_policy: 2 },
});
