#!/usr/bin/env bash
# test_report_flood.sh -- REPORTs wait for the daily report's count (made
# on a thread of its own): at most 1,024 wait at once, the rest are
# answered 429 at once, every one gets a reply, and the scheduler serves
# on.  A store of 600,000 runs of today makes each count take a while.
. "$(dirname "$0")/lib.sh"
xxl_setup
xxl_sqlite_only "a store filled behind the scheduler's back with sqlite3"
start_scheduler || exit 1
NOW=$(date +%s%3N)
xxl_sql "INSERT INTO xxl_job_log (job_group, job_id, trigger_time, trigger_code, handle_code)
         WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 600000)
         SELECT 1, 1, $NOW - n, 200, 200 FROM s" >/dev/null
# (the first count of 600,000 rows may take longer than xxl-ctl's 5 s
# default under the sanitizers on a loaded machine)
check "one REPORT counts the 600,000 runs" \
    test "$(ctl --timeout 120000 report | jq .sucCount)" -ge 600000
/usr/bin/python3 "$XXL_SRC/tests/test_report_flood.py" "$API" 6000 > "$T/flood.json"
cat "$T/flood.json"
check "6,000 REPORTs sent at once: every one answered" jq -e '.replies == 6000' "$T/flood.json"
check "... those that found room got the counts (200)" jq -e '.codes["200"] >= 1' "$T/flood.json"
check "... past 1,024 waiting, 429 at once, saying why" \
    jq -e '.codes["429"] >= 1 and (.msg429 | test("1024 REPORTs already wait"))
           and .codes["200"] + .codes["429"] == 6000' "$T/flood.json"
check "a REPORT afterwards gets the counts" \
    test "$(ctl --timeout 120000 report | jq .sucCount)" -ge 600000
check "the scheduler is alive" kill -0 "$SPID"
xxl_done
