/** The virtual folders of a user or of a group: a row per folder (its name, where it is mounted, its own quota or -1). */
import { newFolderRow, type FolderRow } from './account-settings-model';
import { Field } from './Field';
import { listFolders } from './folders-api';
import { SUGGESTED, useKnownNames } from './known-names';
import { RowsEditor } from './RowsEditor';
import { t } from './strings';

const loadFolderNames = () => listFolders({ limit: SUGGESTED, offset: 0, order: 'ASC' }).then((got) => got.rows?.map((f) => f.name));

/** The existing folders are suggested when the admin may list them (`suggest`: manage_folders). */
export function VirtualFoldersEditor({
  idPrefix,
  rows,
  onChange,
  error,
  disabled,
  suggest,
  help,
}: {
  idPrefix: string;
  rows: FolderRow[];
  onChange: (rows: FolderRow[]) => void;
  error: string;
  disabled: boolean;
  suggest: boolean;
  help: string;
}) {
  const known = useKnownNames(suggest, loadFolderNames);
  const listId = `${idPrefix}-vf-known`;
  return (
    <>
      <RowsEditor
        legend={t.accountFolders}
        help={help}
        path="virtual_folders"
        error={error}
        rows={rows}
        onChange={onChange}
        disabled={disabled}
        newRow={newFolderRow}
        addLabel={t.addFolderMapping}
        rowLabel={(r) => t.folderMappingOf(r.name)}
        removeLabel={(r) => t.removeFolderMapping(r.name)}
        fields={(r, set, path, i) => (
          <>
            <Field id={`${idPrefix}-vf-name-${i}`} label={t.folderName} path={`${path}.name`} error={error}>
              {(c) => (
                <input
                  {...c}
                  list={known.length ? listId : undefined}
                  autoCapitalize="none"
                  spellCheck={false}
                  value={r.name}
                  onChange={(e) => set({ ...r, name: e.target.value })}
                />
              )}
            </Field>
            <Field id={`${idPrefix}-vf-path-${i}`} label={t.virtualPath} path={`${path}.virtual_path`} error={error}>
              {(c) => <input {...c} spellCheck={false} value={r.virtual_path} onChange={(e) => set({ ...r, virtual_path: e.target.value })} />}
            </Field>
            <Field id={`${idPrefix}-vf-size-${i}`} label={t.folderQuotaSize} path={`${path}.quota_size`} error={error}>
              {(c) => <input {...c} type="number" min={-1} value={r.quota_size} onChange={(e) => set({ ...r, quota_size: e.target.value })} />}
            </Field>
            <Field id={`${idPrefix}-vf-files-${i}`} label={t.folderQuotaFiles} path={`${path}.quota_files`} error={error}>
              {(c) => <input {...c} type="number" min={-1} value={r.quota_files} onChange={(e) => set({ ...r, quota_files: e.target.value })} />}
            </Field>
          </>
        )}
      />
      {known.length > 0 && (
        <datalist id={listId}>
          {known.map((n) => (
            <option key={n} value={n} />
          ))}
        </datalist>
      )}
    </>
  );
}
