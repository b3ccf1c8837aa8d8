import t from 'tap';
import { fuzzSeed } from './helpers/prng.js';
import { fuzzSuite } from './helpers/suite.js';

// Seeded bad requests against every other route of the server's route table:
// the user API (files, directories, shares, profile, token), the public share
// routes, TUS uploads and OIDC: see helpers/suite.ts.
await fuzzSuite(t, {
  name: 'user and share API',
  seed: fuzzSeed(0x5eed0002),
  perRoute: Number(process.env.FERRY_FUZZ_PER_ROUTE ?? 128),
  routes: (rt) =>
    !(rt.path === '/healthz' || rt.strategies.includes('jwt-admin') || rt.strategies.includes('basic-admin') || rt.strategies.includes('apikey-admin')),
});
