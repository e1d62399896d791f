#!/usr/bin/env bash
# Cut a release on a clean main (docs/releasing.md): scripts/release.sh VERSION
#  1. "Release VERSION": pyproject.toml's version, CHANGELOG.md's Unreleased entries under
#     "## [VERSION] - DATE"; the annotated tag vVERSION on that commit.
#  2. "Pin the example callers to vVERSION": every caller's `uses:` and `bot-ref:` pin the tag's
#     commit SHA (`# vVERSION` beside it), the inputs that commit declares become real `with:`
#     entries where the caller shows them commented out with their defaults, and README's caller
#     snippet follows (tests/test_readme.py keeps it verbatim).
# It never pushes: it prints the push. Exit 2, changing nothing, on a dirty tree, another branch,
# a version not newer than the newest release, or an empty Unreleased section.
set -euo pipefail
cd "$(dirname "$0")/.."
die() {
  echo "release: $*" >&2
  exit 2
}
[ $# -eq 1 ] || die "usage: scripts/release.sh VERSION (X.Y.Z, newer than the newest release in CHANGELOG.md)"
VERSION=$1
[[ $VERSION =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "$VERSION is not X.Y.Z (digits only, no leading v)"
TAG=v$VERSION
PYTHON=${PYTHON:-}
[ -n "$PYTHON" ] || { [ -x .venv/bin/python ] && PYTHON=.venv/bin/python; } || PYTHON=$(command -v python3 || true)
"$PYTHON" -c "import yaml" 2>/dev/null || die "no Python with PyYAML: run scripts/setup.sh, or set PYTHON"
BRANCH=$(git symbolic-ref --short -q HEAD || true)
[ "$BRANCH" = main ] || die "on ${BRANCH:-a detached HEAD}, not main: git switch main && git pull --ff-only, then rerun"
[ -z "$(git status --porcelain)" ] || die "the work tree has changes (git status): commit or stash them, then rerun"
! git rev-parse -q --verify "refs/tags/$TAG" >/dev/null || die "the tag $TAG exists already: pick the next version"

# The file edits, in Python: `prepare VERSION DATE TAGS...` and `pin VERSION SHA`.
IFS= read -r -d '' EDIT <<'PY' || true
import re, subprocess, sys
from pathlib import Path

import yaml

HEADING = re.compile(r"^## \[(\d+)\.(\d+)\.(\d+)\]", re.M)
USES = re.compile(r"^(\s*(?:-\s*)?uses:\s*huggingface/export-bot/\.github/workflows/([\w.-]+\.yml))@[0-9a-f]{40}[^\n]*$", re.M)
BOT_REF = re.compile(r"^(\s*bot-ref:\s*)[0-9a-f]{40}\b", re.M)
COMMENTED = re.compile(r"^(\s+)# ([\w-]+): (.*?)((?:\s+#\s[^\n]*)?)$")
CALLERS = Path("examples/transformers/.github/workflows")


def refuse(message):
    print(f"release: {message}", file=sys.stderr)
    sys.exit(2)


def prepare(version, date, *tags):
    changelog, pyproject = Path("CHANGELOG.md"), Path("pyproject.toml")
    text = changelog.read_text(encoding="utf-8")
    released = [tuple(map(int, m)) for m in HEADING.findall(text)]
    released += [tuple(map(int, t[1:].split("."))) for t in tags if re.fullmatch(r"v\d+\.\d+\.\d+", t)]
    wanted = tuple(map(int, version.split(".")))
    if released and wanted <= max(released):
        major, minor, patch = max(released)
        refuse(
            f"{version} is not newer than the newest release, {major}.{minor}.{patch}: pass a higher"
            f" version ({major}.{minor + 1}.0 for new features, {major}.{minor}.{patch + 1} for fixes only)"
        )
    start = text.find("\n## Unreleased\n")
    if start < 0:
        refuse("CHANGELOG.md has no '## Unreleased' section: add it above the releases, with the entries")
    body_start = start + len("\n## Unreleased\n")
    following = re.search(r"^## ", text[body_start:], re.M)
    end = body_start + following.start() if following else len(text)
    body = text[body_start:end].strip()
    if not body:
        refuse("CHANGELOG.md's Unreleased section is empty: write what the release changes for an adopter first")
    section = f"\n## Unreleased\n\n## [{version}] - {date}\n\n{body}\n\n"
    text = text[:start] + section + text[end:].lstrip("\n")
    # Keep a Changelog's link reference for the new heading, below the sections.
    links = "" if re.search(r"^\[\d", text, re.M) else "\n"
    links += f"[{version}]: https://github.com/huggingface/export-bot/releases/tag/v{version}\n"
    changelog.write_text(text.rstrip("\n") + "\n" + links, encoding="utf-8")
    toml = pyproject.read_text(encoding="utf-8")
    toml, count = re.subn(r'^version = "[^"]*"', f'version = "{version}"', toml, count=1, flags=re.M)
    if count != 1:
        refuse("pyproject.toml has no 'version = \"...\"' line in [project]")
    pyproject.write_text(toml, encoding="utf-8")


def declared(sha, workflow):
    shown = subprocess.run(["git", "show", f"{sha}:.github/workflows/{workflow}"], capture_output=True, check=True)
    document = yaml.safe_load(shown.stdout)
    call = (document.get("on") or document[True])["workflow_call"]
    return call.get("inputs") or {}


def same(text, default):
    value = yaml.safe_load(text) if text else ""
    spelled = lambda v: str(v).lower() if isinstance(v, bool) else str(v)
    return spelled("" if value is None else value) == spelled(default)


def pin_caller(text, version, sha):
    """The caller pinned to `sha`, its commented-out defaults that commit declares made real."""
    lines, inputs, passed = [], {}, set()
    for line in text.splitlines():
        uses = USES.match(line)
        if uses:
            inputs, passed = declared(sha, uses.group(2)), set()
            line = f"{uses.group(1)}@{sha} # v{version}"
        line = BOT_REF.sub(lambda m: m.group(1) + sha, line)
        plain = re.match(r"^\s+([\w-]+):", line)
        if plain:
            passed.add(plain.group(1))
        commented = COMMENTED.match(line)
        if commented:
            indent, name, value, note = commented.groups()
            if name in inputs and name not in passed and same(value, inputs[name].get("default", "")):
                line, passed = f"{indent}{name}: {value}{note}", passed | {name}
        lines.append(line.replace(" at a pin that declares them,", ","))
    return "\n".join(lines) + "\n"


def pin(version, sha):
    for caller in sorted(CALLERS.glob("*.yml")):
        caller.write_text(pin_caller(caller.read_text(encoding="utf-8"), version, sha), encoding="utf-8")
    # README's first screen shows the conformance caller's jobs verbatim (tests/test_readme.py).
    readme, caller = Path("README.md"), (CALLERS / "export-conformance.yml").read_text(encoding="utf-8")
    text = readme.read_text(encoding="utf-8")
    marker = text.find("<!-- the conformance caller's jobs")
    if marker >= 0:
        start = text.index("```yaml\n", marker) + len("```yaml\n")
        end = text.index("```", start)
        text = text[:start] + caller[caller.index("\njobs:\n") + 1 :] + text[end:]
        readme.write_text(text, encoding="utf-8")


{"prepare": prepare, "pin": pin}[sys.argv[1]](*sys.argv[2:])
PY

DATE=$(date -u +%Y-%m-%d)
mapfile -t TAGS < <(git tag -l 'v[0-9]*')
"$PYTHON" -c "$EDIT" prepare "$VERSION" "$DATE" "${TAGS[@]}"
git add pyproject.toml CHANGELOG.md
git commit -q -m "Release $VERSION"
git tag -a "$TAG" -m "export-bot $VERSION"
SHA=$(git rev-parse "$TAG^{commit}")

"$PYTHON" -c "$EDIT" pin "$VERSION" "$SHA"
git add examples/transformers/.github/workflows README.md
git commit -q -m "Pin the example callers to $TAG"

cat <<EOF
release: tagged $TAG at $SHA ("Release $VERSION") and pinned the example callers to it ($(git rev-parse --short HEAD)).
Check them (bash scripts/lint-workflows.sh; pytest tests/test_release.py), then push both at once:
  git push --atomic origin main $TAG
The tag's push runs .github/workflows/release.yml, which publishes the GitHub release from CHANGELOG.md.
EOF
