import { loadSsh2 } from '@ferry/core';

/*
 * Loads ssh2 through core's SDK (the random padding of its packets drawn
 * from a pool of CSPRNG bytes: core/src/sdk/ssh2-module.ts) before
 * ssh2-sftp-client requires it: imported first by every module of this
 * plugin that imports ssh2-sftp-client. There is one ssh2 in a process and
 * whoever loads it first decides; without this, a server with fs-sftp and
 * without service-sftp would pad each packet with a call of its own.
 */
loadSsh2();
