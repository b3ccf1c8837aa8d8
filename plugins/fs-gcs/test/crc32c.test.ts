import t from 'tap';
import { randomBytes } from 'node:crypto';
import { CRC32C } from '@google-cloud/storage';
import { Crc32cValidator, clearClients, storageFor } from '../src/lib.js';

t.test("the validator gives the client's own CRC-32C, chunk after chunk", async (t) => {
  const data = randomBytes(200_003);
  const ours = new Crc32cValidator();
  const theirs = new CRC32C();
  for (let i = 0; i < data.length; i += 65_536) {
    ours.update(data.subarray(i, i + 65_536));
    theirs.update(data.subarray(i, i + 65_536));
  }
  t.equal(ours.toString(), theirs.toString(), 'same base64 value');
  t.ok(ours.validate(theirs.toString()), 'validates the right value');
  t.notOk(ours.validate('AAAAAA=='), 'refuses another');
  const empty = new Crc32cValidator();
  t.equal(empty.toString(), new CRC32C().toString(), 'no bytes');
  const word = new Crc32cValidator();
  word.update(Buffer.from('data'));
  t.equal(word.toString(), 'rth90Q==', 'the documented value of "data"');
});

t.test('every client the plugin makes checks with it', async (t) => {
  t.teardown(clearClients);
  const storage = storageFor({ bucket: 'b', automatic_credentials: 1 }, { endpoint: 'http://127.0.0.1:9' });
  t.type(storage.crc32cGenerator(), Crc32cValidator, 'Storage.crc32cGenerator');
  t.type(storage.bucket('b').file('k').crc32cGenerator(), Crc32cValidator, 'and so each file');
});
