import path from 'node:path';
import type { ActionTypeDef } from '@ferry/core';
import type { PluginHost } from '@ferry/core';

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** backup_<Weekday>_<hour>.json (UTC): one file per weekday and hour, overwritten a week later. */
export function backupFileName(d: Date): string {
  return `backup_${WEEKDAYS[d.getUTCDay()]}_${d.getUTCHours()}.json`;
}

/**
 * Type 4: dumps the data (the backup service's sections) to the backups
 * directory through the backup service's dumpToFile, exactly as dumpdata
 * with `output-file` does.
 */
export function backupAction(s: PluginHost): ActionTypeDef {
  return {
    type: 4,
    key: 'backup',
    create: () => ({
      async execute(ctx) {
        const backup = s.backup;
        const name = backupFileName(new Date(ctx.firedAt ?? Date.now()));
        const file = path.join(backup.backupsDir(), await backup.dumpToFile(name, await backup.dump(), false));
        ctx.logger.info({ file }, 'backup written');
        return { outputs: { BackupFile: file } };
      },
    }),
  };
}
