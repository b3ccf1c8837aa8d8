import t from 'tap';
import { FsError, FsErrorCode, isFsError } from '../../src/fs/fs-error.js';

// FsError.notFound is made without a stack trace (an expected answer, made
// on every new upload): everything else about it is as for any FsError, and
// the process's stack trace limit is left as it was.

t.test('notFound: code, message, path and cause as before, no stack frames', async (t) => {
  const cause = new Error('ENOENT');
  const before = Error.stackTraceLimit;
  const err = FsError.notFound('/in/a.txt', cause);
  t.equal(Error.stackTraceLimit, before, 'the stack trace limit is restored');
  t.ok(isFsError(err, FsErrorCode.NotFound));
  t.ok(err instanceof Error);
  t.equal(err.message, '/in/a.txt: no such file or directory');
  t.equal(err.path, '/in/a.txt');
  t.equal(err.cause, cause);
  t.notMatch(err.stack ?? '', /\n\s+at /, 'no frames captured');
});

t.test('other errors keep their stack trace', async (t) => {
  const err = FsError.exists('/in/a.txt');
  t.match(err.stack ?? '', /\n\s+at /, 'frames captured');
  t.match(FsError.aborted('/x').stack ?? '', /\n\s+at /);
});
