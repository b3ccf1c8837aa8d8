import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Name and version of a package, as its package.json declares them. */
export interface PackageInfo {
  name: string;
  version: string;
  /** The directory of that package.json (the package's own files: a built site, assets). */
  dir: string;
}

/**
 * Reads the nearest package.json above a module (pass `import.meta.url`).
 * Plugins use it so their manifest's name and version always equal the
 * package's, whether they run from `src/` or from a build under `dist/`.
 */
export function packageInfo(moduleUrl: string): PackageInfo {
  let dir = path.dirname(fileURLToPath(moduleUrl));
  for (;;) {
    let text: string | undefined;
    try {
      text = readFileSync(path.join(dir, 'package.json'), 'utf8');
    } catch {
      text = undefined;
    }
    if (text !== undefined) {
      const pkg = JSON.parse(text) as Partial<PackageInfo>;
      // dist/ may hold a copied package.json; only a named one counts.
      if (typeof pkg.name === 'string' && typeof pkg.version === 'string') {
        return { name: pkg.name, version: pkg.version, dir };
      }
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json with a name and version above ${moduleUrl}`);
    dir = parent;
  }
}
