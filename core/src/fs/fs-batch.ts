import type { FsBatch } from './fs.contract.js';

interface Held {
  value: Promise<unknown>;
  close: (value: unknown) => Promise<void>;
}

/**
 * The FsBatch of one request (see OpOptions.batch): holds what backends open
 * for its operations until close(), which closes each once, whatever failed.
 */
export class RequestFsBatch implements FsBatch {
  private readonly held = new Map<object, Map<string, Held>>();
  private isClosed = false;

  get closed(): boolean {
    return this.isClosed;
  }

  hold<T>(owner: object, key: string, open: () => Promise<T>, close: (value: T) => Promise<void>): Promise<T> {
    if (this.isClosed) return Promise.reject(new Error('the batch is closed'));
    let byKey = this.held.get(owner);
    if (!byKey) this.held.set(owner, (byKey = new Map()));
    const found = byKey.get(key);
    if (found) return found.value as Promise<T>;
    const value = open();
    const entry: Held = { value, close: close as (value: unknown) => Promise<void> };
    byKey.set(key, entry);
    value.catch(() => {
      if (byKey.get(key) === entry) byKey.delete(key);
    });
    return value;
  }

  private readonly directories = new Map<object, Set<string>>();

  noteDirectory(owner: object, path: string): void {
    if (this.isClosed) return;
    let paths = this.directories.get(owner);
    if (!paths) this.directories.set(owner, (paths = new Set()));
    paths.add(path);
  }

  isDirectory(owner: object, path: string): boolean {
    return !this.isClosed && (this.directories.get(owner)?.has(path) ?? false);
  }

  /** Closes everything held (idempotent; never rejects). */
  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    this.directories.clear();
    const all = [...this.held.values()].flatMap((m) => [...m.values()]);
    this.held.clear();
    await Promise.all(
      all.map((h) =>
        h.value.then(
          (v) => h.close(v).catch(() => undefined),
          () => undefined,
        ),
      ),
    );
  }
}
