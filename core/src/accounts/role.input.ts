import Joi from 'joi';
import { objectName } from '../util/common.input.js';

export const roleInput = Joi.object({
  id: Joi.any().strip(),
  name: objectName.required(),
  description: Joi.string().allow('').max(4096).default(''),
  created_at: Joi.any().strip(),
  updated_at: Joi.any().strip(),
  users: Joi.any().strip(),
  admins: Joi.any().strip(),
});
