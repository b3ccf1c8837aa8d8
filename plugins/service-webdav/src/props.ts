import type { PluginDatabase } from '@ferry/core';
import type { PropRow } from './tables.js';

/** A dead property: its element name and the element as XML (namespaces declared on it). */
export interface DeadProp {
  ns: string;
  name: string;
  xml: string;
}

const TABLE = 'webdav_props';

/**
 * Dead properties (PROPPATCH), per account and virtual path, in the core
 * database (table webdav_props): shared by the nodes, kept across restarts.
 * Moved, copied and deleted with their resources by this front-end (a
 * rename through another front-end leaves them behind).
 */
export class PropStore {
  /** Properties per resource at most, so a client cannot fill the database. */
  constructor(
    private readonly db: PluginDatabase,
    private readonly maxPerResource = 256,
  ) {}

  private knex() {
    return this.db.em().getKnex();
  }

  /** Rows of `root` and, with `deep`, every path below it. */
  private select(username: string, root: string, deep: boolean) {
    const q = this.knex()(TABLE).where('username', username);
    if (!deep) return q.andWhere('path', root);
    if (root === '/') return q;
    const prefix = `${root}/`;
    return q.andWhere((w) => void w.where('path', root).orWhereRaw('substr(path, 1, ?) = ?', [prefix.length, prefix]));
  }

  async list(username: string, path: string): Promise<DeadProp[]> {
    const rows = (await this.select(username, path, false).select('ns', 'name', 'xml')) as DeadProp[];
    return rows.map((r) => ({ ns: r.ns, name: r.name, xml: r.xml }));
  }

  /** The dead properties of several paths (one query), by path. */
  async listMany(username: string, paths: string[]): Promise<Map<string, DeadProp[]>> {
    const out = new Map<string, DeadProp[]>();
    for (let i = 0; i < paths.length; i += 500) {
      const rows = (await this.knex()(TABLE)
        .where('username', username)
        .whereIn('path', paths.slice(i, i + 500))) as PropRow[];
      for (const r of rows) out.set(r.path, [...(out.get(r.path) ?? []), { ns: r.ns, name: r.name, xml: r.xml }]);
    }
    return out;
  }

  /**
   * The dead properties of the members of collection `dir` (not deeper), by
   * path, in one query; null when there are more than `max` (the caller then
   * asks page by page, so memory stays bounded). A member's path is the
   * collection's prefix followed by a name without '/' (substr and replace
   * exist in SQLite and PostgreSQL alike).
   */
  async children(username: string, dir: string, max: number): Promise<Map<string, DeadProp[]> | null> {
    const prefix = dir === '/' ? '/' : `${dir}/`;
    // substr counts characters (code points) on both databases, not UTF-16 units as String.length does
    const chars = [...prefix].length;
    const rows = (await this.knex()(TABLE)
      .select('path', 'ns', 'name', 'xml')
      .where('username', username)
      .andWhereRaw('substr(path, 1, ?) = ?', [chars, prefix])
      .andWhereRaw("replace(substr(path, ?), '/', '') = substr(path, ?)", [chars + 1, chars + 1])
      .limit(max + 1)) as PropRow[];
    if (rows.length > max) return null;
    const out = new Map<string, DeadProp[]>();
    for (const r of rows) {
      const list = out.get(r.path);
      const prop = { ns: r.ns, name: r.name, xml: r.xml };
      if (list) list.push(prop);
      else out.set(r.path, [prop]);
    }
    return out;
  }

  /** False when the resource would hold more than the limit. */
  async canSet(username: string, path: string, count: number): Promise<boolean> {
    const row = (await this.select(username, path, false).count({ n: '*' }).first()) as { n: number | string } | undefined;
    return Number(row?.n ?? 0) + count <= this.maxPerResource;
  }

  /** Applies sets and removals in one transaction. */
  async update(username: string, path: string, sets: DeadProp[], removes: { ns: string; name: string }[]): Promise<void> {
    await this.knex().transaction(async (trx) => {
      for (const p of [...sets, ...removes]) await trx(TABLE).where({ username, path, ns: p.ns, name: p.name }).del();
      if (sets.length) await trx(TABLE).insert(sets.map((p): PropRow => ({ username, path, ns: p.ns, name: p.name, xml: p.xml })));
    });
  }

  async removeUnder(username: string, root: string): Promise<void> {
    await this.select(username, root, true).del();
  }

  /** Copies (or moves) the props of `from` (and, with `deep`, below it) to `to`, replacing those of `to`. */
  async copy(username: string, from: string, to: string, deep: boolean, move = false): Promise<void> {
    const rows = (await this.select(username, from, deep)) as PropRow[];
    await this.knex().transaction(async (trx) => {
      await this.select(username, to, true).transacting(trx).del();
      if (move) await this.select(username, from, deep).transacting(trx).del();
      const moved = rows.map((r): PropRow => ({ ...r, path: to + r.path.slice(from.length) }));
      for (let i = 0; i < moved.length; i += 200) await trx(TABLE).insert(moved.slice(i, i + 200));
    });
  }
}
