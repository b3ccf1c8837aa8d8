import net from 'node:net';
import { adoptSocket, type UploadBuffers } from '@ferry/core';

/**
 * Plain data connections of uploads read in large chunks, into buffers
 * the storage gives back.
 *
 * A net.Socket reads at most 64 KiB a system call into a buffer Node
 * allocates for that read; a 1 GiB STOR is then 16,384 reads, each a new
 * buffer left to the garbage collector once written (and paced young
 * collections to free them: a fifth of the event loop). Node's `onread`
 * option has the socket read into a buffer of ours instead, as much as
 * the kernel holds, up to its size: here the buffers of the SDK's
 * leaseUploadBuffers (the pool of read buffers, 256 KiB, 1 MiB for a long
 * transfer while few run), which fs-local gives back once it wrote them.
 * A 1 GiB STOR on loopback took 1.2-1.3 CPU seconds, now 0.8
 * (bench/ftp.bench.mjs, docs/performance-history.md).
 *
 * What is read is pushed to the socket's own readable side, so that the
 * socket stays an ordinary stream for whoever consumes it (pipeline,
 * 'end', pause and resume): a read of at least half the buffer hands the
 * buffer over (lent to the storage; the next read gets another), a smaller
 * one is copied out, so a slow client's small reads hold no large buffer.
 * A full readable side stops the reads until it is read.
 */
/**
 * The `onread` option of a socket that pushes its large reads to its
 * readable side; `socket` gives the socket once it exists. It reads into
 * `buffers` (the SDK's leaseUploadBuffers) and lends each chunk handed over
 * to the storage, which gives it back once written.
 */
export function largeReadOption(socket: () => net.Socket, buffers: UploadBuffers): net.OnReadOpts {
  let next = buffers.take();
  return {
    buffer: () => next,
    callback: (n: number, buf: Uint8Array) => {
      let chunk: Buffer;
      if (n >= buf.length / 2) {
        chunk = Buffer.from(buf.buffer, buf.byteOffset, n);
        buffers.lend(chunk);
        next = buffers.take();
      } else chunk = Buffer.from(Buffer.from(buf.buffer, buf.byteOffset, n));
      // false stops the reads until the readable side is read (Socket#_read starts them again)
      return socket().push(chunk);
    },
  };
}

/**
 * The same connection as `s` as a socket that reads in large chunks. `s`
 * must not have started reading (a server's `pauseOnConnect`): its
 * handle moves to the new socket (core's adoptSocket), and `s` is left
 * without one (destroying it no longer closes the connection: destroy the
 * socket returned).
 */
export function withLargeReads(s: net.Socket, buffers: UploadBuffers): net.Socket {
  return adoptSocket(s, (socket) => largeReadOption(socket, buffers));
}
