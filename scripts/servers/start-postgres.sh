#!/bin/bash
# PostgreSQL on 127.0.0.1:5432 with trust auth, for FERRY_TEST_DB=postgres runs.
# Uses the running server when there is one; otherwise starts Debian's cluster
# with a trust hba file kept under $SERVERS_DIR/pg (no edits under /etc).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
if pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then echo "postgresql already running"; exit 0; fi
command -v pg_ctlcluster >/dev/null || apt_install postgresql
hba="$SERVERS_DIR/pg/pg_hba_trust.conf"
mkdir -p "$(dirname "$hba")"
printf 'local all all trust\nhost all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\n' > "$hba"
chmod 755 "$SERVERS_DIR" "$SERVERS_DIR/pg"; chmod 644 "$hba"
v=$(ls /usr/lib/postgresql | sort -V | tail -1)
pg_lsclusters -h | awk -v v="$v" '$1==v && $2=="main"' | grep -q . || pg_createcluster "$v" main >/dev/null
pg_ctlcluster "$v" main start -- -o "-c hba_file=$hba -c listen_addresses=127.0.0.1" -w
pg_isready -h 127.0.0.1 -p 5432
