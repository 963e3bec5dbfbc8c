#!/usr/bin/env bash
# The whole suite: build the web app, type-check everything, run every test file with node's
# test runner on SQLite, then the files that start a Hearth server again on PostgreSQL, and end
# with one plain "N passed, N failed" line summing both passes.
set -uo pipefail
cd "$(dirname "$0")/.."
npm run build --silent || exit 1
npm run typecheck --silent || exit 1
mkdir -p .tmp
run_files() { # tap-file files...
  local tap=$1
  shift
  node --import tsx --test --test-concurrency=1 --test-timeout=300000 \
    --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="$tap" \
    "$@"
}
count() { # tap-file pass|fail
  local n
  n=$(grep -E "^# $2 [0-9]+" "$1" 2>/dev/null | tail -1 | awk '{print $3}')
  echo "${n:-0}"
}

run_files .tmp/test-results.tap tests/*.test.ts
status=$?

# The PostgreSQL pass: files that start a server (the only ones the backend can change), but not
# the browser ones (e2e-*, helpers/browser), nor those about the SQLite file itself, nor the pg-*
# files, which run on PostgreSQL in the first pass already.
sqlite_only='firestore-stored-ids|hardening-admin-credential|pg-multi-instance|pg-migrate'
pg_files=()
for file in tests/*.test.ts; do
  name=$(basename "$file")
  [[ $name == e2e-* || $name =~ ^($sqlite_only)\.test\.ts$ ]] && continue
  grep -q 'helpers/browser' "$file" && continue
  grep -qE 'startHearth|spawnHearth' "$file" || continue
  pg_files+=("$file")
done
pg_passed=0
pg_failed=0
if pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null || (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; then
  echo "== the same files on PostgreSQL: ${#pg_files[@]} files =="
  HEARTH_TEST_BACKEND=postgres run_files .tmp/test-results-pg.tap "${pg_files[@]}" || status=1
  pg_passed=$(count .tmp/test-results-pg.tap pass)
  pg_failed=$(count .tmp/test-results-pg.tap fail)
else
  echo "PostgreSQL is not listening on 127.0.0.1:5432: its pass is counted as one failure"
  pg_failed=1
  status=1
fi
passed=$(( $(count .tmp/test-results.tap pass) + pg_passed ))
failed=$(( $(count .tmp/test-results.tap fail) + pg_failed ))
echo "${passed} passed, ${failed} failed"
exit $status
