#!/bin/bash
# Azurite blob service (Azure Blob Storage emulator) on 127.0.0.1:19001,
# data under $SERVERS_DIR/azurite/data (on disk, so a long test run cannot grow its
# memory without bound), with the well-known dev account devstoreaccount1. Idempotent:
# does nothing when the server already runs. Installs the pinned Azurite from
# scripts/servers/azurite.
#
# Mandatory workaround: --skipApiVersionCheck (@azure/storage-blob 12.32 sends
# an x-ms-version this Azurite release does not know and would refuse).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
PORT=${FERRY_AZURITE_PORT:-19001}
pidfile="$SERVERS_DIR/azurite.pid"
if running azurite "$pidfile" azurite; then echo "azurite already running (pid $(cat "$pidfile"))"; exit 0; fi
port_free "$PORT"
npm_tool azurite
mkdir -p "$SERVERS_DIR/azurite/data"
log="$SERVERS_DIR/azurite/azurite.log"
nohup "$TOOL_DIR/node_modules/.bin/azurite-blob" --blobHost 127.0.0.1 --blobPort "$PORT" \
  --location "$SERVERS_DIR/azurite/data" --disableTelemetry --skipApiVersionCheck --silent \
  >"$log" 2>&1 </dev/null &
echo $! >"$pidfile"
started azurite azurite
# The very first start after an install can take ~8 s (cold file cache).
if ! wait_port "$PORT" 600; then cat "$log" >&2; exit 1; fi
echo "azurite blob listening on 127.0.0.1:$PORT (pid $(cat "$pidfile"))"
