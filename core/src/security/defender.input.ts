import Joi from 'joi';
import { defenderIpOfId } from './defender.service.js';

/** `{id}` of `/defender/hosts/{id}`: the hex encoding of an IP address, converted to the address. */
export const defenderHostParams = Joi.object({
  id: Joi.string()
    .max(128)
    .required()
    .custom((v: string, h) => defenderIpOfId(v) ?? h.error('defender.id'))
    .messages({ 'defender.id': '{{#label}} must be the hex encoding of an IP address (e.g. 3139322e3136382e312e3130 for 192.168.1.10)' }),
});
