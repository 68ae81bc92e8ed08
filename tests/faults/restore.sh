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
# scheduler says so in one warning line.  SQLite (sqlite3's .backup).
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
J=$(ctl job add --group rst --handler probe | jq -r .id)
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
xxl_done
