import { useEffect, useState, type KeyboardEvent } from 'react';
import { Dialog } from '../Dialog';
import { Checksums } from './Checksums';
import { fileUrl } from '../file-actions';
import { formatSize } from '../format';
import { t } from '../strings';
import { previewKind, textPreview, TEXT_PREVIEW_BYTES, type PreviewKind } from './kind';

export interface PreviewItem {
  path: string;
  name: string;
  size: number;
}

/**
 * The preview dialog of the files `items` (the previewable files of the
 * list, in its order), showing `items[index]`: images, the first bytes of a
 * text as text (never interpreted as HTML), audio and video with the
 * browser's controls (range requests), PDF in the browser's own viewer in a
 * frame (the API lets pages of its origin only frame a PDF sent inline).
 * Previous/next (buttons or the
 * arrow keys) walk the list; the checksums are computed on request.
 */
export function Preview({
  items,
  index,
  onIndex,
  onClose,
}: {
  items: readonly PreviewItem[];
  index: number;
  onIndex: (i: number) => void;
  onClose: () => void;
}) {
  const item = items[index]!;
  const kind = previewKind(item.name)!;
  const go = (d: number) => onIndex((index + d + items.length) % items.length);
  const keys = (e: KeyboardEvent) => {
    if (!(e.target instanceof HTMLElement) || e.target.closest('audio, video, button')) return;
    if (e.key === 'ArrowRight') go(1);
    else if (e.key === 'ArrowLeft') go(-1);
  };
  return (
    <Dialog title={t.previewOf(item.name)} onClose={onClose} className="preview">
      <div className="preview-body" onKeyDown={keys}>
        <p className="muted preview-meta">
          {formatSize(item.size)}
          {items.length > 1 && ` · ${t.position(index + 1, items.length)}`}
        </p>
        <PreviewContent key={item.path} kind={kind} item={item} />
        {items.length > 1 && (
          <div className="row preview-nav">
            <button type="button" onClick={() => go(-1)}>
              ‹ {t.previous}
            </button>
            <button type="button" onClick={() => go(1)}>
              {t.next} ›
            </button>
          </div>
        )}
        <Checksums key={`sum-${item.path}`} path={item.path} />
      </div>
    </Dialog>
  );
}

function PreviewContent({ kind, item }: { kind: PreviewKind; item: PreviewItem }) {
  const url = fileUrl(item.path, true);
  switch (kind) {
    case 'image':
      return <img className="preview-media" src={url} alt={item.name} />;
    case 'audio':
      return <audio className="preview-media" controls preload="metadata" src={url} aria-label={item.name} />;
    case 'video':
      return <video className="preview-media" controls preload="metadata" src={url} aria-label={item.name} />;
    case 'pdf':
      return <PdfPreview url={url} item={item} />;
    case 'text':
      return <TextPreview path={item.path} />;
  }
}

/**
 * A PDF in the browser's own viewer, in a frame of the file sent inline; a new tab and a download
 * as fallbacks. A browser without a viewer (navigator.pdfViewerEnabled false) would download the
 * framed file: it gets the links only.
 */
function PdfPreview({ url, item }: { url: string; item: PreviewItem }) {
  const viewer = navigator.pdfViewerEnabled !== false;
  return (
    <>
      {viewer && <iframe className="preview-pdf" src={url} title={item.name} />}
      <p className={viewer ? 'muted' : undefined}>
        {viewer ? t.pdfHelp : t.pdfNoViewer}{' '}
        <a href={url} target="_blank" rel="noopener">
          {t.openPdf}
        </a>
        {' · '}
        <a href={fileUrl(item.path)} download={item.name}>
          {t.download}
        </a>
      </p>
    </>
  );
}

/** The first TEXT_PREVIEW_BYTES of a text file (one Range request), as plain text. */
function TextPreview({ path }: { path: string }) {
  const [state, setState] = useState<{ text: string; truncated: boolean } | { error: string } | null>(null);
  useEffect(() => {
    const ctl = new AbortController();
    void (async () => {
      try {
        const r = await fetch(fileUrl(path, true), { headers: { Range: `bytes=0-${TEXT_PREVIEW_BYTES - 1}` }, signal: ctl.signal, credentials: 'same-origin' });
        if (!r.ok) return setState({ error: `HTTP ${r.status}` });
        const bytes = new Uint8Array(await r.arrayBuffer());
        const range = /\/(\d+)$/.exec(r.headers.get('content-range') ?? '');
        setState(textPreview(bytes.subarray(0, TEXT_PREVIEW_BYTES), range ? Number(range[1]) : bytes.length));
      } catch (err) {
        if (!ctl.signal.aborted) setState({ error: err instanceof Error ? err.message : String(err) });
      }
    })();
    return () => ctl.abort();
  }, [path]);
  if (!state) return <p className="muted">{t.loading}</p>;
  if ('error' in state)
    return (
      <p className="error" role="alert">
        {t.previewFailed(state.error)}
      </p>
    );
  return (
    <>
      <pre className="preview-text" tabIndex={0} aria-label={t.preview}>
        {state.text}
      </pre>
      {state.truncated && <p className="muted">{t.textTruncated(TEXT_PREVIEW_BYTES / 1024)}</p>}
    </>
  );
}
