#!/usr/bin/env node
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config/load.js';
import { createApp } from './app.js';
import { createLogger } from './logger.js';
import { TerminalLog } from './ops/terminal-log.js';
import { migrate, openOrm, ormOptionsFromConfig } from './data/orm.js';
import { buildInfo } from './build-info.js';
import { PluginLoadError } from './plugins/registry.js';
import { tuneHeapGrowth } from './util/heap.js';
import { idleSettler } from './vfs/idle-settle.js';

const USAGE = `usage: ferry <command> [--config FILE]

commands:
  serve          start the server
  initprovider   create or migrate the database, then exit
options:
  --config FILE  configuration file (YAML or JSON) merged over config/default.yaml
  --version      print the version and exit
`;

/** Readable log lines: stdout is a terminal and the log goes there; FERRY_LOG_FORMAT (json, pretty) decides otherwise. */
function useTerminalLog(logFile: string | undefined): boolean {
  if (logFile) return false;
  const format = process.env.FERRY_LOG_FORMAT;
  if (format === 'json' || format === 'pretty') return format === 'pretty';
  return process.stdout.isTTY === true;
}

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { config: { type: 'string', short: 'c' }, version: { type: 'boolean', short: 'v' }, help: { type: 'boolean', short: 'h' } },
    });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.version) {
    const b = buildInfo();
    process.stdout.write(`ferry ${b.version} (commit ${b.commit_hash}, built ${b.build_date})\n`);
    return 0;
  }
  const cmd = positionals[0];
  if (values.help || !cmd) {
    process.stdout.write(USAGE);
    return values.help ? 0 : 2;
  }
  if (cmd !== 'serve' && cmd !== 'initprovider') {
    process.stderr.write(`unknown command "${cmd}"\n${USAGE}`);
    return 2;
  }
  let loaded;
  try {
    loaded = loadConfig({ file: values.config });
  } catch (err) {
    process.stderr.write(`ferry: ${(err as Error).message}\n`);
    return err instanceof ConfigError ? 78 : 1;
  }
  const { config, baseDir } = loaded;
  // readable lines and a banner in a terminal; JSON lines otherwise (files, pipes, services), or when FERRY_LOG_FORMAT=json
  const terminal = useTerminalLog(config.log.file)
    ? new TerminalLog(process.stdout, { color: !process.env.NO_COLOR && process.stdout.isTTY === true })
    : undefined;
  const logger = createLogger({ level: config.log.level, file: config.log.file, stream: terminal });
  if (cmd === 'initprovider') {
    const orm = await openOrm(ormOptionsFromConfig(config));
    try {
      const applied = await migrate(orm);
      logger.info({ migrations: applied }, applied.length ? 'database initialised' : 'database already up to date');
    } finally {
      await orm.close(true);
    }
    return 0;
  }
  const heapFlag = tuneHeapGrowth(config.common.heap_growing_percent);
  if (heapFlag) logger.debug({ flag: heapFlag }, 'V8 heap growth set (common.heap_growing_percent)');
  let app;
  try {
    app = await createApp({ config, baseDir, logger });
    await app.start();
    // memory a burst of work left is given back once the server is idle (vfs/idle-settle.ts)
    idleSettler.start();
    if (terminal) process.stdout.write(terminal.banner());
  } catch (err) {
    const msg = err instanceof PluginLoadError ? err.message : `start failed: ${(err as Error).message}`;
    logger.fatal({ err: err instanceof PluginLoadError ? undefined : err }, msg);
    process.stderr.write(`ferry: ${msg}\n`);
    await app?.stop().catch(() => {});
    return 1;
  }
  const shutdown = async (signal: string) => {
    logger.info({ signal }, 'shutting down');
    idleSettler.stop();
    await app.stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  return -1;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (err) => {
    process.stderr.write(`ferry: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
