/**
 * @ferry/fs-http/lib: the half of the plugin that needs undici. The package
 * entry (`@ferry/fs-http`) imports this module only when the provider first
 * creates an Fs, so a server that never uses the HTTP backend never loads it.
 * Import it directly to build an HttpFs by hand (tests, tools).
 */
export { HttpFs, type StatVfs } from './http.fs.js';
export { HttpFsClient, MAX_JSON_BYTES } from './client.js';
