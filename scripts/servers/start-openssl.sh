#!/bin/bash
# Not a server: makes sure the openssl command line tool is installed (idempotent).
# core/test/http/https.test.ts generates its self-signed certificates with it.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
command -v openssl >/dev/null || apt_install openssl
openssl version
