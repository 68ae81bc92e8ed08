#!/usr/bin/env bash
# test_audit.sh -- the audit of the api's changes: every change made through
# xxl-ctl is recorded (who, role, type, target, code; a failed one with its
# code), reads are not, `audit list` pages newest first, the rows survive a
# restart, and retention removes the old ones.  A key's refusals (403) are
# recorded at most 60 a minute, the rest counted in a log line, while
# other keys' changes and other codes are all recorded.
. "$(dirname "$0")/lib.sh"
xxl_setup
cat >> "$T/scheduler.cfg" <<CFG
    monitor
        retention_check = 200
CFG
start_scheduler || exit 1
START=$(date +%s%3N)
mkdir -p "$T/plugins"
cp "$XXL_TEST_PLUGINS/test_handlers.so" "$HANDLERS/demo.so" "$T/plugins/"
export AGENT_PLUGINS="$T/plugins"
start_agent a1 audit-app

check "nothing is recorded before the first change" \
    test "$(ctl audit list | jq '.audit | length')" = 0
G=$(ctl --get .id group add audit-app)
J=$(ctl --get .id job add --group audit-app --handler demoJobHandler --fix-rate 60)
ctl job update "$J" --desc changed >/dev/null
L=$(ctl --get '.logIds[0]' job trigger "$J")
ctl job start "$J" >/dev/null
ctl job stop "$J" >/dev/null
check "updating a missing job fails (404)" bash -c "! $CTL --api $API job update 999999 --desc x 2>/dev/null"
check "triggering one fails too (404)" bash -c "! $CTL --api $API job trigger 999999 2>/dev/null"
# Reads are not recorded
ctl group list >/dev/null
ctl group show audit-app >/dev/null
ctl job list >/dev/null
ctl job show "$J" >/dev/null
ctl job next "$J" >/dev/null
ctl log list >/dev/null
ctl agent list >/dev/null
ctl report >/dev/null
ctl plugin list >/dev/null
ctl audit list >/dev/null
# A kill is forwarded to the agent and recorded with the answer its client got
check "agent registers" wait_for 10 agent_registered audit-app a1
S=$(ctl --get .id job add --group audit-app --handler sleepInJobHandler --param 30000)
SL=$(ctl --get '.logIds[0]' job trigger "$S")
accepted () { [ "$(ctl log show "$SL" | jq .triggerCode)" = 200 ]; }
check "the long run is accepted" wait_for 10 accepted
check "log cat reads the run's log (a read through the agent)" wait_for 5 ctl log cat "$SL"
kill_run () { ctl log kill "$1" >/dev/null; }
check "log kill reaches the agent" kill_run "$SL"
ctl job rm "$J" >/dev/null

rows () { ctl audit list "$@" | jq -r '.audit[] | [.who, .role, .type, .target, .code] | @tsv'; }
cat > "$T/expected" <<ROWS
local	admin	JOB_RM	$J	200
local	admin	LOG_KILL	$SL	200
local	admin	JOB_ADD	$S	200
local	admin	JOB_TRIGGER	999999	404
local	admin	JOB_UPDATE	999999	404
local	admin	JOB_STOP	$J	200
local	admin	JOB_START	$J	200
local	admin	JOB_UPDATE	$J	200
local	admin	JOB_ADD	$J	200
local	admin	GROUP_ADD	$G	200
ROWS
rows > "$T/got"
# (an accepted trigger is recorded by its runs' rows, not here)
check "each change is recorded, newest first, with who, role, type, target and code" \
    diff "$T/expected" "$T/got"
check "ids descend and times are this test's" bash -c "
    $CTL --api $API --json audit list | jq -e --argjson s $START --argjson n $(date +%s%3N) '
        .audit as \$a | (\$a | length) == 10
        and ([range(1; \$a | length)] | all(\$a[. - 1].id > \$a[.].id))
        and (\$a | all(.time >= \$s and .time <= \$n))' >/dev/null"
check "--limit takes the newest" bash -c "[ \"\$($CTL --api $API --json audit list --limit 3 | jq -c '[.audit[].type]')\" = '[\"JOB_RM\",\"LOG_KILL\",\"JOB_ADD\"]' ]"
THIRD=$(ctl audit list --limit 3 | jq -r '.audit[2].id')
rows --limit 4 --before "$THIRD" > "$T/page2"
check "--before pages on below the last id listed" diff <(sed -n 4,7p "$T/expected") "$T/page2"
check "the reply says it is complete" bash -c "$CTL --api $API --json audit list | jq -e '.truncated == false' >/dev/null"
"$CTL" --api "$API" audit list --limit 2 > "$T/table"
check "the table has a header and the rows" bash -c "
    head -1 $T/table | grep -q 'TIME.*WHO.*ROLE.*TYPE.*TARGET.*CODE' && grep -q 'local.*admin.*JOB_RM.*$J.*200' $T/table"
check "a limit out of range is a usage error" bash -c "! $CTL --api $API audit list --limit 1001 2>/dev/null"

# A turn whose commit fails (injected: the row of a successful JOB_UPDATE
# ends the transaction): the change is undone, its client is answered 500,
# and its row, written again at the next turn, says 500, not 200
K=$(ctl --get .id job add --group audit-app --handler demoJobHandler --desc before)
if [ "${XXL_STORE:-sqlite}" = pg ]; then
    # (PostgreSQL: the error aborts the transaction, as RAISE(ROLLBACK) ends SQLite's)
    xxl_sql "CREATE FUNCTION audit_fail () RETURNS trigger LANGUAGE plpgsql AS \$\$BEGIN
                 IF NEW.type = 'JOB_UPDATE' AND NEW.code = 200 THEN RAISE EXCEPTION 'injected';
                 END IF; RETURN NEW; END\$\$;
             CREATE TRIGGER audit_fail BEFORE INSERT ON xxl_audit
                 FOR EACH ROW EXECUTE FUNCTION audit_fail ()"
else
    xxl_sql "CREATE TRIGGER audit_fail BEFORE INSERT ON xxl_audit
        WHEN NEW.type = 'JOB_UPDATE' AND NEW.code = 200 BEGIN SELECT RAISE(ROLLBACK, 'injected'); END"
fi
"$CTL" --api "$API" job update "$K" --desc after > "$T/failed" 2>&1
check "the update is answered with the store's error" grep -q "store error: .*injected" "$T/failed"
check "... and undone" test "$(ctl --get .jobDesc job show "$K")" = before
check "its row says 500" test "$(rows --limit 2 | cut -f3-)" = "JOB_UPDATE	$K	500
JOB_ADD	$K	200"
if [ "${XXL_STORE:-sqlite}" = pg ]; then
    xxl_sql "DROP TRIGGER audit_fail ON xxl_audit; DROP FUNCTION audit_fail ()"
else
    xxl_sql "DROP TRIGGER audit_fail"
fi
ctl job update "$K" --desc after >/dev/null
check "the next update is recorded 200" test "$(rows --limit 1 | cut -f3-)" = "JOB_UPDATE	$K	200"

# Restart: the rows are kept; those aged past the retention (90 days) go
rows > "$T/kept"
kill -TERM "$SPID"
wait_for 10 bash -c "! kill -0 $SPID"
xxl_sql "UPDATE xxl_audit SET time = time - $((91 * 86400000)) WHERE type IN ('GROUP_ADD', 'JOB_UPDATE')"
start_scheduler || exit 1
gone () { [ "$(ctl audit list | jq '[.audit[] | select(.type == "GROUP_ADD" or .type == "JOB_UPDATE")] | length')" = 0 ]; }
check "retention removes the rows older than audit_retention_days" wait_for 10 gone
check "the other rows are still there after the restart" \
    diff <(grep -v -e GROUP_ADD -e JOB_UPDATE "$T/kept") <(rows)
check "the scheduler still serves" kill -0 "$SPID"

# A keyed scheduler: a viewer sending 200 refused changes in a burst gets 60
# rows, the rest counted in one log line; an admin's change in the same
# minute is recorded, and so are an admin's 70 failures of another code
kill -TERM "$SPID"
wait_for 10 bash -c "! kill -0 $SPID"
PEER="$XXL_PEER"
C="$T/certs"; KD="$T/keys"
mkdir -p "$C" "$KD"
for k in "scheduler --role admin" "boss --role admin" "watcher --role viewer"; do
    "$CTL" keygen $k --dir "$C" >/dev/null
done
cp "$C/boss.cert" "$C/watcher.cert" "$KD/"
XXL_SCHEDULER_ARGS="--cert $C/scheduler.cert_secret --keys $KD"
start_scheduler || exit 1
as () { local who="$1"; shift; "$CTL" --api "$API" --cert "$C/$who.cert_secret" --scheduler-key "$C/scheduler.cert" --json "$@"; }
steps () { local n="$1"; shift; for _ in $(seq "$n"); do echo -- send "$@"; done; }
"$PEER" "$API" --cert "$C/watcher.cert_secret" --scheduler-key "$C/scheduler.cert" \
    $(steps 200 JOB_RM jobId=1) > "$T/flood.json"
check "a viewer's 200 job removals are each answered 403" \
    jq -se 'length == 200 and all(.code == 403)' "$T/flood.json"
as boss group add flood-app >/dev/null
"$PEER" "$API" --cert "$C/boss.cert_secret" --scheduler-key "$C/scheduler.cert" \
    $(steps 70 JOB_RM jobId=999999) > "$T/missing.json"
check "an admin's 70 removals of a missing job are answered 404" \
    jq -se 'length == 70 and all(.code == 404)' "$T/missing.json"
as boss audit list --limit 1000 > "$T/keyed.json"
check "60 of the viewer's refusals are recorded, as 403" \
    jq -e '[.audit[] | select(.who == "watcher")] | length == 60 and all(.code == 403 and .type == "JOB_RM")' "$T/keyed.json"
check "... while the admin's change in the same minute is recorded" \
    jq -e '[.audit[] | select(.who == "boss" and .type == "GROUP_ADD" and .code == 200)] | length == 1' "$T/keyed.json"
check "... and each of the admin's 404s (only refusals are limited)" \
    jq -e '[.audit[] | select(.who == "boss" and .code == 404)] | length == 70' "$T/keyed.json"
kill -TERM "$SPID"
wait_for 10 bash -c "! kill -0 $SPID"
check "one log line counts the 140 refusals left out" \
    test "$(grep -c "140 refusal(s) (403) of key 'watcher' not audited" "$T/scheduler.log")" = 1
xxl_done
