import { useEffect, useRef, type FormEvent, type ReactNode } from 'react';
import { t } from './strings';

/**
 * A modal dialog (the native <dialog>: focus kept inside, Escape closes it) with a form; without
 * `submitLabel` it only shows things, with a Close button (`className` sizes it, e.g. the preview).
 */
export function Dialog({
  title,
  children,
  submitLabel,
  danger,
  onSubmit,
  onClose,
  className,
}: {
  title: string;
  children?: ReactNode;
  submitLabel?: string;
  danger?: boolean;
  onSubmit?: () => void;
  onClose: () => void;
  className?: string;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    return () => d?.close();
  }, []);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    onSubmit?.();
  };
  return (
    <dialog ref={ref} aria-labelledby="dialog-title" onCancel={onClose} className={className}>
      <form onSubmit={submit}>
        <h2 id="dialog-title">{title}</h2>
        {children}
        <div className="row">
          <button type="button" onClick={onClose}>
            {submitLabel ? t.cancel : t.close}
          </button>
          {submitLabel && (
            <button type="submit" className={danger ? 'danger' : 'primary'}>
              {submitLabel}
            </button>
          )}
        </div>
      </form>
    </dialog>
  );
}
