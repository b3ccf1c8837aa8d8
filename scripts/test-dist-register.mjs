// Registers scripts/test-dist-hooks.mjs (test processes after a build; see there).
import { register } from 'node:module';

register('./test-dist-hooks.mjs', import.meta.url);
