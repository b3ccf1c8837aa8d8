import { isSecret } from './secret.js';

const SENSITIVE_KEYS = new Set(['password', 'password_hash', 'key_hash', 'key', 'recovery_codes']);

/**
 * Deep copy with every Secret reduced to `{status}` (payload, key and
 * additional data removed) and password/key fields dropped. Used for provider
 * events and logs.
 */
export function redactSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactSecrets);
  if (value && typeof value === 'object') {
    if (isSecret(value)) return value.status === 'Plain' || !value.payload ? { status: value.payload ? 'Redacted' : value.status } : { status: value.status };
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (SENSITIVE_KEYS.has(k)) continue;
      out[k] = redactSecrets(v);
    }
    return out;
  }
  return value;
}
