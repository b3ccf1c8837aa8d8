/**
 * The success answers of the core's routes for the OpenAPI document, in
 * joi, with the names and types of reference.yaml (User, Admin, Group,
 * BaseVirtualFolder, Role, APIKey, EventAction, EventRule, Share,
 * IPListEntry, DefenderEntry, ConnectionStatus, QuotaScan, RetentionCheck,
 * DirEntry, Token, ApiResponse, BackupData, FsEvent, ProviderEvent,
 * LogEvent). Objects list what the spec declares and, like the spec, do not
 * forbid other members; nested settings objects (filters, filesystem,
 * options, conditions) are described by the request schemas of the routes
 * that take them.
 *
 * `declareAnswers` puts them on each route as `plugins.ferry.responses` when
 * the route does not declare its answers itself. Never checked at run time:
 * core/test/http/openapi-answers.test.ts checks real answers against them.
 */
import type { ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import type { FerryRouteOptions, RouteFactory } from '../server.js';
import { EVENT_PROTOCOLS, FS_EVENT_ACTIONS, LOG_EVENT_TYPES, PROVIDER_EVENT_ACTIONS, PROVIDER_OBJECT_TYPES } from '../../events/event-search.input.js';

type Answers = NonNullable<FerryRouteOptions['responses']>;

const int = () => Joi.number().integer();
const str = () => Joi.string().allow('');
const names = () => Joi.array().items(Joi.string());
const arrayOf = (of: Joi.Schema) => Joi.array().items(of);
const settings = () => Joi.object().unknown(true);
const millis = () => int().min(0).description('Unix time in milliseconds (0: never)');
/** A string, one of `values`. */
const oneOf = (values: readonly string[]) => Joi.string().valid(...values);

// members that several objects share, spread into them in the spec's order
const nameAndDescription = { name: Joi.string().required(), description: str() };
const stamps = { created_at: millis(), updated_at: millis() };
/** Creation, update, last use and expiry (API keys, shares). */
const useStamps = { ...stamps, last_use_at: millis(), expires_at: millis() };
const quotaUsage = { used_quota_size: int(), used_quota_files: int(), last_quota_update: int() };
const members = { users: names(), admins: names() };
const account = { id: int().required(), status: int().valid(0, 1).required(), username: Joi.string().required(), description: str() };
const profile = { description: str(), email: str(), allow_api_key_auth: Joi.boolean() };

/** An object with a database id, a name and a description, then `keys`, named `name` (reference.yaml). */
const named = (name: string, keys: Joi.PartialSchemaMap) => Joi.object({ id: int().required(), ...nameAndDescription, ...keys }).description(name);

export const ApiResponse = Joi.object({ message: Joi.string().required(), error: Joi.string() }).description('ApiResponse');
export const Token = Joi.object({ access_token: Joi.string().required(), expires_at: Joi.string().isoDate().required() }).description('Token');

const virtualFolder = Joi.object({
  id: int(),
  ...nameAndDescription,
  mapped_path: str(),
  ...quotaUsage,
  users: names(),
  filesystem: settings(),
  virtual_path: Joi.string(),
  quota_size: int(),
  quota_files: int(),
});

export const User = Joi.object({
  ...account,
  email: str(),
  expiration_date: millis(),
  password: str(),
  public_keys: names(),
  has_password: Joi.boolean(),
  home_dir: str(),
  virtual_folders: arrayOf(virtualFolder),
  uid: int(),
  gid: int(),
  max_sessions: int(),
  quota_size: int(),
  quota_files: int(),
  permissions: Joi.object().pattern(Joi.string(), names()).required(),
  ...quotaUsage,
  upload_bandwidth: int(),
  download_bandwidth: int(),
  upload_data_transfer: int(),
  download_data_transfer: int(),
  total_data_transfer: int(),
  used_upload_data_transfer: int(),
  used_download_data_transfer: int(),
  ...stamps,
  last_login: millis(),
  first_download: millis(),
  first_upload: millis(),
  last_password_change: millis(),
  filters: settings(),
  filesystem: settings(),
  additional_info: str(),
  groups: arrayOf(Joi.object({ name: Joi.string().required(), type: int().valid(1, 2, 3).required() })),
  oidc_custom_fields: settings(),
  role: str(),
}).description('User');

export const Admin = Joi.object({
  ...account,
  password: str(),
  email: str(),
  permissions: names().required(),
  filters: settings(),
  additional_info: str(),
  groups: arrayOf(Joi.object({ name: Joi.string().required(), options: settings() })),
  ...stamps,
  last_login: millis(),
  role: str(),
}).description('Admin');

export const Group = named('Group', { ...stamps, user_settings: settings(), virtual_folders: arrayOf(virtualFolder), ...members });
export const Folder = named('BaseVirtualFolder', { mapped_path: str(), ...quotaUsage, users: names(), groups: names(), filesystem: settings() });
export const Role = named('Role', { ...stamps, ...members });

export const ApiKey = Joi.object({
  id: Joi.string().required(),
  ...nameAndDescription,
  key: str(),
  scope: int().valid(1, 2).required(),
  ...useStamps,
  user: str(),
  admin: str(),
}).description('APIKey');

export const EventAction = named('BaseEventAction', { type: int().required(), options: settings(), rules: names() });

export const EventRule = named('EventRule', {
  status: int().valid(0, 1),
  ...stamps,
  trigger: int().min(1).max(7).required(),
  conditions: settings(),
  // the rule's actions with their order and options (a dump lists name, order and options only)
  actions: arrayOf(EventAction.keys({ id: int(), type: int(), order: int(), relation_options: settings() })),
});

export const Share = Joi.object({
  id: Joi.string().required(),
  ...nameAndDescription,
  scope: int().valid(1, 2, 3).required(),
  paths: names().required(),
  username: Joi.string().required(),
  ...useStamps,
  password: str(),
  max_tokens: int(),
  used_tokens: int(),
  allow_from: names(),
  emails: names(),
}).description('Share');

export const IpListEntry = Joi.object({
  ipornet: Joi.string().required(),
  description: str(),
  type: int().valid(1, 2, 3).required(),
  mode: int().valid(1, 2).required(),
  protocols: int(),
  ...stamps,
}).description('IPListEntry');

export const DefenderEntry = Joi.object({
  id: Joi.string().required(),
  ip: Joi.string().required(),
  score: int(),
  ban_time: Joi.string().isoDate().allow(''),
}).description('DefenderEntry');

export const ConnectionStatus = Joi.object({
  username: Joi.string().required(),
  connection_id: Joi.string().required(),
  client_version: str(),
  remote_address: str(),
  connection_time: int(),
  command: str(),
  last_activity: int(),
  // reference.yaml lists the protocols of file transfer servers; Ferry's connections are HTTP ones
  protocol: Joi.string(),
  active_transfers: arrayOf(Joi.object({ operation_type: oneOf(['upload', 'download']), path: Joi.string(), start_time: int(), size: int() })),
  node: str(),
}).description('ConnectionStatus');

/** A scan started for the object named by `key` (a user's username, a folder's name). */
const scan = (key: string, name: string) => Joi.object({ [key]: Joi.string().required(), start_time: int().required() }).description(name);
export const QuotaScan = scan('username', 'QuotaScan');
export const FolderQuotaScan = scan('name', 'FolderQuotaScan');
export const RetentionCheck = Joi.object({
  username: Joi.string().required(),
  folders: arrayOf(Joi.object({ path: Joi.string(), retention: int(), delete_empty_dirs: Joi.boolean() })),
  start_time: int().required(),
}).description('RetentionCheck');

export const DirEntry = Joi.object({
  name: Joi.string().required(),
  size: int().min(0).required(),
  mode: int().required(),
  last_modified: Joi.string().isoDate().required(),
}).description('DirEntry');

export const AdminProfile = Joi.object({
  ...profile,
  // an addition to v2.7 (GET only, for the web admin): the admin's two-factor state
  two_factor: Joi.object({
    enabled: Joi.boolean().required(),
    config_name: str().required(),
    required: Joi.boolean().required().description('require_two_factor: the admin may not turn it off'),
  }).description('the two-factor state of the admin'),
}).description('AdminProfile');
export const UserProfile = Joi.object({
  ...profile,
  public_keys: names(),
  // additions to v2.7 (GET only, for the web client): what the account may change, and its two-factor state
  web_client: names().description("the account's effective web client options (groups merged): the changes they forbid are refused"),
  two_factor: Joi.object({
    enabled: Joi.boolean().required(),
    config_name: str().required(),
    protocols: names().required().description('the protocols the TOTP code is asked on'),
    required_protocols: names().required().description('the protocols on which the account must have two-factor authentication (two_factor_protocols)'),
  }).description('the two-factor state of the account'),
}).description('UserProfile');

/** Objects as a dump holds them: without their database id (ids are not carried from one server to another). */
const dumped = (o: Joi.ObjectSchema) => arrayOf(o.fork(['id'], (k) => k.optional()));

export const BackupData = Joi.object({
  users: dumped(User),
  folders: dumped(Folder),
  groups: dumped(Group),
  admins: dumped(Admin),
  api_keys: arrayOf(ApiKey),
  shares: arrayOf(Share),
  event_actions: dumped(EventAction),
  event_rules: dumped(EventRule),
  roles: dumped(Role),
  version: int(),
}).description('BackupData');

/** An event of the event search: the members all kinds have, then `keys`. */
const event = (name: string, keys: Joi.PartialSchemaMap) =>
  Joi.object({ id: Joi.string().required(), timestamp: int().required(), username: str(), ip: str(), role: str(), instance_id: str(), ...keys }).description(
    name,
  );
export const FsEvent = event('FsEvent', {
  action: oneOf(FS_EVENT_ACTIONS).required(),
  fs_path: str(),
  fs_target_path: str(),
  virtual_path: str(),
  virtual_target_path: str(),
  ssh_cmd: str(),
  file_size: int(),
  elapsed: int(),
  status: int().valid(1, 2, 3),
  protocol: oneOf(EVENT_PROTOCOLS),
  session_id: str(),
  fs_provider: int(),
  bucket: str(),
  endpoint: str(),
  open_flags: str(),
});
export const ProviderEvent = event('ProviderEvent', {
  action: oneOf(PROVIDER_EVENT_ACTIONS).required(),
  object_type: oneOf(PROVIDER_OBJECT_TYPES),
  object_name: str(),
  object_data: Joi.alternatives(settings(), Joi.string()),
});
export const LogEvent = event('LogEvent', {
  event: int()
    .valid(...LOG_EVENT_TYPES)
    .required(),
  protocol: oneOf(EVENT_PROTOCOLS),
  message: str(),
});

/** Counts per time bucket (an addition to v2.7): GET /events/fs/aggregate. */
export const FsEventCount = Joi.object({
  bucket: int().min(0).required().description('index of the bucket: it starts at start_timestamp + bucket * interval'),
  action: oneOf(FS_EVENT_ACTIONS).required(),
  status: int().valid(1, 2, 3).required(),
  count: int().min(1).required(),
  file_size: int().min(0).required().description('sum of the file_size of these events, bytes'),
}).description('FsEventCount');

/** GET /events/logs/aggregate (an addition to v2.7). */
export const LogEventCount = Joi.object({
  bucket: int().min(0).required().description('index of the bucket: it starts at start_timestamp + bucket * interval'),
  event: int()
    .valid(...LOG_EVENT_TYPES)
    .required(),
  count: int().min(1).required(),
}).description('LogEventCount');

/** The reference.yaml name a schema carries as its description. */
const nameOf = (of: Joi.ObjectSchema): string => (of.describe().flags as { description?: string } | undefined)?.description ?? 'objects';
const ok = (description: string, schema: Joi.Schema = ApiResponse): Answers => ({ 200: { description, schema } });
const created = (description: string, schema: Joi.Schema = ApiResponse): Answers => ({ 201: { description, schema } });
const accepted = (description: string): Answers => ({ 202: { description, schema: ApiResponse } });
/** An array of `of` (`note`: what the description adds). */
const list = (of: Joi.ObjectSchema, note = ''): Answers => ({ 200: { description: `array of ${nameOf(of)}${note}`, schema: arrayOf(of) } });
const one = (of: Joi.ObjectSchema): Answers => ({ 200: { description: nameOf(of), schema: of } });
/** A file as stored: its type is the file's (by its name), any type. */
const bytes = (description: string, type = '*/*'): Answers => ({ 200: { description, type, schema: Joi.binary() } });
const empty = (code: number, description: string): Answers => ({ [code]: { description } });
const csvOr = (of: Joi.ObjectSchema): Answers => list(of, ' (text/csv with csv_export=true)');
/** A file, whole or (206) the part a Range asks for. */
const file = (): Answers => ({ ...bytes('the file (206 with a Range)'), 206: { description: 'part of the file', type: '*/*', schema: Joi.binary() } });

/** CRUD answers of a resource: list, create (201, the object or a message), get, update, delete. */
function crud(
  base: string,
  item: string,
  of: Joi.ObjectSchema,
  createdBody: Joi.Schema = of,
  createdDescription = 'the created object',
): Record<string, Answers> {
  return {
    [`get ${base}`]: list(of),
    [`post ${base}`]: created(createdDescription, createdBody),
    [`get ${base}/${item}`]: one(of),
    [`put ${base}/${item}`]: ok('ApiResponse'),
    [`delete ${base}/${item}`]: ok('ApiResponse'),
  };
}

/** `method path` (hapi's lower-case method and path template) → answers. */
export const ROUTE_ANSWERS: Record<string, Answers> = {
  'get /readyz': ok('the server is ready', Joi.object({ status: Joi.string().valid('ready').required(), database: Joi.string().required() })),
  'get /api/v2/token': one(Token),
  'get /api/v2/user/token': one(Token),
  'get /api/v2/logout': ok('ApiResponse'),
  'get /api/v2/user/logout': ok('ApiResponse'),
  ...crud('/api/v2/admins', '{username}', Admin),
  'get /api/v2/admin/profile': one(AdminProfile),
  'put /api/v2/admin/profile': ok('ApiResponse'),
  'put /api/v2/admin/changepwd': ok('ApiResponse'),
  ...crud('/api/v2/roles', '{name}', Role),
  ...crud(
    '/api/v2/apikeys',
    '{id}',
    ApiKey,
    // reference.yaml spells the member "mesage"
    Joi.object({ mesage: Joi.string().required(), key: Joi.string().required() }),
  ),
  // a user's own API keys (an addition to v2.7)
  'get /api/v2/user/apikeys': list(ApiKey),
  'post /api/v2/user/apikeys': created(
    'the key, shown this once',
    Joi.object({ message: Joi.string().required(), id: Joi.string().required(), key: Joi.string().required() }),
  ),
  'delete /api/v2/user/apikeys/{id}': ok('ApiResponse'),
  ...crud('/api/v2/eventactions', '{name}', EventAction),
  ...crud('/api/v2/eventrules', '{name}', EventRule),
  'post /api/v2/eventrules/run/{name}': accepted('the rule was started'),
  ...crud('/api/v2/users', '{username}', User),
  ...crud('/api/v2/groups', '{name}', Group),
  ...crud('/api/v2/folders', '{name}', Folder),
  ...crud('/api/v2/user/shares', '{id}', Share, ApiResponse),
  ...crud('/api/v2/iplists/{type}', '{ipornet*}', IpListEntry, ApiResponse, 'ApiResponse'),
  'get /api/v2/defender/hosts': list(DefenderEntry),
  'get /api/v2/defender/hosts/{id}': one(DefenderEntry),
  'delete /api/v2/defender/hosts/{id}': ok('ApiResponse'),
  'get /api/v2/connections': list(ConnectionStatus),
  'delete /api/v2/connections/{connectionID}': ok('ApiResponse'),
  'get /api/v2/quotas/users/scans': list(QuotaScan),
  'post /api/v2/quotas/users/{username}/scan': accepted('the scan was started'),
  'put /api/v2/quotas/users/{username}/usage': ok('ApiResponse'),
  'put /api/v2/quotas/users/{username}/transfer-usage': ok('ApiResponse'),
  'get /api/v2/quotas/folders/scans': list(FolderQuotaScan),
  'post /api/v2/quotas/folders/{name}/scan': accepted('the scan was started'),
  'put /api/v2/quotas/folders/{name}/usage': ok('ApiResponse'),
  'get /api/v2/retention/users/checks': list(RetentionCheck),
  'get /api/v2/dumpdata': {
    200: { description: 'BackupData with output-data=1, else ApiResponse naming the file', schema: Joi.alternatives(BackupData, ApiResponse) },
  },
  'get /api/v2/loaddata': ok('ApiResponse'),
  'post /api/v2/loaddata': ok('ApiResponse'),
  'get /api/v2/events/fs': csvOr(FsEvent),
  'get /api/v2/events/provider': csvOr(ProviderEvent),
  'get /api/v2/events/logs': csvOr(LogEvent),
  'get /api/v2/events/fs/aggregate': list(FsEventCount),
  'get /api/v2/events/logs/aggregate': list(LogEventCount),
  'get /api/v2/user/profile': one(UserProfile),
  'put /api/v2/user/profile': ok('ApiResponse'),
  'put /api/v2/user/changepwd': ok('ApiResponse'),
  'get /api/v2/user/dirs': list(DirEntry),
  'post /api/v2/user/dirs': created('ApiResponse'),
  'patch /api/v2/user/dirs': ok('ApiResponse'),
  'delete /api/v2/user/dirs': ok('ApiResponse'),
  'get /api/v2/user/files': file(),
  'post /api/v2/user/files': created('ApiResponse'),
  'post /api/v2/user/files/upload': created('ApiResponse'),
  'patch /api/v2/user/files': ok('ApiResponse'),
  'delete /api/v2/user/files': ok('ApiResponse'),
  'patch /api/v2/user/files/metadata': ok('ApiResponse'),
  'post /api/v2/user/file-actions/copy': ok('ApiResponse'),
  'post /api/v2/user/file-actions/move': ok('ApiResponse'),
  'post /api/v2/user/streamzip': bytes('a zip of the files', 'application/zip'),
  'get /api/v2/user/streamzip': bytes('a zip of the files', 'application/zip'),
  'get /api/v2/shares/{id}': bytes('a zip of the shared files (application/zip), or the shared file with compress=false'),
  'post /api/v2/shares/{id}': created('ApiResponse'),
  'get /api/v2/shares/{id}/dirs': list(DirEntry),
  'get /api/v2/shares/{id}/files': file(),
  'post /api/v2/shares/{id}/files/{filePath*}': created('ApiResponse'),
  'post /api/v2/shares/{id}/actions/mkdir': created('ApiResponse'),
  'post /api/v2/shares/{id}/codes': ok('ApiResponse'),
  'post /api/v2/shares/{id}/token': one(Token),
  'options /api/v2/shares-chunked-uploads': empty(200, 'TUS discovery (Tus-* headers, no body)'),
  'post /api/v2/shares-chunked-uploads': empty(201, 'the upload was created (Location, Upload-Offset; no body)'),
  'get /api/v2/shares-chunked-uploads/{id}': empty(200, 'HEAD only: the offset of the upload (Upload-Offset, Upload-Length; no body)'),
  'patch /api/v2/shares-chunked-uploads/{id}': empty(204, 'the chunk was stored (Upload-Offset; no body)'),
  'delete /api/v2/shares-chunked-uploads/{id}': empty(204, 'the upload was terminated (an addition): its bytes are gone (no body)'),
  // an addition to the API: resumable uploads of signed-in users
  'options /api/v2/user/chunked-uploads': empty(200, 'TUS discovery (Tus-* headers, no body)'),
  'post /api/v2/user/chunked-uploads': empty(201, 'the upload was created (Location, Upload-Offset; no body)'),
  'get /api/v2/user/chunked-uploads/{id}': empty(200, 'HEAD only: the offset of the upload (Upload-Offset, Upload-Length; no body)'),
  'patch /api/v2/user/chunked-uploads/{id}': empty(204, 'the chunk was stored (Upload-Offset; no body)'),
  'delete /api/v2/user/chunked-uploads/{id}': empty(204, 'the upload was terminated: its bytes are gone (no body)'),
  'get /api/v2/oidc/login': empty(302, 'a redirect to the identity provider'),
  'get /api/v2/oidc/callback': one(Token),
};

/** Error statuses that the document cannot derive from a route's options. */
export const ROUTE_ERRORS: Record<string, number[]> = {
  // 404 while the defender is not enabled
  'get /api/v2/defender/hosts': [404],
};

/** Puts ROUTE_ANSWERS (and ROUTE_ERRORS) on the routes of a factory that declare no answers themselves. */
export function declareAnswers(factory: RouteFactory): RouteFactory {
  return (c) =>
    factory(c).map((route: ServerRoute) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      const answers = ROUTE_ANSWERS[`${String(methods[0]).toLowerCase()} ${route.path}`];
      const options = (typeof route.options === 'object' ? route.options : {}) as Exclude<ServerRoute['options'], (...a: never[]) => unknown> & object;
      const errors = ROUTE_ERRORS[`${String(methods[0]).toLowerCase()} ${route.path}`];
      const ferry = options.plugins?.ferry;
      if ((!answers || ferry?.responses) && !errors) return route;
      const add: FerryRouteOptions = {};
      if (answers && !ferry?.responses) add.responses = answers;
      if (errors) add.errors = [...new Set([...(ferry?.errors ?? []), ...errors])];
      return { ...route, options: { ...options, plugins: { ...options.plugins, ferry: { ...ferry, ...add } } } };
    });
}
