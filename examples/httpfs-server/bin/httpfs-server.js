#!/usr/bin/env node
/**
 * Command line entry point of the httpfs reference server.
 *
 *   httpfs-server --root DIR [--port 9999] [--address 127.0.0.1] [--prefix /api/v1]
 *                 [--username U --password P] [--api-key K]
 *                 [--tls-cert FILE --tls-key FILE] [--max-file-size BYTES] [--verbose]
 *
 * Secrets may come from the environment instead of the command line (where
 * other local users can read them in the process list): HTTPFS_PASSWORD,
 * HTTPFS_API_KEY.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startHttpFsServer } from '../src/server.js';

const USAGE = `usage: httpfs-server --root DIR [--port N] [--address ADDR] [--prefix /api/v1]
       [--username U --password P] [--api-key K] [--insecure-no-auth]
       [--tls-cert FILE --tls-key FILE] [--max-file-size BYTES] [--verbose]
env:   HTTPFS_PASSWORD, HTTPFS_API_KEY (used when the matching flag is absent)`;

/**
 * @param {string} msg
 * @returns {never}
 */
function fail(msg) {
  process.stderr.write(`httpfs-server: ${msg}\n${USAGE}\n`);
  process.exit(2);
}

function parse() {
  try {
    return parseArgs({
      options: {
        root: { type: 'string' },
        port: { type: 'string', default: '9999' },
        address: { type: 'string', default: '127.0.0.1' },
        prefix: { type: 'string', default: '/api/v1' },
        username: { type: 'string' },
        password: { type: 'string' },
        'api-key': { type: 'string' },
        'insecure-no-auth': { type: 'boolean', default: false },
        'tls-cert': { type: 'string' },
        'tls-key': { type: 'string' },
        'max-file-size': { type: 'string' },
        verbose: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    }).values;
  } catch (err) {
    return fail(/** @type {Error} */ (err).message);
  }
}
const values = parse();
if (values.help) {
  process.stdout.write(USAGE + '\n');
  process.exit(0);
}
const str = (/** @type {unknown} */ v) => (typeof v === 'string' ? v : undefined);
const root = str(values.root);
if (!root) fail('--root is required');
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) fail('--port must be an integer in 0-65535');
const maxFileSize = values['max-file-size'] === undefined ? undefined : Number(values['max-file-size']);
if (maxFileSize !== undefined && (!Number.isSafeInteger(maxFileSize) || maxFileSize < 0)) {
  fail('--max-file-size must be a non-negative integer');
}
const certFile = str(values['tls-cert']);
const keyFile = str(values['tls-key']);
if (Boolean(certFile) !== Boolean(keyFile)) fail('--tls-cert and --tls-key go together');

try {
  const running = await startHttpFsServer({
    root: /** @type {string} */ (root),
    port,
    address: str(values.address),
    prefix: str(values.prefix),
    username: str(values.username),
    password: str(values.password) ?? process.env.HTTPFS_PASSWORD,
    apiKey: str(values['api-key']) ?? process.env.HTTPFS_API_KEY,
    allowAnonymous: values['insecure-no-auth'] === true,
    tls: certFile && keyFile ? { cert: readFileSync(certFile), key: readFileSync(keyFile) } : undefined,
    maxFileSize,
    log: values.verbose ? (line) => process.stderr.write(line + '\n') : undefined,
  });
  process.stdout.write(`httpfs-server listening, endpoint ${running.url}\n`);
  const stop = () => running.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
} catch (err) {
  fail(/** @type {Error} */ (err).message);
}
