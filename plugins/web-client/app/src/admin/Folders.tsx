import { formatSize } from '../format';
import { Field } from './Field';
import {
  createFolder,
  deleteFolder,
  getFolder,
  listFolders,
  runningFolderScans,
  scanFolderQuota,
  updateFolder,
  type FolderInput,
  type FolderRow,
} from './folders-api';
import { NameAndDescription, NamedForm, useNamedForm } from './NamedForm';
import { NamedList } from './NamedList';
import { adminRoutePath } from './routes';
import { StorageForm } from './StorageForm';
import { emptyStorage, filesystemInputOf, storageFieldsOf, usesLocalRoot, type StorageFields } from './storage-model';
import { t } from './strings';
import { useQuotaScans } from './useQuotaScans';

const usedOf = (f: FolderRow) => t.folderUsed(formatSize(f.used_quota_size ?? 0), f.used_quota_files ?? 0);
const usersOf = (f: FolderRow) => [...(f.users ?? []).map(t.folderUserRef), ...(f.groups ?? []).map(t.folderGroupRef)].join(', ');

/**
 * The virtual folders (manage_folders): name, mapped path, description, used
 * quota, the users and groups using them; a quota scan per folder when the
 * admin has quota_scans ("scanning…" until it ends, then the used quota read
 * again); delete with a confirmation (the server refuses a
 * folder still in use).
 */
export function Folders({ canScan, onOpen }: { canScan: boolean; onOpen: (name: string | null) => void }) {
  const scans = useQuotaScans(runningFolderScans);
  return (
    <NamedList<FolderRow>
      idPrefix="folders"
      texts={{
        title: t.folders,
        add: t.addFolder,
        find: t.findFolder,
        none: t.noFolders,
        noSuch: t.noSuchFolder,
        caption: t.foldersPageOf,
        deleteLabel: t.deleteFolder,
        confirmDelete: t.confirmDeleteFolder,
        deleted: t.folderDeleted,
      }}
      columns={[
        { header: t.mappedPath, cell: (f) => f.mapped_path },
        { header: t.description, cell: (f) => f.description },
        { header: t.usedQuota, cell: (f) => (scans.scanning.includes(f.name) ? t.scanning : usedOf(f)) },
        { header: t.usedBy, cell: (f) => usersOf(f) || t.unused },
      ]}
      nameOf={(f) => f.name}
      hrefOf={(name) => adminRoutePath({ kind: 'folder', name })}
      list={listFolders}
      get={getFolder}
      remove={deleteFolder}
      rowActions={
        canScan
          ? (f, { say, fail, act }) => (
              <button
                type="button"
                aria-label={t.scanFolder(f.name)}
                disabled={scans.scanning.includes(f.name)}
                onClick={() =>
                  void scanFolderQuota(f.name).then((failed) => {
                    if (failed) return fail(failed);
                    say(t.folderScanStarted(f.name));
                    scans.started(f.name, () => void act(async () => null, t.folderScanDone(f.name)));
                  })
                }
              >
                {t.scanQuota}
              </button>
            )
          : undefined
      }
      onOpen={onOpen}
    />
  );
}

interface Fields {
  name: string;
  description: string;
  mapped_path: string;
  storage: StorageFields;
}

/** The fields the form edits over the folder as read (PUT replaces the whole object); a mapped path only on a local provider. */
function inputOf(f: Fields, base: FolderRow | null): FolderInput {
  return {
    ...((base ?? {}) as FolderInput),
    name: f.name.trim(),
    description: f.description,
    mapped_path: usesLocalRoot(f.storage.provider) ? f.mapped_path.trim() : '',
    filesystem: filesystemInputOf(f.storage) as FolderInput['filesystem'],
  };
}

/** Create (name null) or edit a virtual folder: its description, its storage (any filesystem provider) and, on a local one, the directory it maps. */
export function FolderForm({ name, onDone, onSaved }: { name: string | null; onDone: () => void; onSaved: (name: string) => void }) {
  const form = useNamedForm<FolderRow, Fields>({
    name,
    empty: { name: '', description: '', mapped_path: '', storage: emptyStorage() },
    get: getFolder,
    fieldsOf: (r) => ({ name: r.name, description: r.description ?? '', mapped_path: r.mapped_path ?? '', storage: storageFieldsOf(r.filesystem) }),
    save: async (f, base) => {
      const input = inputOf(f, base);
      return { failed: base ? await updateFolder(base.name, input) : await createFolder(input), name: input.name };
    },
    onCreated: onSaved,
    savedText: t.folderSaved,
  });
  const { f, set, base, busy, error } = form;
  return (
    <NamedForm
      title={name === null ? t.newFolder : t.editFolder(name)}
      backLabel={t.backToFolders}
      onBack={onDone}
      refused={t.folderRefused}
      state={form}
      isNew={name === null}
    >
      {f && (
        <fieldset disabled={busy}>
          <legend>{t.folder}</legend>
          <NameAndDescription idPrefix="vf" isNew={name === null} f={f} set={set} error={error} />
          <StorageForm idPrefix="vf" path="filesystem" value={f.storage} error={error} onChange={(v) => set('storage', v)} />
          {usesLocalRoot(f.storage.provider) && (
            <Field id="vf-mapped_path" label={t.mappedPath} path="mapped_path" error={error} help={t.mappedPathHelp}>
              {(c) => <input {...c} spellCheck={false} value={f.mapped_path} onChange={(e) => set('mapped_path', e.target.value)} />}
            </Field>
          )}
          {base && (
            <>
              <p data-testid="folder-usage">{t.usedQuotaIs(usedOf(base))}</p>
              <p data-testid="folder-users">{usersOf(base) ? t.usedByList(usersOf(base)) : t.unusedFolder}</p>
            </>
          )}
        </fieldset>
      )}
    </NamedForm>
  );
}
