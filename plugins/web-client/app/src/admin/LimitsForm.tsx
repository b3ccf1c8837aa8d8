/** The limits and quotas of a user, or those a group gives its users (user_settings): one number each, 0 for none. */
import type { LimitFields, LimitKey } from './account-settings-model';
import { Field } from './Field';
import { t } from './strings';

const LABELS: Record<LimitKey, string> = {
  quota_size: t.quotaSize,
  quota_files: t.quotaFiles,
  max_sessions: t.maxSessions,
  upload_bandwidth: t.uploadBandwidth,
  download_bandwidth: t.downloadBandwidth,
  upload_data_transfer: t.uploadDataTransfer,
  download_data_transfer: t.downloadDataTransfer,
  total_data_transfer: t.totalDataTransfer,
  expires_in: t.expiresIn,
};

/** `keys`: the limits shown; `pathPrefix`: where they are in the API's object ('' for a user, 'user_settings.' for a group). */
export function LimitsForm({
  idPrefix,
  keys,
  limits,
  onChange,
  pathPrefix,
  error,
  disabled,
  help,
}: {
  idPrefix: string;
  keys: readonly LimitKey[];
  limits: LimitFields;
  onChange: (limits: LimitFields) => void;
  pathPrefix: string;
  error: string;
  disabled: boolean;
  help: string;
}) {
  return (
    <fieldset disabled={disabled}>
      <legend>{t.limits}</legend>
      <p className="muted">{help}</p>
      {keys.map((k) => (
        <Field
          key={k}
          id={`${idPrefix}-${k}`}
          label={LABELS[k]}
          path={`${pathPrefix}${k}`}
          error={error}
          help={k === 'expires_in' ? t.expiresInHelp : undefined}
        >
          {(c) => <input {...c} type="number" min={0} value={limits[k] ?? '0'} onChange={(e) => onChange({ ...limits, [k]: e.target.value })} />}
        </Field>
      ))}
    </fieldset>
  );
}
