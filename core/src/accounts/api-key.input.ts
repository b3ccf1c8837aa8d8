import Joi from 'joi';

export const apiKeyInput = Joi.object({
  id: Joi.any().strip(),
  key: Joi.any().strip(),
  name: Joi.string().trim().min(1).max(255).required(),
  scope: Joi.number().valid(1, 2).required(),
  description: Joi.string().allow('').max(4096).default(''),
  expires_at: Joi.number().integer().min(0).default(0),
  user: Joi.string().allow('').max(255).default(''),
  admin: Joi.string().allow('').max(255).default(''),
  created_at: Joi.any().strip(),
  updated_at: Joi.any().strip(),
  last_use_at: Joi.any().strip(),
});
