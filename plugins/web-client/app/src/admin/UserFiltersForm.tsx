/**
 * The filters of a user (reference.yaml UserFilters) or those a group gives
 * its users (BaseUserFilters, `user` false): access, files, bandwidth per
 * client address, web client and shares, passwords, hooks and account type.
 */
import {
  DAYS,
  FILTER_NUMBERS,
  HOOKS,
  LOGIN_METHODS,
  MFA_PROTOCOLS,
  PROTOCOLS,
  SHARE_PERMISSIONS,
  TLS_USERNAMES,
  USER_TYPES,
  WEB_CLIENT_OPTIONS,
  newAccessTimeRow,
  newBandwidthRow,
  newPatternRow,
  newSharePolicyRow,
  type FilterFields,
  type FilterFlag,
  type FilterNumber,
  type UserType,
} from './account-settings-model';
import { Checks, Field } from './Field';
import { RowsEditor } from './RowsEditor';
import { t } from './strings';

const NUMBER_LABELS: Record<FilterNumber, string> = {
  max_upload_file_size: t.maxUploadFileSize,
  password_expiration: t.passwordExpiration,
  password_strength: t.passwordStrength,
  default_shares_expiration: t.defaultSharesExpiration,
  max_shares_expiration: t.maxSharesExpiration,
  external_auth_cache_time: t.externalAuthCacheTime,
};
const FLAG_LABELS: Record<FilterFlag, string> = {
  allow_api_key_auth: t.allowApiKeyAuthUser,
  disable_fs_checks: t.disableFsChecks,
  is_anonymous: t.isAnonymous,
  require_password_change: t.requirePasswordChange,
};
// the section of each number and flag (records: a new one fails the build until it has one)
const NUMBER_SECTION: Record<FilterNumber, 'files' | 'web' | 'passwords' | 'other'> = {
  max_upload_file_size: 'files',
  default_shares_expiration: 'web',
  max_shares_expiration: 'web',
  password_expiration: 'passwords',
  password_strength: 'passwords',
  external_auth_cache_time: 'other',
};
const FLAG_SECTION: Record<FilterFlag, 'files' | 'web' | 'passwords' | 'other'> = {
  disable_fs_checks: 'files',
  allow_api_key_auth: 'web',
  require_password_change: 'passwords',
  is_anonymous: 'other',
};
const USER_ONLY: FilterFlag[] = ['require_password_change'];

export function UserFiltersForm({
  idPrefix,
  user,
  filters: f,
  onChange,
  path,
  error,
  disabled,
}: {
  idPrefix: string;
  /** A user's filters (else a group's: no user-only ones). */
  user: boolean;
  filters: FilterFields;
  onChange: (f: FilterFields) => void;
  /** The filters' key path in the API's object: 'filters' or 'user_settings.filters'. */
  path: string;
  error: string;
  disabled: boolean;
}) {
  const set = <K extends keyof FilterFields>(k: K, v: FilterFields[K]) => onChange({ ...f, [k]: v });
  const id = (k: string) => `${idPrefix}-f-${k}`;
  const numbers = (section: string) =>
    FILTER_NUMBERS.filter((k) => NUMBER_SECTION[k] === section).map((k) => (
      <Field key={k} id={id(k)} label={NUMBER_LABELS[k]} path={`${path}.${k}`} error={error}>
        {(c) => <input {...c} type="number" min={0} value={f.numbers[k]} onChange={(e) => set('numbers', { ...f.numbers, [k]: e.target.value })} />}
      </Field>
    ));
  const flags = (section: string) =>
    (Object.keys(FLAG_SECTION) as FilterFlag[])
      .filter((k) => FLAG_SECTION[k] === section && (user || !USER_ONLY.includes(k)))
      .map((k) => (
        <label key={k} className="check wide">
          <input id={id(k)} type="checkbox" checked={f.flags[k]} onChange={(e) => set('flags', { ...f.flags, [k]: e.target.checked })} />
          {FLAG_LABELS[k]}
        </label>
      ));
  const ipList = (k: 'allowed_ip' | 'denied_ip', label: string) => (
    <Field id={id(k)} label={label} path={`${path}.${k}`} error={error} help={t.ipFilterHelp}>
      {(c) => <textarea {...c} rows={3} spellCheck={false} value={f[k]} onChange={(e) => set(k, e.target.value)} />}
    </Field>
  );

  return (
    <>
      <fieldset disabled={disabled}>
        <legend>{t.accessFilters}</legend>
        <p className="muted">{user ? t.accessFiltersHelp : t.groupFiltersHelp}</p>
        {ipList('allowed_ip', t.allowedIpFilter)}
        {ipList('denied_ip', t.deniedIpFilter)}
        <Checks
          id={id('denied_protocols')}
          label={t.deniedProtocols}
          path={`${path}.denied_protocols`}
          error={error}
          choices={PROTOCOLS}
          value={f.denied_protocols}
          name={t.protocolName}
          onChange={(v) => set('denied_protocols', v)}
        />
        <Checks
          id={id('denied_login_methods')}
          label={t.deniedLoginMethods}
          path={`${path}.denied_login_methods`}
          error={error}
          choices={LOGIN_METHODS}
          value={f.denied_login_methods}
          name={t.loginMethodName}
          onChange={(v) => set('denied_login_methods', v)}
        />
        <Checks
          id={id('two_factor_protocols')}
          label={t.twoFactorProtocols}
          path={`${path}.two_factor_protocols`}
          error={error}
          choices={MFA_PROTOCOLS}
          value={f.two_factor_protocols}
          name={t.protocolName}
          onChange={(v) => set('two_factor_protocols', v)}
        />
        <Field id={id('ftp_security')} label={t.ftpSecurity} path={`${path}.ftp_security`} error={error}>
          {(c) => (
            <select {...c} value={f.ftp_security} onChange={(e) => set('ftp_security', Number(e.target.value) === 1 ? 1 : 0)}>
              {[0, 1].map((n) => (
                <option key={n} value={n}>
                  {t.ftpSecurityName(n)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field id={id('tls_username')} label={t.tlsUsername} path={`${path}.tls_username`} error={error}>
          {(c) => (
            <select {...c} value={f.tls_username} onChange={(e) => set('tls_username', e.target.value)}>
              {(TLS_USERNAMES as readonly string[]).concat(TLS_USERNAMES.includes(f.tls_username as never) ? [] : [f.tls_username]).map((v) => (
                <option key={v} value={v}>
                  {t.tlsUsernameName(v)}
                </option>
              ))}
            </select>
          )}
        </Field>
        {user && (
          <Field id={id('tls_certs')} label={t.tlsCerts} path={`${path}.tls_certs`} error={error}>
            {(c) => <textarea {...c} className="code" rows={3} spellCheck={false} value={f.tls_certs} onChange={(e) => set('tls_certs', e.target.value)} />}
          </Field>
        )}
      </fieldset>
      <RowsEditor
        legend={t.accessTimes}
        path={`${path}.access_time`}
        error={error}
        rows={f.access_time}
        onChange={(rows) => set('access_time', rows)}
        disabled={disabled}
        newRow={newAccessTimeRow}
        addLabel={t.addAccessTime}
        rowLabel={(_, i) => t.accessTimeOf(i + 1)}
        removeLabel={(_, i) => t.removeAccessTime(i + 1)}
        fields={(r, setRow, rowPath, i) => (
          <>
            <Field id={id(`at-day-${i}`)} label={t.dayOfWeek} path={`${rowPath}.day_of_week`} error={error}>
              {(c) => (
                <select {...c} value={r.day_of_week} onChange={(e) => setRow({ ...r, day_of_week: Number(e.target.value) as typeof r.day_of_week })}>
                  {DAYS.map((d) => (
                    <option key={d} value={d}>
                      {t.dayName(d)}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <Field id={id(`at-from-${i}`)} label={t.timeFrom} path={`${rowPath}.from`} error={error}>
              {(c) => <input {...c} type="time" value={r.from} onChange={(e) => setRow({ ...r, from: e.target.value })} />}
            </Field>
            <Field id={id(`at-to-${i}`)} label={t.timeTo} path={`${rowPath}.to`} error={error}>
              {(c) => <input {...c} type="time" value={r.to} onChange={(e) => setRow({ ...r, to: e.target.value })} />}
            </Field>
          </>
        )}
      />
      <RowsEditor
        legend={t.filePatterns}
        help={t.filePatternsHelp}
        path={`${path}.file_patterns`}
        error={error}
        rows={f.file_patterns}
        onChange={(rows) => set('file_patterns', rows)}
        disabled={disabled}
        newRow={newPatternRow}
        addLabel={t.addFilePattern}
        rowLabel={(r) => t.filePatternOf(r.path)}
        removeLabel={(r) => t.removeFilePattern(r.path)}
        fields={(r, setRow, rowPath, i) => (
          <>
            <Field id={id(`fp-path-${i}`)} label={t.patternPath} path={`${rowPath}.path`} error={error}>
              {(c) => <input {...c} spellCheck={false} value={r.path} onChange={(e) => setRow({ ...r, path: e.target.value })} />}
            </Field>
            <Field id={id(`fp-allowed-${i}`)} label={t.allowedPatterns} path={`${rowPath}.allowed_patterns`} error={error}>
              {(c) => <input {...c} spellCheck={false} value={r.allowed} onChange={(e) => setRow({ ...r, allowed: e.target.value })} />}
            </Field>
            <Field id={id(`fp-denied-${i}`)} label={t.deniedPatterns} path={`${rowPath}.denied_patterns`} error={error}>
              {(c) => <input {...c} spellCheck={false} value={r.denied} onChange={(e) => setRow({ ...r, denied: e.target.value })} />}
            </Field>
            <Field id={id(`fp-policy-${i}`)} label={t.denyPolicy} path={`${rowPath}.deny_policy`} error={error}>
              {(c) => (
                <select {...c} value={r.deny_policy} onChange={(e) => setRow({ ...r, deny_policy: Number(e.target.value) === 1 ? 1 : 0 })}>
                  {[0, 1].map((n) => (
                    <option key={n} value={n}>
                      {t.denyPolicyName(n)}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          </>
        )}
      />
      <fieldset disabled={disabled}>
        <legend>{t.filesFilters}</legend>
        {numbers('files')}
        <Field id={id('start_directory')} label={t.startDirectory} path={`${path}.start_directory`} error={error}>
          {(c) => <input {...c} spellCheck={false} value={f.start_directory} onChange={(e) => set('start_directory', e.target.value)} />}
        </Field>
        {flags('files')}
      </fieldset>
      <RowsEditor
        legend={t.bandwidthLimits}
        help={t.bandwidthLimitsHelp}
        path={`${path}.bandwidth_limits`}
        error={error}
        rows={f.bandwidth_limits}
        onChange={(rows) => set('bandwidth_limits', rows)}
        disabled={disabled}
        newRow={newBandwidthRow}
        addLabel={t.addBandwidthLimit}
        rowLabel={(_, i) => t.bandwidthLimitOf(i + 1)}
        removeLabel={(_, i) => t.removeBandwidthLimit(i + 1)}
        fields={(r, setRow, rowPath, i) => (
          <>
            <Field id={id(`bw-sources-${i}`)} label={t.bandwidthSources} path={`${rowPath}.sources`} error={error}>
              {(c) => <input {...c} spellCheck={false} value={r.sources} onChange={(e) => setRow({ ...r, sources: e.target.value })} />}
            </Field>
            <Field id={id(`bw-upload-${i}`)} label={t.bandwidthUpload} path={`${rowPath}.upload_bandwidth`} error={error}>
              {(c) => <input {...c} type="number" min={0} value={r.upload} onChange={(e) => setRow({ ...r, upload: e.target.value })} />}
            </Field>
            <Field id={id(`bw-download-${i}`)} label={t.bandwidthDownload} path={`${rowPath}.download_bandwidth`} error={error}>
              {(c) => <input {...c} type="number" min={0} value={r.download} onChange={(e) => setRow({ ...r, download: e.target.value })} />}
            </Field>
          </>
        )}
      />
      <fieldset disabled={disabled}>
        <legend>{t.webClientFilters}</legend>
        <Checks
          id={id('web_client')}
          label={t.webClientOptions}
          path={`${path}.web_client`}
          error={error}
          choices={WEB_CLIENT_OPTIONS}
          value={f.web_client}
          name={t.webClientOptionName}
          onChange={(v) => set('web_client', v)}
        />
        {flags('web')}
        {numbers('web')}
      </fieldset>
      <RowsEditor
        legend={t.sharePolicies}
        help={t.sharePoliciesHelp}
        path={`${path}.default_shares_policies`}
        error={error}
        rows={f.default_shares_policies}
        onChange={(rows) => set('default_shares_policies', rows)}
        disabled={disabled}
        newRow={newSharePolicyRow}
        addLabel={t.addSharePolicy}
        rowLabel={(r) => t.sharePolicyOf(r.path)}
        removeLabel={(r) => t.removeSharePolicy(r.path)}
        fields={(r, setRow, rowPath, i) => (
          <>
            <Field id={id(`sp-path-${i}`)} label={t.sharePath} path={`${rowPath}.path`} error={error}>
              {(c) => <input {...c} spellCheck={false} value={r.path} onChange={(e) => setRow({ ...r, path: e.target.value })} />}
            </Field>
            <Checks
              id={id(`sp-perms-${i}`)}
              label={t.sharePermissions}
              path={`${rowPath}.permissions`}
              error={error}
              choices={[...SHARE_PERMISSIONS, ...r.permissions.filter((p) => !(SHARE_PERMISSIONS as readonly string[]).includes(p))]}
              value={r.permissions}
              name={t.sharePermissionName}
              onChange={(permissions) => setRow({ ...r, permissions })}
            />
          </>
        )}
      />
      <fieldset disabled={disabled}>
        <legend>{t.passwordFilters}</legend>
        {numbers('passwords')}
        {flags('passwords')}
        {user && (
          <Field id={id('additional_emails')} label={t.additionalEmails} path={`${path}.additional_emails`} error={error}>
            {(c) => <textarea {...c} rows={2} spellCheck={false} value={f.additional_emails} onChange={(e) => set('additional_emails', e.target.value)} />}
          </Field>
        )}
      </fieldset>
      <fieldset disabled={disabled}>
        <legend>{t.otherFilters}</legend>
        {HOOKS.map((k) => (
          <label key={k} className="check wide">
            <input id={id(k)} type="checkbox" checked={f.hooks[k]} onChange={(e) => set('hooks', { ...f.hooks, [k]: e.target.checked })} />
            {t.hookName(k)}
          </label>
        ))}
        {numbers('other')}
        <Field id={id('user_type')} label={t.userType} path={`${path}.user_type`} error={error}>
          {(c) => (
            <select {...c} value={f.user_type} onChange={(e) => set('user_type', e.target.value as UserType)}>
              {USER_TYPES.map((v) => (
                <option key={v} value={v}>
                  {t.userTypeName(v)}
                </option>
              ))}
            </select>
          )}
        </Field>
        {flags('other')}
      </fieldset>
    </>
  );
}
