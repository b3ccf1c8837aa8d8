import { useCallback, useRef, useState } from 'react';
import { uploadFile, type UploadHandle } from './api';
import { formatSize, joinPath } from './format';
import { t } from './strings';

export interface UploadItem {
  id: number;
  name: string;
  size: number;
  sent: number;
  status: 'queued' | 'sending' | 'done' | 'failed';
  error?: string;
}

const PARALLEL = 3;

export interface UploadsState {
  items: UploadItem[];
  add(files: File[]): void;
  cancel(id: number): void;
  clear(): void;
}

/** How one file is sent: to `path`, reporting the bytes sent (the user's files by default; a public share's page sends into the share). */
export type SendFile = (path: string, file: File, onProgress: (sent: number) => void) => UploadHandle;

/** Uploads into `dir`, PARALLEL at a time, each with its progress; `onDone` after each finished file. */
export function useUploads(dir: string, onDone: () => void, send: SendFile = uploadFile): UploadsState {
  const [items, setItems] = useState<UploadItem[]>([]);
  const queue = useRef<{ id: number; file: File; dir: string }[]>([]);
  const running = useRef(new Map<number, UploadHandle>());
  const nextId = useRef(1);

  const patch = (id: number, p: Partial<UploadItem>) => setItems((list) => list.map((i) => (i.id === id ? { ...i, ...p } : i)));

  const pump = useCallback(() => {
    while (running.current.size < PARALLEL && queue.current.length) {
      const job = queue.current.shift()!;
      patch(job.id, { status: 'sending' });
      const h = send(joinPath(job.dir, job.file.name), job.file, (sent) => patch(job.id, { sent }));
      running.current.set(job.id, h);
      h.done
        .then(
          () => patch(job.id, { status: 'done', sent: job.file.size }),
          (err: Error) => patch(job.id, { status: 'failed', error: err.message }),
        )
        .finally(() => {
          running.current.delete(job.id);
          onDone();
          pump();
        });
    }
  }, [onDone, send]);

  return {
    items,
    add(files) {
      const added = files.map((file) => ({ id: nextId.current++, file, dir }));
      setItems((list) => [...list, ...added.map(({ id, file }) => ({ id, name: file.name, size: file.size, sent: 0, status: 'queued' as const }))]);
      queue.current.push(...added);
      pump();
    },
    cancel(id) {
      const h = running.current.get(id);
      if (h) h.abort();
      else {
        queue.current = queue.current.filter((j) => j.id !== id);
        patch(id, { status: 'failed', error: 'cancelled' });
      }
    },
    clear() {
      setItems((list) => list.filter((i) => i.status === 'queued' || i.status === 'sending'));
    },
  };
}

export function Uploads({ state }: { state: UploadsState }) {
  if (!state.items.length) return null;
  return (
    <section className="uploads" aria-labelledby="uploads-title">
      <div className="row">
        <h2 id="uploads-title">{t.uploads}</h2>
        <button type="button" onClick={state.clear}>
          {t.clearUploads}
        </button>
      </div>
      <ul>
        {state.items.map((u) => (
          <li key={u.id} className={`upload ${u.status}`}>
            <span className="upload-name">{u.name}</span>
            <progress max={u.size || 1} value={u.status === 'done' ? u.size || 1 : u.sent} aria-label={t.uploadProgress(u.name)} />
            <span className="upload-status" role={u.status === 'failed' ? 'alert' : undefined}>
              {u.status === 'done' ? t.uploadDone : u.status === 'failed' ? t.uploadFailed(u.error ?? '') : `${formatSize(u.sent)} / ${formatSize(u.size)}`}
            </span>
            {(u.status === 'queued' || u.status === 'sending') && (
              <button type="button" onClick={() => state.cancel(u.id)} aria-label={`${t.cancel} ${u.name}`}>
                {t.cancel}
              </button>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
