#!/bin/bash
# ICAP test server: c-icap on 127.0.0.1:11344 over a private clamd, idempotent.
# Nothing is downloaded: clamd's signature database is one locally written
# signature for the EICAR test string (reported as
# "Eicar-Test-Signature-Local.UNOFFICIAL"). Debian's own c-icap and clamd
# services are never touched: this instance has its own configs, sockets,
# pid files and logs under $SERVERS_DIR/icap.
#   icap://127.0.0.1:11344/echo    c-icap's echo service (answers 200 with the
#                                  message unchanged, or 204 when allowed)
#   icap://127.0.0.1:11344/avscan  virus_scan over clamd, no size limit, 204 allowed
#   icap://127.0.0.1:11344/srv_clamav  virus_scan with its defaults
#   icap://127.0.0.1:11344/dlp     content filtering: rewrites every "SECRET-<digits>"
#                                  in a body to "[REDACTED]" (an adapted answer)
#   $SERVERS_DIR/icap/eicar.com    the 68-byte EICAR test file
# clamd listens on a unix socket only ($SERVERS_DIR/icap/run/clamd.sock).
# Stop: kill "$(cat "$SERVERS_DIR/icap/run/c-icap.pid")" "$(cat "$SERVERS_DIR/icap/run/clamd.pid")"
# (c-icap takes a few seconds to exit; wait for it before starting again).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

PORT=11344
D="$SERVERS_DIR/icap"
PIDFILE="$D/run/c-icap.pid"
CLAMD_PID="$D/run/clamd.pid"
MODS=/usr/lib/x86_64-linux-gnu/c_icap

# stops a daemon by its pid file and waits for it to exit
stop_pid() {
  local pid; pid=$(cat "$1" 2>/dev/null) || return 0
  kill "$pid" 2>/dev/null || { rm -f "$1"; return 0; }
  for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$1"
}

if running icap "$PIDFILE" && alive "$CLAMD_PID"; then
  echo "icap: c-icap already running on 127.0.0.1:$PORT (pid $(cat "$PIDFILE")), clamd pid $(cat "$CLAMD_PID")"
  exit 0
fi
# one of the two is down (or another version of this script started them): start both afresh
stop_pid "$PIDFILE"
stop_pid "$CLAMD_PID"
port_free "$PORT"

command -v c-icap >/dev/null && command -v clamd >/dev/null && [ -f "$MODS/virus_scan.so" ] && [ -f "$MODS/srv_content_filtering.so" ] ||
  apt_install c-icap libc-icap-mod-virus-scan libc-icap-mod-contentfiltering clamav clamav-daemon

mkdir -p "$D/run" "$D/tmp" "$D/clamdb"
# the signature database: the EICAR test string, written here (no freshclam, no download)
printf '%s' 'X5O!P%@AP[4\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*' > "$D/eicar.com"
echo "Eicar-Test-Signature-Local:0:*:$(od -An -tx1 -v "$D/eicar.com" | tr -d ' \n')" > "$D/clamdb/local-eicar.ndb"

cat > "$D/clamd.conf" <<CFG
LocalSocket $D/run/clamd.sock
LocalSocketMode 666
DatabaseDirectory $D/clamdb
PidFile $CLAMD_PID
LogFile $D/clamd.log
LogTime yes
Foreground no
TemporaryDirectory $D/tmp
SelfCheck 0
StreamMaxLength 1024M
MaxScanSize 1024M
MaxFileSize 1024M
CFG

# no User line: c-icap keeps running as root and can read its root-owned tmp dir
cat > "$D/c-icap.conf" <<CFG
PidFile $PIDFILE
CommandsSocket $D/run/c-icap.ctl
Timeout 300
MaxKeepAliveRequests 100
KeepAliveTimeout 600
StartServers 1
MaxServers 2
MinSpareThreads 5
MaxSpareThreads 10
ThreadsPerChild 10
MaxRequestsPerChild 0
Port 127.0.0.1:$PORT
ServerAdmin test@example.test
ServerName ferry-test-icap
TmpDir $D/tmp
MaxMemObject 131072
DebugLevel 1
Pipelining on
SupportBuggyClients off
ModulesDir $MODS
ServicesDir $MODS
TemplateDir /usr/share/c_icap/templates/
TemplateDefaultLanguage en
LoadMagicFile /etc/c-icap/c-icap.magic
RemoteProxyUsers off
ServerLog $D/server.log
AccessLog $D/access.log
Service echo srv_echo.so
Module common clamd_mod.so
clamd_mod.ClamdSocket $D/run/clamd.sock
Service antivirus_module virus_scan.so
ServiceAlias srv_clamav virus_scan
ServiceAlias avscan virus_scan?allow204=on&sizelimit=off&mode=simple
virus_scan.ScanFileTypes TEXT DATA EXECUTABLE ARCHIVE GIF JPEG MSOFFICE
virus_scan.SendPercentData 5
virus_scan.StartSendPercentDataAfter 2M
virus_scan.MaxObjectSize 5M
virus_scan.DefaultEngine clamd
Service dlp srv_content_filtering.so
srv_content_filtering.MaxBodyData 5M
srv_content_filtering.Match Secret body /SECRET-[0-9]+/g score=10 info{Redact}=[REDACTED]
srv_content_filtering.Profile default replace score{Secret>0} replaceInfo=Redact
CFG

rm -f "$D/run/clamd.sock"
clamd -c "$D/clamd.conf"   # daemonizes
for _ in $(seq 1 200); do [ -S "$D/run/clamd.sock" ] && break; sleep 0.05; done
[ -S "$D/run/clamd.sock" ] || { echo "icap: clamd did not start (see $D/clamd.log)" >&2; exit 1; }

rm -f "$D/run/c-icap.ctl"
c-icap -f "$D/c-icap.conf"   # daemonizes and writes the pid file
started icap
wait_port "$PORT"
echo "icap: c-icap up on 127.0.0.1:$PORT (pid $(cat "$PIDFILE")), clamd pid $(cat "$CLAMD_PID")"
