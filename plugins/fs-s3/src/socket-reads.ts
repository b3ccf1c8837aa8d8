import type { OnReadOpts, Socket } from 'node:net';

/** Bytes of the read buffer the sockets of the S3 clients share. */
export const SOCKET_READ_BUFFER_SIZE = 1024 * 1024;

let shared: Buffer | undefined;

/** Reads done into the shared buffer so far (for tests). */
export const socketReadStats = { reads: 0 };

/**
 * The `onread` option (node:net, node:tls) of the S3 clients' sockets: they
 * read into one buffer of the process, reused by every read, instead of a
 * new 64 KiB buffer per read.
 *
 * A streamed GetObject otherwise allocates two buffers per 64 KiB: the
 * socket's read and the copy node's HTTP parser makes of the body bytes in
 * it, both garbage a moment later (see core's gc-pacer). Here only the copy
 * remains, and since a read takes whatever the kernel holds, up to the
 * buffer's size, a download goes through Ferry in fewer and larger chunks
 * (256 KiB to 1 MiB from s3rver instead of 64 KiB): fewer stream hand-overs,
 * fewer writes to the client.
 *
 * One buffer serves every socket because nothing keeps a view of it: each
 * read is handed to the socket's 'data' listener, the HTTP client's parser,
 * which takes the bytes out (headers as strings, the body as a copy) before
 * it returns, and the next read of any socket comes after that. The socket
 * emits 'data' itself: with `onread` node calls only this callback. Pausing
 * (the response's backpressure) stops the reads as before.
 */
export function sharedSocketReads(): OnReadOpts {
  shared ??= Buffer.allocUnsafeSlow(SOCKET_READ_BUFFER_SIZE);
  return { buffer: shared, callback: emitRead };
}

/** node calls it as a method of the socket that read (`this`); true: keep reading (a pause stops the reads by itself). */
function emitRead(this: Socket, n: number, buf: Uint8Array): boolean {
  socketReadStats.reads++;
  this.emit('data', Buffer.from(buf.buffer, buf.byteOffset, n));
  return true;
}
