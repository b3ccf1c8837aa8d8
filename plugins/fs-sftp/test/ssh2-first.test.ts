import t from 'tap';
// first: the plugin's library, as the server imports it on the first use of SFTP storage
import '../src/lib.js';
import { loadSsh2 } from '@ferry/core';

// ssh2-sftp-client requires ssh2 itself: the library loads it through core's
// loader first (src/ssh2-first.ts), so the client's packets are padded from
// the SDK's pool of random bytes whatever else the server loads.
t.equal(loadSsh2().pooled, true, "ssh2 was loaded by core's loader before ssh2-sftp-client required it");
