import crypto from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import type { MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import { Setting } from '../data/entities/index.js';

/** Cluster-wide key/value settings stored in the database. */
@injectable()
export class SettingsService {
  constructor(@inject(TOKENS.Orm) private readonly orm: MikroORM) {}

  async get(key: string): Promise<string | undefined> {
    const s = await this.orm.em.fork().findOne(Setting, { key });
    return s?.value;
  }

  /** Returns the stored value, or stores `make()` if none (first writer wins across nodes). */
  async getOrCreate(key: string, make: () => string): Promise<string> {
    const existing = await this.get(key);
    if (existing !== undefined) return existing;
    const em = this.orm.em.fork();
    try {
      await em.insert(Setting, { key, value: make(), updated_at: Date.now() });
    } catch {
      /* another node inserted it first */
    }
    return (await this.get(key))!;
  }

  /** The JWT signing key: from config when set, otherwise generated once and shared through the database. */
  async signingKey(configured: string): Promise<string> {
    if (configured) return crypto.createHash('sha256').update(`ferry-jwt:${configured}`).digest('base64');
    return this.getOrCreate('jwt_signing_key', () => crypto.randomBytes(32).toString('base64'));
  }
}
