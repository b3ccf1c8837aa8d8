import { useCallback, useEffect, useMemo, useRef, useState, type ChangeEvent, type DragEvent, type KeyboardEvent } from 'react';
import { useLatestCall } from '../latest-call.js';
import { Icon } from '../Icon';
import { isDir, sortEntries, type Entry } from '../entries';
import { parentOf } from '../file-paths';
import { crumbs, formatDate, formatSize, joinPath } from '../format';
import { folderKey, rowAfterKey } from '../list-keys';
import { parseRoute, routePath } from '../routes';
import { t } from '../strings';
import { fromDataTransfer, fromFiles } from '../drop';
import { Uploads, useUploads } from '../Uploads';
import { ShareLogin } from './ShareLogin';
import { fileUrl, listDir, shareState, shareUploads, shareUrl, type PublicShare, type ShareState } from './shareApi';

const canRead = (scope: number) => scope === 1 || scope === 3;
const canWrite = (scope: number) => scope === 2 || scope === 3;
/** How often an open share page renews its session (shorter than httpd.token_lifetime, 20 minutes by default). */
const RENEW_MS = 4 * 60_000;
const exhausted = (s: PublicShare) => s.max_tokens > 0 && s.used_tokens >= s.max_tokens;

/** The message of a share that cannot be opened. */
function Closed({ text }: { text: string }) {
  return (
    <main id="content" className="center">
      <div className="card">
        <h1>{t.pubSharedFiles}</h1>
        <p className="error" role="alert">
          {text}
        </p>
      </div>
    </main>
  );
}

/**
 * The public page of a share (/web/client/pub/<id>/<dir>) for external
 * parties, without a user session: the share's password or email-code
 * prompt, then its description and limits, its folders, downloads and, for
 * write shares, uploads with progress.
 */
export default function PubShare({ shareId, dir: initialDir }: { shareId: string; dir: string }) {
  const [state, setState] = useState<ShareState | null>(null);
  const [dir, setDir] = useState(initialDir);

  useEffect(() => {
    void shareState(shareId).then(setState, () => setState({ kind: 'error', status: 0, message: t.networkError }));
    const pop = () => {
      const r = parseRoute(location.pathname);
      if (r.kind === 'pub') setDir(r.dir);
    };
    window.addEventListener('popstate', pop);
    return () => window.removeEventListener('popstate', pop);
  }, [shareId]);

  useEffect(() => {
    document.title = state?.kind === 'open' ? t.pubTitle(state.share.name) : t.pubSharedFiles;
  }, [state]);

  const navigate = useCallback(
    (to: string) => {
      setDir(to);
      const url = routePath({ kind: 'pub', shareId, dir: to });
      if (location.pathname !== url) history.pushState(null, '', url);
    },
    [shareId],
  );

  if (!state) {
    return (
      <main className="center" aria-busy="true">
        <p>{t.loading}</p>
      </main>
    );
  }
  switch (state.kind) {
    case 'not-found':
      return <Closed text={t.pubNotFound} />;
    case 'refused':
      return <Closed text={state.reason === 'expired' ? t.pubExpired : state.reason === 'address' ? t.pubAddress : t.pubDenied(state.message)} />;
    case 'error':
      return <Closed text={state.status ? t.unexpected(state.status) : state.message} />;
    case 'credentials':
      return <ShareLogin id={shareId} password={state.password} emailCodes={state.emailCodes} onAnswer={setState} />;
    case 'open':
      return <OpenShare share={state.share} dir={dir} onNavigate={navigate} onState={setState} />;
  }
}

function OpenShare({
  share,
  dir,
  onNavigate,
  onState,
}: {
  share: PublicShare;
  dir: string;
  onNavigate: (dir: string) => void;
  onState: (s: ShareState) => void;
}) {
  const [entries, setEntries] = useState<Entry[] | null>(null);
  const [browsable, setBrowsable] = useState(true);
  const [error, setError] = useState('');
  const [dragging, setDragging] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  const readable = canRead(share.scope);
  const writable = canWrite(share.scope);
  const used = exhausted(share);

  // what answers after a later load began (another folder opened meanwhile) is dropped
  const begin = useLatestCall();
  const load = useCallback(async () => {
    if (!readable || used) return;
    const current = begin();
    // the session first (renewed): a request without it would meet the share's Basic challenge, and the browser's prompt
    // (and the share again: its uses left change with every download and upload)
    const now = await shareState(share.id);
    if (!current()) return;
    onState(now);
    if (now.kind !== 'open') return;
    const r = await listDir(share.id, dir);
    if (!current()) return;
    if (r.entries) {
      setEntries(sortEntries(r.entries, { key: 'name', asc: true }));
      setError('');
    } else if (r.status === 400) {
      // not a share of one folder: its files are downloaded together
      setBrowsable(false);
      setEntries([]);
    } else if (r.status === 401 || r.status === 403) {
      // the session ended, or the share changed (expired, used up): ask the share again
      const again = await shareState(share.id);
      if (current()) onState(again);
    } else {
      setEntries([]);
      setError(r.message);
    }
  }, [share.id, dir, readable, used, onState, begin]);

  useEffect(() => {
    setEntries(null);
    void load();
    heading.current?.focus();
  }, [load]);

  // keeps the session (and its cookie) alive while the page is open, e.g. during long uploads
  useEffect(() => {
    const timer = window.setInterval(() => {
      void shareState(share.id).then(onState);
    }, RENEW_MS);
    return () => window.clearInterval(timer);
  }, [share.id, onState]);

  const backend = useMemo(() => shareUploads(share.id, readable), [share.id, readable]);
  const uploads = useUploads(readable ? dir : '/', () => void load(), backend);

  const left = share.max_tokens ? Math.max(0, share.max_tokens - share.used_tokens) : 0;
  const title = dir === '/' ? share.name : (crumbs(dir).at(-1)?.name ?? share.name);

  const drop = (ev: DragEvent) => {
    ev.preventDefault();
    setDragging(false);
    void fromDataTransfer(ev.dataTransfer).then((picked) => uploads.add(picked));
  };

  return (
    <>
      <a className="skip" href="#content">
        {t.skipToContent}
      </a>
      <header className="bar">
        <span className="brand">{t.appName}</span>
        <span className="who">{t.pubSharedFiles}</span>
      </header>
      <main id="content" className="files pub">
        {readable && browsable && !used && (
          <nav aria-label={t.breadcrumbs}>
            <ol className="crumbs">
              <li>
                <a
                  href={routePath({ kind: 'pub', shareId: share.id, dir: '/' })}
                  aria-current={dir === '/' ? 'page' : undefined}
                  onClick={(ev) => {
                    ev.preventDefault();
                    onNavigate('/');
                  }}
                >
                  {share.name}
                </a>
              </li>
              {crumbs(dir).map((c, i, all) => (
                <li key={c.path}>
                  <a
                    href={routePath({ kind: 'pub', shareId: share.id, dir: c.path })}
                    aria-current={i === all.length - 1 ? 'page' : undefined}
                    onClick={(ev) => {
                      ev.preventDefault();
                      onNavigate(c.path);
                    }}
                  >
                    {c.name}
                  </a>
                </li>
              ))}
            </ol>
          </nav>
        )}
        <h1 ref={heading} tabIndex={-1}>
          {title}
        </h1>
        {share.description && dir === '/' && <p className="pub-description">{share.description}</p>}
        <ul className="pub-limits" aria-label={t.pubLimits}>
          <li>{share.expires_at ? t.pubExpires(formatDate(new Date(share.expires_at).toISOString())) : t.pubNoExpiry}</li>
          <li>{share.max_tokens ? t.pubUsesLeft(left, share.max_tokens) : t.pubUnlimited}</li>
        </ul>
        {used ? (
          <p className="error banner" role="alert">
            {t.pubExhausted}
          </p>
        ) : (
          <>
            <div className="toolbar">
              {readable && (
                <a className="button" href={shareUrl(share.id, true)} download>
                  {t.pubDownloadAll}
                </a>
              )}
              {readable && browsable && dir !== '/' && (
                <a className="button" href={shareUrl(share.id, true, dir)} download>
                  {t.pubDownloadFolder}
                </a>
              )}
              {readable && !browsable && (
                <a className="button primary" href={shareUrl(share.id, false)} download>
                  {t.pubDownloadShare}
                </a>
              )}
            </div>
            {error && (
              <div className="error banner" role="alert">
                <span>{error}</span>
              </div>
            )}
            {writable && (
              <div
                className={`dropzone${dragging ? ' dragging' : ''}`}
                data-testid="dropzone"
                onDragOver={(ev) => {
                  ev.preventDefault();
                  setDragging(true);
                }}
                onDragLeave={() => setDragging(false)}
                onDrop={drop}
              >
                {!readable && <p>{t.pubUploadOnly}</p>}
                <p>
                  {t.pubDropHere}{' '}
                  <label className="button primary">
                    <input
                      type="file"
                      multiple
                      className="visually-hidden"
                      onChange={(e: ChangeEvent<HTMLInputElement>) => {
                        if (e.target.files) uploads.add(fromFiles([...e.target.files]));
                        e.target.value = '';
                      }}
                    />
                    {t.pubChooseFiles}
                  </label>
                </p>
              </div>
            )}
            <Uploads state={uploads} />
            {readable && browsable && <Listing share={share} dir={dir} entries={entries} onNavigate={onNavigate} />}
            {readable && !browsable && <p className="muted">{t.pubNoBrowse}</p>}
          </>
        )}
      </main>
    </>
  );
}

function Listing({ share, dir, entries, onNavigate }: { share: PublicShare; dir: string; entries: Entry[] | null; onNavigate: (dir: string) => void }) {
  if (entries === null) return <p className="muted">{t.loading}</p>;
  if (!entries.length) return <p className="muted">{t.emptyFolder}</p>;
  // the keys of the file list: arrows, Page Up/Down, Home/End move between the entries' links;
  // Backspace or Alt+Up goes up a folder
  const onKeyDown = (ev: KeyboardEvent<HTMLTableSectionElement>) => {
    if (folderKey(ev) === 'parent') {
      if (dir === '/') return;
      ev.preventDefault();
      return onNavigate(parentOf(dir));
    }
    const links = [...ev.currentTarget.querySelectorAll<HTMLAnchorElement>('td.col-name a')];
    const index = links.indexOf(document.activeElement as HTMLAnchorElement);
    if (index < 0) return;
    const rowHeight = links[index]!.closest('tr')?.getBoundingClientRect().height || 40;
    const next = rowAfterKey(ev, index, links.length, Math.floor(window.innerHeight / rowHeight) - 1);
    if (next === null) return;
    ev.preventDefault();
    links[next]!.focus();
    links[next]!.scrollIntoView({ block: 'nearest' });
  };
  return (
    <table className="pub-table">
      <caption className="visually-hidden">{t.pubSharedFiles}</caption>
      <thead>
        <tr>
          <th scope="col">{t.name}</th>
          <th scope="col" className="col-size">
            {t.size}
          </th>
          <th scope="col" className="col-modified">
            {t.modified}
          </th>
        </tr>
      </thead>
      <tbody onKeyDown={onKeyDown}>
        {entries.map((e) => {
          const path = joinPath(dir, e.name);
          return (
            <tr key={e.name}>
              <td className="col-name">
                {isDir(e) ? (
                  <a
                    href={routePath({ kind: 'pub', shareId: share.id, dir: path })}
                    onClick={(ev) => {
                      ev.preventDefault();
                      onNavigate(path);
                    }}
                  >
                    <Icon name="folder" />
                    {e.name}
                  </a>
                ) : (
                  <a href={fileUrl(share.id, path)} download={e.name} aria-label={`${t.download} ${e.name}`}>
                    <Icon name="file" />
                    {e.name}
                  </a>
                )}
              </td>
              <td className="col-size">{isDir(e) ? t.folder : formatSize(e.size)}</td>
              <td className="col-modified">{formatDate(e.last_modified, t.lang, 'narrow')}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
