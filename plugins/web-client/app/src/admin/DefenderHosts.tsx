import { useCallback, useEffect, useState } from 'react';
import { Dialog } from '../Dialog';
import { listDefenderHosts, removeDefenderHost, type DefenderHost } from './security-api';
import { t } from './strings';
import { Notices } from './Field';

/**
 * The hosts the defender banned or scored (view_defender), each removable
 * (unbanned, its score cleared) with manage_defender.
 */
export function DefenderHosts({ canManage }: { canManage: boolean }) {
  const [hosts, setHosts] = useState<DefenderHost[] | null>(null);
  const [off, setOff] = useState(false);
  const [message, setMessage] = useState('');
  const [error, setError] = useState('');
  const [removing, setRemoving] = useState<DefenderHost | null>(null);

  const load = useCallback(async () => {
    const got = await listDefenderHosts();
    // 404: the defender is not enabled
    setOff(got.status === 404);
    if (got.hosts) setHosts(got.hosts);
    else if (got.status !== 404) setError(got.message ?? '');
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  const remove = async (host: DefenderHost) => {
    setError('');
    setMessage('');
    const failed = await removeDefenderHost(host.id);
    if (failed) setError(t.actionFailed(failed));
    else setMessage(t.hostUnbanned(host.ip));
    await load();
  };

  return (
    <section aria-labelledby="defender-title">
      <h2 id="defender-title">{t.defenderHosts}</h2>
      <p className="muted">{t.defenderHostsHelp}</p>
      <Notices message={message} error={error} />
      {off && <p>{t.defenderOff}</p>}
      {hosts && hosts.length === 0 && <p>{t.noDefenderHosts}</p>}
      {hosts && hosts.length > 0 && (
        <div className="scroll">
          <table className="grid" data-testid="defender-hosts">
            <caption>{t.defenderHosts}</caption>
            <thead>
              <tr>
                <th scope="col">{t.host}</th>
                <th scope="col">{t.score}</th>
                <th scope="col">{t.bannedUntil}</th>
                {canManage && <th scope="col">{t.actions}</th>}
              </tr>
            </thead>
            <tbody>
              {hosts.map((h) => (
                <tr key={h.id}>
                  <th scope="row">{h.ip}</th>
                  <td>{h.score ?? 0}</td>
                  <td>{h.ban_time ? new Date(h.ban_time).toLocaleString() : t.notBanned}</td>
                  {canManage && (
                    <td className="actions">
                      <button type="button" className="danger" aria-label={t.unbanHost(h.ip)} onClick={() => setRemoving(h)}>
                        {t.unban}
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {removing && (
        <Dialog
          title={t.unbanHost(removing.ip)}
          submitLabel={t.unban}
          danger
          onSubmit={() => {
            const host = removing;
            setRemoving(null);
            void remove(host);
          }}
          onClose={() => setRemoving(null)}
        >
          <p>{t.confirmUnban(removing.ip)}</p>
        </Dialog>
      )}
    </section>
  );
}
