/** A user's groups: one row per group with its type (primary: at most one, secondary, membership). */
import { names } from './field-message';
import { listGroups } from './groups-api';
import { SUGGESTED, useKnownNames } from './known-names';
import { t } from './strings';
import type { UserInput } from './users-api';

export type GroupMapping = NonNullable<UserInput['groups']>[number];
/** The group types of the API, in the order offered. */
const TYPES: GroupMapping['type'][] = [1, 2, 3];
const loadGroupNames = () => listGroups({ limit: SUGGESTED, offset: 0, order: 'ASC' }).then((got) => got.groups?.map((g) => g.name));

/**
 * The editor, as a fieldset. The existing groups are suggested when the admin
 * may list them (`suggest`: manage_groups); the server checks the names.
 */
export function UserGroups({
  groups,
  onChange,
  disabled,
  error,
  suggest,
  help = t.userGroupsHelp,
}: {
  groups: GroupMapping[];
  onChange: (groups: GroupMapping[]) => void;
  disabled: boolean;
  error: string;
  suggest: boolean;
  /** What the groups do (the admin form's groups are those its new users get). */
  help?: string;
}) {
  const known = useKnownNames(suggest, loadGroupNames);
  const set = (i: number, g: GroupMapping) => onChange(groups.map((x, j) => (j === i ? g : x)));
  const typeName = (type: GroupMapping['type']) => (type === 1 ? t.primary : type === 2 ? t.secondary : t.membership);

  return (
    <fieldset disabled={disabled} aria-describedby="ug-help">
      <legend>{t.groups}</legend>
      <p id="ug-help" className="muted">
        {help}
      </p>
      {names(error, 'groups') && <p className="error">{error}</p>}
      {groups.map((g, i) => (
        <div className="perm-row" key={i} role="group" aria-label={t.groupOfUser(g.name)}>
          <label htmlFor={`ug-name-${i}`}>{t.group}</label>
          <input
            id={`ug-name-${i}`}
            list={known.length ? 'ug-known' : undefined}
            autoCapitalize="none"
            spellCheck={false}
            value={g.name}
            onChange={(e) => set(i, { ...g, name: e.target.value })}
          />
          <label htmlFor={`ug-type-${i}`}>{t.groupType}</label>
          <select id={`ug-type-${i}`} value={g.type} onChange={(e) => set(i, { ...g, type: Number(e.target.value) as GroupMapping['type'] })}>
            {TYPES.map((type) => (
              <option key={type} value={type} disabled={type === 1 && groups.some((x, j) => j !== i && x.type === 1)}>
                {typeName(type)}
              </option>
            ))}
          </select>
          <button type="button" aria-label={t.removeGroup(g.name)} onClick={() => onChange(groups.filter((_, j) => j !== i))}>
            ×
          </button>
        </div>
      ))}
      {known.length > 0 && (
        <datalist id="ug-known">
          {known.map((n) => (
            <option key={n} value={n} />
          ))}
        </datalist>
      )}
      <button type="button" onClick={() => onChange([...groups, { name: '', type: groups.some((g) => g.type === 1) ? 2 : 1 }])}>
        {t.addGroupToUser}
      </button>
    </fieldset>
  );
}
