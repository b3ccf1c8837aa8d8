import 'reflect-metadata';
import { container as root, type DependencyContainer } from 'tsyringe';
import type { MikroORM } from '@mikro-orm/core';
import { TOKENS } from './tokens.js';
import { ChangeFeed } from './data/change-feed.js';
import type { FerryConfig } from './config/schema.js';
import type { Logger } from './logger.js';
import type { SecretsService } from './secrets/secret.js';
import { EventBus } from './events/event-bus.js';
import { FsHooks } from './events/fs-hooks.js';
import { PluginRegistry } from './plugins/registry.js';
import { ConnectionManager } from './vfs/connection-manager.js';
import { ACCOUNT_SESSIONS } from './accounts/account-sessions.js';
import { PasswordResetService } from './auth/password-reset.service.js';
import { registerEventServices } from './event-manager/register.js';
import { BackupService } from './backup/backup.service.js';
import { ShareService } from './shares/share.service.js';
import { ShareLoginService } from './shares/share-login.js';
import { ShareSessions } from './shares/share-sessions.js';
import { LoginService } from './auth/login.service.js';
import { BACKUP_SECTIONS, type BackupSectionSource } from './data/backup-section.js';
import { AccountBackupSections } from './accounts/accounts.backup.js';
import { ShareBackupSections } from './shares/shares.backup.js';
import { EventBackupSections } from './event-manager/events.backup.js';
import { IpListBackupSection } from './security/ip-lists.backup.js';
import { ServiceRunner } from './plugins/services.js';
import { FileSessions } from './vfs/file-sessions.service.js';
import { DefenderService } from './security/defender.service.js';

/** File sessions as service plugins open them (ServiceHost.sessions): the user's session held by one client connection. */
export interface ContainerParts {
  config: FerryConfig;
  logger: Logger;
  orm: MikroORM;
  secrets: SecretsService;
  instanceId: string;
}

/**
 * The only place that registers into tsyringe. Each app gets a child
 * container, so several apps (tests, cluster simulations) can live in one process.
 */
export function buildContainer(p: ContainerParts): DependencyContainer {
  const c = root.createChildContainer();
  const bus = new EventBus();
  bus.setErrorHandler((err, topic) => p.logger.error({ err, topic }, 'event listener failed'));
  c.registerInstance(TOKENS.Config, p.config);
  c.registerInstance(TOKENS.Logger, p.logger);
  c.registerInstance(TOKENS.Orm, p.orm);
  c.registerInstance(TOKENS.Secrets, p.secrets);
  c.registerInstance(TOKENS.EventBus, bus);
  c.registerInstance(TOKENS.FsHooks, new FsHooks());
  c.registerInstance(TOKENS.Plugins, new PluginRegistry());
  c.registerInstance(TOKENS.InstanceId, p.instanceId);
  // per-app singletons (a child container per app keeps apps apart in tests)
  const connections = new ConnectionManager(p.instanceId);
  c.registerInstance(ConnectionManager, connections);
  c.registerInstance(ACCOUNT_SESSIONS, connections);
  registerEventServices(c);
  // forgot-password mails are sent in the background: one service per app tracks them (idle() on stop)
  c.registerSingleton(PasswordResetService);
  // dumpdata/loaddata: each domain's sections, collected by BackupRegistry (restore order is each section's `order`)
  const backupSources: (new (...args: any[]) => BackupSectionSource)[] = [AccountBackupSections, ShareBackupSections, EventBackupSections, IpListBackupSection];
  for (const source of backupSources) {
    c.register<BackupSectionSource>(BACKUP_SECTIONS, { useClass: source });
  }
  // dumpdata for the event manager's backup action
  c.register(TOKENS.Backup, { useFactory: (d) => d.resolve(BackupService) });
  // the share store of the share expiration check (event action 18)
  c.register(TOKENS.Shares, { useFactory: (d) => d.resolve(ShareService) });
  // the logins of every front-end (LoginGate): one per app, like the defender and rate limiter it uses
  c.register(TOKENS.LoginService, { useFactory: (d) => d.resolve(LoginService) });
  c.register(TOKENS.ShareLogins, { useFactory: (d) => d.resolve(ShareLoginService) });
  // what service plugins reach (PluginHost.services, sdk/service.ts), and the services they register
  c.registerInstance(TOKENS.Services, new ServiceRunner());
  c.register(TOKENS.ServiceSessions, { useFactory: (d) => d.resolve(FileSessions) });
  c.register(TOKENS.ServiceShares, { useFactory: (d) => d.resolve(ShareSessions) });
  c.register(TOKENS.Defender, { useFactory: (d) => d.resolve(DefenderService) });
  c.register(TOKENS.AccountChanges, { useFactory: (d) => d.resolve(ChangeFeed) });
  return c;
}
