/**
 * TLS client certificates on FTPS: a trusted certificate whose common name
 * is the account's username logs in where the account takes it
 * (filters.tls_username CommonName; login methods TLSCertificate or
 * TLSCertificate+password); untrusted or missing certificates are refused
 * as the binding's client_auth_type says. Clients: Python's ftplib and curl.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { PASSWORD, run, startFtp, testCertificates } from './helpers.js';

/** A client certificate for `cn` signed by the test CA in `dir` (or self-signed with `untrusted`); returns its PEM and key files. */
async function clientCertificate(dir: string, cn: string, o: { untrusted?: boolean } = {}): Promise<{ cert: string; key: string }> {
  const f = (n: string) => path.join(dir, `${cn}${o.untrusted ? '-self' : ''}.${n}`);
  const ok = async (args: string[]) => {
    const r = await run('openssl', args);
    if (r.code !== 0) throw new Error(r.stderr);
  };
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', f('key')];
  if (o.untrusted) {
    await ok(['req', '-x509', ...key, '-out', f('pem'), '-days', '2', '-subj', `/CN=${cn}`]);
  } else {
    await ok(['req', ...key, '-out', f('csr'), '-subj', `/CN=${cn}`]);
    writeFileSync(f('ext'), 'extendedKeyUsage=clientAuth\n');
    const ca = ['-CA', path.join(dir, 'ca.pem'), '-CAkey', path.join(dir, 'ca.key'), '-CAcreateserial'];
    await ok(['x509', '-req', '-in', f('csr'), ...ca, '-out', f('pem'), '-days', '2', '-extfile', f('ext')]);
  }
  return { cert: f('pem'), key: f('key') };
}

/** ftplib over explicit FTPS with an optional client certificate: prints each reply of the login, then the listing. */
const FTPLIB = `
import ftplib, ssl, sys
port, ca, cert, key, user, password = sys.argv[1:7]
ctx = ssl.create_default_context(cafile=ca)
if cert:
    ctx.load_cert_chain(cert, key)
class Reusing(ftplib.FTP_TLS):
    # data connections resume the control connection's TLS session, as the server requires
    def ntransfercmd(self, cmd, rest=None):
        conn, size = ftplib.FTP.ntransfercmd(self, cmd, rest)
        if self._prot_p:
            conn = self.context.wrap_socket(conn, server_hostname=self.host, session=self.sock.session)
        return conn, size
f = Reusing(context=ctx, timeout=20)
f.connect("127.0.0.1", int(port))
try:
    f.auth()
    r = f.sendcmd("USER " + user)
    print(r)
    if r.startswith("3"):
        print(f.sendcmd("PASS " + password))
    f.prot_p()
    print("names", f.nlst())
    f.quit()
except ftplib.Error as e:
    print("error", e)
except (OSError, EOFError) as e:
    print("closed", type(e).__name__)
`;

t.test('client certificates, verified when sent (client_auth_type 2)', async (t) => {
  const dir = t.testdir();
  const certs = await testCertificates(dir);
  const h = await startFtp(t, {
    ftp: {
      bindings: [{ address: '127.0.0.1', port: 0, tls_mode: 'explicit', client_auth_type: 2 }],
      certificate_file: certs.cert,
      certificate_key_file: certs.key,
      ca_certificates: [certs.ca],
    },
  });
  const ftplib = async (user: string, password: string, cert?: { cert: string; key: string }) => {
    const r = await run('python3', ['-c', FTPLIB, String(h.port), certs.ca, cert?.cert ?? '', cert?.key ?? '', user, password]);
    if (r.code !== 0) throw new Error(r.stderr);
    return r.stdout.trim().split('\n');
  };
  t.equal((await h.status()).bindings![0]!.client_auth_type, 2, '/status shows the binding client_auth_type');

  t.test('TLSCertificate: the certificate alone logs in (232)', async (t) => {
    await h.addUser('cora', { filters: { tls_username: 'CommonName' } });
    const out = await ftplib('cora', '', await clientCertificate(dir, 'cora'));
    t.match(out[0], /^232 /, 'USER answered 232: authorized by the certificate');
    t.same(out.slice(1), ['names []'], 'then a listing');
  });

  t.test('TLSCertificate+password: the certificate, then the password', async (t) => {
    await h.addUser('dina', { filters: { tls_username: 'CommonName', denied_login_methods: ['TLSCertificate', 'password'] } });
    const cert = await clientCertificate(dir, 'dina');
    const out = await ftplib('dina', PASSWORD('dina'), cert);
    t.match(out[0], /^331 Certificate accepted/);
    t.match(out[1], /^230 /);
    const wrong = await ftplib('dina', 'not-her-password', cert);
    t.match(wrong[1] ?? wrong[0], /^error 530/, 'the certificate with a wrong password is refused');
    const noCert = await ftplib('dina', PASSWORD('dina'));
    t.match(noCert.join('\n'), /error 530/, 'the password alone is refused (method password denied)');
  });

  t.test('an account that does not take certificates, or another name: an ordinary password login', async (t) => {
    await h.addUser('eve');
    const eve = await clientCertificate(dir, 'eve');
    const out = await ftplib('eve', PASSWORD('eve'), eve);
    t.match(out[0], /^331 Password required/);
    t.match(out[1], /^230 /);
    await h.addUser('finn', { filters: { tls_username: 'CommonName' } });
    const other = await ftplib('finn', PASSWORD('finn'), eve);
    t.match(other[0], /^331 Password required/, "eve's certificate does not log in finn");
    t.match(other[1], /^230 /);
    const denied = await ftplib('finn', 'wrong', eve);
    t.match(denied.join('\n'), /error 530/);
  });

  t.test('an untrusted certificate ends the connection', async (t) => {
    await h.addUser('gale', { filters: { tls_username: 'CommonName' } });
    const out = await ftplib('gale', PASSWORD('gale'), await clientCertificate(dir, 'gale', { untrusted: true }));
    t.match(out.join('\n'), /error 421|closed/, 'refused');
    t.notMatch(out.join('\n'), /^23\d /m, 'never logged in');
  });

  t.test('curl with a client certificate (232 login, download)', async (t) => {
    const cert = await clientCertificate(dir, 'cora');
    const r = await run('curl', [
      '-sS',
      '--ssl-reqd',
      '--cacert',
      certs.ca,
      '--cert',
      cert.cert,
      '--key',
      cert.key,
      '--user',
      'cora:',
      `ftp://127.0.0.1:${h.port}/`,
    ]);
    t.equal(r.code, 0, r.stderr);
  });
});

t.test('client certificates required (client_auth_type 1): no certificate, no connection', async (t) => {
  const dir = t.testdir();
  const certs = await testCertificates(dir);
  const h = await startFtp(t, {
    ftp: {
      bindings: [{ address: '127.0.0.1', port: 0, tls_mode: 'implicit', client_auth_type: 1 }],
      certificate_file: certs.cert,
      certificate_key_file: certs.key,
      ca_certificates: [certs.ca],
    },
  });
  await h.addUser('hal', { filters: { tls_username: 'CommonName' } });
  const none = await run('curl', ['-sS', '--cacert', certs.ca, '--user', `hal:${PASSWORD('hal')}`, `ftps://127.0.0.1:${h.port}/`]);
  t.not(none.code, 0, 'refused without a certificate');
  const cert = await clientCertificate(dir, 'hal');
  const ok = await run('curl', ['-sS', '--cacert', certs.ca, '--cert', cert.cert, '--key', cert.key, '--user', 'hal:', `ftps://127.0.0.1:${h.port}/`]);
  t.equal(ok.code, 0, ok.stderr);
});

t.test('configuration: client_auth_type needs TLS and ca_certificates', async (t) => {
  const { configSchema } = await import('../src/config.js');
  const bad = configSchema.validate({
    bindings: [{ address: '127.0.0.1', port: 0, tls_mode: 'explicit', client_auth_type: 2 }],
    certificate_file: 'c',
    certificate_key_file: 'k',
  });
  t.match(bad.error?.message, /client_auth_type 2: it needs TLS .* and ca_certificates/);
  const plain = configSchema.validate({ bindings: [{ address: '127.0.0.1', port: 0, tls_mode: 'plain', client_auth_type: 1 }], ca_certificates: ['ca.pem'] });
  t.ok(plain.error, 'a plain binding cannot ask for certificates');
});
