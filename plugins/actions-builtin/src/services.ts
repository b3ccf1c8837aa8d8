import { TOKENS, type EventAccounts, type EventRecorder, type EventShares, type LogRotator, type Mailer, type PluginContext, type RetentionChecks } from '@ferry/core';

/** The dump side of the backup service registered at TOKENS.Backup. */
export interface BackupDumper {
  dump(): Promise<unknown>;
}

interface CoreConfig {
  common: { data_dir: string; backups_dir: string };
}

/** Core services the built-in actions use, resolved lazily through ctx.core. */
export interface Services {
  accounts(): EventAccounts;
  mailer(): Mailer;
  rotator(): LogRotator;
  retention(): RetentionChecks;
  recorder(): EventRecorder;
  config(): CoreConfig;
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
    config: () => ctx.core.get<CoreConfig>(TOKENS.Config),
    backup: () => optional<BackupDumper>(ctx, TOKENS.Backup),
    shares: () => optional<EventShares>(ctx, TOKENS.Shares),
  };
}
