/**
 * @ferry/core public SDK: the contracts plugins implement and the helpers
 * they may use. Plugins import only from here, never from core internals.
 */
import 'reflect-metadata';

export * from './fs/fs-error.js';
export * from './fs/fs.contract.js';
export * from './fs/fs-batch.js';
export * from './fs/path.js';
export * from './fs/providers.js';
export * from './errors.js';
export { AccountStatus, GroupType } from './accounts/account-numbers.js';
export { ShareScope } from './shares/share.input.js';
export { Trigger } from './event-manager/types.js';
export * from './events/event-types.js';
export * from './events/event-bus.js';
export * from './events/fs-hooks.js';
export * from './events/action.contract.js';
export * from './plugins/manifest.js';
export { PluginLoadError } from './plugins/registry.js';
export type { Secret, SecretStatus, SecretsService } from './secrets/secret.js';
export { isSecret, isEmptySecret } from './secrets/secret.js';
export type { Logger } from './logger.js';
export { silentLogger } from './logger.js';
export * from './sdk/index.js';

// Event manager SDK surface for action plugins (docs/event-manager.md):
// TOKENS to resolve core services through PluginContext.core.get(), and the
// types of the services resolved with them.
export { TOKENS } from './tokens.js';
// (EventAccounts, EventShares, MailMessage, RotateResult, FolderRetention, RecordedKind, UserFilesAccess...
// are contracts of the SDK: exported above through sdk/index.ts.)
export type { Mailer } from './ops/mailer.js';
export type { LogRotator } from './ops/log-rotator.js';
export type { RetentionChecks, RetentionCheck } from './event-manager/retention-checks.js';
export type { EventRecorder } from './event-manager/recorder.js';
export type { EventManager, ActionExecution } from './event-manager/event-manager.js';
export type { EventScheduler, SchedulerClock } from './event-manager/scheduler.js';
export { ManualClock } from './event-manager/scheduler.js';
export type { FsFactory } from './vfs/fs-factory.js';
// The read buffer pool is core's engine (vfs/), not the SDK; fs-local's lent-buffers test reads through it.
export { ReadBufferPool, ReadBufferLease } from './vfs/read-buffers.js';
export { matchPatterns, matchAnyPatterns } from './event-manager/patterns.js';
export { userMatchesConditions } from './event-manager/conditions.js';
