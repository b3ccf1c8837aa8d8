import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { useLatestCall } from '../latest-call.js';
import { Dialog } from '../Dialog';
import { IpListEntryForm, protocolNames } from './IpListEntryForm';
import { CursorPager, PageSettings, pageOf, useCursorPaging } from './paging';
import { IP_LIST_TYPES, deleteIpListEntry, listIpList, type IpListEntry, type IpListType } from './security-api';
import { t } from './strings';
import { Notices } from './Field';

/**
 * The IP lists (manage_ip_lists): one list at a time (allow list, defender
 * lists, rate limiter safe list), paged by the server (the `from` cursor),
 * filtered by the start of the address; entries added, edited, deleted.
 */
export function IpLists() {
  const [type, setType] = useState<IpListType>(1);
  const [rows, setRows] = useState<IpListEntry[] | null>(null);
  const [hasNext, setHasNext] = useState(false);
  const paging = useCursorPaging();
  const { cursor, limit, order } = paging;
  const [query, setQuery] = useState('');
  const [filter, setFilter] = useState('');
  const [message, setMessage] = useState('');
  const [error, setError] = useState('');
  const [editing, setEditing] = useState<IpListEntry | 'new' | null>(null);
  const [deleting, setDeleting] = useState<IpListEntry | null>(null);

  // a page answering after a later one was asked for (another list, filter or page) is dropped
  const begin = useLatestCall();
  const load = useCallback(async () => {
    const current = begin();
    const got = await listIpList(type, { filter, from: cursor, limit: paging.queryLimit, order });
    if (!current()) return;
    if (!got.entries) return setError(t.actionFailed(got.message ?? ''));
    const page = pageOf(got.entries, limit);
    setRows(page.rows);
    setHasNext(page.hasNext);
  }, [type, filter, cursor, limit, order, begin]);
  useEffect(() => {
    void load();
  }, [load]);

  const clear = () => {
    setMessage('');
    setError('');
  };
  const find = (e: FormEvent) => {
    e.preventDefault();
    clear();
    setFilter(query.trim());
    paging.reset();
  };
  const remove = async (entry: IpListEntry) => {
    clear();
    const failed = await deleteIpListEntry(type, entry.ipornet);
    if (failed) setError(t.actionFailed(failed));
    else setMessage(t.entryDeleted(entry.ipornet));
    await load();
  };
  const list = t.ipListName(type);

  return (
    <section aria-labelledby="iplists-title">
      <div className="title-row">
        <h2 id="iplists-title">{t.ipLists}</h2>
        <button
          type="button"
          className="primary"
          onClick={() => {
            clear();
            setEditing('new');
          }}
        >
          {t.addEntry}
        </button>
      </div>
      <form className="toolbar" role="search" onSubmit={find}>
        <label htmlFor="ip-type">{t.ipListType}</label>
        <select
          id="ip-type"
          value={type}
          onChange={(e) => {
            clear();
            setEditing(null);
            setType(Number(e.target.value) as IpListType);
            paging.reset();
          }}
        >
          {IP_LIST_TYPES.map((n) => (
            <option key={n} value={n}>
              {t.ipListName(n)}
            </option>
          ))}
        </select>
        <label htmlFor="ip-find">{t.findIp}</label>
        <input id="ip-find" type="search" autoCapitalize="none" spellCheck={false} value={query} onChange={(e) => setQuery(e.target.value)} />
        <button type="submit">{t.find}</button>
        <PageSettings idPrefix="ip" paging={paging} />
      </form>
      <p className="muted">{t.ipListHelp(type)}</p>
      <Notices message={message} error={error} />
      {editing && (
        <IpListEntryForm
          key={`${type}-${editing === 'new' ? '' : editing.ipornet}`}
          type={type}
          entry={editing === 'new' ? null : editing}
          onDone={() => setEditing(null)}
          onSaved={(ip, added) => {
            setEditing(null);
            setMessage(added ? t.entryAdded(ip) : t.entrySaved(ip));
            void load();
          }}
        />
      )}
      {rows && rows.length === 0 && !error && <p>{t.noEntries}</p>}
      {rows && rows.length > 0 && (
        <div className="scroll">
          <table className="grid" data-testid="ip-list">
            <caption>{t.entriesOf(list)}</caption>
            <thead>
              <tr>
                <th scope="col">{t.ipOrNet}</th>
                {type === 2 && <th scope="col">{t.mode}</th>}
                <th scope="col">{t.protocols}</th>
                <th scope="col">{t.description}</th>
                <th scope="col">{t.lastUpdate}</th>
                <th scope="col">{t.actions}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((e) => (
                <tr key={e.ipornet}>
                  <th scope="row">{e.ipornet}</th>
                  {type === 2 && <td>{e.mode === 2 ? t.modeDeny : t.modeAllow}</td>}
                  <td>{protocolNames(e.protocols ?? 0)}</td>
                  <td>{e.description}</td>
                  <td>{e.updated_at ? new Date(e.updated_at).toLocaleString() : ''}</td>
                  <td className="actions">
                    <button
                      type="button"
                      aria-label={t.editEntry(e.ipornet)}
                      onClick={() => {
                        clear();
                        setEditing(e);
                      }}
                    >
                      {t.edit}
                    </button>
                    <button type="button" className="danger" aria-label={t.deleteEntry(e.ipornet)} onClick={() => setDeleting(e)}>
                      {t.delete}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {rows && rows.length > 0 && <CursorPager paging={paging} hasNext={hasNext} lastKey={rows[rows.length - 1]!.ipornet} />}
      {deleting && (
        <Dialog
          title={t.deleteEntry(deleting.ipornet)}
          submitLabel={t.delete}
          danger
          onSubmit={() => {
            const entry = deleting;
            setDeleting(null);
            void remove(entry);
          }}
          onClose={() => setDeleting(null)}
        >
          <p>{t.confirmDeleteEntry(deleting.ipornet, list)}</p>
        </Dialog>
      )}
    </section>
  );
}
