import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real OpenID provider (oidc-provider) in process on 127.0.0.1 for the
 * OIDC tests: one confidential client (`ferry`, client_secret_basic, PKCE
 * required) whose redirect URI is `<redirectBase>/api/v2/oidc/callback`, the
 * development login (the login is the account id, any password) and consent.
 */
export interface TestOidcProviderOptions {
  /** Claims of each account id, added to sub and preferred_username (the id). */
  accounts: Record<string, Record<string, unknown>>;
  /** How the browser reaches Ferry: the client's redirect URI is built on it. */
  redirectBase: string;
  /** Claims by scope; scopes are their keys. */
  claims: Record<string, string[]>;
  /** true: the ID token carries sub only, the rest comes from the userinfo endpoint (enabled then). */
  conformIdTokenClaims?: boolean;
  /** Claims every account has (e.g. email_verified). */
  commonClaims?: Record<string, unknown>;
}

export interface TestOidcProvider {
  issuer: string;
  client: { client_id: string; client_secret: string };
  /** The client's redirect URI (Ferry's callback). */
  callback: string;
  /** The scopes the provider knows (the keys of `claims`). */
  scopes: string[];
  /** When set, the JWKS endpoint answers this key set instead of the provider's (signature check tests). */
  overrideJwks(body: string | undefined): void;
  /** Plays the browser at the provider until it redirects to Ferry's callback: that URL. */
  drive(authUrl: string, login: string): Promise<URL>;
}

/** An RS256 signing JWK of a key (private or public) with its kid. */
export const rsaJwk = (k: crypto.KeyObject, kid: string) => ({ ...(k.export({ format: 'jwk' }) as Record<string, unknown>), kid, use: 'sig', alg: 'RS256' });

type RequestHandler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** Starts the provider; `teardown` receives its close (tap's t.teardown). */
export async function startOidcProvider(o: TestOidcProviderOptions, teardown: (fn: () => Promise<void>) => void): Promise<TestOidcProvider> {
  let handle: RequestHandler = (_q, s) => s.writeHead(503).end();
  let fakeJwks: string | undefined;
  const server = http.createServer((q, s) => {
    if (fakeJwks && q.url?.startsWith('/jwks')) return void s.writeHead(200, { 'content-type': 'application/json' }).end(fakeJwks);
    handle(q, s);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  teardown(() => new Promise<void>((r) => server.close(() => r())));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = { client_id: 'ferry', client_secret: 'ferry-client-secret' };
  const callback = `${o.redirectBase}/api/v2/oidc/callback`;
  const key = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });

  // oidc-provider is ESM-only and ships no types: its constructor and Koa callback are all the tests use
  const modName = 'oidc-provider';
  const { default: Provider } = (await import(modName)) as { default: new (issuer: string, conf: unknown) => { callback(): RequestHandler } };
  const provider = new Provider(issuer, {
    clients: [
      {
        ...client,
        redirect_uris: [callback],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    claims: o.claims,
    scopes: Object.keys(o.claims),
    conformIdTokenClaims: Boolean(o.conformIdTokenClaims),
    features: { devInteractions: { enabled: true }, ...(o.conformIdTokenClaims ? { userinfo: { enabled: true } } : {}) },
    cookies: { keys: ['oidc-test-cookie-key'] },
    jwks: { keys: [rsaJwk(key.privateKey, 'k1')] },
    pkce: { required: () => true },
    findAccount: async (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: async () => ({ sub: id, preferred_username: id, ...(o.commonClaims ?? {}), ...(o.accounts[id] ?? {}) }),
    }),
  });
  handle = provider.callback();

  /**
   * Follows redirects with a cookie jar and submits the development login
   * and consent forms, until the provider redirects to Ferry's callback.
   */
  const drive = async (authUrl: string, login: string): Promise<URL> => {
    const jar = new Map<string, string>();
    let url = authUrl;
    let method = 'GET';
    let body: string | undefined;
    for (let hop = 0; hop < 12; hop++) {
      const res = await fetch(url, {
        method,
        body,
        redirect: 'manual',
        headers: {
          cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
          ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
      });
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(';');
        const i = pair!.indexOf('=');
        jar.set(pair!.slice(0, i), pair!.slice(i + 1));
      }
      const location = res.headers.get('location');
      if (location) {
        const next = new URL(location, url);
        if (next.href.startsWith(callback)) return next;
        [url, method, body] = [next.href, 'GET', undefined];
        continue;
      }
      const html = await res.text();
      const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1];
      const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
      if (res.status !== 200 || !prompt || !action) throw new Error(`unexpected provider answer ${res.status}: ${html.slice(0, 300)}`);
      [url, method] = [new URL(action, url).href, 'POST'];
      body = prompt === 'login' ? new URLSearchParams({ prompt, login, password: 'any' }).toString() : new URLSearchParams({ prompt }).toString();
    }
    throw new Error('too many redirects at the provider');
  };

  return { issuer, client, callback, scopes: Object.keys(o.claims), overrideJwks: (b) => void (fakeJwks = b), drive };
}

/** Ferry's `oidc` settings of a binding for `op` (role claim `role`, admins by the value `admin`). */
export function oidcBindingFor(op: TestOidcProvider, redirectBase: string): Record<string, unknown> {
  return {
    config_url: op.issuer,
    ...op.client,
    redirect_base_url: redirectBase,
    role_field: 'role',
    admin_roles: ['admin'],
    scopes: op.scopes,
    allow_insecure_http: true,
  };
}
