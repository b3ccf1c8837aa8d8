import Joi from 'joi';
import { secretSchema } from '@ferry/core';

/** Sub-types of `fs_config.type` (FilesystemActionTypes). */
export const FsActionType = {
  Rename: 1,
  Delete: 2,
  Mkdirs: 3,
  Exist: 4,
  Compress: 5,
  Copy: 6,
  Pgp: 7,
  MetadataCheck: 8,
  Decompress: 9,
} as const;

export const PgpMode = { Encrypt: 1, Decrypt: 2 } as const;

/** metadata_check.metadata[].condition */
export const MetaCondition = { Equals: 1, NotEquals: 2, Present: 3, Absent: 4, Matches: 5 } as const;

/** decompress.overwrite */
export const Overwrite = { Fail: 1, Replace: 2, Skip: 3 } as const;

export interface KeyValue {
  key: string;
  value: string;
}

export interface RenameConfig extends KeyValue {
  update_modtime: boolean;
}

export interface CompressConfig {
  /** The archive to write. */
  name: string;
  paths: string[];
}

export interface PgpConfig {
  mode: 1 | 2;
  /** key: source file, value: target file. */
  paths: KeyValue[];
  /** Armored public keys (encrypt). */
  public_keys: string[];
  /** Symmetric password (encrypt and/or decrypt); a Secret, plain text once prepared. */
  password?: string;
  /** Armored private key (decrypt); a Secret. */
  private_key?: string;
  /** Passphrase of private_key; a Secret. */
  passphrase?: string;
  /** Encrypt: ASCII-armored output instead of binary. */
  armor: boolean;
}

export interface MetadataCondition {
  key: string;
  value: string;
  condition: number;
}

export interface MetadataCheckConfig {
  paths: string[];
  /** Bytes, inclusive; -1: no bound. */
  min_size: number;
  max_size: number;
  /** Seconds since the last modification, inclusive; -1: no bound. */
  min_age: number;
  max_age: number;
  metadata: MetadataCondition[];
}

export interface DecompressConfig {
  /** The zip archive to extract. */
  name: string;
  /** Directory to extract into (created when missing). */
  target: string;
  overwrite: number;
  max_entries: number;
  /** Total uncompressed bytes. */
  max_size: number;
  /** Uncompressed / compressed size, per entry and for the whole archive. */
  max_ratio: number;
}

export interface FsConfig {
  type: number;
  /** Seconds the whole action may run (0: no limit). */
  timeout: number;
  renames?: RenameConfig[];
  deletes?: string[];
  mkdirs?: string[];
  exist?: string[];
  compress?: CompressConfig;
  copy?: KeyValue[];
  pgp?: PgpConfig;
  metadata_check?: MetadataCheckConfig;
  decompress?: DecompressConfig;
}

export const DECOMPRESS_DEFAULTS = { max_entries: 10_000, max_size: 1024 ** 3, max_ratio: 100 } as const;

const vpath = Joi.string().trim().min(1).max(4096);
const keyValue = Joi.object({ key: vpath.required(), value: vpath.required() });
const paths = Joi.array().items(vpath).min(1);
const ARMORED_PUBLIC = /-----BEGIN PGP PUBLIC KEY BLOCK-----[\s\S]+-----END PGP PUBLIC KEY BLOCK-----/;

/** A Secret that holds a value (a redacted one sent back keeps the stored value). */
const given = (s: unknown): boolean => {
  const o = s as { status?: string; payload?: string } | undefined;
  return !!o && (o.status === 'Redacted' || !!o.payload);
};

const pgpSchema = Joi.object<PgpConfig>({
  mode: Joi.number().integer().valid(1, 2).required().messages({ 'any.only': '{{#label}} must be 1 (encrypt) or 2 (decrypt)' }),
  paths: Joi.array().items(keyValue).min(1).required(),
  public_keys: Joi.array()
    .items(
      Joi.string()
        .max(256 * 1024)
        .pattern(ARMORED_PUBLIC, 'armored public key')
        .messages({ 'string.pattern.name': '{{#label}} must be an ASCII-armored public key block' }),
    )
    .default([]),
  password: secretSchema,
  private_key: secretSchema,
  passphrase: secretSchema,
  armor: Joi.boolean().default(false),
}).custom((raw: PgpConfig, h) => {
  const v = { ...raw, password: given(raw.password), private_key: given(raw.private_key), passphrase: given(raw.passphrase) };
  if (v.mode === PgpMode.Encrypt) {
    if (!v.public_keys.length && !v.password) return h.message({ custom: '{{#label}}: encryption needs public_keys, a password or both' });
    if (v.private_key || v.passphrase) return h.message({ custom: '{{#label}}: private_key and passphrase are for decryption (mode 2)' });
  } else {
    if (!v.private_key && !v.password) return h.message({ custom: '{{#label}}: decryption needs a private_key (with its passphrase) or a password' });
    if (v.public_keys.length) return h.message({ custom: '{{#label}}: public_keys are for encryption (mode 1)' });
    if (v.passphrase && !v.private_key) return h.message({ custom: "{{#label}}: passphrase is the private_key's: set the private_key too" });
  }
  return raw;
});

const metadataCheckSchema = Joi.object<MetadataCheckConfig>({
  paths: paths.required(),
  min_size: Joi.number().integer().min(-1).default(-1),
  max_size: Joi.number().integer().min(-1).default(-1),
  min_age: Joi.number().integer().min(-1).default(-1),
  max_age: Joi.number().integer().min(-1).default(-1),
  metadata: Joi.array()
    .items(
      Joi.object({
        key: Joi.string().trim().lowercase().min(1).max(255).required(),
        value: Joi.string().allow('').max(4096).default(''),
        condition: Joi.number()
          .integer()
          .valid(1, 2, 3, 4, 5)
          .default(1)
          .messages({ 'any.only': '{{#label}} must be 1 (equals), 2 (not equals), 3 (present), 4 (absent) or 5 (matches)' }),
      }),
    )
    .default([]),
}).custom((v: MetadataCheckConfig, h) => {
  if (v.min_size < 0 && v.max_size < 0 && v.min_age < 0 && v.max_age < 0 && !v.metadata.length) {
    return h.message({ custom: '{{#label}} has no condition: set min_size, max_size, min_age, max_age or metadata' });
  }
  if (v.min_size >= 0 && v.max_size >= 0 && v.min_size > v.max_size) return h.message({ custom: '{{#label}}: min_size is greater than max_size' });
  if (v.min_age >= 0 && v.max_age >= 0 && v.min_age > v.max_age) return h.message({ custom: '{{#label}}: min_age is greater than max_age' });
  return v;
});

const decompressSchema = Joi.object<DecompressConfig>({
  name: vpath.required(),
  target: vpath.required(),
  overwrite: Joi.number().integer().valid(1, 2, 3).default(1).messages({ 'any.only': '{{#label}} must be 1 (fail), 2 (replace) or 3 (skip)' }),
  max_entries: Joi.number().integer().min(1).max(1_000_000).default(DECOMPRESS_DEFAULTS.max_entries),
  max_size: Joi.number().integer().min(1).max(Number.MAX_SAFE_INTEGER).default(DECOMPRESS_DEFAULTS.max_size),
  max_ratio: Joi.number().integer().min(1).max(10_000).default(DECOMPRESS_DEFAULTS.max_ratio),
});

/** The member each sub-type needs; the other members are dropped on save. */
const MEMBER: Record<number, keyof FsConfig> = {
  1: 'renames',
  2: 'deletes',
  3: 'mkdirs',
  4: 'exist',
  5: 'compress',
  6: 'copy',
  7: 'pgp',
  8: 'metadata_check',
  9: 'decompress',
};

const members: Record<string, Joi.Schema> = {
  renames: Joi.array()
    .items(keyValue.keys({ update_modtime: Joi.boolean().default(false) }))
    .min(1),
  deletes: paths,
  mkdirs: paths,
  exist: paths,
  compress: Joi.object<CompressConfig>({ name: vpath.required(), paths: paths.required() }),
  copy: Joi.array().items(keyValue).min(1),
  pgp: pgpSchema,
  metadata_check: metadataCheckSchema,
  decompress: decompressSchema,
};

const keys: Record<string, Joi.Schema> = {
  type: Joi.number()
    .integer()
    .valid(...Object.keys(MEMBER).map(Number))
    .required()
    .messages({
      'any.only': '{{#label}} must be 1 (rename), 2 (delete), 3 (mkdirs), 4 (exist), 5 (compress), 6 (copy), 7 (pgp), 8 (metadata check) or 9 (decompress)',
    }),
};
keys.timeout = Joi.number().integer().min(0).max(86_400).default(0);
Object.assign(keys, members);

const TYPE_NAMES = ['', 'rename', 'delete', 'mkdirs', 'exist', 'compress', 'copy', 'pgp', 'metadata check', 'decompress'];

/** fs_config: `type` selects the member that must be set; the members of other sub-types are dropped on save. */
export const fsConfigSchema = Joi.object<FsConfig>(keys).custom((v: FsConfig, h) => {
  const need = MEMBER[v.type]!;
  if (v[need] === undefined) return h.message({ custom: `"${need}" is required for type ${v.type} (${TYPE_NAMES[v.type]})` });
  const out: Record<string, unknown> = { ...v };
  for (const m of Object.values(MEMBER)) if (m !== need) delete out[m];
  return out;
});

/** Secret fields (Secret objects on the API, plain strings once prepared). */
export const SECRET_FIELDS = ['pgp.password', 'pgp.private_key', 'pgp.passphrase'];

/** Go-template fields, rendered against the execution's context before the action runs. */
export const TEMPLATE_FIELDS = [
  'renames[].key',
  'renames[].value',
  'deletes[]',
  'mkdirs[]',
  'exist[]',
  'compress.name',
  'compress.paths[]',
  'copy[].key',
  'copy[].value',
  'pgp.paths[].key',
  'pgp.paths[].value',
  'metadata_check.paths[]',
  'metadata_check.metadata[].value',
  'decompress.name',
  'decompress.target',
];
