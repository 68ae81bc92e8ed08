#!/usr/bin/env bash
# net_cut.sh -- real network cuts between agents and the scheduler (not
# SIGSTOP: the agents keep running, only their link goes).  The scheduler
# runs in the root network namespace; three agents each in a namespace of
# their own (ip netns), joined to it by a veth pair (169.254.N.x/30
# link-local addresses, N free on this host); the scheduler's agents
# endpoint is the host end of a fourth pair that is never cut, reached from
# every agent namespace by a /32 route.  Clients use the api on 127.0.0.1.
# Under ROUND and FAILOVER GLUE jobs with --retry 1 (long runs of 5-12 s,
# and short ones so that RUNs and answers are in flight at a cut), at
# seeded instants, one agent's link is cut for longer than the scheduler's
# run_timeout (2.5 s), registry dead time (3 s) and lost_after (4 s) and
# the agent's run lease (agent/run_lease, 5 s): (a) nftables, in the
# agent's namespace, drops what its veth sends, and 0.3-1.5 s later what
# it receives too (RUNs still arrive in between, their answers are lost);
# (b) the veth is set down, on the agent's side (its sends fail at once)
# or the host's (silence).  Then the link is mended.  Odd rounds cut the
# agent the FAILOVER jobs use, by (a); even ones a seeded agent, by (b).
# The long form goes through five forms in turn: (a), (b), then (c) one
# direction only for the whole cut: what the agent receives (its
# REGISTERs, answers and results reach the scheduler, which keeps hearing
# it; nothing comes back, so its lease runs out), or what it sends (RUNs
# reach it); and (d) both directions for 1-2.5 s, under the dead time and
# the lease (TCP delivers what was dropped once mended; the agent keeps its
# runs and stays registered).
# Each GLUE run takes a lock named by its chain (job and the trigger's tag,
# which the retry keeps) for as long as it runs (flock -n on a file in $T,
# held by the script and its children): a run that finds the lock held
# records an OVERLAP.
# Guarantees: a cut-off agent stops its runs once it has had no REGISTER
# round trip for run_lease seconds (they end 500 "stopped: no scheduler
# reachable for N s"); the scheduler fails a run of an agent it cannot hear
# (lost-run monitor, answer timeout) only once that lease has passed, so a
# retry or failover never overlaps the run it replaces (overlaps 0); no
# logId starts twice, none is missing, every run ends; no run starts after
# the scheduler gave up on it (its retry was written); no result is
# dropped: a result that comes after the scheduler failed its run is kept
# beside the row (its handleMsg mentions the late result), and the log
# never says "callbacks ignored".  A chain whose run ended on the cut-off
# agent during the cut and was retried after the lease ran twice, one
# after the other: that is printed, not failed (the scheduler cannot know).
# Root only (network namespaces, veth, nftables); skipped (77) otherwise.
. "$(dirname "$0")/lib.sh"
xxl_store_blind "links cut between the agents and the scheduler"
RUN_LEASE=5
# A late result's mention in the failed row's handleMsg (extended regex)
LATE_RE='[Ll]ate (result|callback)|result (came|arrived) (late|after)'
STOP_RE='stopped: no scheduler reachable'
F_RUN_TIMEOUT=2500 F_DEAD=3 F_LOST_AFTER=4 F_RUN_LEASE=$RUN_LEASE faults_setup net_cut
# (a signal ends the script through its exit trap, which mends the network)
trap 'exit 143' TERM; trap 'exit 130' INT; trap 'exit 129' HUP

net_skip () { echo "# skipped: $1"; exit 77; }
[ "$(id -u)" = 0 ] || net_skip "net_cut needs root (network namespaces, veth, nftables)"
for tool in ip nft flock; do
    command -v "$tool" >/dev/null 2>&1 || net_skip "net_cut needs '$tool' (iproute2, nftables, util-linux)"
done

# ---- the network: namespaces, veth pairs, nftables; torn down at exit
NSP="xxlc-$$"                   # namespaces $NSP-s, $NSP-a1...
VP="xc$$"                       # host ends $VP-a1, namespace ends $VP-a1n (<= 15 characters)
NETNS_MADE=""
VETH_MADE=""
net_teardown () {
    local ns h
    for ns in $NETNS_MADE; do ip netns exec "$ns" nft delete table inet xxlcut 2>/dev/null; done
    for h in $VETH_MADE; do ip link del "$h" 2>/dev/null; done
    for ns in $NETNS_MADE; do ip netns del "$ns" 2>/dev/null; done
    NETNS_MADE=""; VETH_MADE=""
}
# the network goes after the daemons (faults_cleanup kills them, then calls
# xxl_cleanup), before tests/lib.sh's own cleanup removes $T
eval "$(declare -f xxl_cleanup | sed '1s/^xxl_cleanup/xxl_cleanup_base/')"
xxl_cleanup () { net_teardown; xxl_cleanup_base; }
# Namespaces of this test left by a run that was SIGKILLed (its pid gone)
for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^xxlc-[0-9]+-'); do
    p=${ns#xxlc-}; p=${p%%-*}
    kill -0 "$p" 2>/dev/null && continue
    for h in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E "^xc$p-"); do
        ip link del "$h" 2>/dev/null
    done
    ip netns del "$ns" 2>/dev/null
done
# A /24 of 169.254 no interface of this host uses
NET=""
for i in $(seq 0 199); do
    o=$(( ($$ + i) % 200 + 20 ))
    ip -4 -o addr show 2>/dev/null | grep -q " 169\.254\.$o\." && continue
    NET="169.254.$o"; break
done
[ -n "$NET" ] || net_skip "no free 169.254.x.0/24 on this host"
SCHED_IP="$NET.1"
# net_pair K NAME: namespace $NSP-NAME, veth $VP-NAME (host, $NET.4K+1/30)
# to $VP-NAMEn (in the namespace, $NET.4K+2/30); agents route the
# scheduler's address through it
net_pair () {
    local k=$1 ns="$NSP-$2" h="$VP-$2"
    ip netns add "$ns" || return 1
    NETNS_MADE="$NETNS_MADE $ns"
    ip link add "$h" type veth peer name "${h}n" netns "$ns" || return 1
    VETH_MADE="$VETH_MADE $h"
    # (no IPv6 on the test's links: nothing but the test's own traffic)
    echo 1 > "/proc/sys/net/ipv6/conf/$h/disable_ipv6" 2>/dev/null
    ip netns exec "$ns" sh -c "echo 1 > /proc/sys/net/ipv6/conf/${h}n/disable_ipv6" 2>/dev/null
    ip addr add "$NET.$((4 * k + 1))/30" dev "$h" &&
    ip link set "$h" up &&
    ip -n "$ns" link set lo up &&
    ip -n "$ns" addr add "$NET.$((4 * k + 2))/30" dev "${h}n" &&
    ip -n "$ns" link set "${h}n" up || return 1
    [ "$k" = 0 ] || ip -n "$ns" route replace "$SCHED_IP/32" via "$NET.$((4 * k + 1))" dev "${h}n"
}
# the route to the scheduler, again (a link set down loses it)
net_route () { ip -n "$NSP-$2" route replace "$SCHED_IP/32" via "$NET.$((4 * $1 + 1))" dev "$VP-$2n"; }
net_pair 0 s || net_skip "cannot make network namespaces and veth pairs here (no CAP_NET_ADMIN?)"
ip netns exec "$NSP-s" nft add table inet xxlcut 2>/dev/null \
    && ip netns exec "$NSP-s" nft delete table inet xxlcut 2>/dev/null \
    || net_skip "nftables does not work in a network namespace here"
AGENT_NAMES="a1 a2 a3"
k=1
for a in $AGENT_NAMES; do
    net_pair $k $a || { check "the network of agent $a is made" false; xxl_done; exit 1; }
    eval "K_$a=$k"; k=$((k + 1))
done
say "network $NET.0/24: scheduler on $SCHED_IP, agents in $NSP-a1..a3"

# cut_nft A out|in / mend_nft A: what A's veth sends (out), then also what
# it receives (in), dropped by a table in A's namespace
cut_nft () {
    ip netns exec "$NSP-$1" nft -f - <<NFT
table inet xxlcut {
    chain $2 { type filter hook $([ "$2" = in ] && echo input || echo output) priority -300; policy accept;
               $([ "$2" = in ] && echo iifname || echo oifname) "$VP-$1n" drop; }
}
NFT
}
mend_nft () { ip netns exec "$NSP-$1" nft delete table inet xxlcut; }
# cut_link A SIDE / mend_link A SIDE: the veth set down on A's side (ns) or
# the scheduler's (host); up again, with A's route to the scheduler
cut_link () { if [ "$2" = ns ]; then ip -n "$NSP-$1" link set "$VP-$1n" down; else ip link set "$VP-$1" down; fi; }
mend_link () {
    if [ "$2" = ns ]; then ip -n "$NSP-$1" link set "$VP-$1n" up; else ip link set "$VP-$1" up; fi
    net_route "$(eval echo "\$K_$1")" "$1"
}
# reaches A: a TCP connection from A's namespace to the scheduler's agents
# port opens within a second
reaches () { timeout 1 ip netns exec "$NSP-$1" bash -c "exec 3<>/dev/tcp/$SCHED_IP/$AGENT_PORT" 2>/dev/null; }
cut_off () { ! reaches "$1"; }

# ---- the scheduler: api on 127.0.0.1, agents endpoint on $SCHED_IP
# (not loopback: --insecure, plain text over the test's own veths)
XXL_SCHEDULER_ARGS="--insecure"
for _ in 1 2 3 4 5; do
    port=$((20000 + (RANDOM % 5000) * 2))
    start_scheduler "tcp://127.0.0.1:$port" "tcp://$SCHED_IP:$((port + 1))" >/dev/null && break
done
[ -n "${SPID:-}" ] && kill -0 "$SPID" 2>/dev/null || { check "the scheduler starts" false; xxl_done; exit 1; }
AGENT_PORT=${AGENTS##*:}

# ---- the agents, each in its namespace (the launcher execs ip netns exec,
# which execs the agent: the pid lib.sh records is the agent's; its
# guardian and runs are its children, in the same namespace)
# agent/run_lease (lib.sh writes F_RUN_LEASE where it knows the key; an
# agent that does not know it ignores it)
grep -q 'run_lease' "$T/agent.cfg" || printf '    run_lease = %s\n' "$RUN_LEASE" >> "$T/agent.cfg"
check "the agents' run lease is $RUN_LEASE s" grep -qx "    run_lease = $RUN_LEASE" "$T/agent.cfg"
for a in $AGENT_NAMES; do
    printf '#!/bin/sh\nexec ip netns exec %s %s "$@"\n' "$NSP-$a" "$AGENT" > "$T/agent-in-$a"
    chmod +x "$T/agent-in-$a"
    AGENT="$T/agent-in-$a" fagent "$a" nc-app
done
ctl group add nc-app >/dev/null
for a in $AGENT_NAMES; do
    check "agent $a registers from its namespace" wait_until 15 agent_registered nc-app "$a"
done
check "an agent's namespace has no route beyond the test's own addresses" \
    bash -c "! ip netns exec '$NSP-a1' ip route get 192.0.2.1 >/dev/null 2>&1"

# ---- the GLUE source: the probe line, then the chain's lock for the run
mkdir -p "$T/locks"
OVERLAPS="$T/overlaps"; ENDS="$T/ends"
: > "$OVERLAPS"; : > "$ENDS"
cat > "$T/net_glue.sh" <<GLUE
# net_cut's GLUE probe (probe_glue.sh's line, then the chain's lock)
f=\$(readlink /proc/\$\$/fd/1)
id=\${f##*/}; id=\${id%.log}
j=\${0##*/}; j=\${j%%_*}
t=\${1##*t=}; t=\${t%% *}
printf '%s %s %s/%s %s %s %s glue\n' "\$id" "\$j" "\${2:-0}" "\${3:-1}" "\$\$" "\$(date +%s%3N)" \\
    "\${XXL_PROBE_TAG:--}" >> "\${XXL_PROBE_FILE:?no XXL_PROBE_FILE}"
# held by this script and its children until the run ends or its process
# group is killed
exec 9>"$T/locks/\$j-\$t"
if ! flock -n 9; then
    printf 'OVERLAP %s %s %s %s %s\n' "\$id" "\$j" "\$t" "\${XXL_PROBE_TAG:--}" "\$(date +%s%3N)" >> "$OVERLAPS"
fi
case "\$1" in
    *sleep=*)
        ms=\${1#*sleep=}; ms=\${ms%%[!0-9]*}
        [ -n "\$ms" ] && sleep "\$((ms / 1000)).\$(printf '%03d' \$((ms % 1000)))" ;;
esac
printf '%s %s %s\n' "\$id" "\${XXL_PROBE_TAG:--}" "\$(date +%s%3N)" >> "$ENDS"
exit 0
GLUE
gjob () { ctl job add --group nc-app --glue-type GLUE_SHELL --glue-source "$T/net_glue.sh" --route "$1" --retry 1 | jq -r .id; }
LONG=""; SHORT=""
for r in ROUND FAILOVER ROUND FAILOVER ROUND FAILOVER ROUND FAILOVER; do LONG="$LONG $(gjob $r)"; done
for r in ROUND FAILOVER; do SHORT="$SHORT $(gjob $r)"; done
JOBS="$LONG $SHORT"
check "jobs added" test "$(echo $JOBS | tr ' ' '\n' | grep -c '^[0-9][0-9]*$')" = 10

# ---- the load: each long job every $PERIOD ms (longer than its runs, so a
# job's runs do not queue behind each other), sleep=5000..12000; the two
# short ones, sleep=20..300, each every 0.3 s or so.  Every trigger's param
# has a tag t=N of its own, which its retry keeps.
PERIOD=13000
load_net () {
    rm -f "$T/stop-load"
    (
        set +e
        trig () {
            local out ids id
            # (3: acknowledged, and a run failed at once: its ids count)
            out=$("$CTL" --api "$API" --json --timeout 2000 job trigger "$1" --param "$2" 2>/dev/null) \
                || [ $? = 3 ] || return
            ids=$(printf '%s' "$out" | jq -r '.logIds[]?' 2>/dev/null)
            for id in $ids; do echo "$id $1 $(now_ms)" >> "$ACKED"; done
        }
        n=0; start=$(now_ms); declare -A due
        i=0; for j in $LONG; do due[$j]=$((start + i * PERIOD / 8)); i=$((i + 1)); done
        while [ ! -f "$T/stop-load" ]; do
            now=$(now_ms)
            for j in $LONG; do
                [ "${due[$j]}" -le "$now" ] || continue
                n=$((n + 1)); rnd 7001
                trig "$j" "sleep=$((5000 + R)) t=$n"
                due[$j]=$((due[$j] + PERIOD))
            done
            for j in $SHORT; do
                n=$((n + 1)); rnd 281
                trig "$j" "sleep=$((20 + R)) t=$n"
            done
            sleep 0.15
        done
    ) &
    LOADPID=$!
    BGPIDS="$BGPIDS $LOADPID"
}

# runs of agent A running now (its GLUE scripts), and of all agents
runs_of () {
    local p n=0 args
    for p in $(probe_procs "$1"); do
        mapfile -d '' -t args 2>/dev/null < "/proc/$p/cmdline" || continue
        case "${args[*]}" in *"/gluesource/"*) n=$((n + 1)) ;; esac
    done
    echo "$n"
}
no_runs_of () { [ "$(runs_of "$1")" = 0 ]; }
no_runs () { local a; for a in $AGENT_NAMES; do no_runs_of "$a" || return 1; done; }
# the agent the FAILOVER jobs use now: the address of the newest FAILOVER row
failover_agent () {
    sql "SELECT executor_address FROM xxl_job_log WHERE job_id IN ($(echo $SHORT | cut -d' ' -f2))
         AND executor_address IS NOT NULL ORDER BY id DESC LIMIT 1"
}

ROUNDS=$(pick 2 10)
in_flight () { [ $(( $(runs_of a1) + $(runs_of a2) + $(runs_of a3) )) -ge "$1" ]; }
load_net
check "runs are in flight" wait_until 20 in_flight 4
STOPS=""
for round in $(seq "$ROUNDS"); do
    # odd rounds cut the FAILOVER jobs' agent, even ones a seeded agent;
    # the way alternates (nft drop, link down), the link's side is seeded
    # (the long form also cuts one direction only for the whole cut, and
    # both for less than the dead time: rounds 3, 4, 5 of every 5)
    FORM=$(( (round - 1) % 5 ))
    [ "$XXL_FAULTS" = long ] || FORM=$(( (round - 1) % 2 ))
    case $FORM in
        0)  A=$(failover_agent); case " $AGENT_NAMES " in *" $A "*) ;; *) A=a1 ;; esac
            HOW=nft ;;
        1)  rnd 3; A=a$((R + 1))
            rnd 2; if [ "$R" = 0 ]; then HOW=link-ns; else HOW=link-host; fi ;;
        2)  A=$(failover_agent); case " $AGENT_NAMES " in *" $A "*) ;; *) A=a1 ;; esac
            HOW=nft-in ;;
        3)  rnd 3; A=a$((R + 1)); HOW=nft-out ;;
        4)  A=$(failover_agent); case " $AGENT_NAMES " in *" $A "*) ;; *) A=a1 ;; esac
            HOW=short ;;
    esac
    rsleep 1000 4000
    if [ "$XXL_FAULTS" = long ]; then rnd 12001; DOWN=$((8000 + R)); else rnd 2001; DOWN=$((8000 + R)); fi
    # short: 1-2.5 s, under the dead time (3 s) and the lease (5 s), past
    # the RUN answer's timeout (2.5 s) at times: TCP carries what was
    # dropped once mended, and the agent keeps its runs
    [ "$HOW" = short ] && { rnd 1501; DOWN=$((1000 + R)); }
    INFLIGHT=$(runs_of "$A")
    case $HOW in
        nft) WHAT="nftables drop, its sends 0.3-1.5 s before the rest" ;;
        link-ns) WHAT="its veth down on its side" ;;
        link-host) WHAT="its veth down on the scheduler's side" ;;
        nft-in) WHAT="nftables drop of what it receives only: its REGISTERs, answers and results reach the scheduler, nothing comes back" ;;
        nft-out) WHAT="nftables drop of what it sends only: RUNs reach it, nothing it sends reaches the scheduler" ;;
        short) WHAT="nftables drop both ways, under the dead time and the lease" ;;
    esac
    say "round $round: cut $A for $DOWN ms ($WHAT), $INFLIGHT of its runs in flight, $(acked_count) acknowledged"
    CUT=$(now_ms)
    case $HOW in
        nft)    # its sends first: RUNs still reach it, their answers do not
            cut_nft "$A" out; rsleep 300 1500; cut_nft "$A" in ;;
        link-ns) cut_link "$A" ns ;;
        link-host) cut_link "$A" host ;;
        nft-in) cut_nft "$A" in ;;
        nft-out|short) cut_nft "$A" out; cut_nft "$A" in ;;
    esac
    if [ "$HOW" = short ]; then
        check "round $round: $A cannot reach the scheduler" cut_off "$A"
        while [ "$(now_ms)" -lt $((CUT + DOWN)) ]; do sleep 0.05; done
        mend_nft "$A"
        check "round $round: $A reaches the scheduler again" wait_until 5 reaches "$A"
        check "round $round: $A is registered after a cut under the dead time" wait_until 10 agent_registered nc-app "$A"
        rsleep 2000 4000
        continue
    fi
    # the agent stops its runs run_lease after its last REGISTER round trip
    # (at most a beat before the cut): all gone by the lease + 2 s after it
    STOPPED=1
    until no_runs_of "$A"; do
        [ "$(now_ms)" -lt $((CUT + (RUN_LEASE + 2) * 1000)) ] || { STOPPED=0; break; }
        sleep 0.05
    done
    if [ "$STOPPED" = 1 ]; then
        STOP=$(( $(now_ms) - CUT )); STOPS="$STOPS $STOP"
        check "round $round: the cut-off agent $A stopped its runs within the run lease + 2 s ($STOP ms after the cut)" true
    else
        check "round $round: the cut-off agent $A stopped its runs within the run lease + 2 s ($(runs_of "$A") still running $(( $(now_ms) - CUT )) ms after the cut)" false
    fi
    check "round $round: $A cannot reach the scheduler" cut_off "$A"
    while [ "$(now_ms)" -lt $((CUT + DOWN)) ]; do sleep 0.05; done
    case $HOW in
        nft|nft-in|nft-out) mend_nft "$A" ;;
        link-ns) mend_link "$A" ns ;;
        link-host) mend_link "$A" host ;;
    esac
    MENDED=$(now_ms)
    check "round $round: $A reaches the scheduler again" wait_until 5 reaches "$A"
    if wait_until 40 agent_registered nc-app "$A"; then
        say "round $round: link mended; $A registered again $(( $(now_ms) - MENDED )) ms later"
    else
        check "round $round: $A registers again after the cut" false
    fi
    rsleep 2000 4000
done
load_stop
say "$(acked_count) triggers acknowledged; the agents stopped their runs (ms after each cut):$STOPS"
for a in $AGENT_NAMES; do check "agent $a is registered at the end" wait_until 40 agent_registered nc-app "$a"; done
check "every run finishes (every row has its result)" wait_quiet 60
check "no run process is left on any agent" wait_until 30 no_runs
check "the scheduler is alive" kill -0 "$SPID"
for a in $AGENT_NAMES; do check "agent $a is alive" kill -0 "$(apid $a)"; done

# ---- the checks
IDS=$(echo $JOBS | tr ' ' ',')
# rows: id job tc hc param trigger_time handleMsg, tab-separated (tabs and
# newlines in handleMsg made spaces)
rows () {
    sql "SELECT id, job_id, trigger_code, handle_code, COALESCE(executor_param, ''), trigger_time,
                replace(replace(COALESCE(handle_msg, ''), char(9), ' '), char(10), ' ')
         FROM xxl_job_log WHERE job_id IN ($IDS) ORDER BY id" \
        | awk '{ m = $0; for (i = 1; i <= 6; i++) sub(/^[^|]*\|/, "", m); split($0, f, "|")
                 print f[1] "\t" f[2] "\t" f[3] "\t" f[4] "\t" f[5] "\t" f[6] "\t" m }'
}
# Results dropped: rows the scheduler failed (trigger failed, or a handle
# failure that is not the agent's own "stopped" result) whose run started,
# without the late result beside them.  (The rows' handle_msg may hold
# '|': read them with ctl log show.)
given_up_started () {
    sql "SELECT id FROM xxl_job_log WHERE job_id IN ($IDS) AND (trigger_code = 500
         OR (handle_code = 500 AND COALESCE(handle_msg, '') NOT LIKE 'stopped: no scheduler reachable%'))" \
        | awk -v probe="$PROBE" 'BEGIN { while ((getline l < probe) > 0) { split(l, f, " "); ran[f[1]] = 1 } }
                                  ($1 in ran) { print $1 }'
}
dropped () {     # the ids, with their rows' words, in $T/dropped
    local id
    : > "$T/dropped"
    for id in $(given_up_started); do
        ctl log show "$id" > "$T/show" 2>/dev/null || continue
        jq -r .handleMsg "$T/show" | grep -Eq "$LATE_RE" && continue
        jq -r '"logId \(.id): triggerCode \(.triggerCode) handleCode \(.handleCode): "
               + ((.handleMsg // "") | gsub("\n"; " ") | .[0:160])' "$T/show" >> "$T/dropped"
    done
    [ ! -s "$T/dropped" ]
}
GIVEN=$(given_up_started | wc -l)
wait_until 20 dropped
dropped
DROPPED=$(wc -l < "$T/dropped")
say "$GIVEN runs the scheduler failed (lost, no answer) had started; $DROPPED of them without their late result"
head -n 8 "$T/dropped" | sed 's/^/    /'
check "no result dropped: every run the scheduler failed and that ran has its late result beside its row ($DROPPED of $GIVEN without)" \
    test "$DROPPED" = 0
# (logged at most once a minute, naming the latest logId: said whether
# that row has the result beside it, i.e. a repeat reported as ignored)
IGNORED=$(grep -c 'callbacks ignored' "$T/scheduler.log")
grep 'callbacks ignored' "$T/scheduler.log" | head -n 5 | while read -r line; do
    id=$(echo "$line" | sed -n 's/.*for logId \([0-9]*\).*/\1/p')
    if [ -n "$id" ] && log_field "$id" handleMsg | grep -Eq "$LATE_RE"; then
        echo "    $line [its row has the late result: a repeat]"
    else
        echo "    $line [its row has no late result]"
    fi
done
check "the scheduler ignored no callback ($IGNORED 'callbacks ignored' lines)" test "$IGNORED" = 0

NOVER=$(wc -l < "$OVERLAPS")
NCHAINS=$(awk '{ print $3 "-" $4 }' "$OVERLAPS" | sort -u | wc -l)
sed 's/^/    /' "$OVERLAPS" | head -n 8
check "no retry or failover started while the run it replaces still ran ($NOVER overlaps, in $NCHAINS chains)" \
    test "$NOVER" = 0

# runs the agent stopped (no end line): their result says so
rows > "$T/rows"
KILLED=$(awk -v probe="$PROBE" -v ends="$ENDS" -v re="$STOP_RE" -F'\t' '
    BEGIN { while ((getline l < probe) > 0) { split(l, f, " "); ran[f[1]] = 1 }
            while ((getline l < ends) > 0) { split(l, f, " "); ended[f[1]] = 1 } }
    ($1 in ran) && !($1 in ended) { n++; if ($7 !~ re) { bad++; if (bad <= 5) print "    stopped run " $1 " says: " substr($7, 1, 160) > "/dev/stderr" } }
    END { print n + 0, bad + 0 }' "$T/rows")
set -- $KILLED
check "every run the lease stopped ends saying '$STOP_RE' ($2 of $1 do not)" test "$2" = 0
# a run never starts after the scheduler gave up on it: before its chain's
# next row (the retry, written when it gave up) was written
LATE=$(awk -v probe="$PROBE" -F'\t' '
    BEGIN { while ((getline l < probe) > 0) { split(l, f, " "); start[f[1]] = f[5] } }
    { key = $2 SUBSEP $5; if (key in last && (last[key] in start) && start[last[key]] + 0 > $6 + 0) {
          n++; if (n <= 5) print "    logId " last[key] " started at " start[last[key]] ", after its retry " $1 " (" $6 ")" > "/dev/stderr" }
      last[key] = $1 }
    END { print n + 0 }' "$T/rows")
check "no run started after the scheduler gave up on it and wrote its retry ($LATE)" test "$LATE" = 0
# chains that ran twice, one after the other (not failed: printed)
RERUN=$(awk -v probe="$PROBE" -F'\t' 'BEGIN { while ((getline l < probe) > 0) { split(l, f, " "); ran[f[1]]++ } }
    { c[$2 SUBSEP $5] += ran[$1] } END { for (k in c) if (c[k] >= 2) n++; print n + 0 }' "$T/rows")
say "$RERUN chains ran twice, $NCHAINS of them overlapping (the others one after the other: a run that ended during a cut, its retry after the lease)"

# every acknowledged logId and every row of the jobs: none twice, none
# missing, none unfinished, no run without a row (a row that never ran is
# judged with its chain, below: its retry may have run)
EXCUSE='lost|no answer|not connected|expire|refus|no scheduler reachable|run lease|within [0-9]+ ms|did not answer|gone'
"$COUNT" --db "$FDB" --probe "$PROBE" --acked "$ACKED" --jobs "$JOBS" --excuse "$EXCUSE" \
    --label "net cut:" > "$T/count.out" 2>&1
# (its verdict counts as 'late' a run whose RUN's answer the cut lost: the
# run started before the scheduler gave up; judged above by the retries'
# times instead)
grep -v 'verdict:' "$T/count.out" | head -n 40 | sed 's/^/    /'
C=$(grep -m1 '^counts:' "$T/count.out")
cnt () { echo "$C" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
check "no logId started twice ($(cnt twice))" test "$(cnt twice)" = 0
check "no acknowledged trigger is missing from the store ($(cnt missing))" test "$(cnt missing)" = 0
check "no row is left unfinished ($(cnt unfinished))" test "$(cnt unfinished)" = 0
check "no run without a row, no row saying 200 without a run ($(cnt unknown), $(cnt lied))" \
    test "$(cnt unknown)" = 0 -a "$(cnt lied)" = 0
say "count.sh's 'late' ($(cnt late)): runs whose row failed its trigger (no answer) after the run started; the retries' timing is checked above"
# per chain (a trigger and its retry): every chain ran, or all its attempts
# were failed by the cut
"$COUNT" --db "$FDB" --probe "$PROBE" --acked "$ACKED" --jobs "$JOBS" --excuse "$EXCUSE" --chains \
    --label "net cut, chains:" > "$T/chains.out" 2>&1
CC=$(grep -m1 '^counts:' "$T/chains.out")
say "chains: $CC"
NEVER=$(echo "$CC" | tr ' ' '\n' | sed -n 's/^never=//p')
check "every chain (a trigger and its retry) ran, unless every attempt was failed by the cut ($NEVER)" test "$NEVER" = 0
xxl_done
