import Joi from 'joi';
import { ipOrNet } from '../accounts/admin.input.js';
import { virtualPath } from '../accounts/account.input.js';
import { timestampMs } from '../util/common.input.js';

/** ShareScope: 1 read, 2 write, 3 read and write. */
export const ShareScope = { Read: 1, Write: 2, ReadWrite: 3 } as const;
export type ShareScope = (typeof ShareScope)[keyof typeof ShareScope];

/** What a share answers in place of its password hash when it has a password. */
export const REDACTED_PASSWORD = '[**redacted**]';

/** An address of an email-restricted share (compared in lower case). */
export const shareEmail = Joi.string().trim().lowercase().max(254).email({ tlds: false, ignoreLength: true });

/** POST /shares/{id}/codes: the address a one-time code is asked for. */
export const shareCodeRequest = Joi.object({ email: shareEmail.required() });

/** Share ids: URL-safe, as generated (22 base64url characters) or restored. */
export const shareId = Joi.string().pattern(/^[A-Za-z0-9_-]{1,64}$/, 'share id');

/**
 * Share as a user sends it (reference.yaml Share). Read-only fields are
 * accepted and stripped, so a client can send back an object it read.
 * `password`: the plain password; '' for none; the redacted marker keeps the current one.
 */
export const shareInput = Joi.object({
  id: Joi.any().strip(),
  username: Joi.any().strip(),
  created_at: Joi.any().strip(),
  updated_at: Joi.any().strip(),
  last_use_at: Joi.any().strip(),
  used_tokens: Joi.any().strip(),
  name: Joi.string()
    .trim()
    .min(1)
    .max(255)
    .pattern(/^[^\u0000-\u001f\u007f]+$/, 'a name without control characters')
    .required(),
  description: Joi.string().allow('').max(4096).default(''),
  scope: Joi.number()
    .integer()
    .valid(ShareScope.Read, ShareScope.Write, ShareScope.ReadWrite)
    .description('1 read, 2 write, 3 read and write; when omitted, the scope the share policies of the paths allow (core/src/shares/share-policy.ts)'),
  paths: Joi.array().items(virtualPath).min(1).max(100).required(),
  expires_at: timestampMs.default(0),
  password: Joi.string().allow('').max(1024).default(''),
  max_tokens: Joi.number().integer().min(0).max(2147483647).default(0),
  allow_from: Joi.array().items(ipOrNet).max(1000).default([]),
  emails: Joi.array().items(shareEmail).max(100).unique().default([]),
});

export interface ShareInput {
  name: string;
  description: string;
  /** Omitted: the share policies of the paths supply it. */
  scope?: ShareScope;
  paths: string[];
  expires_at: number;
  password: string;
  max_tokens: number;
  allow_from: string[];
  /** Email-restricted share: addresses that may get a one-time code by mail (lower case); empty: none. */
  emails: string[];
}

/** Query of the public share routes. */
export const sharePathQuery = Joi.string().allow('').max(4096);
