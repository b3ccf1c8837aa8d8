/** Why an encrypted file could not be read. */
export type CryptFailure = 'format' | 'passphrase' | 'integrity';

/**
 * Raised when stored data cannot be decrypted. It is deliberately not an
 * FsError: the request was fine, the stored file (or the configured
 * passphrase) is not, so the core answers with a server error and logs the
 * message, which names the file and what failed.
 */
export class FsCryptError extends Error {
  readonly reason: CryptFailure;
  readonly path: string;

  constructor(reason: CryptFailure, path: string, message: string) {
    super(`${path}: ${message}`);
    this.name = 'FsCryptError';
    this.reason = reason;
    this.path = path;
  }

  static format(path: string, what: string): FsCryptError {
    return new FsCryptError('format', path, `not a readable fs-crypt file: ${what}`);
  }

  static passphrase(path: string): FsCryptError {
    return new FsCryptError('passphrase', path, 'wrong passphrase: the key check in the file header does not match (or the header was altered)');
  }

  static integrity(path: string, what: string): FsCryptError {
    return new FsCryptError('integrity', path, `integrity check failed: ${what}; the file is corrupted or was tampered with`);
  }
}
