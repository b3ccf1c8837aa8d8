import { useState } from 'react';
import { Field } from './Field';
import { NameAndDescription, NamedForm, useNamedForm } from './NamedForm';
import { NamedList } from './NamedList';
import { TemplatePreview } from './TemplatePreview';
import { createAction, deleteAction, getAction, listActions, updateAction, type ActionRow } from './event-manager-api';
import {
  ACTION_TYPES,
  TRIGGERS,
  actionFieldsOf,
  actionInputOf,
  initialValues,
  isFormValueError,
  specsOf,
  templateTexts,
  type ActionFields,
  type OptionSpec,
  type OptionValues,
  type SecretEdit,
} from './event-model';
import { adminRoutePath } from './routes';
import { t } from './strings';

/** The event actions: what each does (its type), the rules using it; delete with a confirmation (refused while a rule uses it). */
export function EventActions({ onOpen }: { onOpen: (name: string | null) => void }) {
  return (
    <NamedList<ActionRow>
      idPrefix="event-actions"
      texts={{
        title: t.eventActions,
        add: t.addEventAction,
        find: t.findEventAction,
        none: t.noEventActions,
        noSuch: t.noSuchEventAction,
        caption: t.eventActionsPageOf,
        deleteLabel: t.deleteEventAction,
        confirmDelete: t.confirmDeleteEventAction,
        deleted: t.eventActionDeleted,
      }}
      columns={[
        { header: t.actionType, cell: (a) => t.actionTypeName(a.type) },
        { header: t.description, cell: (a) => a.description },
        { header: t.usedByRules, cell: (a) => (a.rules?.length ? a.rules.join(', ') : t.unused) },
      ]}
      nameOf={(a) => a.name}
      hrefOf={(name) => adminRoutePath({ kind: 'event-action', name })}
      list={listActions}
      get={getAction}
      remove={deleteAction}
      onOpen={onOpen}
    />
  );
}

const EMPTY: ActionFields = { name: '', description: '', type: 1, values: initialValues(1) };

/** Create (name null) or edit an event action: its type's options, template fields with a live preview, secrets as set/unset. */
export function EventActionForm({ name, onDone, onSaved }: { name: string | null; onDone: () => void; onSaved: (name: string) => void }) {
  const [trigger, setTrigger] = useState(1);
  const form = useNamedForm<ActionRow, ActionFields>({
    name,
    empty: EMPTY,
    get: getAction,
    fieldsOf: actionFieldsOf,
    save: async (f, base) => {
      let input;
      try {
        input = actionInputOf(f);
      } catch (err) {
        if (isFormValueError(err)) return { failed: err.message, name: f.name };
        throw err;
      }
      return { failed: base ? await updateAction(base.name, input) : await createAction(input), name: input.name };
    },
    onCreated: onSaved,
    savedText: t.eventActionSaved,
  });
  const { f, set, base, busy, error } = form;
  const setValue = (key: string, v: OptionValues[string]) => f && set('values', { ...f.values, [key]: v });

  return (
    <NamedForm
      title={name === null ? t.newEventAction : t.editEventAction(name)}
      backLabel={t.backToEventActions}
      onBack={onDone}
      refused={t.eventActionRefused}
      state={form}
      isNew={name === null}
    >
      {f && (
        <>
          <fieldset disabled={busy}>
            <legend>{t.eventAction}</legend>
            <NameAndDescription idPrefix="ea" isNew={name === null} f={f} set={set} error={error} />
            <Field id="ea-type" label={t.actionType} path="type" error={error}>
              {(c) => (
                <select
                  {...c}
                  value={f.type}
                  onChange={(e) => {
                    const type = Number(e.target.value);
                    form.set('values', initialValues(type));
                    set('type', type);
                  }}
                >
                  {ACTION_TYPES.map((a) => (
                    <option key={a.type} value={a.type}>
                      {t.actionTypeName(a.type)}
                    </option>
                  ))}
                </select>
              )}
            </Field>
            {base?.rules && base.rules.length > 0 && <p data-testid="action-rules">{t.usedByRulesList(base.rules.join(', '))}</p>}
          </fieldset>
          <fieldset disabled={busy}>
            <legend>{t.actionOptions}</legend>
            {specsOf(f).length === 0 && <p>{t.noActionOptions}</p>}
            {specsOf(f).some((s) => s.template) && (
              <Field id="ea-sample" label={t.previewTrigger} path="" error="" help={t.previewTriggerHelp}>
                {(c) => (
                  <select {...c} value={trigger} onChange={(e) => setTrigger(Number(e.target.value))}>
                    {TRIGGERS.map((tr) => (
                      <option key={tr} value={tr}>
                        {t.triggerName(tr)}
                      </option>
                    ))}
                  </select>
                )}
              </Field>
            )}
            {specsOf(f).map((spec) => (
              <OptionField
                key={`${f.type}-${spec.key}`}
                spec={spec}
                value={f.values[spec.key]}
                error={error}
                trigger={trigger}
                onChange={(v) => {
                  // a filesystem action's sub-type brings its own options
                  if (f.type === 9 && spec.key === 'type') set('values', { ...initialValues(9, Number(v)), timeout: f.values.timeout ?? '' });
                  else setValue(spec.key, v);
                }}
              />
            ))}
          </fieldset>
        </>
      )}
    </NamedForm>
  );
}

/** One option of an action: its control by kind, the API's message when it names the option, a preview when it is a template. */
function OptionField({
  spec,
  value,
  error,
  trigger,
  onChange,
}: {
  spec: OptionSpec;
  value: OptionValues[string] | undefined;
  error: string;
  trigger: number;
  onChange: (v: OptionValues[string]) => void;
}) {
  const id = `ea-opt-${spec.key.replace(/[^a-z0-9_]/gi, '-')}`;
  const label = t.optionLabel(spec.key);
  const help = spec.kind === 'lines' ? t.oneALine : spec.kind === 'kv' ? t.keyValueLines : spec.kind === 'json' ? t.jsonValue : undefined;
  const text = typeof value === 'string' ? value : '';
  if (spec.kind === 'bool') {
    return (
      <label className="check">
        <input type="checkbox" checked={value === true} onChange={(e) => onChange(e.target.checked)} />
        {label}
      </label>
    );
  }
  if (spec.kind === 'multi') {
    const chosen = Array.isArray(value) ? value : [];
    return (
      <div className="field" role="group" aria-labelledby={`${id}-label`}>
        <span id={`${id}-label`}>{label}</span>
        <div className="checks">
          {spec.choices?.map((c) => (
            <label key={c} className="check">
              <input
                type="checkbox"
                checked={chosen.includes(String(c))}
                onChange={(e) => onChange(e.target.checked ? [...chosen, String(c)] : chosen.filter((x) => x !== String(c)))}
              />
              {t.choiceName(spec.key, c)}
            </label>
          ))}
        </div>
      </div>
    );
  }
  if (spec.kind === 'secret') {
    const s = (value as SecretEdit | undefined) ?? { stored: null, value: '', clear: false };
    return (
      <Field id={id} label={label} path={spec.key} error={error} help={s.stored && !s.clear ? t.secretSet : t.secretUnset}>
        {(c) => (
          <div className="secret">
            <input
              {...c}
              type="password"
              autoComplete="new-password"
              placeholder={s.stored && !s.clear ? t.secretKeepPlaceholder : ''}
              value={s.value}
              onChange={(e) => onChange({ ...s, value: e.target.value, clear: false })}
            />
            {s.stored && (
              <label className="check">
                <input type="checkbox" checked={s.clear} onChange={(e) => onChange({ ...s, value: '', clear: e.target.checked })} />
                {t.secretClear}
              </label>
            )}
          </div>
        )}
      </Field>
    );
  }
  const wide = spec.kind === 'area' || spec.kind === 'json' || spec.kind === 'lines' || spec.kind === 'kv';
  return (
    <div className={wide || spec.template ? 'wide' : undefined}>
      <Field id={id} label={label} path={spec.key} error={error} help={help}>
        {(c) =>
          spec.kind === 'select' ? (
            <select {...c} value={text} onChange={(e) => onChange(e.target.value)}>
              {spec.choices?.map((ch) => (
                <option key={ch} value={String(ch)}>
                  {t.choiceName(spec.key, ch)}
                </option>
              ))}
            </select>
          ) : wide ? (
            <textarea
              {...c}
              rows={spec.kind === 'area' || spec.kind === 'json' ? 6 : 3}
              spellCheck={false}
              className="code"
              value={text}
              onChange={(e) => onChange(e.target.value)}
            />
          ) : (
            <input
              {...c}
              type={spec.kind === 'number' ? 'number' : 'text'}
              required={spec.required}
              spellCheck={false}
              autoCapitalize="none"
              value={text}
              onChange={(e) => onChange(e.target.value)}
            />
          )
        }
      </Field>
      {spec.template && <TemplatePreview id={id} label={label} texts={templateTexts(spec, value)} trigger={trigger} />}
    </div>
  );
}
