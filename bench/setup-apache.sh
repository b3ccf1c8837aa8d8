#!/bin/bash
# Installs Apache httpd with mod_dav (Debian apache2, apache2-utils for htpasswd) for the WebDAV
# benchmark (idempotent). The packaged service is not started (policy-rc.d answers 101 during
# the install): the benchmark runs its own apache2 on a high port.
set -euo pipefail
source "$(dirname "$0")/../scripts/servers/lib.sh"
if [ -x /usr/sbin/apache2 ] && [ -e /usr/lib/apache2/modules/mod_dav_fs.so ] && command -v htpasswd >/dev/null; then exit 0; fi
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt_install apache2 apache2-utils
[ -x /usr/sbin/apache2 ]
