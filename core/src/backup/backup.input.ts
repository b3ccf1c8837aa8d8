import Joi from 'joi';
import { DUMP_SCOPES } from './backup.service.js';

/** `scopes=users,groups` (or repeated `scopes=`), each a DumpDataScopes value. */
const scopes = Joi.alternatives()
  .try(Joi.array().items(Joi.string()), Joi.string().allow(''))
  .custom((v: string | string[], h) => {
    const list = (Array.isArray(v) ? v : [v])
      .flatMap((s) => s.split(','))
      .map((s) => s.trim())
      .filter(Boolean);
    for (const s of list) {
      if (!(DUMP_SCOPES as readonly string[]).includes(s)) return h.message({ custom: `"scopes": "${s}" is not one of ${DUMP_SCOPES.join(', ')}` });
    }
    return [...new Set(list)];
  });

export const dumpQuery = Joi.object({
  'output-file': Joi.string().max(1024),
  'output-data': Joi.number().integer().valid(0, 1).default(0),
  indent: Joi.number().integer().valid(0, 1).default(0),
  scopes,
});

const loadParams = {
  mode: Joi.number().integer().valid(0, 1, 2).default(0),
  'scan-quota': Joi.number().integer().valid(0, 1, 2).default(0),
};

export const loadFileQuery = Joi.object({ 'input-file': Joi.string().max(1024).required(), ...loadParams });
export const loadBodyQuery = Joi.object(loadParams);
