/** The permissions per path of a user or a group: a row per path, "all" or the operations one by one. */
import type { operations } from '../../generated/api';
import { names } from './field-message';
import { t } from './strings';

/** A permission of the API (its OpenAPI type: the user's and the group's permissions take the same ones). */
export type Perm = NonNullable<NonNullable<operations['post_api_v2_users']['requestBody']>['content']['application/json']['permissions']>[string][number];
type Operation = Exclude<Perm, '*'>;

/**
 * Every operation of the API's type, in the order shown: typed as a record of
 * that type, so the build fails when the API adds or removes one (the list is
 * the OpenAPI document's, not a copy of the core's).
 */
const SHOWN: Record<Operation, true> = {
  list: true,
  download: true,
  upload: true,
  overwrite: true,
  delete: true,
  delete_files: true,
  delete_dirs: true,
  rename: true,
  rename_files: true,
  rename_dirs: true,
  create_dirs: true,
  create_symlinks: true,
  chmod: true,
  chown: true,
  chtimes: true,
  copy: true,
};
export const OPERATIONS = Object.keys(SHOWN) as Operation[];

export interface PermRow {
  path: string;
  perms: Perm[];
}

/** The rows of the API's map (path → permissions), and back (rows without a path are left out). */
export const permRowsOf = (map: Record<string, readonly string[]> | undefined): PermRow[] =>
  Object.entries(map ?? {}).map(([path, perms]) => ({ path, perms: [...perms] as Perm[] }));
export const permMapOf = (rows: PermRow[]): Record<string, Perm[]> =>
  Object.fromEntries(rows.filter((r) => r.path.trim()).map((r) => [r.path.trim(), r.perms]));

/**
 * The editor, as a fieldset: `path` is the map's key path in the API's object
 * (its messages are shown here), `keepRoot` keeps the "/" row (a user needs it).
 */
export function PermissionsEditor({
  idPrefix,
  rows,
  onChange,
  disabled,
  help,
  path,
  error,
  keepRoot,
}: {
  idPrefix: string;
  rows: PermRow[];
  onChange: (rows: PermRow[]) => void;
  disabled: boolean;
  help: string;
  path: string;
  error: string;
  keepRoot: boolean;
}) {
  const set = (i: number, row: PermRow) => onChange(rows.map((r, j) => (j === i ? row : r)));
  const helpId = `${idPrefix}-perm-help`;
  return (
    <fieldset disabled={disabled} aria-describedby={helpId}>
      <legend>{t.permissions}</legend>
      <p id={helpId} className="muted">
        {help}
      </p>
      {names(error, path) && <p className="error">{error}</p>}
      {rows.map((row, i) => (
        <div className="perm-row" key={i} role="group" aria-label={`${t.permissions} ${row.path}`}>
          <label htmlFor={`${idPrefix}-perm-path-${i}`}>{t.path}</label>
          <input id={`${idPrefix}-perm-path-${i}`} value={row.path} spellCheck={false} onChange={(e) => set(i, { ...row, path: e.target.value })} />
          <label className="check">
            <input type="checkbox" checked={row.perms.includes('*')} onChange={(e) => set(i, { ...row, perms: e.target.checked ? ['*'] : [] })} />
            {t.all}
          </label>
          {!row.perms.includes('*') &&
            OPERATIONS.map((op) => (
              <label className="check" key={op}>
                <input
                  type="checkbox"
                  checked={row.perms.includes(op)}
                  onChange={(e) => set(i, { ...row, perms: e.target.checked ? [...row.perms, op] : row.perms.filter((p) => p !== op) })}
                />
                {op}
              </label>
            ))}
          {!(keepRoot && row.path === '/') && (
            <button type="button" aria-label={t.removePath(row.path)} onClick={() => onChange(rows.filter((_, j) => j !== i))}>
              ×
            </button>
          )}
        </div>
      ))}
      <button type="button" onClick={() => onChange([...rows, { path: '', perms: ['list', 'download'] }])}>
        {t.addPath}
      </button>
    </fieldset>
  );
}
