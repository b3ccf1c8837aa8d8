import type { DependencyContainer } from 'tsyringe';
import { TOKENS } from '../tokens.js';
import { EventManager } from './event-manager.js';
import { EventScheduler } from './scheduler.js';
import { EventRecorder } from './recorder.js';
import { RetentionChecks } from './retention-checks.js';
import { Mailer } from '../ops/mailer.js';
import { LogRotator } from '../ops/log-rotator.js';
import { FsFactory } from '../vfs/fs-factory.js';
import { DbEventAccounts } from './accounts.js';
import { UserFilesService } from '../vfs/user-files.js';
import { EventSearchRegistry } from '../events/event-search.registry.js';
import { EventHistoryService } from './event-history.js';

/**
 * Registers the event manager's per-app singletons (by class and by token)
 * into an app's child container. Called from buildContainer only.
 */
export function registerEventServices(c: DependencyContainer): void {
  const single = <T>(token: symbol, cls: new (...a: any[]) => T) => {
    c.registerSingleton(cls);
    c.register(token, { useFactory: (d) => d.resolve(cls) });
  };
  single(TOKENS.EventManager, EventManager);
  single(TOKENS.EventScheduler, EventScheduler);
  single(TOKENS.EventRecorder, EventRecorder);
  c.registerInstance(TOKENS.EventSearch, new EventSearchRegistry());
  single(TOKENS.EventHistory, EventHistoryService);
  single(TOKENS.RetentionChecks, RetentionChecks);
  single(TOKENS.Mailer, Mailer);
  c.register(TOKENS.LogRotator, { useClass: LogRotator });
  c.register(TOKENS.FsFactory, { useClass: FsFactory });
  c.register(TOKENS.EventAccounts, { useClass: DbEventAccounts });
  c.register(TOKENS.UserFiles, { useClass: UserFilesService });
}

/**
 * Wiring with the app lifecycle. `attach` (at app creation, after plugins
 * registered) subscribes the event manager and the recorder to the bus and
 * installs the fs hooks, so apps driven through inject (tests) react to
 * events too; `startScheduler` (app start) arms the minute timer; `detach`
 * (app stop) stops the scheduler, drains the queue and closes the mailer.
 */
export const eventServicesLifecycle = {
  attach(c: DependencyContainer): void {
    // with a persistent event store (event-search plugin) reports read it: no in-memory copy
    if (!c.resolve<EventSearchRegistry>(TOKENS.EventSearch).configured) c.resolve(EventRecorder).start();
    c.resolve(EventManager).start();
  },
  startScheduler(c: DependencyContainer): void {
    const cfg = c.resolve(EventManager).config;
    if (cfg.scheduler) c.resolve(EventScheduler).start();
  },
  async detach(c: DependencyContainer): Promise<void> {
    c.resolve(EventScheduler).stop();
    await c.resolve(EventManager).stop();
    c.resolve(EventRecorder).stop();
    c.resolve(Mailer).close();
  },
};
