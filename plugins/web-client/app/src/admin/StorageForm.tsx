import { Field } from './Field';
import { names } from './field-message';
import { OptionField } from './OptionField';
import { PROVIDERS, providerInfo, withOption, type StorageFields } from './storage-model';
import { t } from './strings';

/**
 * The filesystem provider of a user, a group's users or a virtual folder and
 * that provider's options (secrets shown as set/unset), with the API's
 * messages at the option they name. `path` is the FilesystemConfig's key path
 * in the API's object ('filesystem', 'user_settings.filesystem').
 */
export function StorageForm({
  idPrefix,
  path,
  value,
  error,
  providerHelp,
  onChange,
}: {
  idPrefix: string;
  path: string;
  value: StorageFields;
  error: string;
  providerHelp?: string;
  onChange: (v: StorageFields) => void;
}) {
  const info = providerInfo(value.provider);
  const configPath = info ? `${path}.${info.configKey}` : path;
  const values = value.configs[value.provider] ?? {};
  // a message about the config that names none of its options (two options together, an unknown key) is shown at the provider
  const unclaimed = info !== undefined && names(error, configPath) && !info.options.some((s) => names(error, `${configPath}.${s.key}`));
  return (
    <>
      <Field id={`${idPrefix}-fs-provider`} label={t.storageProvider} path={`${path}.provider`} error={error} refused={unclaimed} help={providerHelp}>
        {(c) => (
          <select {...c} value={value.provider} onChange={(e) => onChange({ ...value, provider: Number(e.target.value) })}>
            {PROVIDERS.map((p) => (
              <option key={p.provider} value={p.provider}>
                {t.providerName(p.provider)}
              </option>
            ))}
          </select>
        )}
      </Field>
      {info?.options.map((spec) => (
        <OptionField
          key={`${value.provider}-${spec.key}`}
          id={`${idPrefix}-fs-${spec.key}`}
          spec={spec}
          label={t.storageOptionLabel(spec.key)}
          path={`${configPath}.${spec.key}`}
          value={values[spec.key]}
          error={error}
          help={t.storageOptionHelp(info.configKey, spec.key)}
          choiceLabel={(c) => t.storageChoiceName(spec.key, c)}
          onChange={(v) => onChange(withOption(value, spec.key, v))}
        />
      ))}
    </>
  );
}
