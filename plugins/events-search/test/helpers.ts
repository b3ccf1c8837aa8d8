import path from 'node:path';
import { mkdirSync } from 'node:fs';
import { TOKENS, type EventBus, type EventSearch, type FsEvent, type LogEvent, type ProviderEvent } from '@ferry/core';
import { createTestApp, type TestApp, type TestAppOptions } from '@ferry/core/testing';

export const PLUGIN = '@ferry/events-search';

/** A test app with fs-local and the plugin (short flush interval); `config` is the plugin's. */
export async function appWithSearch(
  config: Record<string, unknown> = {},
  o: Omit<TestAppOptions, 'plugins'> = {},
  more: { name: string; config?: Record<string, unknown> }[] = [],
): Promise<TestApp> {
  return createTestApp({ ...o, plugins: [{ name: '@ferry/fs-local' }, { name: PLUGIN, config: { flush_interval: 20, ...config } }, ...more] });
}

export function storeOf(ta: TestApp): EventSearch {
  const s = ta.app.container.resolve<{ find(): EventSearch | undefined }>(TOKENS.EventSearch).find();
  if (!s) throw new Error('no event search registered');
  return s;
}

/** Waits until every event published so far is written. */
export async function settled(ta: TestApp): Promise<void> {
  const store = storeOf(ta);
  await new Promise((r) => setImmediate(r));
  const deadline = Date.now() + 20_000;
  while (store.stats().queued > 0) {
    if (Date.now() > deadline) throw new Error(`events still queued: ${JSON.stringify(store.stats())}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export function bus(ta: TestApp): EventBus {
  return ta.app.container.resolve<EventBus>(TOKENS.EventBus);
}

export function fsEvent(o: Partial<FsEvent>): FsEvent {
  return {
    timestamp: Date.now() * 1e6,
    action: 'upload',
    username: 'u1',
    fs_path: '/srv/u1/a.txt',
    virtual_path: '/a.txt',
    file_size: 10,
    elapsed: 5,
    status: 1,
    protocol: 'HTTP',
    ip: '10.0.0.1',
    session_id: 's1',
    fs_provider: 0,
    instance_id: 'node-a',
    role: '',
    ...o,
  };
}

export function providerEvent(o: Partial<ProviderEvent>): ProviderEvent {
  return {
    timestamp: Date.now() * 1e6,
    action: 'add',
    username: 'admin',
    ip: '10.0.0.1',
    object_type: 'user',
    object_name: 'u1',
    object_data: { username: 'u1' },
    role: '',
    instance_id: 'node-a',
    ...o,
  };
}

export function logEvent(o: Partial<LogEvent>): LogEvent {
  return {
    timestamp: Date.now() * 1e6,
    event: 5,
    protocol: 'HTTP',
    username: 'u1',
    ip: '10.0.0.1',
    message: 'user login',
    role: '',
    instance_id: 'node-a',
    ...o,
  };
}

/** Creates a user with a local home under the app's data dir. */
export async function addUser(ta: TestApp, token: string, username: string, extra: Record<string, unknown> = {}): Promise<void> {
  const home = path.join(ta.dataDir, 'homes', username);
  mkdirSync(home, { recursive: true });
  const r = await ta.inject('POST', '/api/v2/users', {
    token,
    payload: { username, password: `${username}-password`, status: 1, home_dir: home, permissions: { '/': ['*'] }, ...extra },
  });
  if (r.statusCode !== 201) throw new Error(`user ${username}: ${r.statusCode} ${r.payload}`);
}

/** The JSON array of an event search (asserting 200). */
export async function search<T = Record<string, unknown>>(ta: TestApp, token: string, url: string): Promise<T[]> {
  const r = await ta.inject('GET', url, { token });
  if (r.statusCode !== 200) throw new Error(`${url}: ${r.statusCode} ${r.payload}`);
  return JSON.parse(r.payload) as T[];
}
