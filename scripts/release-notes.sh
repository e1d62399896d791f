#!/usr/bin/env bash
# Check a release tag and print its notes (docs/releasing.md): scripts/release-notes.sh vX.Y.Z
# The tag's commit is on main (MAIN_REF, origin/main by default: release.yml's checkout fetches
# it), its pyproject.toml says X.Y.Z, and its CHANGELOG.md has a non-empty "## [X.Y.Z] - DATE"
# section, which is printed. Exit 2 with what is wrong otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
die() {
  echo "release-notes: $*" >&2
  exit 2
}
TAG=${1:?usage: scripts/release-notes.sh vX.Y.Z}
[[ $TAG =~ ^v([0-9]+\.[0-9]+\.[0-9]+)$ ]] || die "$TAG is not a release tag vX.Y.Z"
VERSION=${BASH_REMATCH[1]}
MAIN_REF=${MAIN_REF:-origin/main}
COMMIT=$(git rev-parse -q --verify "refs/tags/$TAG^{commit}") || die "no tag $TAG here: git fetch --tags"
git rev-parse -q --verify "$MAIN_REF^{commit}" >/dev/null || die "no $MAIN_REF here: fetch main's history"
git merge-base --is-ancestor "$COMMIT" "$MAIN_REF" || die "$TAG ($COMMIT) is not on $MAIN_REF: tag a commit of main (scripts/release.sh does)"
SAID=$(git show "$COMMIT:pyproject.toml" | sed -n 's/^version = "\([^"]*\)".*/\1/p' | head -1)
[ "$SAID" = "$VERSION" ] || die "$TAG's pyproject.toml says version ${SAID:-none}, not $VERSION"
# The section: from its heading to the next "## " heading, without the link references.
NOTES=$(git show "$COMMIT:CHANGELOG.md" | awk -v v="$VERSION" '
  index($0, "## [" v "] - ") == 1 { found = 1; next }
  found && /^## / { exit }
  found && !/^\[[0-9][^]]*\]: / { print }
')
[ -n "${NOTES//[[:space:]]/}" ] || die "$TAG's CHANGELOG.md has no section '## [$VERSION] - DATE' with entries"
printf '%s\n' "$NOTES"
