import type { ImapFlow, ImapFlowOptions } from 'imapflow';
import type { ActionTypeDef, PluginHost, UserFiles } from '@ferry/core';
import { runSignal } from '@ferry/core';
import { ADDRESS, contentTypeOf, folderPath, imapOptionsSchema, type ImapOptions, type ImapPluginConfig, type TlsMode } from './config.schema.js';
import { composeMessage } from './message.js';

/** Where and as whom an action connects, after the plugin config's defaults are applied. */
export interface ImapConnection {
  host: string;
  port: number;
  tls: TlsMode;
  username: string;
  password: string;
  skipTlsVerify: boolean;
}

/**
 * The action's server, or the plugin config's: an action with its own host
 * uses only its own settings and credentials (the plugin config's password
 * is never sent to another server); an action without one uses the plugin
 * config's server, with its own username and password when it sets them.
 */
export function connectionOf(o: ImapOptions, d: ImapPluginConfig): ImapConnection {
  const own = !!o.host;
  const tls = (own ? (o.tls ?? 2) : (o.tls ?? d.tls)) as TlsMode;
  const port = (own ? o.port : (o.port ?? d.port)) || (tls === 1 ? 993 : 143);
  const password = typeof o.password === 'string' ? o.password : '';
  return {
    host: own ? o.host! : d.host,
    port,
    tls,
    username: o.username || d.username,
    password: o.username ? password : d.password,
    skipTlsVerify: own ? !!o.skip_tls_verify : (o.skip_tls_verify ?? d.skip_tls_verify),
  };
}

function addresses(list: string[]): string[] {
  const out: string[] = [];
  for (const [i, raw] of list.entries()) {
    const v = raw.trim();
    if (!v) continue;
    if (!ADDRESS.test(v)) throw new Error(`email[${i}] rendered to ${JSON.stringify(v)}, which is not an email address`);
    out.push(v);
  }
  return out;
}

/**
 * imapflow and its dependencies keep about 15 MB resident once imported: loaded
 * on the first run of an IMAP action, not when the plugin (on by default) loads.
 */
let imapflow: Promise<typeof import('imapflow')> | undefined;
const loadImapFlow = () => (imapflow ??= import('imapflow'));

/** Connects and logs in; a failed connect closes the client (else its socket would hold the process until the server's timeout). */
async function open(c: ImapConnection, timeoutMs: number, signal: AbortSignal): Promise<ImapFlow> {
  const options: ImapFlowOptions = {
    host: c.host,
    port: c.port,
    secure: c.tls === 1,
    doSTARTTLS: c.tls === 2 ? true : c.tls === 0 ? false : undefined,
    tls: { rejectUnauthorized: !c.skipTlsVerify },
    auth: { user: c.username, pass: c.password },
    logger: false,
    disableAutoIdle: true,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  };
  const { ImapFlow } = await loadImapFlow();
  const client = new ImapFlow(options);
  // errors after a failed command are reported by the command; an unhandled 'error' event would crash the process
  client.on('error', () => undefined);
  const onAbort = () => client.close();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    await client.connect();
    return client;
  } catch (err) {
    client.close();
    const e = err as Error & { authenticationFailed?: boolean; code?: string; responseText?: string };
    if (signal.aborted) throw err;
    if (e.authenticationFailed) {
      throw new Error(`IMAP login of "${c.username}" on ${c.host}:${c.port} failed: authentication failed${e.responseText ? ` (${e.responseText})` : ''}`);
    }
    throw new Error(`cannot connect to the IMAP server ${c.host}:${c.port}: ${e.code ? `${e.code} ` : ''}${e.message}`);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/**
 * Type 16 (`imap_config`): composes a MIME message (nodemailer's
 * MailComposer) whose attachments are streamed from the event user's files,
 * and APPENDs it to a folder of an IMAP account (imapflow), creating and
 * subscribing the folder when it is missing.
 */
export function imapActionDef(config: ImapPluginConfig, host: PluginHost): ActionTypeDef<ImapOptions> {
  return {
    type: 16,
    key: 'imap',
    optionsKey: 'imap_config',
    optionsSchema: imapOptionsSchema(config),
    secretFields: ['password'],
    templateFields: ['email[]', 'subject', 'body', 'attachments[]', 'target_folder'],
    create: (o) => ({
      async execute(ctx) {
        const conn = connectionOf(o, config);
        const timeout = o.timeout ?? config.timeout;
        const run = runSignal(ctx.signal, timeout * 1000);
        const signal = run.signal;
        const where = `${conn.host}:${conn.port}`;
        let folder: string[];
        try {
          folder = folderPath(o.target_folder ?? '');
        } catch (err) {
          throw new Error(`target_folder rendered to ${JSON.stringify(o.target_folder)}, which ${(err as Error).message}`);
        }
        const to = addresses(o.email ?? []);
        // a template may render nothing (`{{if .X}}/path{{end}}`): no attachment
        const attachments = (o.attachments ?? []).filter((a) => a.trim());
        let files: UserFiles | undefined;
        let client: ImapFlow | undefined;
        const onAbort = () => client?.close();
        signal.addEventListener('abort', onAbort, { once: true });
        const started = Date.now();
        try {
          const paths: string[] = [];
          if (attachments.length) {
            if (!ctx.username) throw new Error('attachments: files can only be attached on an event that concerns a user (this execution has none)');
            files = await host.files.open(ctx.username);
            for (const a of attachments) {
              try {
                paths.push(files.path(a));
              } catch (err) {
                throw new Error(`attachment ${JSON.stringify(a)} is not a valid path: ${(err as Error).message}`);
              }
            }
          }
          client = await open(conn, timeout * 1000, signal);
          const from = config.from || (ADDRESS.test(conn.username) ? conn.username : `ferry@${conn.host}`);
          const msg = await composeMessage({
            from,
            to,
            subject: o.subject.replace(/[\r\n]+/g, ' ').trim(),
            body: o.body,
            html: (o.content_type ?? contentTypeOf(o.body)) === 1,
            attachments: paths,
            files,
            limit: config.max_attachments_size,
            signal,
          });
          let created = false;
          if (folder.join('/') !== 'INBOX') {
            created = (await client.mailboxCreate(folder)).created;
            if (created) await client.mailboxSubscribe(folder);
          }
          const res = await client.append(folder, msg.raw, [], new Date());
          if (!res) throw new Error('the server did not accept the APPEND');
          ctx.logger.info(
            {
              server: where,
              username: conn.username,
              folder: folder.join('/'),
              folderCreated: created,
              uid: res.uid,
              size: msg.raw.length,
              attachments: msg.names,
              elapsed: Date.now() - started,
            },
            'message appended to the IMAP folder',
          );
          await client.logout().catch(() => undefined);
        } catch (err) {
          if (run.timedOut) throw new Error(`the IMAP action timed out after ${timeout} s (${where})`);
          if (ctx.signal.aborted) throw new Error(`the IMAP action was cancelled: ${(ctx.signal.reason as Error)?.message ?? 'aborted'}`);
          const e = err as Error & { responseText?: string; serverResponseCode?: string };
          const detail = e.responseText && !e.message.includes(e.responseText) ? ` (${e.responseText})` : '';
          throw new Error(
            e.message.startsWith('IMAP login') || e.message.startsWith('cannot connect')
              ? e.message
              : `IMAP ${where}, folder ${folder.join('/')}: ${e.message}${detail}`,
          );
        } finally {
          signal.removeEventListener('abort', onAbort);
          run.dispose();
          client?.close();
          await files?.close().catch(() => undefined);
        }
      },
    }),
  };
}
