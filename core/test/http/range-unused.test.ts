/**
 * A Range header on a route that does not serve files costs nothing: hapi's own
 * range handling of answers (@hapi/ammo's parser, a 206 slice of the JSON, a
 * 416 for a malformed header) is off for every route; the file routes parse
 * Range themselves (range-header.ts).
 */
import { createRequire } from 'node:module';
import t from 'tap';
import { createTestApp } from '../../src/testing.js';
import { parseRange } from '../../src/http/range-header.js';

const ammo = createRequire(import.meta.url)('@hapi/ammo') as { header: (header: string, length: number) => unknown };

const ta = await createTestApp({ plugins: [] });
t.teardown(() => ta.close());
const token = await ta.adminToken();

const RANGES = [
  'bytes=0-10',
  'bytes=abc',
  'bytes=5-1',
  'bytes=99999999-',
  'items=0-1',
  'bytes=' + '0-0,'.repeat(3000) + 'x',
  'bytes=' + Array.from({ length: 1500 }, () => '0-100').join(','),
  'bytes=0-0' + ' , 0-0'.repeat(2000) + ',',
];

t.test('admin reads answer 200 with the whole body whatever the Range header, and hapi never parses it', async (t) => {
  const original = ammo.header;
  let parsed = 0;
  ammo.header = (header, length) => {
    parsed++;
    return original(header, length);
  };
  t.teardown(() => {
    ammo.header = original;
  });
  for (const url of ['/api/v2/roles', '/api/v2/admins/admin', '/api/v2/users', '/api/v2/folders', '/api/v2/status']) {
    const plain = await ta.inject('GET', url, { token });
    t.equal(plain.statusCode, 200, `${url} ${plain.payload}`);
    t.notOk(plain.headers['accept-ranges'], `${url}: no Accept-Ranges on an answer that takes no Range`);
    for (const range of RANGES) {
      const r = await ta.inject('GET', url, { token, headers: { range } });
      t.equal(r.statusCode, 200, `${url} Range ${range.slice(0, 30)}`);
      t.equal(r.payload, plain.payload, `${url} Range ${range.slice(0, 30)}: the whole body`);
      t.notOk(r.headers['content-range']);
    }
  }
  t.equal(parsed, 0, "hapi's range parser was never called");
});

t.test('parseRange (the file routes): a header longer than any single range is ignored before any parsing', async (t) => {
  t.same(parseRange('bytes=0-1', 10), { kind: 'partial', start: 0, end: 1 });
  t.same(parseRange('bytes=0-1' + ' '.repeat(300), 10), { kind: 'full' }, 'valid with trailing spaces, but longer than the limit');
  t.same(parseRange('bytes=' + ' '.repeat(100) + '0-1', 10), { kind: 'partial', start: 0, end: 1 }, 'within the limit, spaces are allowed');
  t.same(parseRange('bytes=' + '0-0,'.repeat(100_000), 10), { kind: 'full' });
  t.same(parseRange('bytes=' + '1'.repeat(200) + '-', 10), { kind: 'full' }, 'numbers beyond the safe integers');
});
