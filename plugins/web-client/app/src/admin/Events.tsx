import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { useLatestCall } from '../latest-call.js';
import { Field } from './Field';
import {
  FS_ACTIONS,
  FS_PROTOCOLS,
  FS_STATUSES,
  PROVIDER_ACTIONS,
  PROVIDER_OBJECTS,
  csvExportUrl,
  searchFsEvents,
  searchProviderEvents,
  type FsEvent,
  type FsQuery,
  type ProviderEvent,
  type ProviderQuery,
} from './events-api';
import { dateOfNanos, nanosOfLocal } from './event-time';
import { CursorPager, PageSettings, pageOf, useCursorPaging } from './paging';
import { t } from './strings';

type Kind = 'fs' | 'provider';
interface Filters {
  kind: Kind;
  from: string;
  to: string;
  action: string;
  username: string;
  ip: string;
  protocol: string;
  status: string;
  objectType: string;
  objectName: string;
}
const none: Filters = { kind: 'fs', from: '', to: '', action: '', username: '', ip: '', protocol: '', status: '', objectType: '', objectName: '' };

/** The API query of the filters (without the page). */
function queryOf(f: Filters): FsQuery | ProviderQuery {
  const common = {
    start_timestamp: nanosOfLocal(f.from),
    end_timestamp: nanosOfLocal(f.to),
    username: f.username.trim(),
    ip: f.ip.trim(),
    actions: f.action,
  };
  return f.kind === 'fs'
    ? { ...common, protocols: f.protocol, statuses: f.status }
    : { ...common, object_types: f.objectType, object_name: f.objectName.trim(), omit_object_data: true };
}

type Row = { id: string; time: Date; action: string; username: string; what: string; how: string; status: string; ip: string };
const rowOfFs = (e: FsEvent): Row => ({
  id: e.id,
  time: dateOfNanos(e.timestamp),
  action: e.action,
  username: e.username ?? '',
  what: e.virtual_target_path ? `${e.virtual_path ?? ''} → ${e.virtual_target_path}` : (e.virtual_path ?? e.ssh_cmd ?? ''),
  how: e.protocol ?? '',
  status: e.status ? t.fsStatus(e.status) : '',
  ip: e.ip ?? '',
});
const rowOfProvider = (e: ProviderEvent): Row => ({
  id: e.id,
  time: dateOfNanos(e.timestamp),
  action: e.action,
  username: e.username ?? '',
  what: e.object_name ?? '',
  how: e.object_type ?? '',
  status: '',
  ip: e.ip ?? '',
});

/**
 * The event search (view_events): file events or provider events with the
 * API's filters, newest first by default, paged by the server (the `from_id`
 * cursor), times in the browser's locale; the search exported as CSV.
 * Opened with a `username` (its URL's ?username=), that user's file events
 * are searched at once.
 */
export default function Events({ username = '' }: { username?: string }) {
  const [form, setForm] = useState<Filters>({ ...none, username });
  const [filters, setFilters] = useState<Filters | null>(username ? { ...none, username } : null);
  const paging = useCursorPaging('DESC');
  const { cursor, limit, order } = paging;
  const [rows, setRows] = useState<Row[] | null>(null);
  const [hasNext, setHasNext] = useState(false);
  const [error, setError] = useState('');

  // a search answering after a later one began (other filters, another page) is dropped
  const begin = useLatestCall();
  const load = useCallback(async () => {
    if (!filters) return;
    const current = begin();
    const page = { from_id: cursor, limit: paging.queryLimit, order };
    const q = queryOf(filters);
    const got =
      filters.kind === 'fs'
        ? await searchFsEvents({ ...(q as FsQuery), ...page }).then((r) => ({ ...r, rows: r.events?.map(rowOfFs) }))
        : await searchProviderEvents({ ...(q as ProviderQuery), ...page }).then((r) => ({ ...r, rows: r.events?.map(rowOfProvider) }));
    if (!current()) return;
    if (!got.rows) {
      // the server's message: a refused filter, or no plugin recording events on this server
      setRows(null);
      return setError(got.message ?? '');
    }
    const p = pageOf(got.rows, limit);
    setRows(p.rows);
    setHasNext(p.hasNext);
  }, [filters, cursor, limit, order, begin]);
  useEffect(() => {
    void load();
  }, [load]);

  const set = <K extends keyof Filters>(k: K, v: Filters[K]) => setForm({ ...form, [k]: v });
  const search = (e: FormEvent) => {
    e.preventDefault();
    setError('');
    setFilters({ ...form });
    paging.reset();
  };
  const select = (id: keyof Filters, label: string, values: readonly (string | number)[], name: (v: string) => string = (v) => v) => (
    <Field id={`ev-${id}`} label={label} path={id} error="">
      {(c) => (
        <select {...c} value={form[id]} onChange={(e) => set(id, e.target.value)}>
          <option value="">{t.anyValue}</option>
          {values.map((v) => (
            <option key={v} value={v}>
              {name(String(v))}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
  const fs = form.kind === 'fs';

  return (
    <>
      <h1>{t.events}</h1>
      <form className="user-form" role="search" aria-label={t.events} onSubmit={search}>
        <fieldset>
          <legend>{t.eventKind}</legend>
          <div className="row">
            {(['fs', 'provider'] as const).map((k) => (
              <label className="check" key={k}>
                <input type="radio" name="ev-kind" checked={form.kind === k} onChange={() => setForm({ ...form, kind: k, action: '' })} />
                {k === 'fs' ? t.fsEvents : t.providerEvents}
              </label>
            ))}
          </div>
          <Field id="ev-from" label={t.from} path="start_timestamp" error={error}>
            {(c) => <input {...c} type="datetime-local" step={1} value={form.from} onChange={(e) => set('from', e.target.value)} />}
          </Field>
          <Field id="ev-to" label={t.to} path="end_timestamp" error={error}>
            {(c) => <input {...c} type="datetime-local" step={1} value={form.to} onChange={(e) => set('to', e.target.value)} />}
          </Field>
          {select('action', t.action, fs ? FS_ACTIONS : PROVIDER_ACTIONS)}
          <Field id="ev-username" label={t.username} path="username" error={error}>
            {(c) => <input {...c} autoCapitalize="none" spellCheck={false} value={form.username} onChange={(e) => set('username', e.target.value)} />}
          </Field>
          <Field id="ev-ip" label={t.ip} path="ip" error={error}>
            {(c) => <input {...c} autoCapitalize="none" spellCheck={false} value={form.ip} onChange={(e) => set('ip', e.target.value)} />}
          </Field>
          {fs && select('protocol', t.protocol, FS_PROTOCOLS)}
          {fs && select('status', t.status, FS_STATUSES, (v) => t.fsStatus(Number(v)))}
          {!fs && select('objectType', t.objectType, PROVIDER_OBJECTS)}
          {!fs && (
            <Field id="ev-objectName" label={t.objectName} path="object_name" error={error}>
              {(c) => <input {...c} spellCheck={false} value={form.objectName} onChange={(e) => set('objectName', e.target.value)} />}
            </Field>
          )}
        </fieldset>
        <div className="row toolbar">
          <button type="submit" className="primary">
            {t.search}
          </button>
          <PageSettings idPrefix="ev" paging={paging} orderLabels={[t.oldestFirst, t.newestFirst]} />
          {filters && rows && (
            <a className="button" href={csvExportUrl(filters.kind, queryOf(filters))} download>
              {t.exportCsv}
            </a>
          )}
        </div>
      </form>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {rows && rows.length === 0 && <p role="status">{t.noEvents}</p>}
      {rows && rows.length > 0 && (
        <div className="scroll">
          <table className="grid" data-testid="events">
            <caption>{t.eventsFound(rows.length)}</caption>
            <thead>
              <tr>
                <th scope="col">{t.time}</th>
                <th scope="col">{t.action}</th>
                <th scope="col">{t.username}</th>
                <th scope="col">{filters?.kind === 'fs' ? t.path : t.objectName}</th>
                <th scope="col">{filters?.kind === 'fs' ? t.protocol : t.objectType}</th>
                {filters?.kind === 'fs' && <th scope="col">{t.status}</th>}
                <th scope="col">{t.ip}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.id}>
                  <th scope="row">
                    <time dateTime={r.time.toISOString()}>{r.time.toLocaleString()}</time>
                  </th>
                  <td>{r.action}</td>
                  <td>{r.username}</td>
                  <td>{r.what}</td>
                  <td>{r.how}</td>
                  {filters?.kind === 'fs' && <td>{r.status}</td>}
                  <td>{r.ip}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {rows && rows.length > 0 && <CursorPager paging={paging} hasNext={hasNext} lastKey={rows[rows.length - 1]!.id} />}
    </>
  );
}
