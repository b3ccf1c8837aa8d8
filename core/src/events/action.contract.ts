import type Joi from 'joi';
import type { Logger } from '../logger.js';
import type { Fs, PendingUpload } from '../fs/fs.contract.js';

/**
 * BaseEventAction.type numbers (public API: stored in the database and in
 * backups; a number is never reused). Each is registered by the plugin that
 * implements it; 10 is reserved.
 */
export const ActionType = {
  Http: 1,
  Command: 2,
  Email: 3,
  Backup: 4,
  UserQuotaReset: 5,
  FolderQuotaReset: 6,
  TransferQuotaReset: 7,
  DataRetentionCheck: 8,
  Filesystem: 9,
  PasswordExpirationCheck: 11,
  UserExpirationCheck: 12,
  IdpAccountCheck: 13,
  UserInactivityCheck: 14,
  RotateLogs: 15,
  Imap: 16,
  Icap: 17,
  ShareExpirationCheck: 18,
  EventReport: 19,
} as const;
export type ActionType = (typeof ActionType)[keyof typeof ActionType];

/**
 * Event action type numbers the API reserves (api-spec.md, action table: 10):
 * never valid in a saved action and never registered by a plugin.
 */
export const RESERVED_ACTION_TYPES: ReadonlySet<number> = new Set([10]);

/** Name patterns of rule conditions (ConditionPattern). */

export interface ActionConditionPattern {
  pattern: string;
  inverse_match?: boolean;
}

/**
 * Data an action runs with. `params` is the template context (`.Name`,
 * `.VirtualPath`, `.Event`, ... see the event manager docs); `render` renders
 * a Go text/template string against it.
 */
export interface ActionContext {
  /** Trigger number of the rule that runs the action. */
  trigger: number;
  ruleName: string;
  actionName: string;
  params: Record<string, unknown>;
  render(template: string): string;
  signal: AbortSignal;
  logger: Logger;

  // Added in plugin API 1 (event manager); optional so older runners and
  // hand-built contexts stay valid.

  /** Unique id of this rule execution (`.UID`). */
  uid?: string;
  /**
   * The user the event concerns: the user of a filesystem event, the user
   * added/updated/deleted by a provider event, the user of an IDP login.
   * Undefined for schedules, on-demand runs and other objects: actions that
   * work on users then apply to every user matching `conditions`.
   */
  username?: string;
  /** The object of a provider event (trigger 2). */
  object?: { type: string; name: string };
  /** The rule's condition options (names, group_names, role_names select users for scheduled and on-demand rules). */
  conditions?: {
    names: ActionConditionPattern[];
    group_names: ActionConditionPattern[];
    role_names: ActionConditionPattern[];
  };
  /**
   * The file of a filesystem event: its backend and backend path when the
   * producer passed them (sync and before-publish hooks), and, before
   * publish, the pending upload to read the bytes from.
   */
  file?: { fs?: Fs; fsPath?: string; pending?: PendingUpload };
  /** When the rule fired (Unix ms; the tick minute for schedules). */
  firedAt?: number;
  /** Names of the actions of this execution that failed so far (for failure actions). */
  failedActions?: string[];
}

export interface ActionResult {
  /** Values later actions of the same rule can read (e.g. RetentionChecks, EventReports). */
  outputs?: Record<string, unknown>;
}

export interface ActionRunner {
  execute(ctx: ActionContext): Promise<ActionResult | void>;
}

/** An event action type contributed by a plugin. */
export interface ActionTypeDef<O = Record<string, unknown>> {
  /** The public, stored type number (BaseEventAction.type). Numbers are never reused. */
  type: number;
  /** Short key used in logs and features, e.g. 'http'. */
  key: string;
  /** Options sub-object of BaseEventAction.options this type uses (e.g. 'http_config'), if any. */
  optionsKey?: string;
  /** Validates the options sub-object at save time. */
  optionsSchema?: Joi.ObjectSchema<O>;
  /** Dotted paths of Secret fields inside the options sub-object. */
  secretFields?: string[];
  /** Dotted paths (arrays: 'recipients[]', 'headers[].value') of Go-template fields inside the options. */
  templateFields?: string[];
  /** Trigger numbers the type can run under; omitted means every trigger. */
  triggers?: number[];
  /**
   * For provider rules (trigger 2): the object types the action works on
   * (e.g. `['user']` for an action that acts on the added or updated user).
   * A provider rule using the action must then restrict
   * `conditions.options.provider_objects` to these types and must not fire
   * on `delete` (the object is gone). Omitted: any provider event.
   */
  providerObjects?: string[];
  /**
   * Why the type cannot run on this server right now (e.g. no mail server
   * configured), or undefined when it can. Saving an action of the type, or
   * a rule using one, is refused with this message.
   */
  unavailable?(): string | undefined;
  /**
   * Builds a runner for one execution from the stored options: secrets
   * already decrypted to plain strings and every templateFields entry
   * already rendered against the execution's context.
   */
  create(options: O): ActionRunner | Promise<ActionRunner>;
}
