#!/bin/bash
# GCS test server: firebase-tools' storage emulator run in-process by
# scripts/servers/gcs/emulator.cjs on 127.0.0.1:19002, idempotent.
# firebase-tools is pinned in scripts/servers/gcs (package.json + lock) and
# installed once by npm_tool (about 2 minutes, ~300 MB).
# No authentication is enforced; buckets appear on first use; data lives
# under $SERVERS_DIR/gcs/tmp and is lost on restart.
# Clients: apiEndpoint http://127.0.0.1:19002 (or STORAGE_EMULATOR_HOST).
# Stop: kill "$(cat "$SERVERS_DIR/gcs/emulator.pid")"
set -euo pipefail
source "$(dirname "$0")/lib.sh"

PORT=19002
D="$SERVERS_DIR/gcs"
PIDFILE="$D/emulator.pid"
LOG="$D/emulator.log"

if running gcs "$PIDFILE" gcs; then echo "gcs: emulator already running on 127.0.0.1:$PORT (pid $(cat "$PIDFILE"))"; exit 0; fi

port_free "$PORT"
npm_tool gcs
mkdir -p "$D/tmp"
(
  cd "$TOOL_DIR"
  TMPDIR="$D/tmp" FIREBASE_CLI_DISABLE_UPDATE_CHECK=true nohup node emulator.cjs "$PORT" > "$LOG" 2>&1 &
  echo $! > "$PIDFILE"
)
started gcs gcs
for _ in $(seq 1 400); do
  grep -q listening "$LOG" 2>/dev/null && break
  alive "$PIDFILE" || { echo "gcs: emulator exited, see $LOG" >&2; tail -20 "$LOG" >&2; exit 1; }
  sleep 0.05
done
wait_port "$PORT"
echo "gcs: emulator up on 127.0.0.1:$PORT (pid $(cat "$PIDFILE"))"
