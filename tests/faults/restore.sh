#!/usr/bin/env bash
# restore.sh -- the store restored from an older backup and the log ids
# not moved past the ids handed out since (docs/operations.md,
# "Restoring", step 4 forgotten): the agent's journal holds ids the
# restored store would hand out again, which the agent refuses as already
# accepted.  Scheduler restarts after the backup each leave the rest of a
# block of 4,096 ids unused, so the agent's ids pass the restored store's
# block as more than 4,096 runs would.
# Guarantee: every trigger acknowledged after the restore runs exactly
# once (the scheduler learns the agent's highest accepted id from its
# REGISTER, acceptedMax, and moves its log ids past it first), and the
# scheduler says so in one warning line.
# Then the rows made before the agent's REGISTER: the same backup restored
# again with the agent away, triggers of the job the agent ran those ids
# for (later) and of another job made while the scheduler waits for it
# (its warm-up), then the agent back.  Guarantee: the agent refuses each
# such RUN 409 ("already used by another run": its journal holds the id
# for another run), the row fails visibly, none stays open, the job's
# retry runs each trigger once with a fresh id, and the ids collided with
# are never run again.  SQLite (sqlite3's .backup).
# (a warm-up long enough to trigger in while the agent is away)
F_WARMUP=60000
. "$(dirname "$0")/lib.sh"
faults_setup restore
xxl_sqlite_only "a backup taken with sqlite3's .backup"

RESTARTS=$(pick 1 3)
RUNS=$(pick 4 20)
start_scheduler || exit 1
ctl group add rst >/dev/null
fagent r1 rst
one () { agent_registered rst r1; }
check "the agent registers" wait_until 10 one
J=$(ctl --get .id job add --group rst --handler probe)
JX=$(ctl --get .id job add --group rst --handler probe)
# trigger N FILE: N triggers of J, one at a time, their logIds into FILE
trigger () {
    for _ in $(seq "$1"); do
        ctl job trigger "$J" | jq -r '.logIds[]' >> "$2"
    done
}
trigger "$RUNS" "$T/acked-before"
check "runs before the backup finish" wait_quiet 20
sqlite3 "$FDB" ".timeout 5000" ".backup '$T/backup.db'"
# (the ids the backup's store had reserved: its next block starts past them)
BACKUP_SEQ=$(sqlite3 "$T/backup.db" "SELECT seq FROM sqlite_sequence WHERE name = 'xxl_job_log'")
for round in $(seq "$RESTARTS"); do
    kill_sched TERM
    restart_sched
    wait_until 10 one
    trigger "$RUNS" "$T/acked-before"
    check "round $round: runs after the backup finish" wait_quiet 20
done
AGENT_MAX=$(sort -n "$T/acked-before" | tail -1)
say "the backup's store reserved log ids up to $BACKUP_SEQ; the agent accepted up to $AGENT_MAX"
check "the agent accepted ids the restored store hands out again" \
    test "$AGENT_MAX" -gt "$BACKUP_SEQ"

# Restore without step 4: the scheduler stopped, the backup in place
kill_sched TERM
rm -f "$FDB-wal" "$FDB-shm"
cp "$T/backup.db" "$FDB"
PROBE_MARK=$(wc -l < "$PROBE")
AGENT_MARK=$(wc -l < "$T/agent-r1.log")
restart_sched
check "the agent registers with the restored store's scheduler" wait_until 10 one
trigger "$RUNS" "$T/acked-after"
ran_after () {
    local id
    tail -n +"$((PROBE_MARK + 1))" "$PROBE" > "$T/probe-after"
    while read -r id; do
        [ "$(awk -v id="$id" '$1 == id' "$T/probe-after" | wc -l)" = 1 ] || return 1
    done < "$T/acked-after"
}
check "every trigger acknowledged after the restore ran once (the agent refused none)" \
    wait_until 20 ran_after
FIRST_AFTER=$(sort -n "$T/acked-after" | head -1)
check "their log ids are past the agent's highest accepted ($FIRST_AFTER > $AGENT_MAX)" \
    test "$FIRST_AFTER" -gt "$AGENT_MAX"
check "the scheduler logged the move once" \
    test "$(grep -c "log ids were behind the journal of accepted runs of agent r1" "$T/scheduler.log")" = 1
no_repeat () { ! tail -n +"$((AGENT_MARK + 1))" "$T/agent-r1.log" | grep -q 'already accepted'; }
check "the agent said none was already accepted" no_repeat
check "after the restore: all runs finish" wait_quiet 20
fcount "a store restored without moving its log ids" --jobs "$J" --min-id "$FIRST_AFTER" \
    --acked "$T/acked-after"

# The hole: rows made before the agent's REGISTER.  The agent goes, the
# same backup is restored, and while the scheduler waits for the agent
# (the backup's registry has it alive) triggers of J and JX are held with
# ids the agent accepted in round 1 (for J, earlier).
kill_agent r1 TERM
kill_sched TERM
rm -f "$FDB-wal" "$FDB-shm"
cp "$T/backup.db" "$FDB"
PROBE_MARK=$(wc -l < "$PROBE")
AGENT_MARK=$(wc -l < "$T/agent-r1.log")
SCHED_MARK=$(wc -l < "$T/scheduler.log")
restart_sched
ctl job update "$J" --retry 1 >/dev/null
ctl job update "$JX" --retry 1 >/dev/null
HELD=$(pick 4 12)
for i in $(seq "$HELD"); do
    # (the first of J: the same job, triggered later; the second of JX:
    # another job; the others either, as the seed says)
    rnd 2
    [ "$i" -le 2 ] && R=$((i - 1))
    job=$J; [ "$R" = 1 ] && job=$JX
    ctl job trigger "$job" --param "held=$i" | jq -r '.logIds[]' >> "$T/acked-held"
done
FIRST_HELD=$(sort -n "$T/acked-held" | head -1)
check "the agent was away: none of them went" \
    test "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE id >= $FIRST_HELD AND executor_address != ''")" = 0
cat "$T/acked-before" "$T/acked-after" > "$T/agent-ids"
grep -Fx -f "$T/agent-ids" "$T/acked-held" > "$T/collided"
COLLIDED=$(wc -l < "$T/collided")
say "$HELD triggers held (ids $FIRST_HELD-$(sort -n "$T/acked-held" | tail -1)), $COLLIDED of them with ids the agent's journal holds"
check "the restored store gave them ids the agent accepted" test "$COLLIDED" -gt 0
fagent r1 rst
check "the agent registers again" wait_until 10 one
check "every held trigger ends, none stays open" wait_quiet 30
refused () {
    sql "SELECT COUNT(*) FROM xxl_job_log WHERE trigger_code = 500
         AND trigger_msg LIKE '%already used by another run%'"
}
check "each collided row failed at its trigger, saying why ($(refused) of $COLLIDED)" \
    test "$(refused)" = "$COLLIDED"
check "the agent refused them 409, its journal holding the ids for other runs" \
    bash -c "tail -n +$((AGENT_MARK + 1)) '$T/agent-r1.log' | grep -q 'already used by another run'"
check "the scheduler warned" \
    bash -c "tail -n +$((SCHED_MARK + 1)) '$T/scheduler.log' | grep -q 'its journal holds that logId for another run'"
# (only the runs since this restore: the ids collided with ran in round 1)
tail -n +"$((PROBE_MARK + 1))" "$PROBE" > "$T/probe-held"
none_again () { ! awk '{print $1}' "$T/probe-held" | grep -qFx -f "$T/collided"; }
check "no id the agent had accepted ran again" none_again
PROBE="$T/probe-held" fcount "rows made before the agent's REGISTER after a restore" \
    --jobs "$J $JX" --min-id "$FIRST_HELD" --acked "$T/acked-held" --chains
xxl_done
