/**
 * Crafted paths for one user (not a test file). `raw`: put in the URL as
 * written (else percent-encoded as a query value). `kind` says what the
 * attempt tries; `download` lists the statuses a GET of it may answer.
 */
import type { User } from './world.js';

export type CraftKind = 'dots' | 'encoded' | 'backslash' | 'control' | 'absolute' | 'long' | 'symlink';

export interface Crafted {
  p: string;
  kind: CraftKind;
  raw?: boolean;
  /** Statuses a download of it may answer (default: any 4xx). */
  download?: number[];
}

export function craftedPaths(u: User, dataDir: string): Crafted[] {
  const O = `outside/${u.name}`;
  const OB = O.replace(/\//g, '\\');
  const list: Crafted[] = [
    // '..' in every spelling
    { p: '..', kind: 'dots' },
    { p: '../', kind: 'dots' },
    { p: '/..', kind: 'dots' },
    { p: '../..', kind: 'dots' },
    { p: `../../${O}/secret.txt`, kind: 'dots' },
    { p: `/../../${O}/secret.txt`, kind: 'dots' },
    { p: `sub/../../../${O}/secret.txt`, kind: 'dots' },
    { p: ` ../../${O}/secret.txt`, kind: 'dots' },
    { p: `.. /../${O}`, kind: 'dots' },
    { p: `..../${O}`, kind: 'dots' },
    { p: `../vic/secret.txt`, kind: 'dots' },
    { p: `~/../../${O}`, kind: 'dots' },
    // backslashes
    { p: `..\\..\\${OB}\\secret.txt`, kind: 'backslash' },
    { p: `\\..\\..\\${OB}`, kind: 'backslash' },
    { p: `sub\\..\\..\\..\\${OB}\\secret.txt`, kind: 'backslash' },
    { p: `sub/..\\..\\../${O}/secret.txt`, kind: 'backslash' },
    // encoded and double-encoded dots and separators
    { p: `%2e%2e/%2e%2e/${O}/secret.txt`, kind: 'encoded' },
    { p: `%2E%2E%2F%2E%2E%2F${O}`, kind: 'encoded' },
    { p: `..%2f..%2f${O}%2fsecret.txt`, kind: 'encoded' },
    { p: `..%5c..%5c${O}`, kind: 'encoded' },
    { p: `%252e%252e/%252e%252e/${O}`, kind: 'encoded' },
    { p: `%2e%2e%2f%2e%2e%2f${O}%2fsecret.txt`, kind: 'encoded', raw: true },
    { p: `..%2F..%2F${O}%2Fsecret.txt`, kind: 'encoded', raw: true },
    { p: `%252e%252e%252f%252e%252e%252f${O}`, kind: 'encoded', raw: true },
    { p: `%c0%ae%c0%ae/%c0%ae%c0%ae/${O}`, kind: 'encoded', raw: true },
    { p: `%uff0e%uff0e/%uff0e%uff0e/${O}`, kind: 'encoded', raw: true },
    { p: `．．/．．/${O}/secret.txt`, kind: 'encoded' },
    { p: `..\u2215..\u2215${O}`, kind: 'encoded' },
    // NUL and control characters
    { p: 'inside.txt%00.jpg', kind: 'control', raw: true },
    { p: `..%00/../${O}`, kind: 'control', raw: true },
    { p: 'a\u0000b', kind: 'control' },
    { p: `../\u0000../${O}`, kind: 'control' },
    { p: 'sub/\u0001', kind: 'control' },
    { p: '\n../..', kind: 'control' },
    // absolute and foreign spellings (rooted in the home, where nothing like them exists)
    { p: `${u.outside}/secret.txt`, kind: 'absolute', download: [404] },
    { p: `${u.home}/../../${O}/secret.txt`, kind: 'absolute' },
    { p: '/etc/passwd', kind: 'absolute', download: [404] },
    { p: `//${O}/secret.txt`, kind: 'absolute', download: [404] },
    { p: '\\\\server\\share\\secret.txt', kind: 'absolute', download: [404] },
    { p: `file://${u.outside}/secret.txt`, kind: 'absolute', download: [404] },
    // very long
    { p: 'a/'.repeat(1500) + '../'.repeat(1502) + `${O}/secret.txt`, kind: 'long' },
    { p: 'x'.repeat(300), kind: 'long', download: [400, 403, 404] },
    { p: `${'sub/'.repeat(60)}x`, kind: 'long' },
    { p: `${'./'.repeat(2000)}../../${O}`, kind: 'long' },
    // symlinks planted in the home (see plantedLinks)
    { p: 'link-dir', kind: 'symlink', download: [403] },
    { p: 'link-dir/secret.txt', kind: 'symlink', download: [403] },
    { p: 'link-dir/new.txt', kind: 'symlink', download: [403] },
    { p: 'link-dir/newdir/x', kind: 'symlink', download: [403] },
    { p: 'link-file', kind: 'symlink', download: [403] },
    { p: 'dangling', kind: 'symlink', download: [403] },
    { p: 'dangling-dir/x', kind: 'symlink', download: [403] },
    { p: 'rel-up', kind: 'symlink', download: [403] },
    { p: 'rel-up/secret.txt', kind: 'symlink', download: [403] },
    { p: 'rel-file', kind: 'symlink', download: [403] },
    { p: 'chain1', kind: 'symlink', download: [403] },
    { p: 'chain1/secret.txt', kind: 'symlink', download: [403] },
    { p: 'chain-in/../link-dir/secret.txt', kind: 'symlink', download: [403] },
    { p: 'nest/out', kind: 'symlink', download: [403] },
    { p: 'nest/out/secret.txt', kind: 'symlink', download: [403] },
    { p: 'nest/link-file', kind: 'symlink', download: [403] },
    { p: 'nest/dangling', kind: 'symlink', download: [403] },
    { p: 'inner/up', kind: 'symlink', download: [403] },
    { p: 'inner/up/vic/secret.txt', kind: 'symlink', download: [403] },
    { p: 'inner/up/vic/new.txt', kind: 'symlink', download: [403] },
    { p: 'link-root/etc/passwd', kind: 'symlink', download: [403] },
    { p: `link-data/outside/${u.name}/secret.txt`, kind: 'symlink', download: [403] },
    { p: 'shared/out/secret.txt', kind: 'symlink', download: [403] },
    { p: 'shared/out-file', kind: 'symlink', download: [403] },
    { p: 'loop-a', kind: 'symlink', download: [400, 403] },
  ];
  void dataDir;
  return list;
}

/** Paths relative to a share of /shared: the crafted ones plus the links planted in the shared directory. */
export function sharePaths(u: User, dataDir: string): Crafted[] {
  const O = `outside/${u.name}`;
  return [
    ...craftedPaths(u, dataDir).filter((c) => c.kind !== 'symlink'),
    { p: `../../../${O}/secret.txt`, kind: 'dots' },
    { p: '../inside.txt', kind: 'dots' },
    { p: '../link-dir/secret.txt', kind: 'dots' },
    { p: 'out', kind: 'symlink', download: [403] },
    { p: 'out/secret.txt', kind: 'symlink', download: [403] },
    { p: 'out/sub/deep.txt', kind: 'symlink', download: [403] },
    { p: 'out/new.txt', kind: 'symlink', download: [403] },
    { p: 'out/newdir', kind: 'symlink', download: [403] },
    { p: 'out-file', kind: 'symlink', download: [403] },
  ];
}

/**
 * The lexical checks ('..', encodings, backslashes, control characters) are
 * the core's, before any backend: the provider 0 user gets every crafted
 * path, the provider 4 user every symlink, absolute and long one and a
 * sample of the lexical ones (its scrypt per file session makes each
 * request that reaches a file costly).
 */
const LEXICAL = new Set<CraftKind>(['dots', 'encoded', 'backslash', 'control']);
export const forUser = (u: User, list: Crafted[]): Crafted[] => (u.provider === 0 ? list : list.filter((c, i) => !LEXICAL.has(c.kind) || i % 4 === 0));

/** The path as it goes into a query string. */
export const inQuery = (c: Crafted): string => (c.raw ? c.p : encodeURIComponent(c.p));

/** The path as it goes into a URL path (slashes kept): segments encoded unless raw. */
export const inUrlPath = (c: Crafted): string => (c.raw ? c.p : c.p.split('/').map(encodeURIComponent).join('/'));
