#!/bin/bash
# IMAP test server: a private Dovecot (IMAP only) on 127.0.0.1, idempotent.
# Debian's own dovecot service is never touched: this instance has its own
# config, base_dir, state, users file, maildirs and log under $SERVERS_DIR/dovecot.
#   127.0.0.1:1143  IMAP, plaintext AUTH allowed on loopback; STARTTLS offered
#   127.0.0.1:1993  IMAPS (implicit TLS)
#   TLS certificate: self-signed for CN=ferry-imap-test, $SERVERS_DIR/dovecot/tls/cert.pem
#   users (passwd-file): ferry@imap.test / ferry-imap-pass, other@imap.test / other-imap-pass;
#   anypass@imap.test accepts any password
#   mail: maildir under $SERVERS_DIR/dovecot/mail/<user>/Maildir (owned by the system user vmail)
# Stop: kill "$(cat "$SERVERS_DIR/dovecot/run/master.pid")" (the master takes ~2 s to exit)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

PORT=1143
TLS_PORT=1993
D="$SERVERS_DIR/dovecot"
PIDFILE="$D/run/master.pid"

if running dovecot "$PIDFILE"; then echo "dovecot: already running on 127.0.0.1:$PORT (pid $(cat "$PIDFILE"))"; exit 0; fi

port_free "$PORT"
port_free "$TLS_PORT"
command -v dovecot >/dev/null || apt_install dovecot-imapd
command -v openssl >/dev/null || apt_install openssl
# mail processes may not run as root
id vmail >/dev/null 2>&1 || useradd -r -M -d /nonexistent -s /usr/sbin/nologin vmail

mkdir -p "$D/run" "$D/state" "$D/mail" "$D/tls"
chmod 0755 "$D"
chown vmail:vmail "$D/mail"

if [ ! -s "$D/tls/cert.pem" ] || [ ! -s "$D/tls/key.pem" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=ferry-imap-test" \
    -addext "subjectAltName=DNS:ferry-imap-test" \
    -keyout "$D/tls/key.pem" -out "$D/tls/cert.pem" 2>/dev/null
  chmod 0600 "$D/tls/key.pem"
fi

cat > "$D/users" <<USERS
ferry@imap.test:{PLAIN}ferry-imap-pass::::::
other@imap.test:{PLAIN}other-imap-pass::::::
USERS
chmod 0644 "$D/users"

cat > "$D/dovecot.conf" <<CFG
instance_name = ferry-test-dovecot
base_dir = $D/run
state_dir = $D/state
protocols = imap
listen = 127.0.0.1
ssl = yes
ssl_cert = <$D/tls/cert.pem
ssl_key = <$D/tls/key.pem
disable_plaintext_auth = no
auth_mechanisms = plain login
log_path = $D/dovecot.log
mail_location = maildir:$D/mail/%u/Maildir
mail_uid = vmail
mail_gid = vmail
first_valid_uid = 1
passdb {
  driver = passwd-file
  args = $D/users
}
# anypass@imap.test logs in with any password (tests that use a random secret)
passdb {
  driver = static
  args = nopassword=y
  username_filter = anypass@imap.test
}
userdb {
  driver = static
  args = home=$D/mail/%u
}
namespace inbox {
  inbox = yes
  separator = /
  mailbox Sent {
    special_use = \Sent
    auto = subscribe
  }
  mailbox Trash {
    special_use = \Trash
    auto = subscribe
  }
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = $PORT
  }
  inet_listener imaps {
    address = 127.0.0.1
    port = $TLS_PORT
    ssl = yes
  }
}
service auth {
  unix_listener auth-userdb {
    mode = 0666
  }
}
CFG

rm -f "$PIDFILE"
# daemonizes (the master writes its pid to $PIDFILE); its output must not hold the caller's pipes
dovecot -c "$D/dovecot.conf" </dev/null >/dev/null 2>&1
started dovecot
wait_port "$PORT"
wait_port "$TLS_PORT"
for _ in $(seq 1 100); do [ -s "$PIDFILE" ] && break; sleep 0.05; done
echo "dovecot: up on 127.0.0.1:$PORT (STARTTLS) and 127.0.0.1:$TLS_PORT (TLS) (pid $(cat "$PIDFILE"))"
