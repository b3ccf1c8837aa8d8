#!/bin/bash
# SFTP test server: a second OpenSSH sshd (SFTP only) on 127.0.0.1:19022, idempotent.
# Debian's own sshd service is never touched: this instance has its own host
# key, config, pid file and log under $SERVERS_DIR/sftp.
#   user ferrysftp / password ferrysftp-pass, or the ed25519 key
#   $SERVERS_DIR/sftp/client_key (authorized for ferrysftp), or the ed25519 key
#   $SERVERS_DIR/sftp/client_key_passphrase (passphrase ferrysftp-key-passphrase, authorized too)
#   $SERVERS_DIR/sftp/host_fingerprint: the host key's SHA256 fingerprint
#   home: $SERVERS_DIR/sftp/home/ferrysftp, with a root-owned readonly/ inside
# Stop: kill "$(cat "$SERVERS_DIR/sftp/sshd.pid")"
set -euo pipefail
source "$(dirname "$0")/lib.sh"

PORT=19022
USER_NAME=ferrysftp
USER_PASS=ferrysftp-pass
KEY_PASSPHRASE=ferrysftp-key-passphrase
D="$SERVERS_DIR/sftp"
HOME_DIR="$D/home/$USER_NAME"
PIDFILE="$D/sshd.pid"

if running sftp "$PIDFILE"; then echo "sftp: sshd already running on 127.0.0.1:$PORT (pid $(cat "$PIDFILE"))"; exit 0; fi

port_free "$PORT"
[ -x /usr/sbin/sshd ] || apt_install openssh-server
mkdir -p "$D/home" "$D/authorized_keys" /run/sshd
chmod 0755 /run/sshd "$SERVERS_DIR" "$D" "$D/home"   # sshd refuses to start without its privsep dir

[ -f "$D/ssh_host_ed25519_key" ] || ssh-keygen -q -t ed25519 -N '' -C ferry-test-host -f "$D/ssh_host_ed25519_key"
ssh-keygen -l -E sha256 -f "$D/ssh_host_ed25519_key.pub" | awk '{print $2}' > "$D/host_fingerprint"

if id "$USER_NAME" >/dev/null 2>&1; then
  [ "$(getent passwd "$USER_NAME" | cut -d: -f6)" = "$HOME_DIR" ] || usermod -d "$HOME_DIR" "$USER_NAME"
else
  useradd -M -d "$HOME_DIR" -s /bin/sh "$USER_NAME"
fi
echo "$USER_NAME:$USER_PASS" | chpasswd
mkdir -p "$HOME_DIR/readonly"
chown "$USER_NAME:$USER_NAME" "$HOME_DIR"
chown root:root "$HOME_DIR/readonly" && chmod 0755 "$HOME_DIR/readonly"

[ -f "$D/client_key" ] || ssh-keygen -q -t ed25519 -N '' -C ferry-test-client -f "$D/client_key"
# a passphrase-protected key too (OpenSSH format, bcrypt KDF), for private key + passphrase logins
[ -f "$D/client_key_passphrase" ] || ssh-keygen -q -t ed25519 -N "$KEY_PASSPHRASE" -C ferry-test-client-passphrase -f "$D/client_key_passphrase"
cat "$D/client_key.pub" "$D/client_key_passphrase.pub" > "$D/authorized_keys/$USER_NAME"
chmod 0644 "$D/authorized_keys/$USER_NAME"

cat > "$D/sshd_config" <<CFG
Port $PORT
ListenAddress 127.0.0.1
HostKey $D/ssh_host_ed25519_key
PidFile $PIDFILE
UsePAM no
PasswordAuthentication yes
KbdInteractiveAuthentication no
PubkeyAuthentication yes
AuthorizedKeysFile $D/authorized_keys/%u
StrictModes no
PermitRootLogin no
AllowUsers $USER_NAME
X11Forwarding no
AllowTcpForwarding no
PrintMotd no
MaxStartups 64:30:128
MaxSessions 64
Subsystem sftp internal-sftp -u 022
LogLevel VERBOSE
CFG
/usr/sbin/sshd -t -f "$D/sshd_config"
/usr/sbin/sshd -f "$D/sshd_config" -E "$D/sshd.log"   # absolute path required; daemonizes and writes the pid file
started sftp
wait_port "$PORT"
echo "sftp: sshd up on 127.0.0.1:$PORT (pid $(cat "$PIDFILE"))"
