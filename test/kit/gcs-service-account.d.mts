/** Base64 of a fake service-account key for the GCS emulator (cached unless `extra` members are given). */
export function fakeGcsServiceAccountB64(extra?: Record<string, unknown>): string;
