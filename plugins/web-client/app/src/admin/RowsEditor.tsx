/** A list of rows of a user's or a group's settings (virtual folders, file patterns, bandwidth limits, login hours), as a fieldset. */
import type { ReactNode } from 'react';
import { fieldOfMessage, names } from './field-message';

/**
 * The editor: a labelled group per row with its remove button, an add button.
 * `path` is the list's key path in the API's object: a message naming a
 * member of a row is shown at that row's field (`fields` passes the row's
 * path on to its Fields), one naming the list or a row as a whole here.
 */
export function RowsEditor<R>({
  legend,
  help,
  path,
  error,
  rows,
  onChange,
  disabled,
  newRow,
  addLabel,
  rowLabel,
  removeLabel,
  fields,
}: {
  legend: string;
  help?: string;
  path: string;
  error: string;
  rows: R[];
  onChange: (rows: R[]) => void;
  disabled: boolean;
  newRow: () => R;
  addLabel: string;
  rowLabel: (row: R, i: number) => string;
  removeLabel: (row: R, i: number) => string;
  fields: (row: R, set: (row: R) => void, rowPath: string, i: number) => ReactNode;
}) {
  const named = names(error, path) ? fieldOfMessage(error) : null;
  const atRowField = named !== null && /^\[\d+\]\./.test(named.slice(path.length));
  const set = (i: number, row: R) => onChange(rows.map((r, j) => (j === i ? row : r)));
  const helpId = `${path.replace(/[^a-z0-9]+/gi, '-')}-help`;
  return (
    <fieldset disabled={disabled} aria-describedby={help ? helpId : undefined}>
      <legend>{legend}</legend>
      {help && (
        <p id={helpId} className="muted">
          {help}
        </p>
      )}
      {named !== null && !atRowField && <p className="error">{error}</p>}
      {rows.map((row, i) => (
        <div className="perm-row" key={i} role="group" aria-label={rowLabel(row, i)}>
          {fields(row, (r) => set(i, r), `${path}[${i}]`, i)}
          <button type="button" aria-label={removeLabel(row, i)} onClick={() => onChange(rows.filter((_, j) => j !== i))}>
            ×
          </button>
        </div>
      ))}
      <button type="button" onClick={() => onChange([...rows, newRow()])}>
        {addLabel}
      </button>
    </fieldset>
  );
}
