import t from 'tap';
import { fuzzSeed } from './helpers/prng.js';
import { fuzzSuite } from './helpers/suite.js';

// Seeded bad requests against every admin route of the server's route table
// (and /healthz and the admin token route): see helpers/suite.ts.
await fuzzSuite(t, {
  name: 'admin API',
  seed: fuzzSeed(0x5eed0001),
  perRoute: Number(process.env.FERRY_FUZZ_PER_ROUTE ?? 78),
  routes: (rt) =>
    rt.path === '/healthz' || rt.strategies.includes('jwt-admin') || rt.strategies.includes('basic-admin') || rt.strategies.includes('apikey-admin'),
});
