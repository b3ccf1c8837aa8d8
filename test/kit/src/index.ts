/**
 * @ferry/testkit: the conformance suites every plugin runs, and the stream
 * helpers plugin tests share.
 */
export { fsConformance, DEFAULT_LARGE_FILE_SIZE } from './fs-conformance.js';
export type { FsConformanceOptions, CaseGroup, SuiteContext, CapabilityName } from './fs-conformance.js';
export { randomStream, randomBytesSeeded, randomSliceSha256, sha256Stream, failingStream } from './streams.js';
export {
  writeFile,
  readFile,
  listAll,
  namesIn,
  writeSome,
  rejectionOf,
  withTimeout,
  expectFsError,
  expectMissing,
  isFsErrorLike,
} from './fs-helpers.js';
export { AWKWARD_NAMES } from './cases/basics.js';
export { RecordingRelay, StalledServer, type RecordedRequest } from './relay.js';
export { localEscapeConformance, craftedPaths } from './local-escape.js';
export type { LocalEscapeOptions, EscapeExpectation } from './local-escape.js';
