import { useEffect, useState } from 'react';
import { Checks, Field } from './Field';
import { NameAndDescription, NamedForm, useNamedForm } from './NamedForm';
import { NamedList } from './NamedList';
import { createRule, deleteRule, getRule, listActions, listRules, runRule, updateRule, type ActionRow, type RuleRow } from './event-manager-api';
import {
  EVENT_STATUSES,
  FS_EVENTS,
  PROTOCOLS,
  PROVIDER_EVENTS,
  PROVIDER_OBJECTS,
  TRIGGERS,
  emptyRule,
  moved,
  newRuleAction,
  newSchedule,
  ruleFieldsOf,
  ruleInputOf,
  type RuleAction,
  type RuleFields,
  type Schedule,
} from './event-model';
import { adminRoutePath } from './routes';
import { t } from './strings';

const actionsOf = (r: RuleRow) =>
  [...(r.actions ?? [])]
    .sort((a, b) => (a.order ?? 0) - (b.order ?? 0))
    .map((a) => a.name)
    .join(', ');

/** The event rules: trigger, state, actions in order; an on-demand rule is run from its row. */
export function EventRules({ onOpen }: { onOpen: (name: string | null) => void }) {
  return (
    <NamedList<RuleRow>
      idPrefix="event-rules"
      texts={{
        title: t.eventRules,
        add: t.addEventRule,
        find: t.findEventRule,
        none: t.noEventRules,
        noSuch: t.noSuchEventRule,
        caption: t.eventRulesPageOf,
        deleteLabel: t.deleteEventRule,
        confirmDelete: t.confirmDeleteEventRule,
        deleted: t.eventRuleDeleted,
      }}
      columns={[
        { header: t.trigger, cell: (r) => t.triggerName(r.trigger) },
        { header: t.state, cell: (r) => (r.status === 0 ? t.disabled : t.enabled) },
        { header: t.eventActions, cell: (r) => actionsOf(r) || t.noRuleActions },
        { header: t.description, cell: (r) => r.description },
      ]}
      nameOf={(r) => r.name}
      hrefOf={(name) => adminRoutePath({ kind: 'event-rule', name })}
      list={listRules}
      get={getRule}
      remove={deleteRule}
      rowActions={(r, { say, fail }) =>
        r.trigger === 6 && r.status !== 0 ? (
          <button
            type="button"
            aria-label={t.runRuleLabel(r.name)}
            onClick={() => void runRule(r.name).then((got) => (got.ok ? say(t.ruleStarted(r.name, got.message)) : fail(got.message)))}
          >
            {t.runRule}
          </button>
        ) : null
      }
      onOpen={onOpen}
    />
  );
}

/** Create (name null) or edit a rule: its trigger and conditions, its actions in order with their options; run an on-demand rule. */
export function EventRuleForm({ name, onDone, onSaved }: { name: string | null; onDone: () => void; onSaved: (name: string) => void }) {
  const form = useNamedForm<RuleRow, RuleFields>({
    name,
    empty: emptyRule(),
    get: getRule,
    fieldsOf: ruleFieldsOf,
    save: async (f, base) => {
      const input = ruleInputOf(f);
      return { failed: base ? await updateRule(base.name, input) : await createRule(input), name: input.name };
    },
    onCreated: onSaved,
    savedText: t.eventRuleSaved,
  });
  const { f, set, base, busy, error } = form;
  const [actions, setActions] = useState<ActionRow[]>([]);
  const [run, setRun] = useState<{ ok: boolean; message: string } | null>(null);
  useEffect(() => {
    // the actions a rule may use (a page of 500: a console's rules use a few dozen)
    void listActions({ limit: 500, offset: 0, order: 'ASC' }).then((got) => setActions(got.rows ?? []));
  }, []);
  if (!f) {
    return (
      <NamedForm title={name ?? ''} backLabel={t.backToEventRules} onBack={onDone} refused="" state={form} isNew={false}>
        {null}
      </NamedForm>
    );
  }

  const tr = f.trigger;
  const patterns = (k: 'names' | 'group_names' | 'role_names' | 'fs_paths', label: string) => (
    <Field id={`er-${k}`} label={label} path={`conditions.options.${k}`} error={error} help={t.patternsHelp}>
      {(c) => <textarea {...c} rows={2} spellCheck={false} className="code" value={f[k]} onChange={(e) => set(k, e.target.value)} />}
    </Field>
  );
  const setAction = (i: number, a: RuleAction) =>
    set(
      'actions',
      f.actions.map((x, j) => (j === i ? a : x)),
    );
  const setSchedule = (i: number, s: Schedule) =>
    set(
      'schedules',
      f.schedules.map((x, j) => (j === i ? s : x)),
    );
  const unused = actions.filter((a) => !f.actions.some((x) => x.name === a.name));

  return (
    <NamedForm
      title={name === null ? t.newEventRule : t.editEventRule(name)}
      backLabel={t.backToEventRules}
      onBack={onDone}
      refused={t.eventRuleRefused}
      state={form}
      isNew={name === null}
    >
      <fieldset disabled={busy}>
        <legend>{t.eventRule}</legend>
        <NameAndDescription idPrefix="er" isNew={name === null} f={f} set={set} error={error} />
        <Field id="er-trigger" label={t.trigger} path="trigger" error={error}>
          {(c) => (
            <select {...c} value={tr} onChange={(e) => set('trigger', Number(e.target.value))}>
              {TRIGGERS.map((x) => (
                <option key={x} value={x}>
                  {t.triggerName(x)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <label className="check">
          <input type="checkbox" checked={f.enabled} onChange={(e) => set('enabled', e.target.checked)} />
          {t.ruleEnabled}
        </label>
      </fieldset>

      <fieldset disabled={busy}>
        <legend>{t.conditions}</legend>
        {(tr === 4 || tr === 5) && <p>{t.noConditions}</p>}
        {tr === 1 && (
          <>
            <Checks
              id="er-fs-events"
              label={t.ruleFsEvents}
              path="conditions.fs_events"
              error={error}
              choices={FS_EVENTS}
              value={f.fs_events}
              name={(v) => v}
              onChange={(v) => set('fs_events', v)}
            />
            <Checks
              id="er-protocols"
              label={t.ruleProtocols}
              path="conditions.options.protocols"
              error={error}
              choices={PROTOCOLS}
              value={f.protocols}
              name={(v) => v}
              onChange={(v) => set('protocols', v)}
            />
            <Checks
              id="er-statuses"
              label={t.eventStatuses}
              path="conditions.options.event_statuses"
              error={error}
              choices={EVENT_STATUSES}
              value={f.event_statuses}
              name={t.eventStatusName}
              onChange={(v) => set('event_statuses', v)}
            />
          </>
        )}
        {tr === 2 && (
          <>
            <Checks
              id="er-provider-events"
              label={t.providerEvents}
              path="conditions.provider_events"
              error={error}
              choices={PROVIDER_EVENTS}
              value={f.provider_events}
              name={(v) => v}
              onChange={(v) => set('provider_events', v)}
            />
            <Checks
              id="er-objects"
              label={t.providerObjects}
              path="conditions.options.provider_objects"
              error={error}
              choices={PROVIDER_OBJECTS}
              value={f.provider_objects}
              name={(v) => v}
              onChange={(v) => set('provider_objects', v)}
            />
          </>
        )}
        {tr === 3 && (
          <div className="wide">
            <p>{t.schedules}</p>
            {f.schedules.map((s, i) => (
              <div key={i} className="perm-row" role="group" aria-label={t.scheduleN(i + 1)}>
                {(['minute', 'hour', 'day_of_month', 'month', 'day_of_week'] as const).map((k) => (
                  <label key={k}>
                    {t.scheduleField(k)} <input className="short" value={s[k]} onChange={(e) => setSchedule(i, { ...s, [k]: e.target.value })} />
                  </label>
                ))}
                <button
                  type="button"
                  className="danger"
                  onClick={() =>
                    set(
                      'schedules',
                      f.schedules.filter((_, j) => j !== i),
                    )
                  }
                >
                  {t.removeScheduleN(i + 1)}
                </button>
              </div>
            ))}
            <button type="button" onClick={() => set('schedules', [...f.schedules, newSchedule()])}>
              {t.addSchedule}
            </button>
            <label className="check">
              <input type="checkbox" checked={f.concurrent_execution} onChange={(e) => set('concurrent_execution', e.target.checked)} />
              {t.concurrentExecution}
            </label>
          </div>
        )}
        {tr === 7 && (
          <Field id="er-idp" label={t.idpLoginEvent} path="conditions.idp_login_event" error={error}>
            {(c) => (
              <select {...c} value={f.idp_login_event} onChange={(e) => set('idp_login_event', Number(e.target.value))}>
                {[0, 1, 2].map((x) => (
                  <option key={x} value={x}>
                    {t.idpLoginEventName(x)}
                  </option>
                ))}
              </select>
            )}
          </Field>
        )}
        {tr !== 4 && tr !== 5 && (
          <>
            {patterns('names', tr === 2 ? t.objectNames : t.userNames)}
            {patterns('group_names', t.groupNames)}
            {patterns('role_names', t.roleNames)}
          </>
        )}
        {tr === 1 && (
          <>
            {patterns('fs_paths', t.fsPaths)}
            <Field id="er-min-size" label={t.minSize} path="conditions.options.min_size" error={error} help={t.sizeHelp}>
              {(c) => <input {...c} type="number" min={0} value={f.min_size} onChange={(e) => set('min_size', e.target.value)} />}
            </Field>
            <Field id="er-max-size" label={t.maxSize} path="conditions.options.max_size" error={error} help={t.sizeHelp}>
              {(c) => <input {...c} type="number" min={0} value={f.max_size} onChange={(e) => set('max_size', e.target.value)} />}
            </Field>
          </>
        )}
      </fieldset>

      <fieldset disabled={busy}>
        <legend>{t.ruleActions}</legend>
        {f.actions.length === 0 && <p>{t.noRuleActions}</p>}
        <ol className="rule-actions wide" data-testid="rule-actions">
          {f.actions.map((a, i) => (
            <li key={a.name} className="perm-row">
              <strong>{a.name}</strong>
              {(['is_failure_action', 'stop_on_failure', 'execute_sync', 'execute_before_file_publish'] as const).map((k) => (
                <label key={k} className="check">
                  <input type="checkbox" checked={a[k]} onChange={(e) => setAction(i, { ...a, [k]: e.target.checked })} />
                  {t.relationOption(k)}
                </label>
              ))}
              <button type="button" aria-label={t.moveUp(a.name)} disabled={i === 0} onClick={() => set('actions', moved(f.actions, i, i - 1))}>
                ↑
              </button>
              <button
                type="button"
                aria-label={t.moveDown(a.name)}
                disabled={i === f.actions.length - 1}
                onClick={() => set('actions', moved(f.actions, i, i + 1))}
              >
                ↓
              </button>
              <button
                type="button"
                className="danger"
                aria-label={t.removeRuleAction(a.name)}
                onClick={() =>
                  set(
                    'actions',
                    f.actions.filter((_, j) => j !== i),
                  )
                }
              >
                {t.remove}
              </button>
            </li>
          ))}
        </ol>
        {unused.length > 0 && <AddAction choices={unused} onAdd={(n) => set('actions', [...f.actions, newRuleAction(n)])} />}
      </fieldset>

      {base && base.trigger === 6 && (
        <div className="card run-rule">
          <button
            type="button"
            disabled={base.status === 0}
            onClick={() => {
              setRun(null);
              void runRule(base.name).then(setRun);
            }}
          >
            {t.runRule}
          </button>
          {run && (
            <p className={run.ok ? 'notice' : 'error'} role={run.ok ? 'status' : 'alert'} data-testid="run-result">
              {run.ok ? t.ruleStarted(base.name, run.message) : t.actionFailed(run.message)}
            </p>
          )}
        </div>
      )}
    </NamedForm>
  );
}

function AddAction({ choices, onAdd }: { choices: ActionRow[]; onAdd: (name: string) => void }) {
  const [pick, setPick] = useState('');
  const chosen = choices.some((c) => c.name === pick) ? pick : choices[0]!.name;
  return (
    <div className="row wide">
      <label htmlFor="er-add-action">{t.actionToAdd}</label>
      <select id="er-add-action" value={chosen} onChange={(e) => setPick(e.target.value)}>
        {choices.map((a) => (
          <option key={a.name} value={a.name}>
            {a.name} ({t.actionTypeName(a.type)})
          </option>
        ))}
      </select>
      <button type="button" onClick={() => onAdd(chosen)}>
        {t.addRuleAction}
      </button>
    </div>
  );
}
