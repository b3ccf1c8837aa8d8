import t from 'tap';
import zlib from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { crc32, crc32c, crc32js, slicingBy8 } from '../src/index.js';

/** Bit-at-a-time reference of a reflected CRC-32: the definition, nothing shared with the code under test. */
function reference(polynomial: number, data: Uint8Array): number {
  let c = 0xffffffff;
  for (const byte of data) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ polynomial : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

t.test('CRC-32C: check value and the RFC 3720 (iSCSI) vectors', async (t) => {
  t.equal(crc32c(Buffer.from('123456789')), 0xe3069283, 'check value of "123456789"');
  t.equal(crc32c(Buffer.alloc(32, 0)), 0x8a9136aa, '32 zero bytes');
  t.equal(crc32c(Buffer.alloc(32, 0xff)), 0x62a8ab43, '32 bytes 0xFF');
  t.equal(crc32c(Buffer.from(Array.from({ length: 32 }, (_, i) => i))), 0x46dd794e, 'bytes 0..31');
  t.equal(crc32c(Buffer.from(Array.from({ length: 32 }, (_, i) => 31 - i))), 0x113fdb5c, 'bytes 31..0');
  t.equal(crc32c(Buffer.alloc(0)), 0, 'no bytes');
  // the value Cloud Storage reports for an object holding "data" (base64 of the big-endian bytes)
  const b = Buffer.alloc(4);
  b.writeUInt32BE(crc32c(Buffer.from('data')));
  t.equal(b.toString('base64'), 'rth90Q==', 'as Cloud Storage spells it');
});

t.test('CRC-32: check value, zlib and the JavaScript one agree', async (t) => {
  t.equal(crc32js(Buffer.from('123456789')), 0xcbf43926);
  t.equal(crc32(Buffer.from('123456789')), 0xcbf43926);
  const native = (zlib as { crc32?: (d: Uint8Array, v?: number) => number }).crc32;
  const data = randomBytes(4096);
  if (native) t.equal(crc32js(data), native(data), 'zlib');
  t.equal(crc32(data), crc32js(data), 'crc32 and crc32js');
});

t.test('every length from 0 to 100 against the bit-at-a-time definition', async (t) => {
  const data = randomBytes(100);
  let bad = 0;
  for (let n = 0; n <= 100; n++) {
    const part = data.subarray(0, n);
    if (crc32c(part) !== reference(0x82f63b78, part)) bad++;
    if (crc32js(part) !== reference(0xedb88320, part)) bad++;
  }
  t.equal(bad, 0, 'no length differs');
  const unaligned = randomBytes(10_000).subarray(3);
  t.equal(crc32c(unaligned), reference(0x82f63b78, unaligned), 'a view at an odd offset of its buffer');
});

t.test('continued across chunks: every split gives the value of the whole', async (t) => {
  const data = randomBytes(67);
  const whole = crc32c(data);
  let bad = 0;
  for (let i = 0; i <= data.length; i++) if (crc32c(data.subarray(i), crc32c(data.subarray(0, i))) !== whole) bad++;
  t.equal(bad, 0, 'every split point');
  const big = randomBytes(300_000);
  let c = 0;
  for (let i = 0; i < big.length; i += 65_536) c = crc32c(big.subarray(i, i + 65_536), c);
  t.equal(c, crc32c(big), '64 KiB chunks');
});

t.test('slicingBy8 builds a CRC for another reflected polynomial', async (t) => {
  const crc32k = slicingBy8(0xeb31d82e); // Koopman
  const data = randomBytes(1000);
  t.equal(crc32k(data), reference(0xeb31d82e, data));
  t.not(crc32k(data), crc32c(data), 'another polynomial, another value');
});
