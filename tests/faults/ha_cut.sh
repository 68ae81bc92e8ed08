#!/usr/bin/env bash
# ha_cut.sh -- three schedulers on one PostgreSQL store, under one-second
# crons (DO_NOTHING) and API load sent to all three; scheduler 0 reaches
# the database through a relay (tests/xxl_relay) that, at random instants
# chosen by the seed, cuts its link (its connections closed, new ones
# refused) for a while, past its lease or not, or turns it into a black
# hole (nothing passes, the connections stay open) past its lease; then
# mends it.  (The relay's kernel still acknowledges what scheduler 0
# sends, so its statement waits as behind a frozen peer: TCP keepalives
# and tcp_user_timeout, which end a connection behind a network that
# drops packets, are not exercised.)
# Guarantees: every acknowledged trigger runs exactly once; every planned
# second of every cron job has one row that ran once (a second planned by
# the cut-off scheduler is taken over and sent by another, never by both);
# once its lease is past, the other two hold all 16 shares (the takeover
# gap, printed); after the link is mended scheduler 0 takes part again;
# no cron run starts later than the lease plus 2 s after its planned time;
# no scheduler drops an agent that kept beating (a turn hung on the cut
# link does not judge the beats it did not read).
# PostgreSQL only (XXL_STORE=pg): an SQLite file has no link to cut.
. "$(dirname "$0")/lib.sh"
if [ "${XXL_STORE:-sqlite}" != pg ]; then
    echo "# ha_cut: skipped: a cut database link needs the PostgreSQL store (XXL_STORE=pg)"
    exit 77
fi
PG_TCP=1
export PG_TCP
faults_setup ha_cut
REQ="$XXL_REQ"
RELAY="$XXL_RELAY"
LEASE=3000

ROUNDS=$(pick 4 10)
# (the relay says when it took a signal: the next is sent only then)
relay_is () { check "the relay's link is $1" wait_until 10 grep -qx "$1" "$T/relay.port.state"; }
# The relay to the server's TCP port, and scheduler 0's URL through it
"$RELAY" "$T/relay.port" 127.0.0.1 "$PG_PORT" pass /dev/null >"$T/relay.log" 2>&1 &
RELAY_PID=$!
PIDS="$PIDS $RELAY_PID"
check "the relay listens" wait_until 10 test -s "$T/relay.port"
DBNAME=$(echo "$XXL_DB" | sed 's|^postgresql:///\([^?]*\)?.*|\1|')
CUT_DB="postgresql://$PG_USER@127.0.0.1:$(cat "$T/relay.port")/$DBNAME?connect_timeout=2"
S_API=(); S_AGENTS=(); S_PID=()
for i in 0 1 2; do
    if [ "$i" = 0 ]; then XXL_DB="$CUT_DB" start_scheduler || exit 1
    else start_scheduler || exit 1; fi
    S_API[$i]=$API; S_AGENTS[$i]=$AGENTS; S_PID[$i]=$SPID
done
check "scheduler 0 reaches the store through the relay" \
    grep -q "store postgresql://$PG_USER@127.0.0.1:" "$T/scheduler.log"
ALL_AGENTS=$(IFS=,; echo "${S_AGENTS[*]}")
AGENTS="$ALL_AGENTS" fagent h1 ha-app
AGENTS="$ALL_AGENTS" fagent h2 ha-app
API=${S_API[1]}
for i in 0 1 2; do check "agents register with scheduler $i" wait_until 15 both_registered "${S_API[$i]}" ha-app; done
ctl group add ha-app >/dev/null

holds_some () { [ "$(shares_of "${S_API[$1]}" | jq length)" -gt 0 ]; }
check "the three schedulers hold the 16 shares" wait_until 15 all_held "0 1 2"
check "scheduler 0 holds shares" wait_until 15 holds_some 0

CRONS=""
for r in ROUND FIRST LAST ROUND FIRST LAST; do
    CRONS="$CRONS $(ctl --get .id job add --group ha-app --handler probeIn --route $r --cron '* * * * * ?' \
                    --misfire DO_NOTHING --param sleep=100 --start)"
done
J_IN=$(ctl --get .id job add --group ha-app --handler probeIn --route ROUND --param sleep=50)
J_ISO=$(ctl --get .id job add --group ha-app --handler probe --route FIRST --param sleep=50)
check "jobs added" test -n "$J_IN" -a -n "$J_ISO" -a "$(echo $CRONS | wc -w)" = 6

# API load through scheduler 0 (its triggers are refused while it is cut
# off; those it acknowledged must run once) and through scheduler 1
API=${S_API[0]}; load_start "$J_IN $J_ISO"; LOAD0=$LOADPID
API=${S_API[1]}; load_start "$J_IN $J_ISO"
GAPS=""
rsleep 1500 3000
for round in $(seq "$ROUNDS"); do
    rnd 3
    case $R in
        0)  rnd 2
            if [ "$R" = 0 ]; then down=$(( 300 + (FSTATE >> 8) % 1500 )); else down=$((LEASE + 1500)); fi
            say "round $round: cut scheduler 0's database link for $down ms (holding $(shares_of "${S_API[0]}"), $(acked_count) acknowledged)"
            kill -USR1 "$RELAY_PID"; relay_is cut ;;
        *)  down=$(( LEASE + 1000 + (FSTATE >> 8) % 2500 ))
            say "round $round: black-hole scheduler 0's database link for $down ms (holding $(shares_of "${S_API[0]}"), $(acked_count) acknowledged)"
            kill -USR2 "$RELAY_PID"; relay_is hole ;;
    esac
    CUT=$(now_ms)
    if [ "$down" -gt "$LEASE" ]; then
        if wait_until $(( LEASE / 1000 + 6 )) all_held "1 2"; then
            GAP=$(( $(now_ms) - CUT )); GAPS="$GAPS $GAP"
            say "round $round: the other two hold the 16 shares $GAP ms after the cut"
            # (the shares are taken as the lease ends; on CI's 2 CPUs running
            # 4 tests at once a takeover once took the lease + 1.3 s, and in a
            # loaded run, load average 9-11, the lease + 3.6 s)
            check "round $round: shares taken over within the lease + 5 s ($GAP ms)" test "$GAP" -le $((LEASE + 5000))
        else
            check "round $round: the other two take the 16 shares over" false
        fi
    fi
    while [ "$(now_ms)" -lt $((CUT + down)) ]; do sleep 0.05; done
    kill -HUP "$RELAY_PID"; relay_is up
    say "round $round: link mended"
    check "round $round: scheduler 0 is alive" kill -0 "${S_PID[0]}"
    check "round $round: scheduler 0 holds shares again" wait_until 20 holds_some 0
    check "round $round: the three hold the 16 shares" wait_until 15 all_held "0 1 2"
    rsleep 500 2500
done
load_stop
timeout 20 tail --pid="$LOAD0" -f /dev/null
for j in $CRONS; do ctl job stop "$j" >/dev/null; done
say "takeover gaps (ms):$GAPS"
# The agents beat every second all along: a scheduler whose turn stood
# still behind the cut link reads their beats before it judges them, and
# drops none (it did after every black hole, and went deaf)
DROPS=$(grep -c "missed its beats, removed" "$T/scheduler.log")
check "no scheduler dropped an agent that kept beating ($DROPS dropped)" test "$DROPS" = 0
check "all runs finish" wait_quiet 40
for i in 0 1 2; do check "scheduler $i is alive" kill -0 "${S_PID[$i]}"; done
LATE=$(sql "SELECT id || ' ' || schedule_time FROM xxl_job_log WHERE schedule_time IS NOT NULL
            AND job_id IN ($(echo $CRONS | tr ' ' ','))" \
       | awk -v probe="$PROBE" 'BEGIN { while ((getline l < probe) > 0) { split(l, f, " "); start[f[1]] = f[5] } }
              ($1 in start) { late = start[$1] - $2; if (late > max) max = late }
              END { print max + 0 }')
say "latest cron run start: $LATE ms after its planned time"
check "no cron run started more than the lease + 5 s late ($LATE ms)" test "$LATE" -le $((LEASE + 5000))
fcount "three schedulers, scheduler 0's database link cut or black-holed, under API and cron load" --cron "$CRONS"
xxl_done
