#!/bin/bash
# Installs vsftpd (Debian) for the FTP benchmark (idempotent). The packaged service is not started
# (policy-rc.d answers 101 during the install): the benchmark runs its own vsftpd on a high port,
# serving anonymous uploads into its scratch directory (no login user to add to /etc/passwd; the
# package's own `ftp` user owns the upload directory).
set -euo pipefail
source "$(dirname "$0")/../scripts/servers/lib.sh"
if [ -x /usr/sbin/vsftpd ] && id ftp >/dev/null 2>&1; then exit 0; fi
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt_install vsftpd
[ -x /usr/sbin/vsftpd ] && id ftp >/dev/null
