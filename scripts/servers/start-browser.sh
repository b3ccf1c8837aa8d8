#!/bin/bash
# The browser the web client's tests drive (idempotent; nothing is started):
# Debian's chromium, launched headless by playwright-core from
# plugins/web-client/test/browser.ts (no browser download by npm).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

apt_install chromium
echo "browser: $(/usr/bin/chromium --version 2>/dev/null | tail -1)"
