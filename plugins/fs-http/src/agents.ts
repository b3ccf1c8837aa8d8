import { createRequire } from 'node:module';
import type { Agent, Dispatcher } from 'undici';
import type * as Undici from 'undici';

const requireCjs = createRequire(import.meta.url);

/**
 * Keep-alive connection pools shared by every Fs that talks to the same
 * endpoint origin, so a user's many short sessions (and many users of one
 * server) reuse warm connections instead of paying a TCP + TLS handshake per
 * operation. Credentials travel per request, so sharing is safe.
 *
 * Pools are keyed by origin and TLS mode: an instance with skip_tls_verify
 * never shares connections (or a TLS session) with a verifying one.
 */
export class AgentPool {
  private readonly agents = new Map<string, Agent>();

  constructor(private readonly connectionsPerOrigin = 32) {}

  get(endpoint: string, skipTlsVerify: boolean): Dispatcher {
    const origin = new URL(endpoint).origin;
    const insecure = skipTlsVerify && origin.startsWith('https:');
    const key = `${insecure ? 'insecure' : 'verify'} ${origin}`;
    let agent = this.agents.get(key);
    if (!agent) {
      // undici is loaded by the first pool, not when the plugin is imported.
      const { Agent } = requireCjs('undici') as typeof Undici;
      agent = new Agent({
        connections: this.connectionsPerOrigin,
        keepAliveTimeout: 4_000,
        keepAliveMaxTimeout: 60_000,
        // Only when the instance asks for it: accept self-signed certificates.
        ...(insecure ? { connect: { rejectUnauthorized: false } } : {}),
      });
      this.agents.set(key, agent);
    }
    return agent;
  }

  /** Number of pools (tests check sharing). */
  get size(): number {
    return this.agents.size;
  }

  /** Closes every pool, waiting for in-flight requests. */
  async close(): Promise<void> {
    const all = [...this.agents.values()];
    this.agents.clear();
    await Promise.all(all.map((a) => a.close()));
  }

  /** Drops every pool immediately, failing in-flight requests. */
  async destroy(): Promise<void> {
    const all = [...this.agents.values()];
    this.agents.clear();
    await Promise.all(all.map((a) => a.destroy()));
  }
}
