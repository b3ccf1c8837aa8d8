#!/bin/bash
# Starts every real server the test suite needs (idempotent): runs each
# scripts/servers/start-*.sh in turn, under a lock so that two checkouts
# starting them at once do not race. Servers bind to 127.0.0.1 only and keep
# their state in $FERRY_SERVERS_DIR (see lib.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
for s in "$here"/start-*.sh; do
  [ -e "$s" ] || continue
  echo "== $(basename "$s")"
  # -o: the servers a script starts must not inherit (and hold) the lock
  flock -o "$SERVERS_DIR/.lock" bash "$s"
done
