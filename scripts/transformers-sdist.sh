#!/usr/bin/env bash
# Cache the real transformers 5.23.0 source distribution in the ignored .ci/cache/ (the rehearsal,
# tests/rehearsal, builds a Transformers-shaped repository from it and does no network itself).
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE=.ci/cache
VERSION=5.23.0
mkdir -p "$CACHE"
if ! ls "$CACHE"/transformers-"$VERSION".tar.gz >/dev/null 2>&1; then
  .venv/bin/python -m pip download --quiet --no-binary :all: --no-deps "transformers==$VERSION" -d "$CACHE"
fi
