#!/bin/bash
# s3rver (S3-compatible test server) on 127.0.0.1:19000 with the bucket
# 'ferry-test', data under $SERVERS_DIR/s3 (see lib.sh). Idempotent: does
# nothing when the server already runs. Installs the pinned s3rver from
# scripts/servers/s3rver.
#
# Mandatory workarounds (see the fs-s3 README):
# - node --openssl-legacy-provider: s3rver builds ListObjectsV2 continuation
#   tokens with DES; without the legacy provider every truncated listing is a 500.
# - clients must set requestChecksumCalculation/responseChecksumValidation to
#   'WHEN_REQUIRED' and forcePathStyle (done by @ferry/fs-s3).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
PORT=${FERRY_S3_PORT:-19000}
BUCKET=ferry-test
pidfile="$SERVERS_DIR/s3rver.pid"
if running s3 "$pidfile" s3rver; then echo "s3rver already running (pid $(cat "$pidfile"))"; exit 0; fi
port_free "$PORT"
npm_tool s3rver
mkdir -p "$SERVERS_DIR/s3/data"
log="$SERVERS_DIR/s3/s3rver.log"
# configure-bucket only warns when the bucket already exists.
nohup node --openssl-legacy-provider "$TOOL_DIR/node_modules/s3rver/bin/s3rver.js" \
  -d "$SERVERS_DIR/s3/data" -a 127.0.0.1 -p "$PORT" --silent --configure-bucket "$BUCKET" \
  >"$log" 2>&1 </dev/null &
echo $! >"$pidfile"
started s3 s3rver
if ! wait_port "$PORT" 200; then cat "$log" >&2; exit 1; fi
echo "s3rver listening on 127.0.0.1:$PORT (pid $(cat "$pidfile"), bucket $BUCKET)"
