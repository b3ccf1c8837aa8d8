import Joi from 'joi';
import { canonicalIpNet } from '../util/ip-net.js';
import type { LoginProtocol } from '../sdk/protocols.js';

/** IPListType: 1 allow list, 2 defender, 3 rate limiter safe list. */
export const IP_LIST_TYPES = [1, 2, 3] as const;
export type IpListType = (typeof IP_LIST_TYPES)[number];

/** IPListMode: 1 allow, 2 deny (defender lists only). */
export const IP_LIST_MODES = [1, 2] as const;

/** Protocol bits of an entry (0: every protocol): one per login protocol of sdk/protocols.ts. */
export const IP_LIST_PROTOCOLS = { SSH: 1, FTP: 2, DAV: 4, HTTP: 8 } as const satisfies Record<LoginProtocol, number>;
export type IpListProtocol = LoginProtocol;
export const ALL_PROTOCOLS_MASK = 15;

export const ipListType = Joi.number()
  .integer()
  .valid(...IP_LIST_TYPES);

/** An IPv4/IPv6 address or CIDR network, converted to its canonical `address/prefix`. */
export const ipOrNet = Joi.string()
  .trim()
  .max(64)
  .custom((v: string, h) => canonicalIpNet(v) ?? h.error('ipornet.invalid'))
  .messages({ 'ipornet.invalid': '{{#label}} must be an IPv4 or IPv6 address or CIDR network, such as 192.168.1.10 or 10.0.0.0/8' });

export const ipListParams = Joi.object({ type: ipListType.required() });
export const ipListEntryParams = Joi.object({ type: ipListType.required(), ipornet: ipOrNet.required() });

/** Characters of an address or network (used for `filter` and `from`). */
const ipChars = Joi.string()
  .trim()
  .max(64)
  .pattern(/^[0-9A-Fa-f.:/]*$/, { name: 'IP address or network characters' });

export const ipListQuery = Joi.object({
  filter: ipChars.allow(''),
  from: ipChars.allow(''),
  limit: Joi.number().integer().min(1).max(500).default(100),
  order: Joi.string().valid('ASC', 'DESC').default('ASC'),
});

export interface IpListQuery {
  filter?: string;
  from?: string;
  limit: number;
  order: 'ASC' | 'DESC';
}

const entryKeys = {
  ipornet: ipOrNet,
  type: ipListType,
  mode: Joi.number()
    .integer()
    .valid(...IP_LIST_MODES)
    .default(1),
  protocols: Joi.number().integer().min(0).max(ALL_PROTOCOLS_MASK).default(0),
  description: Joi.string().allow('').max(4096).default(''),
  created_at: Joi.any().strip(),
  updated_at: Joi.any().strip(),
};

/** IPListEntry on create (POST): `ipornet` required. */
export const ipListEntryCreate = Joi.object({ ...entryKeys, ipornet: ipOrNet.required() });
/** IPListEntry on update (PUT): `ipornet`, when sent, must be the entry's. */
export const ipListEntryUpdate = Joi.object(entryKeys);
/** IPListEntry in a backup: `type` required, timestamps kept. */
export const ipListEntryBackup = Joi.object({
  ...entryKeys,
  ipornet: ipOrNet.required(),
  type: ipListType.required(),
  created_at: Joi.number().integer().min(0).default(0),
  updated_at: Joi.number().integer().min(0).default(0),
});

export interface IpListEntryInput {
  ipornet?: string;
  type?: IpListType;
  mode: 1 | 2;
  protocols: number;
  description: string;
}
