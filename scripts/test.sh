#!/usr/bin/env bash
# Set up (idempotent) and run the whole test suite, real-export tests included.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/npm-deps.sh
bash scripts/browser-deps.sh
.venv/bin/ruff check . && .venv/bin/ruff format --check .
bash scripts/transformers-sdist.sh  # the rehearsal's target (tests/rehearsal), cached in .ci/cache/
exec .venv/bin/python -m pytest -n 2 "$@"
