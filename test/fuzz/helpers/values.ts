/**
 * Hostile values the generators draw from. JSON bodies are built as text so
 * that they can hold what JSON.stringify never writes: lone surrogates as
 * `\ud800` escapes, numbers beyond float range, duplicate keys, broken syntax.
 */
import type { Rng } from './prng.js';

const HUGE = 'H'.repeat(70_000);

/** Strings that are hard on parsers, validators, SQL and file systems. */
export function hostileString(r: Rng): string {
  return r.pick<() => string>([
    () => '',
    () => ' ',
    () => 'a\u0000b',
    () => '\u0000',
    () => `x${String.fromCharCode(r.range(1, 31))}y`,
    () => '\u007f\u0085\u009f',
    () => '\r\nX-Injected: 1',
    () => '\ud800',
    () => 'a\udfffb',
    () => '\ud83d',
    () => '\ufeff\ufffe\uffff',
    () => '\u202e\u200b',
    () => '😀'.repeat(r.range(1, 200)),
    () => HUGE.slice(0, r.pick([256, 1025, 4097, 16385, 70_000])),
    () => "' OR '1'='1",
    () => "'; drop table users; --",
    () => '" or ""="',
    () => '%',
    () => '_',
    () => '\\',
    () => '%00',
    () => '%25%32%65',
    () => '../../../../etc/passwd',
    () => '..\\..\\windows\\win.ini',
    () => '/etc/passwd',
    () => '${jndi:ldap://x}',
    () => '{{.Name}}',
    () => '%username%',
    () => '<script>alert(1)</script>',
    () => '__proto__',
    () => 'constructor',
    () => 'NaN',
    () => '-0',
    () => '1e309',
    () => String(r.u32()),
  ])();
}

/** A JSON string literal; lone surrogates and other escapes survive as `\uXXXX`. */
export function jsonString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += '\\\\';
    else if (c < 0x20 || (c >= 0xd800 && c <= 0xdfff) || c === 0x7f) out += '\\u' + c.toString(16).padStart(4, '0');
    else out += ch;
  }
  return out + '"';
}

/** Raw JSON value texts, any type. */
export function hostileJson(r: Rng, depth = 0): string {
  const leaf = () =>
    r.pick<() => string>([
      () => jsonString(hostileString(r)),
      () => 'null',
      () => 'true',
      () => 'false',
      () => '0',
      () => '-1',
      () => '1.5',
      () => '1e309',
      () => '-1e309',
      () => '18446744073709551616',
      () => '9007199254740993',
      () => '-9223372036854775809',
      () => '1' + '0'.repeat(400),
      () => '0.0000000000000000000000001',
      () => '{}',
      () => '[]',
    ])();
  if (depth > 2 || r.chance(0.6)) return leaf();
  if (r.chance(0.5)) return `[${Array.from({ length: r.range(0, 4) }, () => hostileJson(r, depth + 1)).join(',')}]`;
  return `{${Array.from({ length: r.range(0, 3) }, () => `${jsonString(hostileString(r).slice(0, 64))}:${hostileJson(r, depth + 1)}`).join(',')}}`;
}

/** Deeply nested JSON text: arrays or objects, thousands of levels. */
export function deepJson(r: Rng): string {
  const n = r.pick([100, 1000, 5000, 20_000]);
  return r.chance(0.5) ? '['.repeat(n) + ']'.repeat(n) : '{"a":'.repeat(n) + '1' + '}'.repeat(n);
}

/** Texts that are not JSON, or not JSON a server may accept. */
export function brokenJson(r: Rng): string {
  return r.pick<() => string>([
    () => '{',
    () => '{"a":',
    () => '{"a":1,}',
    () => "{'a':1}",
    () => '{a:1}',
    () => '[1,2',
    () => 'NaN',
    () => 'undefined',
    () => '{"a":1}{"b":2}',
    () => '{"a":"\u0001"}',
    () => '{"a":"\\x41"}',
    () => '{"a":"\\u12"}',
    () => '{"__proto__":{"polluted":1}}',
    () => '{"a":{"__proto__":{"polluted":1}}}',
    () => '\ufeff{}x',
    () => '{"a":01}',
    () => '{"a":.5}',
    () => '{"a":+1}',
    () => '{"a":Infinity}',
    () => '\u0000',
    () => '{"a":"' + 'b'.repeat(100) + '}',
    () => ']'.repeat(r.range(1, 50)),
  ])();
}

/** Path values meant to leave a user's home or a share, or to trip the file system. */
export function hostilePath(r: Rng): string {
  return r.pick<() => string>([
    () => '..',
    () => '../..',
    () => '../../../../../../etc',
    () => '/../../../..',
    () => '..\\..\\..',
    () => '....//....//',
    () => './././.',
    () => '/etc',
    () => '//etc//',
    () => 'C:\\Windows',
    () => '\\\\host\\share',
    () => 'file:///etc',
    () => '%2e%2e/%2e%2e',
    () => '%252e%252e%252f',
    () => '..%2f..%2f',
    () => '..%5c..%5c',
    () => '.\u0000.',
    () => 'a\u0000b',
    () => `a${String.fromCharCode(r.range(1, 31))}b`,
    () => '\ud800',
    () => '~',
    () => '~root',
    () => '$HOME',
    () => '%username%',
    () => '*',
    () => '?',
    () => 'x'.repeat(r.pick([256, 300, 1000])),
    () => 'a/'.repeat(r.pick([200, 2000])),
    () => '../'.repeat(r.range(1, 40)),
    () => '.ferry-tmp-x',
    () => ' ',
    () => '.',
  ])();
}
