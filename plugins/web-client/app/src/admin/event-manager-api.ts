/** The event actions and rules of the admin API the console reads and writes (/api/v2/eventactions, /api/v2/eventrules, on-demand runs). */
import type { operations } from '../../generated/api';
import { api } from '../api';
import { failure } from './api-result';

export type ActionRow = operations['get_api_v2_eventactions_name']['responses'][200]['content']['application/json'];
export type RuleRow = operations['get_api_v2_eventrules_name']['responses'][200]['content']['application/json'];
type ActionBody = NonNullable<operations['post_api_v2_eventactions']['requestBody']>['content']['application/json'];
type RuleBody = NonNullable<operations['post_api_v2_eventrules']['requestBody']>['content']['application/json'];
type Query = NonNullable<operations['get_api_v2_eventactions']['parameters']['query']>;

// the options and conditions are free-form objects in the OpenAPI document (each action type has its own)
const asAction = (a: { name: string; description: string; type: number; options: Record<string, unknown> }) => a as unknown as ActionBody;

export async function listActions(query: Query): Promise<{ rows?: ActionRow[]; message?: string }> {
  const { data, error, response } = await api.GET('/api/v2/eventactions', { params: { query } });
  return data ? { rows: data } : { message: failure(response.status, error) };
}

export async function getAction(name: string): Promise<{ row?: ActionRow; status: number; message?: string }> {
  const { data, error, response } = await api.GET('/api/v2/eventactions/{name}', { params: { path: { name } } });
  return data ? { row: data, status: 200 } : { status: response.status, message: failure(response.status, error) };
}

export async function createAction(a: Parameters<typeof asAction>[0]): Promise<string | null> {
  const { error, response } = await api.POST('/api/v2/eventactions', { body: asAction(a) });
  return response.ok ? null : failure(response.status, error);
}

export async function updateAction(name: string, a: Parameters<typeof asAction>[0]): Promise<string | null> {
  const { error, response } = await api.PUT('/api/v2/eventactions/{name}', { params: { path: { name } }, body: asAction(a) });
  return response.ok ? null : failure(response.status, error);
}

export async function deleteAction(name: string): Promise<string | null> {
  const { error, response } = await api.DELETE('/api/v2/eventactions/{name}', { params: { path: { name } } });
  return response.ok ? null : failure(response.status, error);
}

export async function listRules(query: Query): Promise<{ rows?: RuleRow[]; message?: string }> {
  const { data, error, response } = await api.GET('/api/v2/eventrules', { params: { query } });
  return data ? { rows: data } : { message: failure(response.status, error) };
}

export async function getRule(name: string): Promise<{ row?: RuleRow; status: number; message?: string }> {
  const { data, error, response } = await api.GET('/api/v2/eventrules/{name}', { params: { path: { name } } });
  return data ? { row: data, status: 200 } : { status: response.status, message: failure(response.status, error) };
}

export async function createRule(r: unknown): Promise<string | null> {
  const { error, response } = await api.POST('/api/v2/eventrules', { body: r as RuleBody });
  return response.ok ? null : failure(response.status, error);
}

export async function updateRule(name: string, r: unknown): Promise<string | null> {
  const { error, response } = await api.PUT('/api/v2/eventrules/{name}', { params: { path: { name } }, body: r as RuleBody });
  return response.ok ? null : failure(response.status, error);
}

export async function deleteRule(name: string): Promise<string | null> {
  const { error, response } = await api.DELETE('/api/v2/eventrules/{name}', { params: { path: { name } } });
  return response.ok ? null : failure(response.status, error);
}

/** Starts an on-demand rule: the server's answer (202: started, the actions run in the background), or its refusal. */
export async function runRule(name: string): Promise<{ ok: boolean; message: string }> {
  const { data, error, response } = await api.POST('/api/v2/eventrules/run/{name}', { params: { path: { name } } });
  return response.ok
    ? { ok: true, message: (data as { message?: string } | undefined)?.message ?? '' }
    : { ok: false, message: failure(response.status, error) };
}
