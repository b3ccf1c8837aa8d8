import { useEffect, useState } from 'react';
import { Dialog } from '../Dialog';
import { formatSize } from '../format';
import { t } from './strings';
import { useQuotaScans } from './useQuotaScans';
import { getUser, resetUserTransfer, runningUserScans, scanUserQuota, type UserRow } from './users-api';
import { Notices } from './Field';

/** A user's used quota: size and files. */
export const usedOf = (u: UserRow) => t.folderUsed(formatSize(u.used_quota_size ?? 0), u.used_quota_files ?? 0);
const transferOf = (u: UserRow) => t.usedTransferIs(formatSize(u.used_upload_data_transfer ?? 0), formatSize(u.used_download_data_transfer ?? 0));

/**
 * A user's usage on their page, read apart from the form (a scan's result does
 * not undo the edits): the used quota with its scan ("scanning…" until the
 * server's list of scans no longer holds the user), the used upload and
 * download transfer with their reset (after a confirmation). The actions only
 * with quota_scans.
 */
export function UserUsage({ username, mayScan }: { username: string; mayScan: boolean }) {
  const [user, setUser] = useState<UserRow | null>(null);
  const [message, setMessage] = useState('');
  const [error, setError] = useState('');
  const [confirming, setConfirming] = useState(false);
  const scans = useQuotaScans(runningUserScans);
  const read = async () => {
    const got = await getUser(username);
    if (got.user) setUser(got.user);
    else setError(t.actionFailed(got.message ?? ''));
  };
  useEffect(() => {
    void read();
  }, [username]);
  const run = async (action: () => Promise<string | null>, done: string, then: () => void) => {
    setMessage('');
    setError('');
    const failed = await action();
    if (failed) return setError(t.actionFailed(failed));
    setMessage(done);
    then();
  };
  const scanning = scans.scanning.includes(username);

  return (
    <section aria-labelledby="u-usage">
      <h2 id="u-usage">{t.usage}</h2>
      <Notices message={message} error={error} />
      {user && (
        <dl>
          <dt>{t.usedQuota}</dt>
          <dd data-testid="user-used-quota">{scanning ? t.scanning : usedOf(user)}</dd>
          <dt>{t.usedTransfer}</dt>
          <dd data-testid="user-used-transfer">{transferOf(user)}</dd>
        </dl>
      )}
      {mayScan && (
        <div className="row">
          <button
            type="button"
            disabled={scanning}
            onClick={() =>
              void run(
                () => scanUserQuota(username),
                t.userScanStarted(username),
                () =>
                  scans.started(username, () => {
                    setMessage(t.userScanDone(username));
                    void read();
                  }),
              )
            }
          >
            {t.scanQuota}
          </button>
          <button type="button" onClick={() => setConfirming(true)}>
            {t.resetTransfer}
          </button>
        </div>
      )}
      {confirming && (
        <Dialog
          title={t.resetTransfer}
          submitLabel={t.resetTransfer}
          danger
          onSubmit={() => {
            setConfirming(false);
            void run(
              () => resetUserTransfer(username),
              t.transferReset(username),
              () => void read(),
            );
          }}
          onClose={() => setConfirming(false)}
        >
          <p>{t.confirmResetTransfer(username)}</p>
        </Dialog>
      )}
    </section>
  );
}
