#!/bin/bash
# Installs Apache httpd with mod_dav (Debian apache2) for the WebDAV benchmark (idempotent).
# The packaged service is not started: the benchmark runs its own apache2 on a high port.
set -euo pipefail
if [ -x /usr/sbin/apache2 ] && [ -e /usr/lib/apache2/modules/mod_dav_fs.so ] && command -v htpasswd >/dev/null; then exit 0; fi
export DEBIAN_FRONTEND=noninteractive
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO apt-get update -qq
# policy-rc.d 101: keep the package's service from starting during the install
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null; $SUDO chmod +x /usr/sbin/policy-rc.d
  trap '$SUDO rm -f /usr/sbin/policy-rc.d' EXIT
fi
$SUDO apt-get install -y -qq --no-install-recommends apache2 apache2-utils >/dev/null
[ -x /usr/sbin/apache2 ]
