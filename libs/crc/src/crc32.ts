import zlib from 'node:zlib';

/** A CRC-32 of `data` continuing `crc`, the value for the bytes before it (0 to start). */
export type Crc32Function = (data: Uint8Array, crc?: number) => number;

/** Slicing-by-8 tables of a reflected 32-bit CRC polynomial: table k gives the CRC of a byte followed by k zero bytes. */
function slicingTables(polynomial: number): Int32Array {
  const t = new Int32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? polynomial ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  for (let n = 0; n < 256; n++) {
    for (let k = 1; k < 8; k++) t[k * 256 + n] = (t[(k - 1) * 256 + n]! >>> 8) ^ t[t[(k - 1) * 256 + n]! & 0xff]!;
  }
  return t;
}

/**
 * A CRC-32 in JavaScript over a reflected polynomial (initial value and final
 * XOR 0xFFFFFFFF, as CRC-32 and CRC-32C define them), 8 bytes per step.
 */
export function slicingBy8(polynomial: number): Crc32Function {
  const t = slicingTables(polynomial);
  return (data: Uint8Array, crc = 0): number => {
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
  };
}

/** CRC-32 of zip, gzip and PNG (polynomial 0xEDB88320, reflected) in JavaScript: about 1 GB/s. */
export const crc32js: Crc32Function = slicingBy8(0xedb88320);

const native = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;

/** CRC-32 of zip: zlib's (native) when Node has it (20.15+), else {@link crc32js}. */
export const crc32: Crc32Function = native ? (data, crc = 0) => native(data, crc) : crc32js;

/**
 * CRC-32C (Castagnoli, polynomial 0x82F63B78, reflected), the checksum of
 * iSCSI, ext4 and Google Cloud Storage objects, in JavaScript.
 */
export const crc32c: Crc32Function = slicingBy8(0x82f63b78);
