import Joi from 'joi';

import { MFA_PROTOCOLS, type MfaProtocol } from '../sdk/protocols.js';

/** MFAProtocols of reference.yaml: the protocols a user's TOTP applies to (sdk/protocols.ts). */
export { MFA_PROTOCOLS, type MfaProtocol };

const configName = Joi.string().trim().min(1).max(255);

/** POST .../totp/generate */
export const totpGenerateInput = Joi.object({ config_name: configName.required() });

/** POST .../totp/validate */
export const totpValidateInput = Joi.object({
  config_name: configName.required(),
  passcode: Joi.string()
    .trim()
    .pattern(/^\d{6}$/, '6 digits')
    .required(),
  secret: Joi.string().trim().min(1).max(1024).required(),
});

/** A Secret as sent: Plain with the base32 secret, or the stored form read back (keeps the current secret). */
const secretInput = Joi.object({
  status: Joi.string().required(),
  payload: Joi.string().allow('').max(1024),
  key: Joi.any().strip(),
  additional_data: Joi.any().strip(),
  mode: Joi.any().strip(),
});

const baseTotp = {
  enabled: Joi.boolean().required(),
  config_name: configName.when('enabled', { is: true, then: Joi.required(), otherwise: Joi.optional().allow('') }),
  secret: secretInput,
};

/** POST /admin/totp/save (reference.yaml AdminTOTPConfig). */
export const adminTotpSaveInput = Joi.object(baseTotp);

/** POST /user/totp/save (reference.yaml UserTOTPConfig): `protocols` defaults to every MFA protocol. */
export const userTotpSaveInput = Joi.object({
  ...baseTotp,
  protocols: Joi.array()
    .items(Joi.string().valid(...MFA_PROTOCOLS))
    .min(1)
    .unique(),
});

export interface TotpSaveInput {
  enabled: boolean;
  config_name?: string;
  secret?: { status: string; payload?: string };
  protocols?: MfaProtocol[];
}
