/** The sections of a user's settings, or of those a group gives its users: limits and quotas, virtual folders, filters (one set of components for both forms). */
import { GROUP_LIMITS, USER_LIMITS, type AccountSettings } from './account-settings-model';
import { LimitsForm } from './LimitsForm';
import { t } from './strings';
import { UserFiltersForm } from './UserFiltersForm';
import { VirtualFoldersEditor } from './VirtualFoldersEditor';

export function AccountSettingsSections({
  kind,
  settings: s,
  onChange,
  error,
  disabled,
  suggestFolders,
}: {
  kind: 'user' | 'group';
  settings: AccountSettings;
  onChange: (s: AccountSettings) => void;
  error: string;
  disabled: boolean;
  /** The admin may list the virtual folders (manage_folders): their names are suggested. */
  suggestFolders: boolean;
}) {
  const user = kind === 'user';
  const idPrefix = user ? 'u' : 'g';
  return (
    <>
      <LimitsForm
        idPrefix={idPrefix}
        keys={user ? USER_LIMITS : GROUP_LIMITS}
        limits={s.limits}
        onChange={(limits) => onChange({ ...s, limits })}
        pathPrefix={user ? '' : 'user_settings.'}
        error={error}
        disabled={disabled}
        help={user ? t.limitsHelp : t.groupLimitsHelp}
      />
      <VirtualFoldersEditor
        idPrefix={idPrefix}
        rows={s.folders}
        onChange={(folders) => onChange({ ...s, folders })}
        error={error}
        disabled={disabled}
        suggest={suggestFolders}
        help={user ? t.accountFoldersHelp : t.groupFoldersHelp}
      />
      <UserFiltersForm
        idPrefix={idPrefix}
        user={user}
        filters={s.filters}
        onChange={(filters) => onChange({ ...s, filters })}
        path={user ? 'filters' : 'user_settings.filters'}
        error={error}
        disabled={disabled}
      />
    </>
  );
}
