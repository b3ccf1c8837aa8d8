/**
 * The one mapping from thrown errors to HTTP answers (core/src/http/errors.ts):
 * filesystem codes, domain kinds, outages (503 with Retry-After) and the
 * client message of 5xx answers (never the internal text of an unknown error).
 */
import t from 'tap';
import { FsError, FsErrorCode } from '../../src/fs/fs-error.js';
import { errorBody, toBoom } from '../../src/http/errors.js';
import { NotFoundError } from '../../src/errors.js';

t.test('a storage backend that cannot be reached answers 503 with Retry-After, naming the backend', async (t) => {
  const b = toBoom(new FsError(FsErrorCode.Unavailable, 'Azure Blob unavailable: connect ECONNREFUSED'));
  t.equal(b.output.statusCode, 503);
  t.equal(b.output.headers['Retry-After'], '5');
  t.same(errorBody(b), { message: 'storage backend unavailable: Azure Blob unavailable: connect ECONNREFUSED', error: 'Service Unavailable' });
});

t.test('filesystem codes of bad requests keep their 4xx and no Retry-After', async (t) => {
  const cases: Array<[FsErrorCode, number]> = [
    [FsErrorCode.NotFound, 404],
    [FsErrorCode.Exists, 409],
    [FsErrorCode.Permission, 403],
    [FsErrorCode.Escape, 403],
    [FsErrorCode.Quota, 413],
    [FsErrorCode.Invalid, 400],
  ];
  for (const [code, status] of cases) {
    const b = toBoom(new FsError(code, `${code} happened`));
    t.equal(b.output.statusCode, status, code);
    t.notOk('Retry-After' in b.output.headers, `${code}: no Retry-After`);
    t.same(errorBody(b), { message: `${code} happened`, error: b.output.payload.error }, `${code}: the message is the error's`);
  }
});

t.test('an unknown error is a 500 whose message hides the internal text', async (t) => {
  const b = toBoom(new Error('SELECT secret FROM x failed at /srv/ferry/core.js:1'));
  t.equal(b.output.statusCode, 500);
  t.same(errorBody(b), { message: 'internal server error', error: 'Internal Server Error' });
});

t.test('domain errors keep their kind', async (t) => {
  const b = toBoom(new NotFoundError('user "x" not found'));
  t.equal(b.output.statusCode, 404);
  t.same(errorBody(b), { message: 'user "x" not found', error: 'Not Found' });
});
