import { useDeferredValue, type ReactNode } from 'react';
import { previewTemplate } from './event-model';
import { t } from './strings';

/**
 * The live preview of a template field: each text rendered in the browser by
 * Ferry's Go-template library against the sample event of `trigger`, or Go's
 * error message.
 */
export function TemplatePreview({ id, label, texts, trigger }: { id: string; label: string; texts: string[]; trigger: number }) {
  const shown = useDeferredValue(texts.join('\u0000'));
  const list = shown ? shown.split('\u0000') : [];
  if (!list.some((s) => s.includes('{{'))) return null;
  const results = list.map((s) => previewTemplate(s, trigger));
  const failed = results.find((r): r is { error: string } => 'error' in r);
  let body: ReactNode;
  if (failed) {
    body = (
      <p className="error" data-testid={`${id}-preview-error`}>
        {failed.error}
      </p>
    );
  } else {
    body = <pre data-testid={`${id}-preview`}>{results.map((r) => ('text' in r ? r.text : '')).join('\n')}</pre>;
  }
  return (
    <div className="template-preview" role="status" aria-label={t.previewOf(label)}>
      <small className="muted">{failed ? t.templateError : t.templatePreview(t.triggerName(trigger))}</small>
      {body}
    </div>
  );
}
