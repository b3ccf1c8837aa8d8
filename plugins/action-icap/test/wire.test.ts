import t from 'tap';
import {
  chunkSizeLine,
  formatEncapsulated,
  hasBlockHeader,
  lastChunk,
  parseChunkSize,
  parseEncapsulated,
  parseHead,
  parseStatusLine,
  threatNames,
} from '../src/icap/wire.js';
import { parseIcapUrl } from '../src/icap/endpoint.js';
import { contentTypeOf } from '../src/content-type.js';
import { quarantineName } from '../src/quarantine.js';

t.test('parseHead()', async (t) => {
  const h = parseHead(
    [
      'ICAP/1.0 200 OK',
      'Methods: RESPMOD',
      'methods: REQMOD',
      'X-Violations-Found: 1',
      '\tfile.bin',
      ' Some-Threat',
      '\t0',
      '\t2',
      'Empty:',
      'ISTag: "abc"',
    ].join('\r\n'),
  );
  t.equal(h.startLine, 'ICAP/1.0 200 OK');
  t.same(h.headers.all('METHODS'), ['RESPMOD', 'REQMOD'], 'repeated fields keep every value, names case-insensitive');
  t.same(h.headers.tokens('Methods'), ['RESPMOD', 'REQMOD']);
  t.equal(h.headers.get('methods'), 'RESPMOD, REQMOD');
  t.equal(h.headers.get('x-violations-found'), '1\nfile.bin\nSome-Threat\n0\n2', 'folded lines joined, told apart by newlines');
  t.equal(h.headers.get('Empty'), '');
  t.equal(h.headers.get('ISTag'), '"abc"');
  t.equal(h.headers.int('Missing'), undefined);
  t.same(parseHead('\r\nICAP/1.0 204 No Content\nISTag: x').headers.get('istag'), 'x', 'bare LF and a leading empty line tolerated');
  t.throws(() => parseHead('ICAP/1.0 200 OK\r\n folded first'), /continuation line without a field/);
  t.throws(() => parseHead('ICAP/1.0 200 OK\r\nno colon here'), /malformed header line/);
  t.throws(() => parseHead(''), /empty message head/);
});

t.test('parseStatusLine()', async (t) => {
  t.same(parseStatusLine('ICAP/1.0 204 No Content', 'ICAP'), { version: 'ICAP/1.0', status: 204, reason: 'No Content' });
  t.same(parseStatusLine('HTTP/1.0 403', 'HTTP'), { version: 'HTTP/1.0', status: 403, reason: '' });
  t.throws(() => parseStatusLine('HTTP/1.1 200 OK', 'ICAP'), /not an ICAP status line/);
  t.throws(() => parseStatusLine('ICAP/1.0 2000 OK', 'ICAP'));
});

t.test('Encapsulated', async (t) => {
  t.same(parseEncapsulated('req-hdr=0, res-hdr=45, res-body=120'), [
    { name: 'req-hdr', offset: 0 },
    { name: 'res-hdr', offset: 45 },
    { name: 'res-body', offset: 120 },
  ]);
  t.same(parseEncapsulated('null-body=0'), [{ name: 'null-body', offset: 0 }]);
  t.throws(() => parseEncapsulated('res-hdr=10, res-body=5'), /not ascending/);
  t.throws(() => parseEncapsulated('res-body=0, res-hdr=10'), /exactly one body entity/);
  t.throws(() => parseEncapsulated('foo=1'), /malformed/);
  t.equal(
    formatEncapsulated(
      [
        { name: 'req-hdr', length: 30 },
        { name: 'res-hdr', length: 50 },
      ],
      'res-body',
    ),
    'req-hdr=0, res-hdr=30, res-body=80',
  );
});

t.test('chunks', async (t) => {
  t.equal(chunkSizeLine(255), 'ff\r\n');
  t.equal(lastChunk(), '0\r\n\r\n');
  t.equal(lastChunk(true), '0; ieof\r\n\r\n');
  t.same(parseChunkSize('1A'), { size: 26, ieof: false });
  t.same(parseChunkSize('0; ieof'), { size: 0, ieof: true });
  t.same(parseChunkSize('10;name=value'), { size: 16, ieof: false });
  t.throws(() => parseChunkSize('zz'), /malformed chunk size/);
});

t.test('block signals and threat names', async (t) => {
  const h = parseHead(
    'ICAP/1.0 200 OK\r\nX-Infection-Found: Type=0; Resolution=2; Threat=Eicar-Test;\r\nX-Violations-Found: 2\r\n\ta\r\n\tThreat-A\r\n\t1\r\n\t0\r\n\tb\r\n\tThreat-B\r\n\t2\r\n\t0',
  ).headers;
  t.ok(hasBlockHeader(h));
  t.same(threatNames(h), ['Eicar-Test', 'Threat-A', 'Threat-B']);
  t.notOk(hasBlockHeader(parseHead('ICAP/1.0 200 OK\r\nX-Violations-Found: 0').headers), 'zero violations is no block');
  t.ok(hasBlockHeader(parseHead('ICAP/1.0 200 OK\r\nX-Virus-ID: Worm.X').headers));
  t.same(threatNames(parseHead('ICAP/1.0 200 OK\r\nX-Virus-ID: Worm.X').headers), ['Worm.X']);
  t.notOk(hasBlockHeader(parseHead('ICAP/1.0 200 OK\r\nISTag: x').headers));
});

t.test('parseIcapUrl()', async (t) => {
  t.same(parseIcapUrl('icap://127.0.0.1:11344/avscan?allow204=on'), {
    host: '127.0.0.1',
    port: 11344,
    service: '/avscan?allow204=on',
    url: 'icap://127.0.0.1:11344/avscan?allow204=on',
  });
  t.equal(parseIcapUrl('ICAP://scanner.example/srv').port, 1344, 'default port 1344');
  t.same(parseIcapUrl('icap://[::1]:1345/x'), { host: '::1', port: 1345, service: '/x', url: 'icap://[::1]:1345/x' });
  t.throws(() => parseIcapUrl('http://host/avscan'), /must be an icap:\/\/ URL/);
  t.throws(() => parseIcapUrl('icaps://host/avscan'), /not supported/);
  t.throws(() => parseIcapUrl('icap://host:1344/'), /must name the ICAP service/);
  t.throws(() => parseIcapUrl('icap://host:99999/x'), /not a valid URL|invalid port/);
  t.throws(() => parseIcapUrl('icap://user:pw@host/x'), /credentials/);
  t.throws(() => parseIcapUrl('icap://host/x#frag'), /fragment/);
});

t.test('contentTypeOf() and quarantineName()', async (t) => {
  t.equal(contentTypeOf('/a/b/Report.TXT'), 'text/plain');
  t.equal(contentTypeOf('/a.b/noext'), 'application/octet-stream');
  t.equal(contentTypeOf('/x.exe'), 'application/vnd.microsoft.portable-executable');
  const n = quarantineName('/dir/evil file.exe', new Date('2026-11-25T16:33:00.123Z'));
  t.match(n, /^20261125T163300Z-[0-9a-f]{8}-evil file\.exe$/);
  t.not(quarantineName('/x'), quarantineName('/x'), 'unique');
  t.match(quarantineName('/..'), /-_$/, 'a dots-only name is replaced');
});
