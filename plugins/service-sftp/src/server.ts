import { randomUUID } from 'node:crypto';
import net from 'node:net';
import {
  drainService,
  pooledSshPackets,
  withSshReads,
  type FileSession,
  type Logger,
  type Protocol,
  type ServiceDef,
  type ServiceHost,
  type ServiceStatus,
} from '@ferry/core';
import type { Algorithms, ClientInfo, Connection, Server, ServerChannel, Session } from 'ssh2';
import ssh2 from './ssh2-module.js';
import { ConnectionAuth } from './auth.js';
import type { SftpConfig } from './config.js';
import { loadHostKeys, type HostKey } from './host-keys.js';
import { EXTENSIONS, SftpSession } from './sftp-session.js';
import { commandName, runCommand } from './ssh-commands.js';
import { acceptRepeatedUserauth } from './ssh2-server-internals.js';
import { advertiseExtensions, containParserErrors } from './ssh2-sftp-internals.js';

/** The protocol of the file sessions (connections, events); logins are checked as SSH. */
const PROTOCOL = 'SFTP';

export interface SftpServiceOptions {
  config: SftpConfig;
  dataDir: string;
  logger: Logger;
  /** The core's services, resolved on first use. */
  host: () => ServiceHost;
}

const plainIp = (ip: string | undefined) => (ip ?? '').replace(/^::ffff:/, '');

/** The SFTP channel of ssh2 has no exit(): its protocol object sends the exit-status request. */
function exitStatus(channel: unknown, code: number): void {
  const c = channel as { _protocol?: { exitStatus?(id: number, code: number): void }; outgoing?: { id: number; state: string } };
  if (c.outgoing?.state === 'open') c._protocol?.exitStatus?.(c.outgoing.id, code);
}

/** One client connection: its socket, its SSH connection once handed to ssh2. */
interface Client {
  socket: net.Socket;
  conn: Connection | null;
}

/** The SSH server: listeners per binding handing admitted sockets to one ssh2 server. */
export function sftpService(o: SftpServiceOptions): ServiceDef {
  const { config, logger } = o;
  const clients = new Map<net.Socket, Client>();
  let listeners: net.Server[] = [];
  let ssh: Server | null = null;
  let hostKeys: HostKey[] = [];
  let active = false;

  function admit(accepted: net.Socket): void {
    // its reads go to reused buffers, not a new one per read (core's SDK; pooledSshPackets below says when)
    const socket = withSshReads(accepted);
    const client: Client = { socket, conn: null };
    clients.set(socket, client);
    // each answer leaves at once: with Nagle's algorithm a small answer (a WRITE's status, a window
    // adjust) sent while an earlier one is unacknowledged waits for the client's delayed ACK (40 ms
    // on Linux), and a client with its requests outstanding stalls that long (a 1 GiB put stalled
    // 20 times a second: 0.54-0.58x of OpenSSH, 1.58x without)
    socket.setNoDelay(true);
    socket.on('close', () => clients.delete(socket));
    socket.on('error', (err) => logger.debug({ err }, 'ssh client socket error'));
    const ip = plainIp(socket.remoteAddress);
    o.host()
      .defender.isBanned(ip, 'SSH')
      .then((banned) => {
        if (banned || !active) {
          logger.info({ ip }, banned ? 'ssh connection from a banned host dropped' : 'ssh connection refused: stopping');
          return void socket.destroy();
        }
        ssh!.injectSocket(socket);
      })
      .catch((err: unknown) => {
        logger.warn({ err, ip }, 'ssh connection dropped');
        socket.destroy();
      });
  }

  function serve(conn: Connection, info: ClientInfo, socket: net.Socket | undefined): void {
    const ip = plainIp(info.ip);
    const connectionKey = randomUUID();
    const cut = () => (socket ? socket.destroy() : conn.end());
    const client = socket && clients.get(socket);
    if (client) client.conn = conn;
    acceptRepeatedUserauth(conn);
    // large packets (a download's data) built in reused buffers, not a fresh one each (core's SDK)
    if (socket) pooledSshPackets(conn, socket);
    let timer: NodeJS.Timeout | null = null;
    const arm = (seconds: number, why: string) => {
      if (timer) clearTimeout(timer);
      timer = seconds > 0 ? setTimeout(() => (logger.info({ ip }, why), cut()), seconds * 1000) : null;
      timer?.unref();
    };
    arm(config.login_grace_time, 'ssh connection closed: no login within the grace time');
    const auth = new ConnectionAuth({
      login: o.host().login,
      ip,
      logger,
      maxTries: config.max_auth_tries,
      onTooManyTries: () => {
        logger.info({ ip }, 'ssh connection closed: too many authentication failures');
        setImmediate(() => conn.end());
      },
    });
    conn.on('authentication', (ctx) => auth.handle(ctx));
    conn.on('error', (err) => logger.debug({ err, ip }, 'ssh connection error'));
    conn.on('close', () => {
      if (timer) clearTimeout(timer);
      // a client that left without trying to log in (scanners): the defender's no_auth score
      if (!auth.tried && !auth.account) {
        o.host()
          .defender.addEvent(ip, 'no_auth', 'SSH')
          .catch((err: unknown) => logger.warn({ err, ip }, 'defender event not recorded'));
      }
    });
    conn.on('ready', () => {
      const idle = () => arm(config.idle_timeout, 'ssh connection closed: idle');
      idle();
      conn.on('session', (accept) => onSession(accept(), auth.account!, ip, connectionKey, info, idle, cut));
      // no port forwarding: direct-tcpip channels and tcpip-forward requests are refused
      conn.on('tcpip', (_accept, reject) => reject());
      conn.on('openssh.streamlocal', (_accept, reject) => reject());
      conn.on('request', (_accept, reject) => reject?.());
    });
  }

  function onSession(session: Session, username: string, ip: string, sessionKey: string, info: ClientInfo, idle: () => void, cut: () => void): void {
    const refuse = (_accept: unknown, reject?: () => void) => reject?.();
    session.on('pty', refuse);
    session.on('x11', refuse);
    session.on('auth-agent', refuse);
    session.on('env', refuse);
    const noCommand = (accept: () => ServerChannel, what: string) => {
      const channel = accept();
      channel.stderr.write(`Ferry serves SFTP, SCP and a few commands only: ${what} is not supported\r\n`);
      channel.exit(1);
      channel.end();
    };
    session.on('shell', (accept) => noCommand(accept, 'a shell'));
    session.on('exec', (accept, _reject, req) => {
      const channel = accept();
      const gone = new AbortController();
      channel.on('close', () => gone.abort());
      channel.on('error', (err: Error) => logger.info({ ip, username, err: err.message }, 'ssh command channel error'));
      const sessions: FileSession[] = [];
      const open = async (protocol: Protocol) => {
        // a key of its own: the command is its own connection, listed with its protocol and command line
        const opened = await o.host().sessions.open({
          username,
          ip,
          protocol,
          sessionKey: randomUUID(),
          clientVersion: info.header.identRaw,
          command: req.command.slice(0, 256),
          sshCommand: commandName(req.command),
          signal: gone.signal,
        });
        opened.signal.addEventListener('abort', cut, { once: true });
        sessions.push(opened);
        return opened;
      };
      idle();
      void runCommand({ channel, command: req.command, enabled: config.enabled_ssh_commands, open, logger }).then((code) => {
        for (const s of sessions) s.signal.removeEventListener('abort', cut);
        idle();
        if (gone.signal.aborted) return;
        channel.exit(code);
        channel.end();
      });
    });
    session.on('subsystem', (_accept, reject, req) => {
      logger.info({ ip, subsystem: req.name }, 'ssh subsystem refused');
      reject();
    });
    session.on('sftp', (accept) => {
      const channel = accept();
      containParserErrors(channel);
      advertiseExtensions(channel, EXTENSIONS);
      const gone = new AbortController();
      const opening = o.host().sessions.open({ username, ip, protocol: PROTOCOL, sessionKey, clientVersion: info.header.identRaw, signal: gone.signal });
      // listening at once: a client may send requests before the session is open
      const sftp = new SftpSession(channel, opening, logger, idle);
      let files: FileSession | null = null;
      // the client ended its side: end ours (OpenSSH's batch mode waits for it) with exit status 0 (scp checks it)
      channel.on('end', () => {
        exitStatus(channel, 0);
        channel.end();
      });
      // a malformed packet ends the channel (ssh2's SFTP parser): the connection goes on
      channel.on('error', (err: Error) => logger.info({ ip, username, err: err.message }, 'sftp channel error'));
      channel.on('close', () => {
        // the session's signal follows `gone`: this channel's end is not an administrator's close
        files?.signal.removeEventListener('abort', cut);
        gone.abort();
        void sftp
          .close()
          .then(() => files?.close())
          .catch((err: unknown) => logger.warn({ err, ip, username }, 'sftp session not closed cleanly'));
      });
      opening.then(
        (opened) => {
          files = opened;
          if (gone.signal.aborted) return void opened.close().catch(() => undefined);
          // closed by an administrator (DELETE /api/v2/connections/{id}, from any node)
          opened.signal.addEventListener('abort', cut, { once: true });
        },
        (err: unknown) => {
          logger.info({ ip, username, err: (err as Error).message }, 'sftp session refused');
          channel.end();
        },
      );
    });
  }

  /** An ssh2 server with these host keys; connections are handed to it by admit(). */
  function sshServer(keys: HostKey[]): Server {
    const server = new ssh2.Server(
      {
        hostKeys: keys.map((k) => k.privateKey),
        algorithms: config.algorithms as Algorithms,
        ...(config.banner ? { banner: config.banner } : {}),
        ident: 'Ferry',
      },
      (conn, info) => serve(conn, info, (conn as unknown as { _sock?: net.Socket })._sock),
    );
    server.on('error', (err: Error) => logger.warn({ err }, 'ssh server error'));
    return server;
  }

  let reloads: Promise<void> = Promise.resolve();
  /**
   * Reads the host keys again (SIGHUP, like the TLS certificates): new
   * connections get the new keys, open ones keep theirs; keys that cannot
   * be read are logged and the current ones stay in service.
   */
  function reloadHostKeys(reason: string): Promise<void> {
    reloads = reloads.then(async () => {
      if (!active) return;
      try {
        const keys = await loadHostKeys(config.host_keys, o.dataDir);
        const server = sshServer(keys);
        if (!active) return;
        ssh = server;
        hostKeys = keys;
        for (const k of keys) logger.info({ path: k.path, fingerprint: k.fingerprint, reason }, 'ssh host key reloaded');
      } catch (err) {
        logger.warn({ err: (err as Error).message, reason }, 'ssh host keys not reloaded: the current keys stay in service');
      }
    });
    return reloads;
  }
  const onHup = () => void reloadHostKeys('SIGHUP');

  return {
    name: 'sftpd',
    statusKey: 'ssh',
    async start() {
      hostKeys = await loadHostKeys(config.host_keys, o.dataDir);
      for (const k of hostKeys) logger.info({ path: k.path, fingerprint: k.fingerprint }, 'ssh host key');
      ssh = sshServer(hostKeys);
      try {
        for (const b of config.bindings) {
          const l = net.createServer({ pauseOnConnect: true }, admit);
          await new Promise<void>((resolve, reject) => {
            l.once('error', reject);
            l.listen(b.port, b.address, () => (l.off('error', reject), resolve()));
          });
          listeners.push(l);
        }
      } catch (err) {
        for (const l of listeners) l.close();
        listeners = [];
        throw err;
      }
      active = true;
      process.on('SIGHUP', onHup);
      logger.info({ bindings: listeners.map((l) => l.address()) }, 'sftp listening');
    },
    async stop({ signal }) {
      active = false;
      process.off('SIGHUP', onHup);
      const servers = listeners;
      listeners = [];
      // connections are told (SSH disconnect), the others cut; whoever is left at the deadline is cut
      for (const c of clients.values()) {
        if (c.conn) c.conn.end();
        else c.socket.destroy();
      }
      await drainService({ servers, signal, clients: () => clients.size, cut: () => clients.forEach((c) => c.socket.destroy()) });
      ssh = null;
    },
    status(): ServiceStatus {
      const bindings = listeners.map((l) => l.address()).filter((a): a is net.AddressInfo => typeof a === 'object' && a !== null);
      return {
        is_active: active,
        bindings: active ? bindings.map((a) => ({ address: a.address, port: a.port, apply_proxy_config: false })) : null,
        host_keys: active ? hostKeys.map((k) => ({ path: k.path, fingerprint: k.fingerprint, algorithms: k.algorithms })) : null,
      };
    },
  };
}
