import { deflateRawSync } from 'node:zlib';
import t from 'tap';
import { unzip } from '../src/index.js';

interface Entry {
  name: string;
  data: Buffer;
  deflate?: boolean;
  /** Size written in the central directory (default: the real one). */
  size?: number;
}

/** A zip as an archiver writes one: local headers and data, then the central directory. */
function makeZip(entries: Entry[]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8');
    const body = e.deflate ? deflateRawSync(e.data) : e.data;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(e.deflate ? 8 : 0, 8);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(e.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const cd = Buffer.alloc(46);
    cd.writeUInt32LE(0x02014b50, 0);
    cd.writeUInt16LE(e.deflate ? 8 : 0, 10);
    cd.writeUInt32LE(body.length, 20);
    cd.writeUInt32LE(e.size ?? e.data.length, 24);
    cd.writeUInt16LE(name.length, 28);
    cd.writeUInt32LE(offset, 42);
    locals.push(local, name, body);
    central.push(cd, name);
    offset += 30 + name.length + body.length;
  }
  const cdir = Buffer.concat(central);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(entries.length, 8);
  eocd.writeUInt16LE(entries.length, 10);
  eocd.writeUInt32LE(cdir.length, 12);
  eocd.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cdir, eocd]);
}

t.test('unzip reads stored and deflated entries and directories', async (t) => {
  const big = Buffer.alloc(100_000, 'abc');
  const entries = unzip(
    makeZip([
      { name: 'dir/', data: Buffer.alloc(0) },
      { name: 'dir/é.txt', data: Buffer.from('stored') },
      { name: 'big.bin', data: big, deflate: true },
    ]),
  );
  t.same([...entries.keys()], ['dir/', 'dir/é.txt', 'big.bin']);
  t.equal(entries.get('dir/')?.length, 0);
  t.equal(entries.get('dir/é.txt')?.toString(), 'stored');
  t.ok(entries.get('big.bin')?.equals(big), 'deflated content inflated');
  t.same([...unzip(makeZip([])).keys()], [], 'an empty zip');
});

t.test('unzip throws on what it cannot check', async (t) => {
  t.throws(() => unzip(Buffer.from('not a zip at all, just some text')), /not a zip/);
  t.throws(() => unzip(makeZip([{ name: 'a', data: Buffer.from('abc'), size: 4 }])), /a: 3 bytes, central directory says 4/);
  t.throws(
    () =>
      unzip(
        makeZip([
          { name: 'a', data: Buffer.from('1') },
          { name: 'a', data: Buffer.from('2') },
        ]),
      ),
    /two entries/,
  );
  const bad = makeZip([{ name: 'a', data: Buffer.from('abc') }]);
  bad.writeUInt16LE(12, bad.length - 22 - 47 + 10); // compression method of the central directory entry: bzip2
  t.throws(() => unzip(bad), /unsupported compression method 12/);
});
