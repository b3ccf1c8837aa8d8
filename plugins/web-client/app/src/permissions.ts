/**
 * What the user may do in a folder, from the permissions of the folder and
 * the account's web client options (GET /api/v2/user/capabilities, read by
 * capabilities.ts), as the actions the file screen offers (pure:
 * unit-tested). The server checks them again on every request: this only
 * hides what would be refused.
 */

export interface Allowed {
  list: boolean;
  download: boolean;
  upload: boolean;
  overwrite: boolean;
  /** Removing files, folders (the `delete`, `delete_files`, `delete_dirs` permissions). */
  deleteFiles: boolean;
  deleteDirs: boolean;
  renameFiles: boolean;
  renameDirs: boolean;
  createDirs: boolean;
  copy: boolean;
}

/**
 * The actions `permissions` (of one folder: `*` grants all) and the web
 * client options allow; `write-disabled` takes every write away whatever
 * the permissions (as the server's check does).
 */
export function allowedActions(permissions: readonly string[], webClient: readonly string[]): Allowed {
  const all = permissions.includes('*');
  const has = (...p: string[]) => all || p.some((x) => permissions.includes(x));
  const write = !webClient.includes('write-disabled');
  return {
    list: has('list'),
    download: has('download'),
    upload: write && has('upload'),
    overwrite: write && has('overwrite'),
    deleteFiles: write && has('delete', 'delete_files'),
    deleteDirs: write && has('delete', 'delete_dirs'),
    renameFiles: write && has('rename', 'rename_files'),
    renameDirs: write && has('rename', 'rename_dirs'),
    createDirs: write && has('create_dirs'),
    copy: write && has('copy'),
  };
}

/** Nothing allowed: until the capabilities are known, or when they cannot be read. */
export const NOTHING: Allowed = allowedActions([], ['write-disabled']);
