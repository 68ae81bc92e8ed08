#!/usr/bin/env bash
# test_lease_settle.sh -- a lease taken in a turn whose commit fails is not
# held.  A stand-in rival ("ghost") holds the share of a one-second job;
# while every commit that writes is refused (triggers deferred to the
# commit, installed by the test, raise), the rival's lease expires
# and the scheduler's rounds take the share in turns that do not commit:
# the take is undone (engine_lease_settle), so the share is never listed
# by PING and nothing of it fires.  Once commits go through again, the
# scheduler takes the share for real and the job runs.  PostgreSQL only
# (XXL_STORE=pg): the refusal is a PostgreSQL trigger.
. "$(dirname "$0")/lib.sh"
if [ "${XXL_STORE:-sqlite}" != pg ]; then
    echo "# skipped: the refused commit is a PostgreSQL trigger (XXL_STORE=pg)"
    exit 77
fi
xxl_setup
REQ="$XXL_REQ"
sql () { xxl_sql "$1"; }

start_scheduler || exit 1
start_agent ls-a ls-app
check "agent registers" wait_for 10 agent_registered ls-app ls-a
ctl group add ls-app >/dev/null
J=$(ctl --get .id job add --group ls-app --handler demoJobHandler --cron '* * * * * ?' --start)
S=$((J % 16))
check "the job runs" wait_for 15 job_ran "$J" 2
lists_share () { "$REQ" "$API" PING | jq -e --argjson s $S '.content.shares | index($s) != null' >/dev/null; }
check "the scheduler holds the job's share" lists_share

# Every writing commit of the scheduler refused from here on (triggers
# deferred to the commit of a transaction that wrote a table a turn writes)
refuse_on () { echo "CREATE CONSTRAINT TRIGGER xxl_test_refuse AFTER INSERT OR UPDATE OR DELETE
         ON $1 DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION xxl_test_refuse ();"; }
sql "CREATE TABLE xxl_test_refuse (x INT);
     CREATE FUNCTION xxl_test_refuse () RETURNS trigger LANGUAGE plpgsql AS
         \$\$ BEGIN IF EXISTS (SELECT 1 FROM xxl_test_refuse)
                  AND current_setting ('application_name') = 'xxl-scheduler' THEN
                  RAISE EXCEPTION 'test: commits refused'; END IF; RETURN NEW; END \$\$;
     $(for t in xxl_lease xxl_node xxl_job_log xxl_job_info xxl_job_registry; do refuse_on $t; done)" >/dev/null
# The rival takes the share, then commits stop, then its lease runs out
sql "UPDATE xxl_lease SET owner = 'ghost', epoch = epoch + 1,
         expires = $(( $(date +%s%3N) + 60000 )) WHERE share = $S" >/dev/null
lost () { grep -q "share(s) lost (taken by another scheduler)" "$T/scheduler.log"; }
check "the scheduler sees the share taken" wait_for 5 lost
sql "INSERT INTO xxl_test_refuse VALUES (1)" >/dev/null
check "commits are refused" wait_for 10 grep -q "test: commits refused" "$T/scheduler.log"
sql "UPDATE xxl_lease SET expires = $(xxl_sql_now) + 300 WHERE share = $S AND owner = 'ghost'" >/dev/null
T0=$(( $(sql "SELECT expires FROM xxl_lease WHERE share = $S") - 300 ))
# Past the rival's expiry: rounds take the share, their commits fail
while [ "$(date +%s%3N)" -lt $((T0 + 500)) ]; do sleep 0.1; done
undone () { grep -q "share(s) lost (their take was not committed)" "$T/scheduler.log"; }
check "a take that was not committed is undone" wait_for 10 undone
LISTED=0
for _ in $(seq 20); do
    if lists_share; then LISTED=$((LISTED + 1)); fi
    sleep 0.1
done
check "PING never lists the share while commits fail ($LISTED of 20 listed it)" test "$LISTED" = 0
check "the share is still the rival's in the store" \
    test "$(sql "SELECT owner FROM xxl_lease WHERE share = $S")" = ghost
# Commits go through again: the share is taken for real
sql "DELETE FROM xxl_test_refuse" >/dev/null
check "the share is taken once commits go through" wait_for 10 lists_share
check "... and the store names the scheduler" \
    test "$(sql "SELECT CASE WHEN owner != 'ghost' THEN 1 ELSE 0 END FROM xxl_lease WHERE share = $S")" = 1
T1=$(date +%s%3N)
ran_after () { [ "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $J AND handle_code = 200
                        AND schedule_time > $T1")" -ge 2 ]; }
check "the job runs again" wait_for 15 ran_after
xxl_done
