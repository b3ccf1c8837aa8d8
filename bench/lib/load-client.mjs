// The client side of bench/load.bench.mjs, run in its own process so the
// load it generates is not measured as the server's work:
//
//   node bench/lib/load-client.mjs '<json spec>'
//
// spec: { url, seconds, concurrency, admin: {username, password},
//         users: [{username, password}], share: {id, password, files: [name]},
//         seedFiles: [path], uploadBytes, homesDir, intervalSeconds? }
//
// `concurrency` workers loop over a weighted mix of operations for `seconds`
// seconds, each on its own keep-alive connection:
//
//   token     GET /api/v2/user/token (basic auth: a password hash check)
//   account   POST /users, GET /users/{name}, PUT /users/{name}, DELETE /users/{name} (admin)
//   list      GET /api/v2/user/dirs?path=/seed
//   upload    POST /api/v2/user/files/upload of `uploadBytes` (overwrites one of 4 names per worker)
//   download  GET /api/v2/user/files?path=<seed file>
//   share     GET /api/v2/shares/{id}/files?path=<file> (share password, basic auth)
//
// Every answer other than the operation's success status is an error. A
// bearer token the server stops accepting (401 after it expired) is renewed
// once and the request retried; that is counted as a renewal, not an error.
// With intervalSeconds, a line `interval {json}` is printed every interval
// (requests and errors so far); at the end one line `result {json}`:
// per operation the request count, errors, p50/p99/max latency in ms.
import http from 'node:http';
import { randomBytes } from 'node:crypto';

const spec = JSON.parse(process.argv[2]);
const base = new URL(spec.url);
const agent = new http.Agent({ keepAlive: true, maxSockets: spec.concurrency, maxFreeSockets: spec.concurrency });
const payload = randomBytes(spec.uploadBytes);
const basic = (u, p) => 'Basic ' + Buffer.from(`${u}:${p}`).toString('base64');

const MIX = [
  ['token', 5],
  ['account', 5],
  ['list', 20],
  ['upload', 20],
  ['download', 30],
  ['share', 20],
];
const totalWeight = MIX.reduce((s, [, w]) => s + w, 0);
function pick() {
  let x = Math.random() * totalWeight;
  for (const [name, w] of MIX) if ((x -= w) < 0) return name;
  return MIX[0][0];
}

/** One request; resolves to { status, bytes } once the answer is read to its end. */
function request(method, path, headers = {}, body = null) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: base.hostname, port: base.port, method, path, agent, headers: body ? { ...headers, 'content-length': body.length } : headers },
      (res) => {
        let bytes = 0;
        const chunks = [];
        res.on('data', (d) => {
          bytes += d.length;
          if (bytes < 65536) chunks.push(d);
        });
        res.on('end', () => resolve({ status: res.statusCode, bytes, text: () => Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.setTimeout(60_000, () => req.destroy(new Error(`${method} ${path}: no answer in 60 s`)));
    req.on('error', reject);
    req.end(body ?? undefined);
  });
}

const stats = new Map(MIX.map(([n]) => [n, { latencies: [], errors: 0 }]));
const errorSamples = [];
let requests = 0;
let errors = 0;
let renewals = 0;

function fail(op, what) {
  errors++;
  stats.get(op).errors++;
  const sample = `${op}: ${what}`;
  if (errorSamples.length < 20 && !errorSamples.includes(sample)) errorSamples.push(sample);
}

async function token(path, u) {
  const r = await request('GET', path, { authorization: basic(u.username, u.password) });
  if (r.status !== 200) throw new Error(`${path} for ${u.username}: ${r.status} ${r.text()}`);
  return JSON.parse(r.text()).access_token;
}

let adminToken = await token('/api/v2/token', spec.admin);

async function worker(index, deadline) {
  const user = spec.users[index % spec.users.length];
  let userToken = await token('/api/v2/user/token', user);
  let n = 0;
  /** A request timed as one of `op`'s; a 401 on a bearer token renews it once. */
  async function timedRequest(op, expect, method, path, headers, body, bearer) {
    const t0 = performance.now();
    let r;
    try {
      r = await request(method, path, bearer ? { ...headers, authorization: `Bearer ${bearer()}` } : headers, body);
      if (r.status === 401 && bearer) {
        renewals++;
        if (bearer === adminBearer) adminToken = await token('/api/v2/token', spec.admin);
        else userToken = await token('/api/v2/user/token', user);
        r = await request(method, path, { ...headers, authorization: `Bearer ${bearer()}` }, body);
      }
    } catch (e) {
      requests++;
      fail(op, e.message);
      return null;
    }
    requests++;
    stats.get(op).latencies.push(performance.now() - t0);
    if (r.status !== expect) fail(op, `${method} ${path}: ${r.status} ${r.text().slice(0, 200)}`);
    return r;
  }
  const adminBearer = () => adminToken;
  const userBearer = () => userToken;
  while (performance.now() < deadline) {
    const op = pick();
    n++;
    switch (op) {
      case 'token': {
        const r = await timedRequest(op, 200, 'GET', '/api/v2/user/token', { authorization: basic(user.username, user.password) });
        if (r?.status === 200) userToken = JSON.parse(r.text()).access_token;
        break;
      }
      case 'account': {
        const name = `load-${process.pid}-${index}-${n}`;
        const json = { 'content-type': 'application/json' };
        const home = `${spec.homesDir}/${name}`;
        const body = Buffer.from(JSON.stringify({ username: name, password: `pw-${name}-Aa1!`, status: 1, home_dir: home, permissions: { '/': ['*'] } }));
        const created = await timedRequest(op, 201, 'POST', '/api/v2/users', json, body, adminBearer);
        if (created?.status !== 201) break;
        await timedRequest(op, 200, 'GET', `/api/v2/users/${name}`, {}, null, adminBearer);
        const update = Buffer.from(JSON.stringify({ username: name, status: 1, home_dir: home, description: `updated ${n}`, permissions: { '/': ['*'] } }));
        await timedRequest(op, 200, 'PUT', `/api/v2/users/${name}`, json, update, adminBearer);
        await timedRequest(op, 200, 'DELETE', `/api/v2/users/${name}`, {}, null, adminBearer);
        break;
      }
      case 'list':
        await timedRequest(op, 200, 'GET', '/api/v2/user/dirs?path=%2Fseed', {}, null, userBearer);
        break;
      case 'upload':
        await timedRequest(
          op,
          201,
          'POST',
          `/api/v2/user/files/upload?path=${encodeURIComponent(`/up/w${index}-${n % 4}.bin`)}&mkdir_parents=true`,
          { 'content-type': 'application/octet-stream' },
          payload,
          userBearer,
        );
        break;
      case 'download': {
        const file = spec.seedFiles[n % spec.seedFiles.length];
        const r = await timedRequest(op, 200, 'GET', `/api/v2/user/files?path=${encodeURIComponent(file)}`, {}, null, userBearer);
        if (r?.status === 200 && r.bytes !== spec.uploadBytes) fail(op, `download of ${file}: ${r.bytes} bytes`);
        break;
      }
      case 'share': {
        const file = spec.share.files[n % spec.share.files.length];
        const r = await timedRequest(op, 200, 'GET', `/api/v2/shares/${spec.share.id}/files?path=${encodeURIComponent(file)}`, {
          authorization: basic('share', spec.share.password),
        });
        if (r?.status === 200 && r.bytes !== spec.uploadBytes) fail(op, `share download of ${file}: ${r.bytes} bytes`);
        break;
      }
    }
  }
}

const started = performance.now();
const deadline = started + spec.seconds * 1000;
let ticker;
if (spec.intervalSeconds) {
  ticker = setInterval(() => {
    console.log(`interval ${JSON.stringify({ t: Math.round((performance.now() - started) / 1000), requests, errors })}`);
  }, spec.intervalSeconds * 1000);
}
await Promise.all(Array.from({ length: spec.concurrency }, (_, i) => worker(i, deadline)));
clearInterval(ticker);
const seconds = (performance.now() - started) / 1000;

const quantile = (sorted, q) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : 0);
const all = [];
const ops = {};
for (const [name, s] of stats) {
  const sorted = s.latencies.sort((a, b) => a - b);
  all.push(...sorted);
  ops[name] = { requests: sorted.length, errors: s.errors, p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), max: sorted.at(-1) ?? 0 };
}
all.sort((a, b) => a - b);
console.log(
  `result ${JSON.stringify({ seconds, requests, errors, renewals, rps: requests / seconds, p50: quantile(all, 0.5), p99: quantile(all, 0.99), ops, errorSamples })}`,
);
agent.destroy();
