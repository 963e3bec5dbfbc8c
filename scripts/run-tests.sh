#!/usr/bin/env bash
# The whole suite: build the web app, type-check everything, run every test file with node's
# test runner, and end with one plain "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "$0")/.."
npm run build --silent || exit 1
npm run typecheck --silent || exit 1
mkdir -p .tmp
files=$(ls tests/*.test.ts)
node --import tsx --test --test-concurrency=1 --test-timeout=300000 \
  --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=tap --test-reporter-destination=.tmp/test-results.tap \
  $files
status=$?
passed=$(grep -E '^# pass [0-9]+' .tmp/test-results.tap | tail -1 | awk '{print $3}')
failed=$(grep -E '^# fail [0-9]+' .tmp/test-results.tap | tail -1 | awk '{print $3}')
echo "${passed:-0} passed, ${failed:-0} failed"
exit $status
