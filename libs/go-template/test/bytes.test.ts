/** The byte helpers that replace Node's Buffer (the library runs in browsers too): the same text as Buffer's. */
import t from 'tap';
import { base64, concatBytes, hex } from '../src/bytes.js';

t.test('base64 and hex of every padding case, as Buffer writes them', async (t) => {
  for (let n = 0; n <= 7; n++) {
    const b = Uint8Array.from({ length: n }, (_, i) => (i * 97 + 251) % 256);
    t.equal(base64(b), Buffer.from(b).toString('base64'), `${n} bytes`);
    t.equal(hex(b), Buffer.from(b).toString('hex'), `${n} bytes`);
  }
});

t.test('concatBytes', async (t) => {
  t.same([...concatBytes([Uint8Array.of(1, 2), new Uint8Array(0), Uint8Array.of(3)])], [1, 2, 3]);
  t.equal(concatBytes([]).length, 0);
});
