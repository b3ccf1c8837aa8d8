import type { Test } from 'tap';
import type { TestApp } from '@ferry/core/testing';

/** A filesystem as the REST API takes it: `{ provider, <kind>config }`. */
export type FilesystemConfig = Record<string, unknown>;

export interface UserWithFoldersOptions {
  /** The user's home. */
  home: FilesystemConfig;
  /** Folder name to filesystem; each folder is mounted at `/<name>` without quota. */
  folders: Record<string, FilesystemConfig>;
  /** More user fields (`quota_files`...). */
  user?: Record<string, unknown>;
  username?: string;
}

export interface UserWithFolders {
  /** An admin token. */
  admin: string;
  /** The user's token. */
  token: string;
  /** A call as the user that must answer below 300 (asserted on `t`). */
  call(method: string, url: string, payload?: unknown): ReturnType<TestApp['inject']>;
}

/**
 * Creates, through the REST API of a test app, virtual folders and a user
 * (default `mover`, all permissions) whose home and folders are on the given
 * filesystems: the setup of tests that move and copy between mounts (a
 * server-side move where the plugin's `sameResource` says both sides are one
 * resource, a streamed one otherwise). Every creation is asserted 201 on `t`.
 */
export async function createUserWithFolders(t: Test, app: TestApp, o: UserWithFoldersOptions): Promise<UserWithFolders> {
  const username = o.username ?? 'mover';
  const password = `${username}-password-1`;
  const admin = await app.adminToken();
  const post = async (url: string, payload: unknown) => {
    const r = await app.inject('POST', url, { token: admin, payload });
    t.equal(r.statusCode, 201, `POST ${url} ${r.statusCode === 201 ? '' : r.payload}`);
  };
  for (const [name, filesystem] of Object.entries(o.folders)) await post('/api/v2/folders', { name, filesystem });
  await post('/api/v2/users', {
    username,
    password,
    status: 1,
    permissions: { '/': ['*'] },
    ...o.user,
    filesystem: o.home,
    virtual_folders: Object.keys(o.folders).map((name) => ({ name, virtual_path: `/${name}`, quota_size: -1, quota_files: -1 })),
  });
  const token = await app.userToken(username, password);
  return {
    admin,
    token,
    call: async (method, url, payload) => {
      const r = await app.inject(method, url, { token, payload });
      t.ok(r.statusCode < 300, `${method} ${url}: ${r.statusCode} ${r.statusCode < 300 ? '' : r.payload}`);
      return r;
    },
  };
}
