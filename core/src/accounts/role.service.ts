import { InvalidError, NotFoundError } from '../errors.js';
import { inject, injectable } from 'tsyringe';
import type { MikroORM } from '@mikro-orm/core';
import { TOKENS } from '../tokens.js';
import { Admin, Role, User } from '../data/entities/index.js';
import type { ListQuery } from '../util/common.input.js';
import { ProviderEventsService, type Actor } from '../events/provider-events.service.js';

export interface RoleInput {
  name: string;
  description?: string;
}

/** Roles scope admins and users: an admin with a role manages only objects of that role. */
@injectable()
export class RoleService {
  constructor(
    @inject(TOKENS.Orm) private readonly orm: MikroORM,
    @inject(ProviderEventsService) private readonly events: ProviderEventsService,
  ) {}

  async render(role: Role): Promise<Record<string, unknown>> {
    const em = this.orm.em.fork();
    const [users, admins] = await Promise.all([
      em.find(User, { role: role.id }, { fields: ['username'], orderBy: { username: 'ASC' }, limit: 1000 }),
      em.find(Admin, { role: role.id }, { fields: ['username'], orderBy: { username: 'ASC' }, limit: 1000 }),
    ]);
    return {
      id: role.id,
      name: role.name,
      description: role.description,
      created_at: role.created_at,
      updated_at: role.updated_at,
      users: users.map((u) => u.username),
      admins: admins.map((a) => a.username),
    };
  }

  async list(q: ListQuery): Promise<Role[]> {
    return this.orm.em.fork().find(Role, {}, { orderBy: { name: q.order }, offset: q.offset, limit: q.limit });
  }

  async get(name: string): Promise<Role> {
    const role = await this.orm.em.fork().findOne(Role, { name });
    if (!role) throw new NotFoundError(`role "${name}" not found`);
    return role;
  }

  async findByName(name: string): Promise<Role | null> {
    return this.orm.em.fork().findOne(Role, { name });
  }

  async create(input: RoleInput, actor: Actor): Promise<Role> {
    const em = this.orm.em.fork();
    if (await em.count(Role, { name: input.name })) throw new InvalidError(`role "${input.name}" already exists`);
    const now = Date.now();
    const role = em.create(Role, { name: input.name, description: input.description ?? '', created_at: now, updated_at: now });
    await em.flush();
    this.events.emit('add', 'role', role.name, await this.render(role), actor);
    return role;
  }

  async update(name: string, input: RoleInput, actor: Actor): Promise<void> {
    const em = this.orm.em.fork();
    const role = await em.findOne(Role, { name });
    if (!role) throw new NotFoundError(`role "${name}" not found`);
    if (input.name !== undefined && input.name !== name) throw new InvalidError('a role cannot be renamed');
    role.description = input.description ?? '';
    role.updated_at = Date.now();
    await em.flush();
    this.events.emit('update', 'role', role.name, await this.render(role), actor);
  }

  async delete(name: string, actor: Actor): Promise<void> {
    const em = this.orm.em.fork();
    const role = await em.findOne(Role, { name });
    if (!role) throw new NotFoundError(`role "${name}" not found`);
    const [users, admins] = await Promise.all([
      em.find(User, { role: role.id }, { fields: ['username'], limit: 10 }),
      em.find(Admin, { role: role.id }, { fields: ['username'], limit: 10 }),
    ]);
    if (users.length || admins.length) {
      const refs = [...admins.map((a) => `admin "${a.username}"`), ...users.map((u) => `user "${u.username}"`)];
      throw new InvalidError(`role "${name}" is still referenced by ${refs.join(', ')}`);
    }
    const data = await this.render(role);
    await em.removeAndFlush(role);
    this.events.emit('delete', 'role', name, data, actor);
  }
}
