import Joi from 'joi';

export const usageModeQuery = Joi.object({ mode: Joi.string().valid('add', 'reset').default('reset') });

/** QuotaUsage: a missing field counts 0; negative values only make sense with mode=add. */
export const quotaUsageInput = Joi.object({
  used_quota_size: Joi.number().integer(),
  used_quota_files: Joi.number().integer(),
}).required();

export const transferUsageInput = Joi.object({
  used_upload_data_transfer: Joi.number().integer(),
  used_download_data_transfer: Joi.number().integer(),
}).required();
