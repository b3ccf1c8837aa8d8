/** A dead property: its element name and the element as XML (namespaces declared on it). */
export interface DeadProp {
  ns: string;
  name: string;
  xml: string;
}

const key = (ns: string, name: string) => `${ns}\u0000${name}`;
const within = (path: string, root: string) => path === root || root === '/' || path.startsWith(root + '/');

/**
 * Dead properties (PROPPATCH), per account and virtual path, in this node's
 * memory: they are lost on restart and not shared between nodes. Moved,
 * copied and deleted with their resources by this front-end.
 */
export class PropStore {
  private readonly byUser = new Map<string, Map<string, Map<string, DeadProp>>>();
  /** Props per resource at most, and resources per account at most, so a client cannot fill the memory. */
  constructor(
    private readonly maxPerResource = 256,
    private readonly maxResources = 100_000,
  ) {}

  private user(username: string) {
    let u = this.byUser.get(username);
    if (!u) this.byUser.set(username, (u = new Map()));
    return u;
  }

  list(username: string, path: string): DeadProp[] {
    return [...(this.byUser.get(username)?.get(path)?.values() ?? [])];
  }

  get(username: string, path: string, ns: string, name: string): DeadProp | undefined {
    return this.byUser.get(username)?.get(path)?.get(key(ns, name));
  }

  /** False when a limit is reached. */
  canSet(username: string, path: string, count: number): boolean {
    const u = this.user(username);
    const props = u.get(path);
    if (!props) return u.size < this.maxResources && count <= this.maxPerResource;
    return props.size + count <= this.maxPerResource;
  }

  set(username: string, path: string, prop: DeadProp): void {
    const u = this.user(username);
    let props = u.get(path);
    if (!props) u.set(path, (props = new Map()));
    props.set(key(prop.ns, prop.name), prop);
  }

  remove(username: string, path: string, ns: string, name: string): void {
    const props = this.byUser.get(username)?.get(path);
    props?.delete(key(ns, name));
    if (props?.size === 0) this.byUser.get(username)!.delete(path);
  }

  removeUnder(username: string, root: string): void {
    const u = this.byUser.get(username);
    if (!u) return;
    for (const p of [...u.keys()]) if (within(p, root)) u.delete(p);
  }

  /** Copies (or moves) the props of `from` and below to `to`; `deep` false: `from` only. */
  copy(username: string, from: string, to: string, deep: boolean, move = false): void {
    const u = this.byUser.get(username);
    if (!u) return;
    this.removeUnder(username, to);
    for (const [p, props] of [...u.entries()]) {
      if (p === from || (deep && within(p, from))) {
        u.set(to + p.slice(from.length), new Map(props));
        if (move) u.delete(p);
      }
    }
  }
}
