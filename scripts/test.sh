#!/usr/bin/env bash
# Set up (idempotent) and run the whole test suite, real-export tests included.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/npm-deps.sh
bash scripts/browser-deps.sh
.venv/bin/ruff check . && .venv/bin/ruff format --check .
# The rehearsal's target (tests/rehearsal) and the real tree selection is tested on (the light
# part on 3.13 among them), cached in .ci/cache/.
bash scripts/transformers-sdist.sh
# The light part, installed as the publishing jobs install it, on the lowest and highest Python
# the bot supports (3.13 with a Transformers to read, for selection).
bash scripts/test-light.sh 3.10
LIGHT_EXTRA="transformers==5.23.0" bash scripts/test-light.sh 3.13
bash scripts/wheelhouse.sh  # what tests/test_install_steps.py installs offline, in .ci/wheelhouse/
exec .venv/bin/python -m pytest -n 2 "$@"
