// Bulk rows for benchmarks on PostgreSQL, written straight into Ferry's tables (INSERT ... SELECT
// generate_series: one statement per table, no API call): the events of @ferry/events-search and
// users. `db` is a connected pg.Client on the server's database (after Ferry created its tables).

/**
 * `events` filesystem events and a tenth as many log events, evenly spread over [startNs, endNs)
 * (nanoseconds, BigInt), ids built like the plugin's: 16 hex digits of the timestamp in ns, node,
 * counter. Filesystem actions cycle over upload, download, upload, download, first-upload, delete,
 * rename, mkdir (one event in 50 failed: status 2) by 1,000 users (user0..user999); log events
 * over 5 (login), 5, 5, 1, 2, 3. Then VACUUM ANALYZE (as autovacuum keeps a live database: the statistics, and the
 * visibility map without which a bulk-loaded table gets no index-only scans). Resolves to the number of log events.
 */
export async function seedEvents(db, { events, startNs, endNs }) {
  await db.query(
    `insert into events_fs (id, action, username, fs_path, virtual_path, file_size, elapsed, status, protocol, ip, session_id, fs_provider, instance_id)
     select lpad(to_hex($1::bigint + i * $2::bigint), 16, '0') || 'a99e0000' || lpad(to_hex(i), 8, '0'),
            (array['upload','download','upload','download','first-upload','delete','rename','mkdir'])[1 + (i * 7 % 8)],
            'user' || (i % 1000), '/srv/f' || i, '/f' || i, 1024 + i % 4096, i % 100, 1 + (i % 50 = 0)::int,
            (array['HTTP','SFTP','DAV','FTP'])[1 + i % 4], '10.0.' || (i % 200) || '.' || (i % 250), 's' || (i / 10), 0, 'bench-node'
     from generate_series(0, $3::bigint - 1) as i`,
    [startNs.toString(), ((endNs - startNs) / BigInt(events)).toString(), events],
  );
  const logs = Math.max(1, Math.floor(events / 10));
  await db.query(
    `insert into events_log (id, event, protocol, username, ip, message, instance_id)
     select lpad(to_hex($1::bigint + i * $2::bigint), 16, '0') || 'a99e0001' || lpad(to_hex(i), 8, '0'),
            (array[5, 5, 5, 1, 2, 3])[1 + i % 6], 'HTTP', 'user' || (i % 1000), '10.1.' || (i % 200) || '.1', 'login', 'bench-node'
     from generate_series(0, $3::bigint - 1) as i`,
    [startNs.toString(), ((endNs - startNs) / BigInt(logs)).toString(), logs],
  );
  await db.query('vacuum analyze events_fs');
  await db.query('vacuum analyze events_log');
  return logs;
}

/** The name of seeded user `i` (1-based): zero-padded, so the name order is the index order. */
export const seededUserName = (i) => `user${String(i).padStart(7, '0')}`;

/**
 * `count` users (seededUserName(1..count)) with a used quota size that is not in name order
 * (i * 7919 mod 1,000,003 KiB: the largest is not the last by name); their password hash is
 * not a hash (they never sign in). Then VACUUM ANALYZE (index-only scans on a bulk-loaded table).
 */
export async function seedUsers(db, count) {
  const now = Date.now();
  await db.query(
    `insert into users (username, email, password_hash, public_keys, home_dir, permissions, filters, filesystem, custom_placeholders,
                        oidc_custom_fields, quota_size, used_quota_size, used_quota_files, created_at, updated_at)
     select 'user' || lpad(i::text, 7, '0'), 'user' || i || '@bench.test', '-', '[]', '/srv/bench/user' || i, '{"/":["*"]}', '{}',
            '{"provider":0}', '[]', '{}', 0, (i::bigint * 7919 % 1000003) * 1024, i % 100, $1::bigint, $1::bigint
     from generate_series(1, $2::int) as i`,
    [now, count],
  );
  await db.query('vacuum analyze users');
}
