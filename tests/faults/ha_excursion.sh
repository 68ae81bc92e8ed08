#!/usr/bin/env bash
# ha_excursion.sh -- the store's clock makes a brief excursion (stepped
# 60 s back for 1.2-2.4 s, then right again: two steps in quick
# succession) while scheduler 0 of two sharing an SQLite store is frozen
# (SIGSTOP) across it, so that scheduler 0 never reads the stepped clock;
# scheduler 1 lives through it.  Agents are connected to both; ROUND load
# and one-second crons (FIRE_ONCE_NOW) run throughout.
#   rounds 1-3: back 60 s; scheduler 1 stays alive.  Its renewals during
#       the excursion (a round is a second: one at least) wrote expiries
#       57 s in the past of the clock set right again; scheduler 0,
#       thawed, must not take those shares (no "share(s) lost (taken by
#       another scheduler)" line):
#       scheduler 1 holds them to its monotonic lease_until and sends
#       their prepared fires (before: scheduler 0 took them at once and
#       re-sent the same rows: logIds ran twice, on two agents, and
#       others failed as refused by the agents' journals; found by an
#       outside clock-step attack, seed 303);
#   round 4: back 60 s, then scheduler 1 SIGKILLed 1 s after the clock is
#       right: scheduler 0 holds the 16 shares within 8 s of the kill
#       (the later of the lease's end and a lease from its first read of
#       the dead one's last row, up to a round after the lease's end).
# SQLite only: its store's clock is the one host's, which both schedulers
# read (PostgreSQL's is the server's, which does not step here).
# Guarantees: no logId starts twice; every acknowledged trigger and every
# cron second runs once (count.sh); the takeover bound above.
. "$(dirname "$0")/lib.sh"
if [ "${XXL_STORE:-sqlite}" != sqlite ]; then
    echo "# skipped: the store's clock steps only on SQLite here (one host's clock)"
    exit 77
fi
. "$(dirname "$0")/faketime.sh"
faketime_setup ha_excursion
REQ="$XXL_REQ"
for n in sched c1 c2; do setclock "$n" 0 >/dev/null; done
# (one host: the two schedulers read one clock file)
ln -sf clock-sched "$T/clock-sched2"

XXL_CLOCK=sched start_scheduler || exit 1
S_API=("$API"); S_AGENTS=("$AGENTS"); S_PID=("$SPID")
XXL_CLOCK=sched2 start_scheduler || exit 1
S_API[1]=$API; S_AGENTS[1]=$AGENTS; S_PID[1]=$SPID
API=${S_API[0]}; SPID=${S_PID[0]}; AGENTS="${S_AGENTS[0]},${S_AGENTS[1]}"
ctl group add ck >/dev/null
XXL_CLOCK=c1 fagent c1 ck
XXL_CLOCK=c2 fagent c2 ck
for i in 0 1; do check "agents register with scheduler $i" wait_until 15 both_registered "${S_API[$i]}" ck; done
check "the two schedulers hold the 16 shares" wait_until 15 all_held "0 1"
J1=$(ctl --get .id job add --group ck --handler probeIn --route ROUND --param sleep=50)
CRONS=""
for _ in $(seq 8); do
    CRONS="$CRONS $(ctl --get .id job add --group ck --handler probeIn --route ROUND \
                    --cron '* * * * * ?' --misfire FIRE_ONCE_NOW --param sleep=20 --start)"
done
say "crons:$CRONS (shares $(for c in $CRONS; do printf '%d ' $((c % 16)); done))"
load_start "$J1" "sleep=50 t=%n"
shares_1 () { shares_of "${S_API[1]}"; }
s1_holds () { [ "$(shares_1)" != "[]" ]; }
taken_lines () { grep -c "share(s) lost (taken by another scheduler)" "$T/scheduler.log"; }
# excursion SIGN: scheduler 0 frozen, the clock SIGN 60 s for a seeded
# 1.2-2.4 s (a lease round of scheduler 1 in it), right again, scheduler 0
# thawed
excursion () {
    rnd 1201; local ms=$((1200 + R))
    kill -STOP "${S_PID[0]}"
    setclock sched "${1}60"
    sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
    setclock sched 0
    kill -CONT "${S_PID[0]}"
    say "$(elapsed): the clock was ${1}60 s for $ms ms, scheduler 0 frozen across it"
}
for r in 1 2 3; do
    check "round $r: the two schedulers hold the 16 shares" wait_until 15 all_held "0 1"
    wait_until 10 s1_holds
    before=$(shares_1)
    taken_before=$(taken_lines)
    excursion -
    # (a lease and a round: scheduler 0 would have taken them by then)
    sleep 4
    after=$(shares_1)
    check "round $r: no live scheduler's shares are taken across the excursion ($(( $(taken_lines) - taken_before )) lines)" \
        test "$(taken_lines)" = "$taken_before"
    check "round $r: scheduler 1 holds its shares after it ($before, then $after)" \
        test "$after" = "$before"
done

check "round 4: the two schedulers hold the 16 shares" wait_until 15 all_held "0 1"
excursion -
sleep 1
SPID=${S_PID[1]}; kill_sched KILL; SPID=${S_PID[0]}
K=$(now_ms)
if wait_until 30 all_held 0; then
    took=$(( $(now_ms) - K ))
    check "round 4: scheduler 0 holds the 16 shares ${took} ms after scheduler 1's kill (at most 8,000)" \
        test "$took" -le 8000
else
    check "round 4: scheduler 0 holds the 16 shares within 30 s of scheduler 1's kill" false
fi

load_stop
for c in $CRONS; do ctl job stop "$c" >/dev/null; done
check "every run finishes" wait_quiet 40
check "scheduler 0 is alive" kill -0 "${S_PID[0]}"
fcount "the store's clock stepped back 60 s and right again while one scheduler was frozen" \
    --jobs "$J1 $CRONS" --cron "$CRONS"
xxl_done
