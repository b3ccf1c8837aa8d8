import { LENIENT_INPUT } from '../util/lenient.js';
import type { ActionContext, ActionTypeDef } from '../events/action.contract.js';
import type { Logger } from '../logger.js';
import { isSecret, type Secret } from '../secrets/secret.js';
import { collectField, mapField } from './fields.js';
import { render, templateError } from './templates.js';
import type { LoadedRule, TriggerEvent } from './types.js';

type Obj = Record<string, unknown>;

/**
 * The steps between a stored action and a running one, shared by the event
 * manager, the action service (save time) and the test kit's action
 * conformance suite, so a plugin's tests exercise exactly what the server does.
 */

/**
 * Save-time check of an options sub-object with the type's joi schema
 * (conversions applied). Throws an Error whose message is the API's 400 text
 * (`options.<key>: "field" ...`); returns the validated value.
 */
export function validateActionOptions(def: ActionTypeDef<any>, sub: Obj): Obj {
  if (!def.optionsSchema) return sub;
  const { value, error } = def.optionsSchema.validate(sub, { convert: true, abortEarly: true, ...LENIENT_INPUT });
  if (error) throw new Error(`options.${def.optionsKey ?? ''}: ${error.message}`);
  return value as Obj;
}

/** Save-time parse of every templateFields value; throws with the API's 400 text on the first invalid template. */
export async function checkActionTemplates(def: ActionTypeDef<any>, sub: Obj): Promise<void> {
  const key = def.optionsKey ?? '';
  for (const f of def.templateFields ?? []) {
    for (const { value, where } of await collectField(sub, f)) {
      if (typeof value !== 'string') continue;
      const err = templateError(value, `${key}.${where}`);
      if (err) throw new Error(`options.${key}.${where}: invalid template: ${err}`);
    }
  }
}

/**
 * The options a runner is created with: a copy of the stored sub-object with
 * every secretFields entry decrypted to a plain string and every
 * templateFields entry rendered against `params`.
 */
export async function prepareActionOptions(def: ActionTypeDef<any>, stored: Obj, params: Obj, decrypt: (s: Secret) => Promise<string>): Promise<Obj> {
  const opts = structuredClone(((def.optionsKey ? stored[def.optionsKey] : undefined) ?? {}) as Obj);
  for (const f of def.secretFields ?? []) {
    await mapField(opts, f, async (v) => (isSecret(v) && v.payload ? decrypt(v) : undefined));
  }
  for (const f of def.templateFields ?? []) {
    await mapField(opts, f, (v, where) => {
      if (typeof v !== 'string') return v;
      try {
        return render(v, params, `${def.optionsKey}.${where}`);
      } catch (err) {
        throw new Error(`cannot render ${def.optionsKey}.${where}: ${(err as Error).message}`);
      }
    });
  }
  return opts;
}

/** The ActionContext of one action of a rule execution. */
export function buildActionContext(o: {
  rule: LoadedRule;
  actionName: string;
  ev: TriggerEvent;
  params: Obj;
  uid: string;
  failed: string[];
  signal: AbortSignal;
  logger: Logger;
}): ActionContext {
  const { rule, ev, params } = o;
  return {
    trigger: rule.trigger,
    ruleName: rule.name,
    actionName: o.actionName,
    params,
    render: (tpl: string) => render(tpl, params),
    signal: o.signal,
    logger: o.logger.child({ rule: rule.name, action: o.actionName }),
    uid: o.uid,
    username: ev.username,
    object: ev.provider ? { type: ev.provider.object_type, name: ev.provider.object_name } : undefined,
    conditions: rule.conditions.options,
    file: ev.file,
    firedAt: Math.floor(ev.timestamp / 1_000_000),
    failedActions: [...o.failed],
  };
}
