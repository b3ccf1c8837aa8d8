import net from 'node:net';

interface HandleOwner {
  _handle: unknown;
}

/**
 * The same connection as `s` as a new socket built with `onread` (Node's
 * option that has a socket read into buffers of the caller's instead of a
 * new one per read), which `makeOnread` makes given the new socket (once it
 * exists). `s` must not have started reading (a server's `pauseOnConnect`):
 * its handle moves to the new socket, and `s` is left without one
 * (destroying it no longer closes the connection: destroy the socket
 * returned). The new socket starts reading into its readable side, not
 * flowing, as an accepted socket does.
 */
export function adoptSocket(s: net.Socket, makeOnread: (socket: () => net.Socket) => net.OnReadOpts): net.Socket {
  const old = s as unknown as HandleOwner;
  const handle = old._handle;
  if (!handle) throw new Error('adoptSocket: the socket has no handle');
  const adopted: net.Socket = new net.Socket({
    handle,
    readable: true,
    writable: true,
    allowHalfOpen: s.allowHalfOpen,
    onread: makeOnread(() => adopted),
  } as net.SocketConstructorOpts);
  old._handle = null;
  s.destroy();
  return adopted;
}

/**
 * Starts a socket accepted with `pauseOnConnect` reading as any accepted
 * socket does (into its readable buffer, not flowing), for a use that
 * keeps Node's own read buffers.
 */
export function startReading(s: net.Socket): void {
  // (what `pauseOnConnect` set to false; null is an accepted socket's own state: not flowing, not paused)
  (s as unknown as { readableFlowing: boolean | null }).readableFlowing = null;
  s.read(0);
}
