#!/bin/bash
# Starts every real server the test suite needs (idempotent): runs each
# scripts/servers/start-*.sh in turn. Servers bind to 127.0.0.1 only and keep
# their state under .servers/ at the repository root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
for s in "$here"/start-*.sh; do
  [ -e "$s" ] || continue
  echo "== $(basename "$s")"
  bash "$s"
done
