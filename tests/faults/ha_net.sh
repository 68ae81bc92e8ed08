#!/usr/bin/env bash
# ha_net.sh -- real partitions around one scheduler of three sharing a
# store: packets dropped by the kernel (nftables on the loopback), not a
# relay that closes or holds its sessions, nor a SIGSTOP.  Nothing sees a
# FIN or an RST: a connection across the cut is half-open, its segments
# retransmitted until the link is mended (and delivered then) or TCP's
# own timeouts end it.
#
# Three schedulers on one store (both stores), two agents connected to all
# three, six one-second DO_NOTHING crons, API load through schedulers 0
# and 1, and long runs (2-4 s, --retry 1, a unique param each: a retry
# that runs beside or after the run it replaces shows as a chain run twice)
# triggered through scheduler 0, so that its RUNs and their answers and
# results are in flight at a cut.  At seeded instants one of:
#   store      (PostgreSQL only) scheduler 0's database link: it reaches
#              the server through tests/xxl_relay (pass), and what the
#              relay's port sends back is dropped first (a COMMIT may reach
#              the server while its answer does not come back), 0.2-1 s
#              later what scheduler 0 sends too; short (0.5-2 s, under the
#              HA lease of 3 s) or long (the lease + 1.5-9 s: past libpq's
#              tcp_user_timeout, set to 4 s in scheduler 0's URL, so the
#              half-open connection's end is exercised as well);
#   agents     scheduler 0's agents port, both ways: cut from every agent
#              but not from the store or its clients (the agents beat on
#              through schedulers 1 and 2);
#   agents-out only what scheduler 0 sends on its agents port (RUNs,
#              answers, BEATs): the agents' REGISTERs and results reach it,
#              its answers never come;
#   agents-in  only what the agents send to it (REGISTERs, RUN answers,
#              results): its RUNs reach the agents, which run them, and
#              scheduler 0 hears nothing back;
# each agents cut 1-2.5 s long: under the registry's dead time, past the
# RUN answer's timeout at times (ha_net_deaf.sh makes them 9-14 s: past its
# dead time of 3 s, the agents' run lease of 5 s and the lease + 3 s + 1 s
# a silent agent's runs are held before they can be failed: scheduler 0 is
# deaf to the agents, see there, and must hold no share within the cut
# while the other two hold the 16); then mended.  The dead time is 6 s
# here, not the suite's 3 s: after a cut of what the agents send (agents,
# agents-in) scheduler 0 hears them again only when TCP retransmits what
# was dropped, and the retransmissions back off (0.2, 0.6, 1.4, 3.0 s after
# the first dropped segment on the loopback), so a cut of 1.4-2.5 s
# silences an agent for up to 3 s + the time since its last REGISTER
# (beats of 1 s): up to 4 s, past a dead time of 3 s (seed 1043503877's
# 2.3 s cut, both ways, before the deaf rule: both agents removed, a
# trigger failed "the address list is empty").
# Guarantees: every acknowledged trigger and every planned cron second ran
# exactly once (none twice, none never, none unfinished, no gap); no long
# run's retry ran though the run it replaces ran (chains: none twice): an
# agent the cut-off scheduler cannot hear, heard by another scheduler of
# the store, keeps its runs and its results reach the store; after a long
# store cut the other two hold the 16 shares within the lease + 5 s;
# after every mend scheduler 0 takes part again (shares, agents).
# Root only (nftables); skipped (77) otherwise.  The table
# (inet xxlhn<pid>) matches only this test's ports on the loopback, and
# goes at exit (a table left by a SIGKILLed run goes at the next start).
. "$(dirname "$0")/lib.sh"
net_skip () { echo "# skipped: $1"; exit 77; }
[ "$(id -u)" = 0 ] || net_skip "ha_net needs root (nftables)"
command -v nft >/dev/null 2>&1 || net_skip "ha_net needs 'nft' (nftables)"
TABLE="xxlhn$$"
nft add table inet "$TABLE" 2>/dev/null && nft delete table inet "$TABLE" 2>/dev/null \
    || net_skip "nftables does not work here"
# tables of runs that were SIGKILLed (their pid gone)
for t in $(nft list tables 2>/dev/null | awk '$2 == "inet" && $3 ~ /^xxlhn[0-9]+$/ { print $3 }'); do
    kill -0 "${t#xxlhn}" 2>/dev/null || nft delete table inet "$t" 2>/dev/null
done
PG=0
if [ "${XXL_STORE:-sqlite}" = pg ]; then PG=1; PG_TCP=1; export PG_TCP; fi
DEAF=${XXL_HA_NET_DEAF:-0}
if [ "$DEAF" = 1 ]; then F_RUN_LEASE=5 faults_setup ha_net_deaf; else F_RUN_LEASE=5 F_DEAD=6 faults_setup ha_net; fi
trap 'exit 143' TERM; trap 'exit 130' INT; trap 'exit 129' HUP
REQ="$XXL_REQ"
RELAY="$XXL_RELAY"
LEASE=3000
RUN_LEASE=5

# the cut goes before tests/lib.sh's own cleanup (the daemons are gone by then)
eval "$(declare -f xxl_cleanup | sed '1s/^xxl_cleanup/xxl_cleanup_base/')"
xxl_cleanup () { nft delete table inet "$TABLE" 2>/dev/null; xxl_cleanup_base; }
# cut_port PORT out|in|both: on the loopback, drop the segments sent to PORT
# (in: toward the scheduler's socket) or from it (out), or both
cut_port () {
    local rules=""
    case $2 in
        in)   rules="tcp dport $1 drop;" ;;
        out)  rules="tcp sport $1 drop;" ;;
        both) rules="tcp dport $1 drop; tcp sport $1 drop;" ;;
    esac
    nft -f - <<NFT
table inet $TABLE {
    chain c { type filter hook output priority -300; policy accept; oifname "lo" $rules }
}
NFT
}
mend () { nft delete table inet "$TABLE" 2>/dev/null; nft list table inet "$TABLE" >/dev/null 2>&1 && return 1; return 0; }
cut_is () { nft list table inet "$TABLE" 2>/dev/null | grep -c ' drop' ; }

# ---- the store, and scheduler 0's way to it
if [ "$PG" = 1 ]; then
    "$RELAY" "$T/relay.port" 127.0.0.1 "$PG_PORT" pass /dev/null >"$T/relay.log" 2>&1 &
    RELAY_PID=$!
    PIDS="$PIDS $RELAY_PID"
    check "the relay listens" wait_until 10 test -s "$T/relay.port"
    RPORT=$(cat "$T/relay.port")
    DBNAME=$(echo "$XXL_DB" | sed 's|^postgresql:///\([^?]*\)?.*|\1|')
    CUT_DB="postgresql://$PG_USER@127.0.0.1:$RPORT/$DBNAME?connect_timeout=2&tcp_user_timeout=4000&keepalives_idle=2&keepalives_interval=1&keepalives_count=2"
fi
S_API=(); S_AGENTS=(); S_PID=()
for i in 0 1 2; do
    if [ "$i" = 0 ] && [ "$PG" = 1 ]; then XXL_DB="$CUT_DB" start_scheduler || exit 1
    else start_scheduler || exit 1; fi
    S_API[$i]=$API; S_AGENTS[$i]=$AGENTS; S_PID[$i]=$SPID
done
[ "$PG" = 1 ] && check "scheduler 0 reaches the store through the relay" \
    grep -q "store postgresql://$PG_USER@127.0.0.1:$RPORT" "$T/scheduler.log"
APORT0=${S_AGENTS[0]##*:}
ALL_AGENTS=$(IFS=,; echo "${S_AGENTS[*]}")
AGENTS="$ALL_AGENTS" fagent n1 hn-app
AGENTS="$ALL_AGENTS" fagent n2 hn-app
API=${S_API[1]}
for i in 0 1 2; do check "agents register with scheduler $i" wait_until 15 both_registered "${S_API[$i]}" hn-app; done
ctl group add hn-app >/dev/null
holds_some () { [ "$(shares_of "${S_API[$1]}" | jq length)" -gt 0 ]; }
holds_none () { [ "$(shares_of "${S_API[$1]}" | jq length)" = 0 ]; }     # (XXL_HA_NET_DEAF)
check "the three schedulers hold the 16 shares" wait_until 15 all_held "0 1 2"
check "scheduler 0 holds shares" wait_until 15 holds_some 0

CRONS=""
for r in ROUND FIRST LAST ROUND FIRST LAST; do
    CRONS="$CRONS $(ctl --get .id job add --group hn-app --handler probeIn --route $r --cron '* * * * * ?' \
                    --misfire DO_NOTHING --param sleep=100 --start)"
done
J_IN=$(ctl --get .id job add --group hn-app --handler probeIn --route ROUND --param sleep=50)
J_ISO=$(ctl --get .id job add --group hn-app --handler probe --route FIRST --param sleep=50)
# four long jobs, triggered in turn: a job's runs on one agent go one at a
# time (SERIAL_EXECUTION), and each job's next run on an agent comes after
# its last ended (every 5.6 s, runs of at most 4 s), so none queue
J_LONGS=""
for _ in 1 2 3 4; do
    J_LONGS="$J_LONGS $(ctl --get .id job add --group hn-app --handler probe --route ROUND --retry 1 --param sleep=3000)"
done
check "jobs added" test -n "$J_IN" -a -n "$J_ISO" -a "$(echo $J_LONGS | wc -w)" = 4 -a "$(echo $CRONS | wc -w)" = 6

# API load through scheduler 0 and 1; long runs (2-4 s) through scheduler
# 0, one every 0.7 s, each with a param of its own (the retry keeps it)
API=${S_API[0]}; load_start "$J_IN $J_ISO"; LOAD0=$LOADPID
API=${S_API[1]}; load_start "$J_IN $J_ISO"
(
    set +e; n=0; set -- $J_LONGS
    while [ ! -f "$T/stop-load" ]; do
        n=$((n + 1)); j=$1; shift; set -- "$@" "$j"
        out=$("$CTL" --api "${S_API[0]}" --json --timeout 2000 job trigger "$j" \
              --param "sleep=$((2000 + (n * 977) % 2000)) t=$n" 2>/dev/null) || [ $? = 3 ] || { sleep 0.7; continue; }
        for id in $(printf '%s' "$out" | jq -r '.logIds[]?' 2>/dev/null); do echo "$id $j $(now_ms)" >> "$ACKED"; done
        sleep 0.7
    done
) &
LOADL=$!
BGPIDS="$BGPIDS $LOADL"

ROUNDS=$(pick 4 14)
KINDS="agents agents-out agents-in"
[ "$PG" = 1 ] && KINDS="store $KINDS store"
# (ha_net_deaf.sh: only cuts that leave scheduler 0 deaf to the agents
# past the dead time, which this form keeps under it: see that script)
[ "$DEAF" = 1 ] && KINDS="agents agents-out agents-in"
set -- $KINDS; NK=$#
GAPS=""; AGENT_CUTS=0
rsleep 1500 3000
for round in $(seq "$ROUNDS"); do
    # every kind in turn, then seeded; short or long seeded
    if [ "$round" -le "$NK" ]; then KIND=$(echo $KINDS | cut -d' ' -f"$round")
    else rnd "$NK"; KIND=$(echo $KINDS | cut -d' ' -f$((R + 1))); fi
    rnd 2; LONGCUT=$R
    case $KIND in agents*) LONGCUT=$DEAF ;; esac
    if [ "$KIND" = store ]; then
        if [ "$LONGCUT" = 1 ]; then rnd 7501; down=$((LEASE + 1500 + R)); else rnd 1501; down=$((500 + R)); fi
        say "round $round: scheduler 0's database link dropped for $down ms, its answers first (holding $(shares_of "${S_API[0]}"), $(acked_count) acknowledged)"
        CUT=$(now_ms)
        cut_port "$RPORT" out; rsleep 200 1000; cut_port "$RPORT" both
    else
        if [ "$LONGCUT" = 1 ]; then rnd 5001; down=$((9000 + R)); else rnd 1501; down=$((1000 + R)); fi
        case $KIND in agents) dir=both ;; agents-out) dir=out ;; agents-in) dir=in ;; esac
        say "round $round: scheduler 0's agents port, $dir, dropped for $down ms ($(acked_count) acknowledged)"
        AGENT_CUTS=$((AGENT_CUTS + 1))
        CUT=$(now_ms)
        cut_port "$APORT0" "$dir"
    fi
    check "round $round: the cut is in place" test "$(cut_is)" -ge 1
    if [ "$DEAF" = 1 ] && [ "$KIND" != store ]; then
        # deaf past the dead time (docs/design.md, Leases): scheduler 0
        # gives every share up, the other two hold the 16 (within the cut)
        if wait_until $(( down / 1000 - 1 )) holds_none 0; then
            say "round $round: scheduler 0, deaf, holds no share $(( $(now_ms) - CUT )) ms after the cut"
            check "round $round: the other two hold the 16 shares while scheduler 0 is deaf" \
                wait_until 5 all_held "1 2"
        else
            check "round $round: scheduler 0, deaf, gives its shares up within the cut" false
        fi
    fi
    if [ "$KIND" = store ] && [ "$down" -gt "$LEASE" ]; then
        if wait_until $(( LEASE / 1000 + 6 )) all_held "1 2"; then
            GAP=$(( $(now_ms) - CUT )); GAPS="$GAPS $GAP"
            say "round $round: the other two hold the 16 shares $GAP ms after the cut"
            check "round $round: shares taken over within the lease + 5 s ($GAP ms)" test "$GAP" -le $((LEASE + 5000))
        else
            check "round $round: the other two take the 16 shares over" false
        fi
    fi
    while [ "$(now_ms)" -lt $((CUT + down)) ]; do sleep 0.05; done
    check "round $round: mended" mend
    say "round $round: mended"
    check "round $round: scheduler 0 is alive" kill -0 "${S_PID[0]}"
    check "round $round: scheduler 0 holds shares again" wait_until 30 holds_some 0
    check "round $round: the three hold the 16 shares" wait_until 15 all_held "0 1 2"
    check "round $round: the agents are registered with scheduler 0 again" wait_until 30 both_registered "${S_API[0]}" hn-app
    rsleep 1000 3000
done
load_stop
for p in $LOAD0 $LOADL; do timeout 20 tail --pid="$p" -f /dev/null; done
for j in $CRONS; do ctl job stop "$j" >/dev/null; done
say "takeover gaps (ms):$GAPS; $(acked_count) acknowledged"
check "all runs finish" wait_quiet 90
for i in 0 1 2; do check "scheduler $i is alive" kill -0 "${S_PID[$i]}"; done
for a in n1 n2; do check "agent $a is alive" kill -0 "$(apid $a)"; done
LATE=$(sql "SELECT id || ' ' || schedule_time FROM xxl_job_log WHERE schedule_time IS NOT NULL
            AND job_id IN ($(echo $CRONS | tr ' ' ','))" \
       | awk -v probe="$PROBE" 'BEGIN { while ((getline l < probe) > 0) { split(l, f, " "); start[f[1]] = f[5] } }
              ($1 in start) { late = start[$1] - $2; if (late > max) max = late }
              END { print max + 0 }')
say "latest cron run start: $LATE ms after its planned time ($AGENT_CUTS agent cuts: a cron second scheduler 0 sent into a cut runs once mended)"
[ "$AGENT_CUTS" = 0 ] && check "no cron run started more than the lease + 5 s late ($LATE ms)" test "$LATE" -le $((LEASE + 5000))
sql "SELECT trigger_code, handle_code, substr(COALESCE(NULLIF(handle_msg, ''), trigger_msg, ''), 1, 60), COUNT(*)
     FROM xxl_job_log WHERE trigger_code = 500 OR handle_code NOT IN (0, 200) GROUP BY 1, 2, 3 ORDER BY 4 DESC LIMIT 10" \
    | sed 's/^/#   failed: /'
fcount "three schedulers, scheduler 0 cut from its store or its agents by dropped packets" --cron "$CRONS"
"$COUNT" --db "$FDB" --probe "$PROBE" --acked "$ACKED" --jobs "$J_LONGS" --chains \
    --label "long runs, chains:" > "$T/chains.out" 2>&1
rc=$?
sed 's/^/    /' "$T/chains.out" | head -n 30
check "no long run's retry ran beside or after the run it replaces ($(grep -m1 '^counts:' "$T/chains.out" | cut -c9-))" test "$rc" = 0
xxl_done
