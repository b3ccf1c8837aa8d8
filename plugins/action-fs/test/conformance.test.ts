import path from 'node:path';
import t from 'tap';
import type { ActionTypeDef } from '@ferry/core';
import { actionConformance, StalledServer } from '@ferry/testkit';
import { harness, local } from './helpers.js';

// The test kit's action conformance suite on type 9, run against the real
// plugin as the loader registered it, with real users: 'conformance-user'
// (a local home, and a virtual folder /hang on an S3 endpoint that accepts
// connections and never answers: what hangs until the action's timeout or
// the execution's signal) and 'tpl-user'.

const stalled = await new StalledServer('silent').start();
t.teardown(() => stalled.stop());
const h = await harness();
t.teardown(() => h.close());

const folder = await h.ta.inject('POST', '/api/v2/folders', {
  token: h.admin,
  payload: {
    name: 'hang',
    filesystem: {
      provider: 1,
      s3config: {
        bucket: 'never',
        endpoint: stalled.endpoint,
        region: 'us-east-1',
        access_key: 'k',
        access_secret: { status: 'Plain', payload: 's' },
        force_path_style: true,
      },
    },
  },
});
if (folder.statusCode !== 201) throw new Error(folder.payload);
await h.user('conformance-user', local, { virtual_folders: [{ name: 'hang', virtual_path: '/hang', quota_size: -1, quota_files: -1 }] });
const tplHome = await h.user('tpl-user', local);
await h.put('conformance-user', '/in/data.csv', 'id,value\n1,2\n');

// The rendered options reach create(): observe() reads the field the core rendered, and the run itself
// (mkdirs) must have created that very directory.
let rendered = '';
const def: ActionTypeDef<any> = {
  ...h.def,
  create: (o: { mkdirs?: string[] }) => {
    if (o.mkdirs?.[0]?.startsWith('/tpl/')) rendered = o.mkdirs[0];
    return h.def.create(o);
  },
};

await actionConformance(t, {
  name: 'action-fs',
  def,
  valid: { type: 4, exist: ['/in'] },
  invalid: [
    { options: { type: 42 }, field: 'type' },
    { options: { type: 7, pgp: { mode: 1, paths: [{ key: '/a', value: '/b' }] } }, field: 'pgp' },
    { options: { type: 9, decompress: { name: '/a.zip', target: '/x', max_ratio: 0 } }, field: 'decompress.max_ratio' },
    { options: { type: 1, renames: [{ key: '/a' }] }, field: 'renames[0].value' },
  ],
  template: {
    options: (tpl) => ({ type: 3, mkdirs: [`/tpl/${tpl}`] }),
    async observe() {
      const dir = path.join(tplHome, ...rendered.split(/[\\/]/).filter(Boolean));
      if (!(await h.exists('tpl-user', rendered.replace(/\\/g, '/')))) throw new Error(`the run did not create ${dir}`);
      return rendered.slice('/tpl/'.length);
    },
  },
  failing: { options: { type: 4, exist: ['/in/data.csv', '/missing-{{.ObjectName}}'] }, reason: /missing: \/missing-data\.csv/ },
  hanging: { options: { type: 4, exist: ['/hang/x'], timeout: 1 }, within: 5000 },
  longRunning: { type: 4, exist: ['/hang/x'], timeout: 600 },
  secret: {
    options: (password) => ({ type: 7, pgp: { mode: 1, paths: [{ key: '/in/data.csv', value: '/enc/data.pgp' }], password } }),
    failingOptions: (password) => ({ type: 7, pgp: { mode: 2, paths: [{ key: '/in/data.csv', value: '/dec/data.csv' }], password } }),
  },
});
