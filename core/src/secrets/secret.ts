/**
 * A secret as the REST API carries it. On write `status` is 'Plain' and
 * `payload` the cleartext; stored and read back it names the encrypted form.
 */
export interface Secret {
  status: SecretStatus;
  payload?: string;
  key?: string;
  additional_data?: string;
  mode?: number;
}

export type SecretStatus = 'Plain' | 'AES-256-GCM' | 'Secretbox' | 'GCP' | 'AWS' | 'VaultTransit' | 'AzureKeyVault' | 'Redacted';

export function isSecret(v: unknown): v is Secret {
  return typeof v === 'object' && v !== null && typeof (v as Secret).status === 'string';
}

export function isEmptySecret(v: unknown): boolean {
  return !isSecret(v) || ((v.payload ?? '') === '' && v.status !== 'Redacted');
}

/**
 * Encrypts and decrypts secrets. The default implementation is AES-256-GCM
 * under a master key from configuration; a KMS plugin can replace it.
 */
export interface SecretsService {
  /** The status this service writes ('AES-256-GCM' for the default). */
  readonly status: SecretStatus;
  /** Encrypts a cleartext; `aad` binds the ciphertext to its owner (e.g. a username). */
  encrypt(plain: string, aad?: string): Promise<Secret>;
  /** Returns the cleartext of an encrypted secret (or of a Plain one). */
  decrypt(secret: Secret): Promise<string>;
  /** True when this service can decrypt the secret's status. */
  canDecrypt(secret: Secret): boolean;
}
