import { Suspense, lazy, useCallback, useState } from 'react';
import type { operations } from '../../generated/api';
import { api, errorMessage } from '../api';
import { Dialog } from '../Dialog';
import { prefetchCharts, prefetchTopUsers } from './charts-api';
import { DEFAULT_RANGE } from './charts-data';
import { can, type AdminSession } from './session';
import { t } from './strings';
import { usePolling } from './usePolling';

type Status = operations['get_api_v2_status']['responses'][200]['content']['application/json'];
type Connection = operations['get_api_v2_connections']['responses'][200]['content']['application/json'][number];
type Service = { bindings: { address: string; port: number }[] | null; error?: string; is_active: boolean };

/** The charts and uPlot: loaded on first use, outside the console's first load. */
const Charts = lazy(() => import('./Charts'));

/** How often the dashboard asks again (status and connections). */
export const REFRESH_MS = 5000;

const isService = (v: unknown): v is Service => !!v && typeof v === 'object' && 'bindings' in v && 'is_active' in v;
const time = (ms: number | undefined) => (ms ? new Date(ms).toLocaleString() : '');

/** Server status (GET /api/v2/status) and live connections (GET /api/v2/connections, close: DELETE), refreshed every few seconds. */
export function Dashboard({ session }: { session: AdminSession }) {
  const [status, setStatus] = useState<Status | null>(null);
  const [conns, setConns] = useState<Connection[] | null>(null);
  const [updated, setUpdated] = useState('');
  const [error, setError] = useState('');
  const [closing, setClosing] = useState<Connection | null>(null);
  const seeStatus = can(session, 'view_status');
  const seeConns = can(session, 'view_conns');
  const mayClose = can(session, 'close_conns');
  // the charts' requests sent with the first render, while their code (uPlot) downloads, not after it
  useState(() => {
    if (can(session, 'view_events')) prefetchCharts(DEFAULT_RANGE);
    if (can(session, 'view_users')) prefetchTopUsers();
  });

  const load = useCallback(async () => {
    const [s, c] = await Promise.all([
      seeStatus ? api.GET('/api/v2/status') : Promise.resolve(null),
      seeConns ? api.GET('/api/v2/connections') : Promise.resolve(null),
    ]);
    if (s?.data) setStatus(s.data);
    if (c?.data) setConns(c.data);
    const failed = [s, c].find((r) => r && !r.data);
    setError(failed ? t.actionFailed(errorMessage(failed.error, String(failed.response.status))) : '');
    setUpdated(new Date().toLocaleTimeString());
  }, [seeStatus, seeConns]);
  usePolling(load, REFRESH_MS);

  const close = async (c: Connection) => {
    setClosing(null);
    const { response, error: body } = await api.DELETE('/api/v2/connections/{connectionID}', { params: { path: { connectionID: c.connection_id } } });
    if (!response.ok) setError(t.actionFailed(errorMessage(body, String(response.status))));
    await load();
  };

  const services = status ? Object.entries(status).filter((e): e is [string, Service] => isService(e[1])) : [];
  return (
    <>
      <h1>{t.dashboard}</h1>
      <p className="muted" aria-live="off">
        {updated && t.updatedAt(updated)}
      </p>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {seeStatus && status && (
        <section aria-labelledby="status-title" className="card">
          <h2 id="status-title">{t.serverStatus}</h2>
          <dl className="facts">
            <dt>{t.database}</dt>
            <dd data-testid="database-status" className={status.data_provider.is_active ? 'ok' : 'bad'}>
              {status.data_provider.is_active
                ? t.databaseUp(status.data_provider.driver)
                : t.databaseDown(status.data_provider.driver, status.data_provider.error ?? '')}
            </dd>
            <dt>{t.defender}</dt>
            <dd>{status.defender.is_active ? t.enabled : t.disabled}</dd>
            <dt>{t.rateLimiters}</dt>
            <dd>{status.rate_limiters.is_active ? `${t.enabled} (${status.rate_limiters.protocols.join(', ')})` : t.disabled}</dd>
            <dt>{t.allowList}</dt>
            <dd>{status.allow_list.is_active ? t.enabled : t.disabled}</dd>
          </dl>
          <table className="grid">
            <caption>{t.services}</caption>
            <thead>
              <tr>
                <th scope="col">{t.service}</th>
                <th scope="col">{t.state}</th>
                <th scope="col">{t.bindings}</th>
              </tr>
            </thead>
            <tbody>
              {services.map(([name, s]) => (
                <tr key={name}>
                  <th scope="row">{name}</th>
                  <td className={s.is_active ? 'ok' : 'muted'}>
                    {s.is_active ? t.active : t.inactive}
                    {s.error ? ` (${s.error})` : ''}
                  </td>
                  <td>{s.bindings?.length ? s.bindings.map((b) => `${b.address || '*'}:${b.port}`).join(', ') : t.noBindings}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
      {seeConns && conns && (
        <section aria-labelledby="conns-title" className="card">
          <h2 id="conns-title">{t.connections}</h2>
          {conns.length === 0 ? (
            <p>{t.noConnections}</p>
          ) : (
            <div className="scroll">
              <table className="grid" data-testid="connections">
                <thead>
                  <tr>
                    <th scope="col">{t.user}</th>
                    <th scope="col">{t.protocol}</th>
                    <th scope="col">{t.address}</th>
                    <th scope="col">{t.connectedSince}</th>
                    <th scope="col">{t.lastActivity}</th>
                    <th scope="col">{t.transfers}</th>
                    {mayClose && <th scope="col">{t.actions}</th>}
                  </tr>
                </thead>
                <tbody>
                  {conns.map((c) => (
                    <tr key={c.connection_id}>
                      <th scope="row">{c.username}</th>
                      <td>{c.protocol}</td>
                      <td>{c.remote_address}</td>
                      <td>{time(c.connection_time)}</td>
                      <td>{time(c.last_activity)}</td>
                      <td>{(c.active_transfers ?? []).map((x) => t.transfer(x.operation_type ?? '', x.path ?? '')).join('; ')}</td>
                      {mayClose && (
                        <td>
                          <button type="button" className="danger" aria-label={t.closeConnection(c.username, c.protocol ?? '')} onClick={() => setClosing(c)}>
                            {t.close}
                          </button>
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </section>
      )}
      {(can(session, 'view_events') || can(session, 'view_users')) && (
        <Suspense fallback={<p aria-busy="true">{t.loading}</p>}>
          <Charts session={session} />
        </Suspense>
      )}
      {closing && (
        <Dialog title={t.close} submitLabel={t.close} danger onSubmit={() => void close(closing)} onClose={() => setClosing(null)}>
          <p>{t.confirmClose(closing.username, closing.protocol ?? '')}</p>
        </Dialog>
      )}
    </>
  );
}
