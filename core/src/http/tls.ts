import { unwatchFile, watch, watchFile, type FSWatcher, type Stats } from 'node:fs';
import path from 'node:path';
import type tls from 'node:tls';
import type { HttpBinding } from '../config/schema.js';
import type { EventBus } from '../events/event-bus.js';
import { nowNanos } from '../events/event-types.js';
import type { Logger } from '../logger.js';
import { loadTlsMaterial, secureContextOptions, tlsErrorText as errorText, TlsFileError, type TlsBindingFiles, type TlsMaterial } from '../sdk/tls-material.js';
import type { ServiceTls } from '../sdk/service.js';

export {
  TLS_VERSIONS,
  certificateNames,
  loadTlsMaterial,
  secureContextOptions,
  TlsFileError,
  type TlsBindingFiles,
  type TlsMaterial,
} from '../sdk/tls-material.js';

/** The binding's TLS settings with paths resolved against `baseDir` (the config file's directory). */
export function tlsBindingFiles(binding: HttpBinding, index: number, caCertificates: string[], baseDir: string): TlsBindingFiles {
  const abs = (p: string) => path.resolve(baseDir, p);
  const requireClientCert = binding.client_auth_type === 1;
  return {
    key: index >= 0 ? `httpd.bindings.${index}` : `httpd.bindings[${binding.address}:${binding.port}]`,
    certificateFile: abs(binding.certificate_file),
    certificateKeyFile: abs(binding.certificate_key_file),
    caFiles: requireClientCert ? caCertificates.map(abs) : [],
    minTlsVersion: binding.min_tls_version,
    cipherSuites: binding.tls_cipher_suites,
    requireClientCert,
  };
}

/** Result of one reload attempt. */
export interface CertificateReloadResult {
  status: 'reloaded' | 'failed' | 'unchanged';
  /** Names of the certificate now served. */
  names: string[];
  /** Fingerprint of the certificate now served. */
  fingerprint256: string;
  error?: string;
}

export interface CertificateReloaderOptions {
  files: TlsBindingFiles;
  bus: EventBus;
  logger: Logger;
  instanceId: string;
  /** Quiet time after the last file change before reloading (editors write in several steps). */
  debounceMs?: number;
  /** Interval of the stat polling that backs up fs.watch (atomic replaces, network filesystems). */
  pollMs?: number;
}

/**
 * Serves one HTTPS binding's certificate and swaps it without a restart:
 * on a change of its files (fs.watch on their directories plus stat polling,
 * debounced), on SIGHUP, or on reload(). A good new certificate replaces the
 * TLS server's secure context (new connections get it; open ones keep theirs);
 * a bad one is logged and the current certificate stays in service. Each
 * attempt publishes a `certificate` event (trigger 5): status `reloaded` or `failed`.
 */
export class CertificateReloader {
  private current: TlsMaterial;
  private listener?: tls.Server;
  private queue: Promise<unknown> = Promise.resolve();
  private timer?: NodeJS.Timeout;
  private watchers: FSWatcher[] = [];
  private polled: string[] = [];
  private lastFailure?: string;
  private running = false;
  private readonly onHup = () => void this.reload('SIGHUP');
  private readonly onPoll = (cur: Stats, prev: Stats) => {
    if (cur.mtimeMs !== prev.mtimeMs || cur.ino !== prev.ino || cur.size !== prev.size) this.schedule();
  };

  private constructor(
    private readonly o: CertificateReloaderOptions,
    initial: TlsMaterial,
  ) {
    this.current = initial;
  }

  /** Loads the binding's files; a file that cannot be used throws a TlsFileError naming its key. */
  static async create(o: CertificateReloaderOptions): Promise<CertificateReloader> {
    const material = await loadTlsMaterial(o.files);
    const r = new CertificateReloader(o, material);
    r.log().info(r.describe(material), 'TLS certificate loaded');
    return r;
  }

  /** Options for the HTTPS server (tls.createServer). */
  serverOptions(): tls.TlsOptions {
    return {
      ...secureContextOptions(this.o.files, this.current),
      requestCert: this.o.files.requireClientCert || this.o.files.requestClientCert === true,
      rejectUnauthorized: this.o.files.requireClientCert,
    };
  }

  /** The certificate served to new connections. */
  get certificate(): Readonly<Pick<TlsMaterial, 'fingerprint256' | 'names' | 'validTo'>> {
    const { fingerprint256, names, validTo } = this.current;
    return { fingerprint256, names, validTo };
  }

  /** Binds the reloader to the HTTPS server whose secure context it replaces. */
  attach(listener: tls.Server): void {
    this.listener = listener;
  }

  /** Starts watching the files and listening for SIGHUP. */
  start(): void {
    if (this.running) return;
    this.running = true;
    const f = this.o.files;
    const files = [f.certificateFile, f.certificateKeyFile, ...f.caFiles];
    const byDir = new Map<string, Set<string>>();
    for (const file of files) {
      const dir = path.dirname(file);
      if (!byDir.has(dir)) byDir.set(dir, new Set());
      byDir.get(dir)!.add(path.basename(file));
    }
    for (const [dir, names] of byDir) {
      try {
        const w = watch(dir, { persistent: false }, (_event, name) => {
          if (!name || names.has(name.toString())) this.schedule();
        });
        w.on('error', (err) => this.log().warn({ dir, err: errorText(err) }, 'TLS certificate directory watch failed: polling only'));
        this.watchers.push(w);
      } catch (err) {
        this.log().warn({ dir, err: errorText(err) }, 'cannot watch the TLS certificate directory: polling only');
      }
    }
    for (const file of new Set(files)) {
      watchFile(file, { persistent: false, interval: this.o.pollMs ?? 2000 }, this.onPoll);
      this.polled.push(file);
    }
    process.on('SIGHUP', this.onHup);
  }

  /** Stops watching (the server keeps its current certificate). */
  stop(): void {
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const w of this.watchers) w.close();
    this.watchers = [];
    for (const file of this.polled) unwatchFile(file, this.onPoll);
    this.polled = [];
    process.off('SIGHUP', this.onHup);
  }

  /**
   * Reloads the files now and publishes the outcome. With `onlyIfChanged`
   * (file watching) content already served, or already reported broken, is skipped.
   * Reloads run one at a time.
   */
  reload(reason = 'manual', onlyIfChanged = false): Promise<CertificateReloadResult> {
    const run = this.queue.then(() => this.doReload(reason, onlyIfChanged));
    this.queue = run.catch(() => {});
    return run;
  }

  private schedule(): void {
    if (!this.running) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.reload('file change', true);
    }, this.o.debounceMs ?? 300);
    this.timer.unref();
  }

  private async doReload(reason: string, onlyIfChanged: boolean): Promise<CertificateReloadResult> {
    const f = this.o.files;
    let material: TlsMaterial;
    try {
      material = await loadTlsMaterial(f);
      if (onlyIfChanged && material.digest === this.current.digest) {
        this.lastFailure = undefined;
        return this.result('unchanged');
      }
      this.listener?.setSecureContext(secureContextOptions(f, material));
    } catch (err) {
      const message = err instanceof TlsFileError ? err.message : `${f.key}: ${errorText(err)}`;
      const failure = (err instanceof TlsFileError && err.digest) || message;
      if (onlyIfChanged && failure === this.lastFailure) return this.result('unchanged');
      this.lastFailure = failure;
      this.log().error({ reason, error: message, ...this.describe(this.current) }, 'TLS certificate reload failed: the current certificate stays in service');
      this.publish('failed', message);
      return this.result('failed', message);
    }
    this.current = material;
    this.lastFailure = undefined;
    this.log().info({ reason, ...this.describe(material) }, 'TLS certificate reloaded');
    this.publish('reloaded');
    return this.result('reloaded');
  }

  private result(status: CertificateReloadResult['status'], error?: string): CertificateReloadResult {
    return { status, names: this.current.names, fingerprint256: this.current.fingerprint256, ...(error ? { error } : {}) };
  }

  private publish(status: 'reloaded' | 'failed', error?: string): void {
    this.o.bus.publish('certificate', {
      timestamp: nowNanos(),
      names: this.current.names,
      status,
      ...(error ? { error } : {}),
      instance_id: this.o.instanceId,
    });
  }

  private describe(m: TlsMaterial) {
    const f = this.o.files;
    return {
      binding: f.key,
      certificate_file: f.certificateFile,
      names: m.names,
      fingerprint256: m.fingerprint256,
      valid_to: m.validTo,
    };
  }

  private log(): Logger {
    return this.o.logger;
  }
}

/** Service bindings' certificates (ServiceTls of the SDK): a CertificateReloader per binding, paths resolved against `baseDir`. */
export function serviceTls(o: { bus: EventBus; logger: Logger; instanceId: string; baseDir: string }): ServiceTls {
  return {
    certificate: (b) =>
      CertificateReloader.create({
        files: {
          key: b.key,
          certificateFile: path.resolve(o.baseDir, b.certificate_file),
          certificateKeyFile: path.resolve(o.baseDir, b.certificate_key_file),
          caFiles: (b.client_ca_files ?? []).map((f) => path.resolve(o.baseDir, f)),
          minTlsVersion: b.min_tls_version ?? 12,
          cipherSuites: b.tls_cipher_suites ?? [],
          requireClientCert: false,
          requestClientCert: (b.client_ca_files ?? []).length > 0,
          caKey: `${b.key}.client_ca_files`,
        },
        bus: o.bus,
        logger: o.logger,
        instanceId: o.instanceId,
      }),
  };
}
