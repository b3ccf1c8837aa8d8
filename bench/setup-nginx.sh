#!/bin/bash
# Installs the Debian nginx package for the HTTP transfer benchmark (idempotent).
# The packaged service is not started: the benchmark runs its own nginx on a high
# port with bench/nginx/nginx.conf.
set -euo pipefail
if command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; then exit 0; fi
export DEBIAN_FRONTEND=noninteractive
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO apt-get update -qq
# policy-rc.d 101: keep the package's service from starting during the install
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null; $SUDO chmod +x /usr/sbin/policy-rc.d
  trap '$SUDO rm -f /usr/sbin/policy-rc.d' EXIT
fi
$SUDO apt-get install -y -qq --no-install-recommends nginx >/dev/null
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ]
