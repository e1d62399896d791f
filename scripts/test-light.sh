#!/usr/bin/env bash
# The light part on one Python (scripts/test-light.sh 3.10): the bot installed from this folder,
# not editable and without torch or transformers, as the publishing jobs install it, into
# .ci/light-<version>; then the tests that need no torch, run from a copy of tests/ so that `bot`
# is imported from the installed package, never from this source tree. Safe to rerun.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${1:?usage: scripts/test-light.sh PYTHON_VERSION (e.g. 3.10)}
# pyenv's other Pythons are off PATH (its shim for them only prints advice), so look there first.
PY=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$VERSION".*/bin/python 2>/dev/null | sort -V | tail -1 || true)
[ -n "$PY" ] || PY=$(command -v "python$VERSION" || true)
if [ -z "$PY" ] || ! "$PY" --version >/dev/null 2>&1; then
  echo "test-light: no Python $VERSION on this machine: the light part is not tested on $VERSION" >&2
  exit 0
fi
VENV=.ci/light-$VERSION
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
# pip builds and reinstalls a local folder every time, so the package is this checkout's as it is now.
"$VENV/bin/python" -m pip install --quiet . pytest hypothesis pyyaml jsonschema markdown-it-py ${LIGHT_EXTRA:-}
if "$VENV/bin/python" -c "import torch" 2>/dev/null; then
  echo "test-light: torch is installed in $VENV: the light part must not need it" >&2
  exit 1
fi
# The copy sits in a temporary folder, so ../shared (upstream's real testers) is named for the tests.
if [ -z "${EXPORT_BOT_UPSTREAM:-}" ] && [ -d ../shared/upstream ]; then
  EXPORT_BOT_UPSTREAM=$(cd ../shared/upstream && pwd)
  export EXPORT_BOT_UPSTREAM
fi
COPY=$(mktemp -d)
trap 'rm -rf "$COPY"' EXIT
cp -r tests pyproject.toml "$COPY/"
ln -s "$PWD/.ci" "$COPY/.ci"
ln -s "$PWD/skiplists" "$COPY/skiplists"
ln -s "$PWD/examples" "$COPY/examples"
ln -s "$PWD/.github" "$COPY/.github"  # the attack tests read the workflows the jobs run in
ln -s "$PWD/tools" "$COPY/tools"  # tests/skiplist runs the one-off seed transcription
ln -s "$PWD/docs" "$COPY/docs"  # tests/skiplist checks the lines docs/skiplists.md gives
cd "$COPY"
"$VENV/bin/python" - <<'PY'
import bot, sys
assert "site-packages" in bot.__file__, f"bot imported from {bot.__file__}, not the installed package"
print(f"light part on Python {sys.version.split()[0]}: bot from {bot.__file__}")
PY
# tests/select reads an installed Transformers tree: only where LIGHT_EXTRA installs one.
tests=(tests/diff tests/report tests/propose tests/skiplist tests/github tests/cli tests/test_settings.py tests/test_install_spec.py)
[ -z "${LIGHT_EXTRA:-}" ] || tests+=(tests/select)
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider -m "not export and not rehearsal" "${tests[@]}"
