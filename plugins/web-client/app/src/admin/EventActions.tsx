import { useState } from 'react';
import { Field } from './Field';
import { NameAndDescription, NamedForm, useNamedForm } from './NamedForm';
import { NamedList } from './NamedList';
import { OptionField } from './OptionField';
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
              <ActionOptionField
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
function ActionOptionField({
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
  return (
    <OptionField
      id={id}
      spec={spec}
      label={label}
      path={spec.key}
      value={value}
      error={error}
      help={help}
      choiceLabel={(c) => t.choiceName(spec.key, c)}
      after={spec.template && <TemplatePreview id={id} label={label} texts={templateTexts(spec, value)} trigger={trigger} />}
      onChange={onChange}
    />
  );
}
