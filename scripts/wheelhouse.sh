#!/usr/bin/env bash
# The wheels the jobs that run cells install (torch: the CPU build, as the jobs take it), so
# that tests/test_install_steps.py replays their install steps in a fresh venv without the network:
# the transformers 5.23.0 sdist's own requirements, the runner part at its pins, the default
# `test-packages`, httpx (upstream's newer testers import it: the test's `extra-packages`) and the
# build backends of the two folder installs. Into .ci/wheelhouse; the network is used here, once.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/transformers-sdist.sh
OUT=.ci/wheelhouse
if [ -f "$OUT/.complete" ] && [ "$OUT/.complete" -nt bot/data/constraints-runner.txt ] && [ "$OUT/.complete" -nt pyproject.toml ]; then
  exit 0
fi
mkdir -p "$OUT"
.venv/bin/python -m pip download --quiet --dest "$OUT" -c bot/data/constraints-runner.txt \
  "torch==2.13.0" ".[runner]" timeout-decorator parameterized httpx setuptools wheel .ci/cache/transformers-5.23.0.tar.gz
# The bot and transformers are built from their folders by the test, never taken from here; a
# package published as an sdist only is built once here, so that no install builds it offline.
rm -f "$OUT"/export_bot-*.whl "$OUT"/transformers-*
for sdist in "$OUT"/*.tar.gz; do
  [ -e "$sdist" ] || continue
  .venv/bin/python -m pip wheel --quiet --no-deps --wheel-dir "$OUT" "$sdist" && rm "$sdist"
done
touch "$OUT/.complete"
echo "wheelhouse: $(ls "$OUT" | wc -l) wheels, $(du -sh "$OUT" | cut -f1), in $OUT"
