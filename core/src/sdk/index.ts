/** Helpers shared by plugins (kept here so no plugin copies another's code). */
export * from './streams.js';
export * from './schemas.js';
export * from './node-errors.js';
export * from './range.js';
export * from './package-info.js';
export * from './write-handle.js';
export * from './signals.js';
export * from './range-reader.js';
export * from './read-buffers.js';
export * from './gc-pacer.js';
export * from './part-buffers.js';
export * from './part-upload.js';
export * from './host.js';
export * from './lazy-module.js';
export * from './event-search.js';
export * from './process-tag.js';
export type { PluginDatabase, PluginEntitiesDef, PluginMigration } from '../data/plugin-entities.js';
export { redactSecrets } from '../secrets/redact.js';
