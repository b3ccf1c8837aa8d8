import type { EntityManager } from '@mikro-orm/core';
import type { Folder, Role, User } from '../data/entities/index.js';
import type { StoredGroupSettings } from './account-lookup.js';
import { selectFirstRow, selectRows, sqlDialectOf, type SqlDialect } from '../data/bound-sql.js';
import { REVOKED_JTI_SQL, revokedValue } from '../data/revoked-tokens.js';

/**
 * Read paths of users that run for every list page, lookup and login: plain
 * SQL (indexed lookups, one query per batch) mapped to entity-shaped objects,
 * which is several times cheaper than hydrating entities. Writes always go
 * through the entities.
 */

type Row = Record<string, unknown>;

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));
/** JSON columns: text on SQLite, already parsed on PostgreSQL. */
function json<T>(v: unknown, dflt: T): T {
  if (v === null || v === undefined) return dflt;
  return (typeof v === 'string' ? JSON.parse(v) : v) as T;
}

const str = (v: unknown): string => (v as string | null | undefined) ?? '';

/**
 * A users row (with `role_name` from the roles join) as a read-only User.
 * One object literal: every user gets the same hidden class (setting the
 * members in loops over name lists made dictionary objects: 290 µs against
 * 110 for a page of 100 users).
 */
export function mapUserRow(r: Row): User {
  return {
    id: num(r.id),
    status: num(r.status),
    expiration_date: num(r.expiration_date),
    uid: num(r.uid),
    gid: num(r.gid),
    max_sessions: num(r.max_sessions),
    quota_size: num(r.quota_size),
    quota_files: num(r.quota_files),
    used_quota_size: num(r.used_quota_size),
    used_quota_files: num(r.used_quota_files),
    last_quota_update: num(r.last_quota_update),
    upload_bandwidth: num(r.upload_bandwidth),
    download_bandwidth: num(r.download_bandwidth),
    upload_data_transfer: num(r.upload_data_transfer),
    download_data_transfer: num(r.download_data_transfer),
    total_data_transfer: num(r.total_data_transfer),
    used_upload_data_transfer: num(r.used_upload_data_transfer),
    used_download_data_transfer: num(r.used_download_data_transfer),
    created_at: num(r.created_at),
    updated_at: num(r.updated_at),
    last_login: num(r.last_login),
    first_download: num(r.first_download),
    first_upload: num(r.first_upload),
    last_password_change: num(r.last_password_change),
    totp_last_step: num(r.totp_last_step),
    tokens_valid_after: num(r.tokens_valid_after),
    username: str(r.username),
    email: str(r.email),
    password_hash: str(r.password_hash),
    home_dir: str(r.home_dir),
    description: str(r.description),
    additional_info: str(r.additional_info),
    public_keys: json(r.public_keys, []),
    permissions: json(r.permissions, {}),
    filters: json(r.filters, {}),
    filesystem: json(r.filesystem, { provider: 0 }),
    custom_placeholders: json(r.custom_placeholders, []),
    oidc_custom_fields: json(r.oidc_custom_fields, {}),
    role: r.role_name ? ({ id: num(r.role_id), name: String(r.role_name) } as Role) : null,
  } as unknown as User;
}

const FOLDER_COLS =
  'f.id as f_id, f.name as f_name, f.description as f_description, f.mapped_path as f_mapped_path, f.filesystem as f_filesystem, f.used_quota_size as f_used_quota_size, f.used_quota_files as f_used_quota_files, f.last_quota_update as f_last_quota_update, f.created_at as f_created_at, f.updated_at as f_updated_at';

/** The folder columns of a mapping row (FOLDER_COLS) as a read-only Folder. */
export function mapFolderCols(r: Row): Folder {
  return {
    id: num(r.f_id),
    name: String(r.f_name),
    description: (r.f_description as string) ?? '',
    mapped_path: (r.f_mapped_path as string) ?? '',
    filesystem: json(r.f_filesystem, { provider: 0 }),
    used_quota_size: num(r.f_used_quota_size),
    used_quota_files: num(r.f_used_quota_files),
    last_quota_update: num(r.f_last_quota_update),
    created_at: num(r.f_created_at),
    updated_at: num(r.f_updated_at),
  } as Folder;
}

export interface FolderMappingRow {
  owner: number;
  folder: Folder;
  virtual_path: string;
  quota_size: number;
  quota_files: number;
}

export interface GroupMappingRow {
  user: number;
  type: number;
  id: number;
  name: string;
  settings: StoredGroupSettings;
}

const exec = (em: EntityManager, sql: string, params: unknown[]) => selectRows<Row>(em, sql, params);

/** A user with its group and folder mappings (read in one statement, see mappingColumns). */
export interface UserWithMappings {
  user: User;
  groups: GroupMappingRow[];
  folders: FolderMappingRow[];
}

/**
 * Two columns for a query over users aliased `u`: `groups_json` and
 * `folders_json`, the user's group and folder mappings as JSON arrays of
 * arrays (correlated subqueries on the user_id indexes), so a user and what
 * renders it come in one statement instead of three.
 */
function mappingColumns(dialect: SqlDialect): string {
  const sqlite = dialect === 'sqlite';
  const arr = sqlite ? 'json_array' : 'json_build_array';
  const agg = (e: string) => (sqlite ? `json_group_array(${e})` : `coalesce(json_agg(${e}), '[]'::json)`);
  // JSON columns: text on SQLite (json() embeds it as JSON), jsonb on PostgreSQL
  const js = (col: string) => (sqlite ? `json(${col})` : col);
  const groups = `${arr}(ug.type, g.id, g.name, ${js('g.user_settings')})`;
  const folders = `${arr}(uf.virtual_path, uf.quota_size, uf.quota_files, f.id, f.name, f.description, f.mapped_path, ${js('f.filesystem')}, f.used_quota_size, f.used_quota_files, f.last_quota_update, f.created_at, f.updated_at)`;
  return (
    `(select ${agg(groups)} from users_groups ug join groups g on g.id = ug.group_id where ug.user_id = u.id) as groups_json, ` +
    `(select ${agg(folders)} from users_folders uf join folders f on f.id = uf.folder_id where uf.user_id = u.id) as folders_json`
  );
}

/** A row of a query with mappingColumns as a user and its mappings. */
function mapUserWithMappings(r: Row): UserWithMappings {
  const user = mapUserRow(r);
  const groups = json<unknown[][]>(r.groups_json, []).map(([type, id, name, settings]) => ({
    user: user.id,
    type: num(type),
    id: num(id),
    name: String(name),
    settings: json<StoredGroupSettings>(settings, {}),
  }));
  const folders = json<unknown[][]>(r.folders_json, []).map((f) => ({
    owner: user.id,
    virtual_path: String(f[0]),
    quota_size: num(f[1]),
    quota_files: num(f[2]),
    folder: {
      id: num(f[3]),
      name: String(f[4]),
      description: (f[5] as string) ?? '',
      mapped_path: (f[6] as string) ?? '',
      filesystem: json(f[7], { provider: 0 }),
      used_quota_size: num(f[8]),
      used_quota_files: num(f[9]),
      last_quota_update: num(f[10]),
      created_at: num(f[11]),
      updated_at: num(f[12]),
    } as Folder,
  }));
  return { user, groups, folders };
}

/**
 * One page of users ordered by username (`role`: the users of a role only),
 * with their group and folder mappings, in one statement.
 */
export async function selectUserPageWithMappings(
  em: EntityManager,
  q: { offset: number; limit: number; order: 'ASC' | 'DESC'; order_by?: 'username' | 'used_quota_size' },
  role?: string,
): Promise<UserWithMappings[]> {
  const dir = q.order === 'DESC' ? 'desc' : 'asc';
  // by used quota size (GET /users?order_by=used_quota_size: the top users by storage), equal sizes by
  // username A to Z so that pages do not overlap; a sort of the table (no index on the size): 100,000
  // users in tens of ms, only for the pages that ask for it
  const bySize = q.order_by === 'used_quota_size';
  const order = bySize ? `used_quota_size ${dir}, username asc` : `username ${dir}`;
  // The page is cut on the username index alone: deep offsets skip rows without reading them. Without a
  // role only usernames are walked (an index-only scan of the unique index on both databases), and the
  // page's users are then looked up by name. Written as a join with the page, both planners read every
  // user for each page: SQLite 3.2 ms a page with 20,000 users (0.7-0.85 ms with `in`, at any offset),
  // PostgreSQL a sequential scan and a hash join, 6.0-6.7 ms with 5,000 users (3.0-3.2 ms with
  // `= any(array(...))`: one index scan for the page's names, no sort). A role's page walks the index on
  // (role_id, username): 8 ms for a page at offset 9,800 of a role's 10,000 users on SQLite without it, 0.3 ms.
  const dialect = sqlDialectOf(em);
  const columns = `u.*, r.name as role_name, ${mappingColumns(dialect)}`;
  const names = `select username from users order by ${order} limit ? offset ?`;
  const from = role ? `(select * from users where role_id = (select id from roles where name = ?) order by ${order} limit ? offset ?) u` : 'users u';
  const where = role ? '' : dialect === 'sqlite' ? ` where u.username in (${names})` : ` where u.username = any(array(${names}))`;
  const outer = bySize ? `u.used_quota_size ${dir}, u.username asc` : `u.username ${dir}`;
  const rows = await exec(em, `select ${columns} from ${from} left join roles r on r.id = u.role_id${where} order by ${outer}`, [
    ...(role ? [role] : []),
    q.limit,
    q.offset,
  ]);
  return rows.map(mapUserWithMappings);
}

/** A user by username (with its role name) and its group and folder mappings, in one statement; or null. */
export async function selectUserWithMappings(em: EntityManager, username: string, role?: string): Promise<UserWithMappings | null> {
  const sql = `select u.*, r.name as role_name, ${mappingColumns(sqlDialectOf(em))} from users u left join roles r on r.id = u.role_id where u.username = ?${role ? ' and r.name = ?' : ''}`;
  const row = await selectFirstRow<Row>(em, sql, role ? [username, role] : [username]);
  return row ? mapUserWithMappings(row) : null;
}

/**
 * For a user's bearer token, in one statement: whether the token `jti` is
 * revoked, and the user `username` with its role and mappings (null when it
 * does not exist). Both are read fresh on every request.
 */
export async function selectUserForToken(em: EntityManager, username: string, jti: string): Promise<{ revoked: boolean; user: UserWithMappings | null }> {
  const sql =
    `select t.revoked, u.*, r.name as role_name, ${mappingColumns(sqlDialectOf(em))} ` +
    `from (select ${REVOKED_JTI_SQL} as revoked) t left join users u on u.username = ? left join roles r on r.id = u.role_id`;
  const row = await selectFirstRow<Row>(em, sql, [jti, username]);
  if (!row) return { revoked: false, user: null };
  return { revoked: revokedValue(row.revoked), user: row.id === null || row.id === undefined ? null : mapUserWithMappings(row) };
}

/** Group mappings of users, by user id or by the username of one user. */
export async function selectUserGroups(em: EntityManager, by: { ids: number[] } | { username: string }): Promise<GroupMappingRow[]> {
  const base = 'select ug.user_id, ug.type, g.id, g.name, g.user_settings from users_groups ug join groups g on g.id = ug.group_id where';
  const rows =
    'ids' in by
      ? by.ids.length
        ? await exec(em, `${base} ug.user_id in (?)`, [by.ids])
        : []
      : await exec(em, `${base} ug.user_id = (select id from users where username = ?)`, [by.username]);
  return rows.map((r) => ({ user: num(r.user_id), type: num(r.type), id: num(r.id), name: String(r.name), settings: json(r.user_settings, {}) }));
}

/** Folder mappings of users (by ids or one username) or of groups (by ids). */
export async function selectFolderMappings(
  em: EntityManager,
  by: { users: number[] } | { username: string } | { groups: number[] },
): Promise<FolderMappingRow[]> {
  let rows: Row[];
  if ('groups' in by) {
    rows = by.groups.length
      ? await exec(
          em,
          `select gf.group_id as owner, gf.virtual_path, gf.quota_size, gf.quota_files, ${FOLDER_COLS} from groups_folders gf join folders f on f.id = gf.folder_id where gf.group_id in (?)`,
          [by.groups],
        )
      : [];
  } else {
    const base = `select uf.user_id as owner, uf.virtual_path, uf.quota_size, uf.quota_files, ${FOLDER_COLS} from users_folders uf join folders f on f.id = uf.folder_id where`;
    rows =
      'users' in by
        ? by.users.length
          ? await exec(em, `${base} uf.user_id in (?)`, [by.users])
          : []
        : await exec(em, `${base} uf.user_id = (select id from users where username = ?)`, [by.username]);
  }
  return rows.map((r) => ({
    owner: num(r.owner),
    folder: mapFolderCols(r),
    virtual_path: String(r.virtual_path),
    quota_size: num(r.quota_size),
    quota_files: num(r.quota_files),
  }));
}
