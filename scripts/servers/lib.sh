# Shared helpers for scripts/servers/start-*.sh (source it).
# FERRY_SERVERS_DIR: where servers keep state (default .servers at the repo root).
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SERVERS_DIR=${FERRY_SERVERS_DIR:-$ROOT/.servers}
mkdir -p "$SERVERS_DIR"
export npm_config_loglevel=error

# alive PIDFILE: true when the process in PIDFILE runs.
alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# wait_port PORT [TRIES]: waits until 127.0.0.1:PORT accepts TCP connections.
wait_port() {
  local port=$1 tries=${2:-200}
  for _ in $(seq 1 "$tries"); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    sleep 0.05
  done
  echo "nothing listens on 127.0.0.1:$port" >&2
  return 1
}

# apt_install PKG...: installs Debian packages that are missing (runs apt-get update once).
apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ -f "$SERVERS_DIR/.apt-updated" ] || { apt-get update -qq && touch "$SERVERS_DIR/.apt-updated"; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# npm_tool DIR: installs the pinned npm tool whose package.json and lock live in scripts/servers/DIR.
npm_tool() {
  local dir="$ROOT/scripts/servers/$1"
  if [ ! -d "$dir/node_modules" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    (cd "$dir" && npm ci --no-audit --no-fund >/dev/null)
  fi
}
