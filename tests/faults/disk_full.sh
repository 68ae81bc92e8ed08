#!/usr/bin/env bash
# disk_full.sh -- the store on a full filesystem (a 32 MiB tmpfs, filled),
# then the agent's logdir on a full filesystem (an 8 MiB tmpfs, filled),
# under API load and a one-second cron; then the space is freed.
# Needs root (mount); skipped (77) otherwise.
# Guarantees: a full disk gives each affected request an error reply (500
# with the cause), not silence; reads keep being answered; one log line per
# cause per interval, not one per turn; the store is never corrupted; work
# resumes by itself once space is back; nothing acknowledged is lost, run
# twice or left unfinished.
. "$(dirname "$0")/lib.sh"
if [ "${XXL_STORE:-sqlite}" = pg ]; then
    echo "# disk_full: the store on a full filesystem is SQLite's file (PostgreSQL's disk is its server's); skipped under XXL_STORE=pg"
    exit 77
fi
if [ "$(id -u)" != 0 ]; then echo "# disk_full: needs root for mount -t tmpfs; skipped"; exit 77; fi
faults_setup disk_full

mount_tmpfs "$T/dbfs" 32m || { check "mount a 32 MiB tmpfs" false; xxl_done; exit 1; }
mount_tmpfs "$T/logs-d2" 8m || { check "mount an 8 MiB tmpfs" false; xxl_done; exit 1; }
FDB="$T/dbfs/xxl.db"
export XXL_SCHEDULER_ARGS="--db $FDB"
start_scheduler || exit 1
ctl group add df >/dev/null
ctl group add dl >/dev/null
fagent d1 df
fagent d2 dl
check "agents register" wait_until 10 agent_registered df d1
wait_until 10 agent_registered dl d2
J=$(ctl --get .id job add --group df --handler probeIn --param sleep=10)
CR=$(ctl --get .id job add --group df --handler probeIn --cron '* * * * * ?' --param sleep=10 --start)

# try_trigger JOB: one trigger; "ok ID", "error MSG" or "silence MSG" on $T/outcomes
try_trigger () {
    local out rc
    out=$("$CTL" --api "$API" --json --timeout 3000 job trigger "$1" 2>&1); rc=$?
    if [ $rc = 0 ] || [ $rc = 3 ]; then      # (3: acknowledged, a run failed at once)
        for id in $(printf '%s' "$out" | jq -r '.logIds[]'); do echo "$id $1" >> "$ACKED"; echo "ok $id"; done
    elif printf '%s' "$out" | grep -q 'no reply'; then echo "silence $out" | head -1
    else echo "error $out" | head -1; fi
}
for _ in 1 2 3; do try_trigger "$J" >> "$T/before"; done
check "triggers work before the disk fills" test "$(grep -c '^ok' "$T/before")" = 3
# 20,000 finished rows of a job, for a LOG_CLEAR while the disk is full
# (written behind the scheduler's back)
CJ=$(ctl --get .id job add --group df --handler probeIn)
sqlite3 -batch "$FDB" ".timeout 5000" "INSERT INTO xxl_job_log (job_group, job_id, executor_handler, trigger_time, trigger_code,
       handle_code, trigger_type)
     WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 20000)
     SELECT (SELECT job_group FROM xxl_job_info WHERE id = $CJ), $CJ, 'probeIn', 1000 + n,
            200, 200, 'MANUAL' FROM s" >/dev/null
cj_rows () { sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $CJ"; }
# ... and the WAL those rows went through truncated: a WAL file left at
# their size would take the writes of the full phase below without
# growing, and nothing would fail (SQLite reuses it from its start)
wal_truncated () { [ "$(sqlite3 -batch "$FDB" ".timeout 5000" "PRAGMA wal_checkpoint(TRUNCATE)")" = "0|0|0" ]; }
check "the WAL is truncated after the insert" wait_until 20 wal_truncated

# ---- the store's filesystem fills
dd if=/dev/zero of="$T/dbfs/filler" bs=64k >/dev/null 2>&1
check "the store's filesystem is full" test "$(df --output=avail -B1 "$T/dbfs" | tail -1)" -lt 65536
FULL_AT=$(now_ms)
LOGLINES0=$(wc -l < "$T/scheduler.log")
N=$(pick 40 200)
for i in $(seq "$N"); do
    try_trigger "$J" >> "$T/full"
    [ "$(grep -c '^silence' "$T/full")" -lt 3 ] || break      # enough to tell
done
say "while full: $(grep -c '^ok' "$T/full") ok, $(grep -c '^error' "$T/full") error replies, $(grep -c '^silence' "$T/full") without a reply"
grep -m3 '^error\|^silence' "$T/full" | sed 's/^/    /'
check "a full store gives error replies (500 with the cause)" grep -q '^error.*' "$T/full"
check "... never silence (no request without a reply)" test "$(grep -c '^silence' "$T/full")" = 0
check "... the reply names the cause (full / space / disk)" grep -qiE '^error.*(full|space|disk)' "$T/full"
read_job () { ctl job show "$J" >/dev/null; }
read_logs () { ctl log list --limit 5 >/dev/null; }
check "reads are answered while the disk is full (job show)" read_job
check "reads are answered while the disk is full (log list)" read_logs
# A clear of many rows while full: its batches' commits fail; it is
# answered with the error and what it deleted (before: its batches were
# deleted again and again, rolled back each time, and it was not answered)
"$CTL" --api "$API" --json --timeout 10000 log clear --job "$CJ" --all > "$T/clear-full" 2>&1
CLEAR_RC=$?
say "log clear while full (exit $CLEAR_RC): $(head -c 300 "$T/clear-full")"
check "a LOG_CLEAR while full is answered with an error (500 with the cause), not silence" \
    bash -c "[ $CLEAR_RC != 0 ] && grep -qiE 'error.*(full|space|disk)' '$T/clear-full' && ! grep -q 'no reply' '$T/clear-full'"
CLEARED=$(grep -o '[0-9]* row(s) deleted' "$T/clear-full" | cut -d' ' -f1)
check "... the rows it says it deleted are gone, the others remain (${CLEARED:-0} said, $(cj_rows) left)" \
    test "$(cj_rows)" = "$((20000 - ${CLEARED:-0}))"
rsleep 2000 3000                     # the cron's planner keeps failing meanwhile
FULL_S=$(( ($(now_ms) - FULL_AT) / 1000 + 1 ))
LOGLINES=$(( $(wc -l < "$T/scheduler.log") - LOGLINES0 ))
check "one log line per cause per interval, not one per turn ($LOGLINES lines in ${FULL_S} s)" \
    test "$LOGLINES" -le $(( FULL_S * 4 + 10 ))
tail -n +$((LOGLINES0 + 1)) "$T/scheduler.log" | head -n 200000 | sed 's/^[^ ]* ([^)]*) [0-9-]* [0-9:]* //' |
    sed 's/[0-9][0-9]*/N/g' | sort | uniq -c | sort -rn | head -5 | sed 's/^/    scheduler.log while full: /'
# a scheduler that logs every turn fills /tmp: keep the head of its log only
if [ "$LOGLINES" -gt 100000 ]; then
    head -n $((LOGLINES0 + 1000)) "$T/scheduler.log" > "$T/scheduler.head"
    : > "$T/scheduler.log"; cat "$T/scheduler.head" >> "$T/scheduler.log"; rm -f "$T/scheduler.head"
fi
rm -f "$T/dbfs/filler"
FREED=$(now_ms)
resumed () { try_trigger "$J" | grep -q '^ok'; }
check "work resumes by itself once space is back" wait_until 15 resumed
say "resumed $(( $(now_ms) - FREED )) ms after the space was freed"
for _ in $(seq 10); do try_trigger "$J" >> "$T/after"; done
check "triggers work after the space is back" test "$(grep -c '^ok' "$T/after")" = 10
cron_runs () { [ "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $CR AND schedule_time > $FREED AND handle_code = 200")" -ge 2 ]; }
check "the cron fires again" wait_until 15 cron_runs
ctl job stop "$CR" >/dev/null
check "all runs finish" wait_quiet 30 "job_id IN ($J, $CR)"
check "the store is not corrupted" test "$(sql 'PRAGMA integrity_check')" = ok
CJ_LEFT=$(cj_rows)
check "the same LOG_CLEAR once space is back deletes the rest ($CJ_LEFT)" \
    test "$("$CTL" --api "$API" --json --timeout 60000 log clear --job "$CJ" --all | jq .deleted)" = "$CJ_LEFT"
check "... none is left" test "$(cj_rows)" = 0
fcount "store on a full filesystem" --jobs "$J $CR"

# ---- the agent's logdir fills (run logs, glue sources, the spool)
ACKED="$T/acked2"; : > "$ACKED"
JL="$(ctl --get .id job add --group dl --handler probeIn --param sleep=10)"
JL="$JL $(ctl --get .id job add --group dl --handler probe --param sleep=10)"
JL="$JL $(ctl --get .id job add --group dl --glue-type GLUE_SHELL --glue-source "$GLUE" --param sleep=10)"
for j in $JL; do try_trigger "$j" >> "$T/lbefore"; done
check "runs on d2 before its logdir fills" wait_quiet 15 "job_id IN ($(echo $JL | tr ' ' ,))"
MARK=$(sql "SELECT COALESCE(MAX(id), 0) FROM xxl_job_log")
dd if=/dev/zero of="$T/logs-d2/filler" bs=64k >/dev/null 2>&1
check "the agent's logdir is full" test "$(df --output=avail -B1 "$T/logs-d2" | tail -1)" -lt 65536
for _ in $(seq "$(pick 5 20)"); do for j in $JL; do try_trigger "$j" >> "$T/lfull"; done; done
check "every trigger to the agent with a full logdir is answered" test "$(grep -c '^silence' "$T/lfull")" = 0
check "every run on the full logdir ends (a result or a failure with its cause)" wait_quiet 30 "id > $MARK"
sql "SELECT handle_code, substr(handle_msg, 1, 120), COUNT(*) FROM xxl_job_log WHERE id > $MARK GROUP BY 1, 2" |
    sed 's/^/    while the logdir was full: /'
rm -f "$T/logs-d2/filler"
MARK2=$(sql "SELECT COALESCE(MAX(id), 0) FROM xxl_job_log")
for j in $JL; do try_trigger "$j" >> "$T/lafter"; done
check "runs work again once the logdir has space" wait_quiet 20 "id > $MARK2"
check "... and end 200" test "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE id > $MARK2 AND handle_code = 200")" = 3
fcount "agent logdir on a full filesystem" --jobs "$JL" --excuse 'space|ENOSPC|log|spool|write|disk|full'
xxl_done
