import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { TOKENS, pluginHost, type ActionTypeDef, type PluginHost, type UserFiles } from '@ferry/core';
import { createTestApp, type TestApp } from '@ferry/core/testing';
import { runAction, type RunActionOptions } from '@ferry/testkit';

/** s3rver started by scripts/servers/start-s3.sh (see plugins/fs-s3/test/fixtures/server.ts). */
export const S3_ENDPOINT = `http://127.0.0.1:${Number(process.env.FERRY_S3_PORT ?? 19000)}`;

export const s3config = (prefix = `action-fs-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}/`) => ({
  bucket: 'ferry-test',
  endpoint: S3_ENDPOINT,
  region: 'us-east-1',
  access_key: 'S3RVER',
  access_secret: { status: 'Plain', payload: 'S3RVER' },
  force_path_style: true,
  key_prefix: prefix,
});

export interface Harness {
  ta: TestApp;
  admin: string;
  host: PluginHost;
  /** The type 9 definition the plugin loader registered. */
  def: ActionTypeDef<any>;
  /** Creates a user through the REST API; returns its home directory (local providers). */
  user(username: string, filesystem: Record<string, unknown>, extra?: Record<string, unknown>): Promise<string>;
  /** Runs fs_config for `username` as a rule execution on an upload by that user does. */
  run(username: string, fsConfig: Record<string, unknown>, o?: RunActionOptions): Promise<unknown>;
  /** Opens the user's files (closed at teardown). */
  files(username: string): Promise<UserFiles>;
  put(username: string, vpath: string, data: Buffer | string): Promise<void>;
  get(username: string, vpath: string): Promise<Buffer>;
  exists(username: string, vpath: string): Promise<boolean>;
  /** Every path under dir (recursive), sorted. */
  tree(username: string, dir?: string): Promise<string[]>;
  close(): Promise<void>;
}

export async function harness(o: { config?: Record<string, unknown> } = {}): Promise<Harness> {
  const ta = await createTestApp({
    plugins: [{ name: '@ferry/fs-local' }, { name: '@ferry/fs-crypt' }, { name: '@ferry/fs-s3' }, { name: '@ferry/action-fs' }],
    config: o.config,
  });
  const admin = await ta.adminToken();
  const host = pluginHost((token) => ta.app.container.resolve(token));
  const registry = ta.app.container.resolve<{ actionType(n: number): ActionTypeDef<any> | undefined }>(TOKENS.Plugins);
  const def = registry.actionType(9)!;
  const open = new Map<string, UserFiles>();
  const files = async (username: string) => {
    let f = open.get(username);
    if (!f) {
      f = await host.files.open(username);
      open.set(username, f);
    }
    return f;
  };
  const h: Harness = {
    ta,
    admin,
    host,
    def,
    async user(username, filesystem, extra = {}) {
      const home = path.join(ta.dataDir, 'homes', username);
      mkdirSync(home, { recursive: true });
      const r = await ta.inject('POST', '/api/v2/users', {
        token: admin,
        payload: { username, password: `${username}-password-1`, status: 1, home_dir: home, permissions: { '/': ['list'] }, filesystem, ...extra },
      });
      if (r.statusCode !== 201) throw new Error(`user ${username}: ${r.payload}`);
      return home;
    },
    run: (username, fsConfig, ro = {}) => runAction(def, fsConfig, { ...ro, event: { username, ...ro.event } }),
    files,
    async put(username, vpath, data) {
      const f = await files(username);
      const parent = path.posix.dirname(vpath);
      if (parent !== '/') await f.mkdir(parent, { parents: true });
      await f.write(vpath, Readable.from([Buffer.from(data)]));
    },
    async get(username, vpath) {
      const rs = await (await files(username)).openRead(vpath);
      const chunks: Buffer[] = [];
      for await (const c of rs) chunks.push(c as Buffer);
      return Buffer.concat(chunks);
    },
    async exists(username, vpath) {
      return !!(await (await files(username)).statOrNull(vpath));
    },
    async tree(username, dir = '/') {
      const f = await files(username);
      const out: string[] = [];
      const walk = async (d: string) => {
        for await (const page of f.list(d)) {
          for (const e of page) {
            out.push(e.isDir ? `${e.path}/` : e.path);
            if (e.isDir) await walk(e.path);
          }
        }
      };
      if (await f.statOrNull(dir)) await walk(dir);
      return out.sort();
    },
    async close() {
      for (const f of open.values()) await f.close().catch(() => undefined);
      await ta.close();
    },
  };
  return h;
}

export const local = { provider: 0 };
export const crypt = (pass = `crypt-${randomBytes(6).toString('hex')}`) => ({ provider: 4, cryptconfig: { passphrase: { status: 'Plain', payload: pass } } });
export const s3 = (prefix?: string) => ({ provider: 1, s3config: s3config(prefix) });
