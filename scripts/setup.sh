#!/usr/bin/env bash
# Create .venv with Python 3.11 and install export-bot with its test extra. Safe to rerun.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
# torch first and pinned: pip takes the CPU build of 2.13.0 that lies on the machine's disk.
.venv/bin/python -m pip install --quiet "torch==2.13.0"
.venv/bin/python -m pip install --quiet -e ".[test]"
