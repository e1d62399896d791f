#!/usr/bin/env bash
# Debian's headless Chromium and its driver for the dashboard's browser tests (tests/site); safe to rerun.
# Never a downloaded browser: selenium is pointed at /usr/bin/chromium and /usr/bin/chromedriver.
set -euo pipefail
packages=(chromium chromium-driver fonts-noto-color-emoji) # the font draws the grid's marks
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null; then
  echo "browser-deps: no apt-get here; install ${missing[*]} yourself (the browser tests skip without them)" >&2
  exit 0
fi
sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
