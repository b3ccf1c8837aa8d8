/**
 * @ferry/testkit: the conformance suites every plugin runs, and the helpers
 * plugin tests and the core's tests share.
 */
export { fsConformance, DEFAULT_LARGE_FILE_SIZE } from './fs-conformance.js';
export type { FsConformanceOptions, CaseGroup, SuiteContext, CapabilityName } from './fs-conformance.js';
export { randomStream, randomBytesSeeded, randomSliceSha256, sha256Stream, failingStream, readUntilError } from './streams.js';
export { otherDeviceDir } from './other-device.js';
export { liveBufferBytes, liveBufferGrowth, writeRandomHex, type BufferGrowth } from './memory.js';
export {
  writeFile,
  readFile,
  streamBytes,
  comparableInfo,
  listAll,
  namesIn,
  writeSome,
  rejectionOf,
  withTimeout,
  expectFsError,
  expectMissing,
  isFsErrorLike,
  openDescriptorsUnder,
} from './fs-helpers.js';
export { AWKWARD_NAMES } from './cases/basics.js';
export { RecordingRelay, StalledServer, type RecordedRequest } from './relay.js';
export { opensslMissing, selfSignedCert, servedFingerprint } from './tls.js';
export { run, type Run } from './programs.js';
export { localEscapeConformance, craftedPaths } from './local-escape.js';
export { localRaceConformance, type LocalRaceOptions } from './local-race.js';
export { unzip } from './zip.js';
export type { LocalEscapeOptions, EscapeExpectation } from './local-escape.js';
export { listenOnLoopback, closeServer, LoopbackServer } from './local-server.js';
export { startFormStub, setEnvForTest, type StubAnswer } from './wire-stub.js';
export { createUserWithFolders, type UserWithFoldersOptions, type UserWithFolders, type FilesystemConfig } from './two-mount-user.js';
export {
  actionConformance,
  runAction,
  saveActionOptions,
  defaultEvent,
  plainSecret,
  type ActionConformanceOptions,
  type RunActionOptions,
} from './action-conformance.js';
export { manifestTests } from './manifest.js';
export {
  FERRY_CLI,
  ferryEnv,
  writeFerryConfig,
  startFerry,
  ferryCall,
  ferryToken,
  type FerryConfigOptions,
  type FerryProcess,
  type StartFerryOptions,
  type FerryAnswer,
  type FerryCallOptions,
} from './ferry-serve.js';
