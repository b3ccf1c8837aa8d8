import { chmod, mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ActionTypeDef } from '@ferry/core';
import type { Services } from './services.js';

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** backup_<Weekday>_<hour>.json (UTC): one file per weekday and hour, overwritten a week later. */
export function backupFileName(d: Date): string {
  return `backup_${WEEKDAYS[d.getUTCDay()]}_${d.getUTCHours()}.json`;
}

/** Type 4: dumps the data (the backup service's sections) to the backups directory. */
export function backupAction(s: Services): ActionTypeDef {
  return {
    type: 4,
    key: 'backup',
    create: () => ({
      async execute(ctx) {
        const backup = s.backup();
        if (!backup) throw new Error('backups are not available: no backup service is registered');
        const dir = s.config().common.backups_dir;
        await mkdir(dir, { recursive: true, mode: 0o700 });
        const file = path.join(dir, backupFileName(new Date(ctx.firedAt ?? Date.now())));
        const data = await backup.dump();
        const tmp = `${file}.tmp-${process.pid}-${Date.now()}`;
        await writeFile(tmp, JSON.stringify(data), { mode: 0o600 });
        await chmod(tmp, 0o600);
        await rename(tmp, file);
        ctx.logger.info({ file }, 'backup written');
        return { outputs: { BackupFile: file } };
      },
    }),
  };
}
