#!/usr/bin/env bash
# test_log_clear_group.sh -- LOG_CLEAR of one group's jobs (jobGroup;
# xxl-ctl log clear --group; XXL-JOB's joblog/clearLog with a jobGroup and
# jobId 0): its jobs' finished rows only, --keep per job, across batches
# and jobs, never another group's rows or a running one; a job and a group
# that do not match clear nothing; an operator clears its apps' groups
# only (the refusal beside the allowed case).  Rows are written behind the
# scheduler's back (no agent needed); keyed as tests/test_security.sh.
. "$(dirname "$0")/lib.sh"
xxl_setup
C="$T/certs"; K="$T/keys"
mkdir -p "$C" "$K"
keygen () { "$CTL" keygen "$@" --dir "$C" >/dev/null; }
keygen scheduler --role admin
keygen boss --role admin
keygen op --role operator --apps clear-b
for n in boss op; do cp "$C/$n.cert" "$K/"; done
XXL_SCHEDULER_ARGS="--cert $C/scheduler.cert_secret --keys $K"
start_scheduler || exit 1
as () { local who="$1"; shift; "$CTL" --api "$API" --cert "$C/$who.cert_secret" --scheduler-key "$C/scheduler.cert" --timeout 30000 --json "$@"; }

GA=$(as boss group add clear-a | jq -r .id)
GB=$(as boss group add clear-b | jq -r .id)
job () { as boss job add --group "$1" --handler demoJobHandler | jq -r .id; }
J1=$(job clear-a); J2=$(job clear-a); J3=$(job clear-a); K1=$(job clear-b)
# rows GROUP JOB N [HANDLE]: N finished rows (handle code HANDLE, 200),
# triggered a day ago (within the retention's 30 days: rows of 1970 went
# with the retention's first pass, 60 s after the start, in a loaded run);
# running ones (HANDLE 0) now, so that the lost-run monitor (10 min) keeps
# them running
DAY_AGO=$(( $(date +%s%3N) - 86400000 ))
rows () {
    local since=$DAY_AGO; [ "${4:-200}" = 0 ] && since=$(date +%s%3N)
    xxl_sql "INSERT INTO xxl_job_log (job_group, job_id, executor_handler, trigger_time,
               trigger_code, handle_code, trigger_type)
             WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < $3)
             SELECT $1, $2, 'demoJobHandler', $since + n, 200, ${4:-200}, 'MANUAL' FROM s" >/dev/null
}
count () { xxl_sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $1"; }
# J1: 2,500 rows (more than a batch of 2,000), J2: 30 and a running one
# (the newest), J3: none; K1 of the other group: 10
rows "$GA" "$J1" 2500
rows "$GA" "$J2" 30
rows "$GA" "$J2" 1 0
rows "$GB" "$K1" 10
check "the rows are there (2500, 31, 0, 10)" \
    test "$(count "$J1") $(count "$J2") $(count "$J3") $(count "$K1")" = "2500 31 0 10"

# A job and a group that do not match, and a group that does not exist: nothing
check "log clear --group A --job K1 (K1 is of B): deleted 0" \
    test "$(as boss log clear --group "$GA" --job "$K1" --all | jq .deleted)" = 0
check "log clear --group of no group: deleted 0" \
    test "$(as boss log clear --group 999999 --all | jq .deleted)" = 0
check "... nothing changed" \
    test "$(count "$J1") $(count "$J2") $(count "$K1")" = "2500 31 10"

# --keep: the newest N rows of each of the group's jobs (the running one
# counts among J2's newest, and is never removed)
check "log clear --group A --keep 5: deleted 2495 + 26" \
    test "$(as boss log clear --group "$GA" --keep 5 | jq .deleted)" = 2521
check "... each job of A keeps its newest 5, B's job keeps its 10" \
    test "$(count "$J1") $(count "$J2") $(count "$K1")" = "5 5 10"
check "... the ones kept are the newest" \
    test "$(xxl_sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $J1 AND trigger_time > $((DAY_AGO + 2495))")" = 5

# An operator of B: not A's group (403), B's yes
as op log clear --group "$GA" --all > "$T/op-a.json" 2>&1
check "an operator of clear-b: log clear --group A refused (403), nothing deleted" \
    bash -c "jq -e '.error | test(\"clear-a\")' '$T/op-a.json' >/dev/null && test '$(count "$J1")' = 5"
as op log clear --all > "$T/op-all.json" 2>&1
check "... nor every job's (it needs --job or --group)" \
    bash -c "jq -e '.error | test(\"jobId or jobGroup\")' '$T/op-all.json' >/dev/null"
check "... log clear --group B: deleted 10" \
    test "$(as op log clear --group "$GB" --all | jq .deleted)" = 10

# --all of A across its jobs: all but the running row
check "log clear --group A --all: deleted 9 (5 + 4; the running row stays)" \
    test "$(as boss log clear --group "$GA" --all | jq .deleted)" = 9
check "... J2's running row is all that is left of A" \
    test "$(xxl_sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_group = $GA AND handle_code = 0") $(count "$J1") $(count "$J2")" = "1 0 1"

# Many jobs: a group's clear of more jobs than one turn takes (64), rows in
# each, crosses turns and jobs and answers once
JOBS=""
for _ in $(seq 70); do JOBS="$JOBS $(job clear-b)"; done
for j in $JOBS; do rows "$GB" "$j" 3; done
check "70 jobs of B with 3 rows each: log clear --group B --before 0 deletes 210" \
    test "$(as boss log clear --group "$GB" --before 0 | jq .deleted)" = 210
check "the audit records the clears with their codes" \
    test "$(as boss audit list | jq -c '[.audit[] | select(.type == "LOG_CLEAR") | .code] | sort | unique')" = "[200,403]"
xxl_done
