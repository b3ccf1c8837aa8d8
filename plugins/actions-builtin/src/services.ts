import { TOKENS, type EventAccounts, type EventRecorder, type EventShares, type LogRotator, type Mailer, type PluginContext, type RetentionChecks } from '@ferry/core';

/**
 * The dump side of core's backup service (the dumpdata route's), resolved at
 * TOKENS.Backup: `dump()` reads every section, `dumpToFile()` writes it into
 * the backups directory (mode 0600, temporary file renamed into place and
 * removed when the write fails) and returns the path relative to
 * `backupsDir()`.
 */
export interface BackupDumper {
  dump(): Promise<Record<string, unknown>>;
  dumpToFile(name: string, data: Record<string, unknown>, indent: boolean): Promise<string>;
  backupsDir(): string;
}

/** Core services the built-in actions use, resolved lazily through ctx.core. */
export interface Services {
  accounts(): EventAccounts;
  mailer(): Mailer;
  rotator(): LogRotator;
  retention(): RetentionChecks;
  recorder(): EventRecorder;
  backup(): BackupDumper | undefined;
  shares(): EventShares | undefined;
}

function optional<T>(ctx: PluginContext, token: symbol): T | undefined {
  try {
    return ctx.core.get<T>(token);
  } catch {
    return undefined;
  }
}

export function services(ctx: PluginContext): Services {
  return {
    accounts: () => ctx.core.get<EventAccounts>(TOKENS.EventAccounts),
    mailer: () => ctx.core.get<Mailer>(TOKENS.Mailer),
    rotator: () => ctx.core.get<LogRotator>(TOKENS.LogRotator),
    retention: () => ctx.core.get<RetentionChecks>(TOKENS.RetentionChecks),
    recorder: () => ctx.core.get<EventRecorder>(TOKENS.EventRecorder),
    backup: () => optional<BackupDumper>(ctx, TOKENS.Backup),
    shares: () => optional<EventShares>(ctx, TOKENS.Shares),
  };
}
