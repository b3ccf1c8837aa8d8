import { injectAll, Lifecycle, scoped } from 'tsyringe';
import { BACKUP_SECTIONS, type BackupSection, type BackupSectionSource } from '../data/backup-section.js';

export type { BackupData, BackupSection, RestoreContext, RestoreMode, ValidateContext } from '../data/backup-section.js';

/**
 * The sections of dumpdata/loaddata, one registry per app: every
 * BackupSectionSource registered under BACKUP_SECTIONS (container.ts), checked
 * for duplicate scopes and keys.
 */
@scoped(Lifecycle.ContainerScoped)
export class BackupRegistry {
  private readonly sections = new Map<string, BackupSection<any>>();

  constructor(@injectAll(BACKUP_SECTIONS) sources: BackupSectionSource[]) {
    for (const source of sources) for (const s of source.sections()) this.register(s);
  }

  register(section: BackupSection<any>): void {
    if (this.sections.has(section.scope)) throw new Error(`backup section "${section.scope}" is already registered`);
    if (this.all().some((s) => s.key === section.key)) throw new Error(`backup key "${section.key}" is already used`);
    this.sections.set(section.scope, section);
  }

  get(scope: string): BackupSection<any> | undefined {
    return this.sections.get(scope);
  }

  byKey(key: string): BackupSection<any> | undefined {
    return this.all().find((s) => s.key === key);
  }

  /** Every section in restore order. */
  all(): BackupSection<any>[] {
    return [...this.sections.values()].sort((a, b) => a.order - b.order);
  }
}
