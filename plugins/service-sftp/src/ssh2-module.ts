import { loadSsh2 } from '@ferry/core';

/*
 * ssh2 as core's SDK loads it: the random padding of its packets drawn from
 * a pool of CSPRNG bytes (core/src/sdk/ssh2-module.ts). Every value use of
 * ssh2 in this plugin goes through this module (types may come from 'ssh2'
 * directly).
 */
const loaded = loadSsh2();

/** True when ssh2 was loaded by core's loader, its packets' padding drawn from the pool. */
export const pooledPadding = loaded.pooled;

export default loaded.module;
