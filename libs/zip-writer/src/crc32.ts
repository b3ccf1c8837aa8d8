import zlib from 'node:zlib';

/** Slicing-by-8 tables of the CRC-32 of zip (and gzip, PNG): polynomial 0xEDB88320, reflected. */
const TABLE = (() => {
  const t = new Int32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  for (let n = 0; n < 256; n++) {
    for (let k = 1; k < 8; k++) t[k * 256 + n] = (t[(k - 1) * 256 + n]! >>> 8) ^ t[t[(k - 1) * 256 + n]! & 0xff]!;
  }
  return t;
})();

/**
 * CRC-32 in JavaScript (slicing by 8): `crc` is the value for the bytes
 * before `data` (0 to start). About 1 GB/s; {@link crc32} uses zlib's
 * when Node has it (20.15+) and this otherwise.
 */
export function crc32js(data: Uint8Array, crc = 0): number {
  const t = TABLE;
  let c = ~crc;
  let i = 0;
  const n = data.length;
  for (const end = n - (n & 7); i < end; i += 8) {
    c ^= data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    c =
      t[0x700 + (c & 0xff)]! ^
      t[0x600 + ((c >>> 8) & 0xff)]! ^
      t[0x500 + ((c >>> 16) & 0xff)]! ^
      t[0x400 + (c >>> 24)]! ^
      t[0x300 + data[i + 4]!]! ^
      t[0x200 + data[i + 5]!]! ^
      t[0x100 + data[i + 6]!]! ^
      t[data[i + 7]!]!;
  }
  for (; i < n; i++) c = t[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

const native = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;

/** CRC-32 of `data` continuing `crc` (0 to start): zlib's (native) when present, else {@link crc32js}. */
export const crc32: (data: Uint8Array, crc?: number) => number = native ? (data, crc = 0) => native(data, crc) : crc32js;
