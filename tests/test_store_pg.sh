#!/bin/bash
# test_store_pg.sh -- the store's unit tests on PostgreSQL: test_store,
# test_recovery, test_checks, test_dispatch and test_trigger_text, each against a fresh
# database of a server this script starts (tests/pg.sh) and stops.
# test_store also restarts the server under its open stores
# (XXL_TEST_PG_RESTART).
# Skipped (77) when PostgreSQL's server is not installed.
set -u
: "${XXL_BUILD:?run through make check (XXL_BUILD unset)}"
: "${XXL_SRC:=$XXL_BUILD}"
. "$XXL_SRC/tests/pg.sh"
if ! pg_bindir >/dev/null 2>&1; then
    echo "# skipped: no PostgreSQL server (initdb, pg_ctl: Debian's postgresql)"
    exit 77
fi
T=$(mktemp -d /tmp/xxl-test-pg.XXXXXX)
trap 'pg_cleanup; rm -rf "$T"' EXIT
started=$(date +%s%N)
pg_start "$T/pg" || exit 1
echo "# server started in $(( ($(date +%s%N) - started) / 1000000 )) ms"
failed=0
for test in test_store test_recovery test_checks test_dispatch test_trigger_text; do
    url=$(pg_newdb "$test") || exit 1
    echo "# $test"
    XXL_TEST_STORE_URL="$url" XXL_TEST_PG_RESTART="$XXL_SRC/tests/pg.sh restart $T/pg" \
        "$XXL_BUILD/tests/$test" || failed=1
done
exit $failed
