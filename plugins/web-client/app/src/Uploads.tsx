import { useEffect, useRef, useState, type ChangeEvent, type DragEvent } from 'react';
import { api, uploadFile, type UploadHandle } from './api';
import { Dialog } from './Dialog';
import { fromDataTransfer, fromFiles, type Picked } from './drop';
import { formatSize } from './format';
import { t } from './strings';
import { TUS_THRESHOLD, tusChunkSize, tusUpload } from './tus';
import { formatSeconds, overall } from './upload-math';
import { isActive, UploadQueue, type ConflictChoice, type UploadBackend, type UploadItem } from './upload-queue';

/** The server side of the queue: listings, permissions (GET /api/v2/user/capabilities), folders, and the two ways of sending. */
export const userUploads: UploadBackend = {
  async names(dir) {
    const { data } = await api.GET('/api/v2/user/dirs', { params: { query: { path: dir } } });
    return new Set((data ?? []).map((e) => e.name));
  },
  async canOverwrite(dir) {
    const { data } = await api.GET('/api/v2/user/capabilities', { params: { query: { path: dir } } });
    return !!data && (data.permissions.includes('*') || data.permissions.includes('overwrite'));
  },
  async mkdir(path) {
    await api.POST('/api/v2/user/dirs', { params: { query: { path, mkdir_parents: true } } });
  },
  send(dest, file, onProgress, mkdirParents) {
    let inner: UploadHandle | undefined;
    let aborted = false;
    const done = (async () => {
      const chunk = file.size > TUS_THRESHOLD ? await tusChunkSize() : 0;
      if (aborted) throw new Error('cancelled');
      inner = chunk > 0 ? tusUpload(dest, file, { chunk, mkdirParents }, onProgress) : uploadFile(dest, file, onProgress, { mkdirParents });
      return inner.done;
    })();
    return {
      done,
      abort() {
        aborted = true;
        inner?.abort();
      },
    };
  },
};

export interface UploadsState {
  items: UploadItem[];
  conflict?: { item: UploadItem; canOverwrite: boolean };
  add(picked: Picked): void;
  resolve(id: number, choice: ConflictChoice, all: boolean): void;
  cancel(id: number): void;
  clear(): void;
}

/** The upload queue of the folder `dir` (UploadQueue) sending through `using` (the user's files by default; a public share's page sends into the share); `onDone` after each finished file. */
export function useUploads(dir: string, onDone: () => void, using: UploadBackend = userUploads): UploadsState {
  const [items, setItems] = useState<UploadItem[]>([]);
  const [conflict, setConflict] = useState<UploadsState['conflict']>();
  const done = useRef(onDone);
  done.current = onDone;
  const queue = useRef<UploadQueue | null>(null);
  queue.current ??= new UploadQueue(
    using,
    () => setItems(queue.current!.items()),
    () => done.current(),
  );
  const q = queue.current;
  useEffect(() => {
    let live = true;
    void q.conflict().then((c) => live && setConflict(c));
    return () => {
      live = false;
    };
  }, [items, q]);
  return {
    items,
    conflict,
    add: (picked) => void q.add(dir, picked),
    resolve: (id, choice, all) => void q.resolve(id, choice, all),
    cancel: (id) => q.cancel(id),
    clear: () => q.clear(),
  };
}

/** Props of the element files and folders are dropped on; `dragging` while something is over it. */
export function useDropZone(onPicked: (p: Picked) => void) {
  const [dragging, setDragging] = useState(false);
  const hasFiles = (e: DragEvent) => [...e.dataTransfer.types].includes('Files');
  return {
    dragging,
    props: {
      onDragOver(e: DragEvent) {
        if (!hasFiles(e)) return;
        e.preventDefault();
        e.dataTransfer.dropEffect = 'copy';
        setDragging(true);
      },
      onDragLeave(e: DragEvent) {
        if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setDragging(false);
      },
      onDrop(e: DragEvent) {
        if (!hasFiles(e)) return;
        e.preventDefault();
        setDragging(false);
        void fromDataTransfer(e.dataTransfer).then(onPicked);
      },
    },
  };
}

/** The buttons of the toolbar: files, and a folder (its structure kept). */
export function UploadButtons({ onPicked }: { onPicked: (p: Picked) => void }) {
  const pick = (e: ChangeEvent<HTMLInputElement>) => {
    if (e.target.files?.length) onPicked(fromFiles([...e.target.files]));
    e.target.value = '';
  };
  return (
    <>
      <label className="button">
        <input type="file" className="visually-hidden" ref={(el) => el?.setAttribute('webkitdirectory', '')} onChange={pick} />
        {t.uploadFolder}
      </label>
      <label className="button primary">
        <input type="file" multiple className="visually-hidden" onChange={pick} />
        {t.upload}
      </label>
    </>
  );
}

function statusText(u: UploadItem): string {
  switch (u.status) {
    case 'done':
      return t.uploadDone;
    case 'failed':
      return t.uploadFailed(u.error ?? '');
    case 'skipped':
      return t.uploadSkipped;
    case 'cancelled':
      return t.uploadCancelled;
    case 'checking':
    case 'queued':
      return t.uploadQueued;
    case 'conflict':
      return t.uploadConflict;
    default:
      return t.uploadSending(
        formatSize(u.sent),
        formatSize(u.size),
        u.rate > 0 ? formatSize(u.rate) : '',
        u.secondsLeft === undefined ? '' : formatSeconds(u.secondsLeft),
      );
  }
}

function ConflictDialog({ state }: { state: UploadsState }) {
  const c = state.conflict!;
  const [choice, setChoice] = useState<ConflictChoice>(c.canOverwrite ? 'overwrite' : 'keep');
  const [all, setAll] = useState(false);
  const options: [ConflictChoice, string][] = [
    ...(c.canOverwrite ? [['overwrite', t.conflictOverwrite] as [ConflictChoice, string]] : []),
    ['skip', t.conflictSkip],
    ['keep', t.conflictKeepBoth],
  ];
  return (
    <Dialog
      title={t.conflictTitle}
      submitLabel={t.conflictApply}
      onClose={() => state.resolve(c.item.id, 'skip', false)}
      onSubmit={() => state.resolve(c.item.id, choice, all)}
    >
      <p>{t.conflictText(c.item.label)}</p>
      <fieldset className="choices">
        <legend className="visually-hidden">{t.conflictTitle}</legend>
        {options.map(([value, label]) => (
          <label key={value} className="choice">
            <input type="radio" name="conflict" value={value} checked={choice === value} onChange={() => setChoice(value)} />
            {label}
          </label>
        ))}
      </fieldset>
      <label className="choice">
        <input type="checkbox" checked={all} onChange={(e) => setAll(e.target.checked)} />
        {t.conflictApplyAll}
      </label>
    </Dialog>
  );
}

/** The upload panel: overall progress, speed and time left, then each file with its own and a cancel button; the conflict question. */
export function Uploads({ state }: { state: UploadsState }) {
  if (!state.items.length) return null;
  const sum = overall(state.items.filter((u) => u.status !== 'skipped' && u.status !== 'cancelled').map((u) => ({ ...u, active: u.status === 'sending' })));
  const running = state.items.some((u) => isActive(u.status));
  return (
    <section className="uploads" aria-labelledby="uploads-title">
      <div className="row">
        <h2 id="uploads-title">{t.uploads}</h2>
        <button type="button" onClick={state.clear}>
          {t.clearUploads}
        </button>
      </div>
      <div className="upload upload-total">
        <span className="upload-name">{t.uploadTotal(state.items.length)}</span>
        <progress max={sum.size || 1} value={sum.size ? sum.sent : running ? 0 : 1} aria-label={t.uploadTotalProgress} />
        <span className="upload-status" aria-live="polite">
          {running
            ? t.uploadSending(
                formatSize(sum.sent),
                formatSize(sum.size),
                sum.rate > 0 ? formatSize(sum.rate) : '',
                sum.secondsLeft === undefined ? '' : formatSeconds(sum.secondsLeft),
              )
            : t.uploadAllDone}
        </span>
      </div>
      <ul>
        {state.items.map((u) => (
          <li key={u.id} className={`upload ${u.status}`}>
            <span className="upload-name" title={u.label}>
              {u.label}
            </span>
            <progress max={u.size || 1} value={u.status === 'done' ? u.size || 1 : u.sent} aria-label={t.uploadProgress(u.label)} />
            <span className="upload-status" role={u.status === 'failed' ? 'alert' : undefined}>
              {statusText(u)}
            </span>
            {isActive(u.status) && (
              <button type="button" onClick={() => state.cancel(u.id)} aria-label={t.cancelUpload(u.label)}>
                {t.cancel}
              </button>
            )}
          </li>
        ))}
      </ul>
      {state.conflict && <ConflictDialog key={state.conflict.item.id} state={state} />}
    </section>
  );
}
