# Shared helpers for scripts/servers/start-*.sh (source it).
#
# FERRY_SERVERS_DIR: where the test servers keep their state, their installed
# npm tools and pid files. The default is one directory for the whole
# machine, not one per checkout: two checkouts (a working tree and a fresh
# clone for CI, say) share the servers instead of fighting over their fixed
# ports and the SFTP system user. It must be traversable by that user (sshd
# reads its authorized keys as the user), which a private temp dir or a home
# directory is not.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SERVERS_DIR=${FERRY_SERVERS_DIR:-/var/lib/ferry-test-servers}
mkdir -p "$SERVERS_DIR"
chmod 0755 "$SERVERS_DIR"
export npm_config_loglevel=error

# alive PIDFILE: true when the process in PIDFILE runs.
alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# server_stamp NAME [TOOL]: a hash of scripts/servers/start-NAME.sh and of the
# tool directory scripts/servers/TOOL (without node_modules).
server_stamp() {
  {
    cat "$ROOT/scripts/servers/start-$1.sh"
    if [ -n "${2:-}" ]; then
      (cd "$ROOT/scripts/servers/$2" && find . -path ./node_modules -prune -o -type f -print | LC_ALL=C sort | xargs cat)
    fi
  } | sha256sum | cut -d' ' -f1
}

# running NAME PIDFILE [TOOL]: true when the server runs and was started by
# this version of its script and tool; a server started by another version
# is stopped (and false returned) so the caller starts the current one.
running() {
  local want; want=$(server_stamp "$1" "${3:-}")
  alive "$2" || return 1
  [ "$(cat "$SERVERS_DIR/$1.stamp" 2>/dev/null)" = "$want" ] && return 0
  echo "$1: the running server was started by another version of start-$1.sh: restarting it"
  local pid; pid=$(cat "$2")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$2"
  return 1
}

# started NAME [TOOL]: records which version of the script started the server.
started() { server_stamp "$1" "${2:-}" > "$SERVERS_DIR/$1.stamp"; }

# port_free PORT: fails with a message when something else listens there.
port_free() {
  if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
    echo "127.0.0.1:$1 is taken by another process (not started by these scripts)" >&2
    return 1
  fi
}

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

# npm_tool TOOL: installs the pinned npm tool of scripts/servers/TOOL
# (package.json, lock and any scripts) into $SERVERS_DIR/tools/TOOL, so a
# running server never depends on the checkout that started it. Sets TOOL_DIR.
npm_tool() {
  local src="$ROOT/scripts/servers/$1"
  TOOL_DIR="$SERVERS_DIR/tools/$1"
  mkdir -p "$TOOL_DIR"
  (cd "$src" && find . -path ./node_modules -prune -o -type f -print | while read -r f; do
    mkdir -p "$TOOL_DIR/$(dirname "$f")"; cmp -s "$f" "$TOOL_DIR/$f" || cp "$f" "$TOOL_DIR/$f"; done)
  if [ ! -d "$TOOL_DIR/node_modules" ] || ! cmp -s "$TOOL_DIR/package-lock.json" "$TOOL_DIR/.installed-lock.json"; then
    (cd "$TOOL_DIR" && npm ci --no-audit --no-fund >/dev/null)
    cp "$TOOL_DIR/package-lock.json" "$TOOL_DIR/.installed-lock.json"
  fi
}
