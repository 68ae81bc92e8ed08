#!/usr/bin/env bash
# test_pg_down.sh -- a scheduler whose PostgreSQL server is stopped under
# it, with one-second crons and an agent: while the store cannot be
# reached it neither spins (its CPU stays near idle: turns with no input
# come at most every 100 ms) nor floods its log (a line per cause per
# 10 s), clients get 500 with the cause; once the server is back it
# reconnects on its own and the crons run again.  PostgreSQL only
# (XXL_STORE=pg; skipped otherwise).
. "$(dirname "$0")/lib.sh"
if [ "${XXL_STORE:-sqlite}" != pg ]; then
    echo "# skipped: stopping the store's server needs XXL_STORE=pg"
    exit 77
fi
xxl_setup
start_scheduler || exit 1
start_agent d1 down-app
check "agent registers" wait_for 10 agent_registered down-app d1
ctl group add down-app >/dev/null
J=$(ctl --get .id job add --group down-app --handler demoJobHandler --cron '* * * * * ?' --start)
check "the cron job runs" wait_for 15 job_ran "$J" 2

ticks () { awk '{ print $14 + $15 }' "/proc/$SPID/stat"; }
pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -s stop
LINES0=$(wc -l < "$T/scheduler.log")
T0=$(ticks)
# (a client is refused with the cause meanwhile)
OUT=$("$CTL" --api "$API" --json job trigger "$J" 2>&1); RC=$?
check "a trigger while the store is down is refused with the cause" \
    test "$RC" != 0 -a -n "$(grep PostgreSQL <<<"$OUT")"
sleep 5
T1=$(ticks)
LINES1=$(wc -l < "$T/scheduler.log")
echo "# store down 5 s: $((T1 - T0)) CPU ticks (100 a second is a core), $((LINES1 - LINES0)) log lines"
check "no spin while the store is down ($((T1 - T0)) ticks in 5 s, at most 50)" test $((T1 - T0)) -le 50
check "no log flood while the store is down ($((LINES1 - LINES0)) lines in 5 s, at most 40)" \
    test $((LINES1 - LINES0)) -le 40
check "the scheduler is alive" kill -0 "$SPID"
# (restart with no server running starts it with its last options)
pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -s -w restart >/dev/null 2>&1
check "the server is back" "$PG_BIN/pg_isready" -q -h "$PG_HOST" -p "$PG_PORT" -t 10
RAN=$(ctl log list --job "$J" --limit 1000 | jq '[.logs[] | select(.handleCode == 200)] | length')
check "it reconnects and the cron runs again" wait_for 20 job_ran "$J" $((RAN + 2))
check "it logged the reconnection" grep -q "store: reconnected to PostgreSQL" "$T/scheduler.log"
xxl_done
