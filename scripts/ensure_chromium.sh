#!/usr/bin/env bash
# Browser tests drive Debian's Chromium through Playwright; install it when it is missing.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" != "0" ]; then
    echo "ERROR: /usr/bin/chromium is missing; install Debian's chromium package (as root)." >&2
    exit 1
fi
echo "Installing Debian's chromium for the browser tests."
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
test -x /usr/bin/chromium
