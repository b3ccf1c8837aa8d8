/**
 * The field of the API's object a validation message names (no React here:
 * the unit tests read it), as the key path in its
 * first quotes: '"email" must be a valid email' → 'email',
 * '"user_settings.home_dir" must be an absolute path' → 'user_settings.home_dir';
 * an event action's option as its key in the options sub-object:
 * 'options.http_config: "endpoint" must be a valid uri' → 'endpoint';
 * a filesystem provider's option under its config, as its plugin words it
 * (quoted, or the message's first word):
 * 'filesystem.s3config: endpoint must be an http:// or https:// URL' → 'filesystem.s3config.endpoint'.
 */
export function fieldOfMessage(message: string): string | null {
  // an event action's invalid template: 'options.http_config.body: invalid template: ...' → 'body'
  const option = /^options\.[a-z_]+\.([a-z_]+(?:[.[][^:\s]*)?): /.exec(message);
  if (option) return option[1]!;
  const fs = /^((?:user_settings\.)?filesystem\.([a-z0-9_]+)): /.exec(message);
  if (fs) {
    const rest = message.slice(fs[0].length);
    // 's3config.bucket is required', 'region must not be empty', 'set "password" and/or "private_key"'
    const named = /"([a-z_]+(?:[.[][^"]*)?)"/.exec(rest) ?? new RegExp(`^(?:${fs[2]}\\.)?([a-z_]+(?:\\[\\d+\\])?)\\b`).exec(rest);
    return named ? `${fs[1]}.${named[1]}` : fs[1]!;
  }
  const m = /"([a-z_]+(?:[.[][^"]*)?)"/.exec(message);
  return m ? m[1]! : null;
}

/** Whether `message` names the field `path` or something inside it ('groups[0].name' is in 'groups'). */
export function names(message: string, path: string): boolean {
  const f = message ? fieldOfMessage(message) : null;
  return f !== null && (f === path || f.startsWith(`${path}.`) || f.startsWith(`${path}[`));
}
