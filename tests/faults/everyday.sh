#!/usr/bin/env bash
# everyday.sh -- everyday states with the real daemons, counted by the probe:
#  A. a job removed (JOB_RM) while its run executes on an agent, while runs
#     of it wait queued behind it there (SERIAL_EXECUTION), while a retry of
#     it is pending, while its failing run is still running (its result
#     comes after the removal), and a started one-second cron removed with
#     fires planned ahead;
#  B. a job updated while it runs (handler, param, schedule, GLUE source
#     changed while a fire is planned ahead); a cron job stopped with fires
#     planned ahead;
#  C. a group's address list changed, then the group removed, while a run
#     is in flight;
#  D. an agent moved to another group (killed mid-run, back under another
#     app with the same address); an agent whose plugins folder lost the
#     handler (mid-run, then triggered, then the handler back).
# Guarantees: nothing crashes; no logId starts twice; a removed job's rows
# never come back (no result, retry, alarm or planned fire makes one) and
# nothing of it is sent after its removal; a stopped or changed job fires
# nothing planned before the change; runs in flight keep the job as it was
# sent; every row of a live job ends (a result or a failed trigger with its
# reason).
. "$(dirname "$0")/lib.sh"
faults_setup everyday

mkdir -p "$T/alarms"
printf '#!/bin/sh\necho "$XXL_ALARM_JOB_ID $XXL_ALARM_LOG_ID" >> %s/alarms.out\n' "$T" > "$T/alarms/alarm.sh"
chmod +x "$T/alarms/alarm.sh"
: > "$T/alarms.out"
cat >> "$T/scheduler.cfg" <<CFG
    alarm
        script_dir = "$T/alarms"
CFG

start_scheduler || exit 1
alive () { kill -0 "$SPID" 2>/dev/null && ctl group list >/dev/null; }
# starts_of LOGID: how many times the run started (probe lines)
starts_of () { awk -v id="$1" '$1 == id { n++ } END { print n + 0 }' "$PROBE"; }
# job_starts JOB: the probe lines of a job's runs
job_starts () { awk -v j="$1" '$2 == j' "$PROBE"; }
started () { [ "$(starts_of "$1")" -ge 1 ]; }
rows_of () { sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $1"; }
ack () { jq -r '.logIds[]' | sed "s/\$/ $1/" | tee -a "$ACKED" | cut -d' ' -f1; }
trig () { ctl job trigger "$@" | ack "$1"; }      # trig JOB [flags]: the logIds
q () { "$@" >/dev/null; }
sleep_until_ms () { [ "$(now_ms)" -ge "$1" ]; }
twice_count () { awk '{ n[$1]++ } END { c = 0; for (i in n) if (n[i] > 1) c++; print c }' "$PROBE"; }
no_twice () { test "$(twice_count)" = 0; }

# ---------------------------------------------------------------- A. JOB_RM
ctl group add ev-rm >/dev/null
fagent r1 ev-rm
check "agent r1 registers" wait_until 10 agent_registered ev-rm r1

# A1: one run executing, two queued behind it on the agent (SERIAL_EXECUTION),
# retries left and an alarm target: removed while the first runs
JA=$(ctl --get .id job add --group ev-rm --handler probeIn --param "sleep=3000 fail" --retry 2 \
     --alarm-email script:alarm.sh)
# (the first sleeps 8 s: the removal comes while it runs, before its
# failure makes a retry, on a loaded machine too)
A1=$(trig "$JA" --param "sleep=8000 fail"); A2=$(trig "$JA"); A3=$(trig "$JA")
check "A1: the first run executes on the agent" wait_until 10 started "$A1"
queued () { [ "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE id IN ($A2, $A3) AND trigger_code = 200")" = 2 ]; }
check "A1: the two others are accepted (queued behind it)" wait_until 10 queued
RM_A=$(now_ms)
check "A1: job rm while its run executes and two wait" \
    test "$(ctl --get .deletedLogs job rm "$JA")" = 3
check "A1: its rows are gone at once" test "$(rows_of "$JA")" = 0

# A2: a failed run whose retry waits (retry interval 3 s): removed meanwhile
JB=$(ctl --get .id job add --group ev-rm --handler probeIn --param fail --retry 3 --retry-interval 3 \
     --alarm-email script:alarm.sh)
B1=$(trig "$JB")
retry_pending () { [ "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $JB AND trigger_type = 'RETRY'")" -ge 1 ]; }
check "A2: the failed run's retry is pending" wait_until 10 retry_pending
check "A2: ... not started yet" test "$(job_starts "$JB" | wc -l)" = 1
RM_B=$(now_ms)
check "A2: job rm with a retry pending" q ctl job rm "$JB"

# A3: a started one-second cron, rows planned ahead, removed
JC=$(ctl --get .id job add --group ev-rm --handler probeIn --cron '* * * * * ?' --param sleep=200 --start)
cron_ran () { [ "$(job_starts "$JC" | wc -l)" -ge 2 ]; }
check "A3: the cron runs" wait_until 10 cron_ran
planned () { [ "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $JC AND schedule_time > $(now_ms)")" -ge 1 ]; }
wait_until 5 planned
RM_C=$(now_ms)
check "A3: job rm of a started cron with fires planned ahead" q ctl job rm "$JC"

# What comes after: A1's runs end on the agent (failed, their results
# dropped), A2's retry is due, A3's planned seconds pass
after_rm () { [ "$(now_ms)" -gt $((RM_B + 6000)) ] && [ "$(now_ms)" -gt $((RM_A + 7000)) ] \
                && [ "$(job_starts "$JA" | wc -l)" -ge 3 ] || [ "$(now_ms)" -gt $((RM_A + 20000)) ]; }
wait_until 25 after_rm
check "A: the scheduler is alive and answering" alive
say "A1: runs of the removed job that started: $(job_starts "$JA" | awk '{ printf "%s ", $1 }')"
check "A1: its queued runs ran on the agent once each (the agent's already), none twice" \
    test "$(starts_of "$A1") $(starts_of "$A2") $(starts_of "$A3")" = "1 1 1"
check "A1: their failed results made no row, no retry" test "$(rows_of "$JA")" = 0
check "A1: ... nothing of the job started but its three runs" test "$(job_starts "$JA" | wc -l)" = 3
check "A2: the pending retry never ran, no row came back" \
    test "$(job_starts "$JB" | wc -l) $(rows_of "$JB")" = "1 0"
check "A3: no planned fire ran after the removal (1 s margin)" \
    test "$(job_starts "$JC" | awk -v t=$((RM_C + 1000)) '$5 > t' | wc -l)" = 0
check "A3: no row of the cron came back" test "$(rows_of "$JC")" = 0
check "A: no alarm for a removed job's failures" \
    test "$(awk -v a="$JA" -v b="$JB" '$1 == a || $1 == b' "$T/alarms.out" | wc -l)" = 0
check "A: the agent's callbacks were acknowledged (its spool has nothing pending)" \
    bash -c "! grep -qi 'callback.*\\(retry\\|refused\\|failed\\)' '$T/agent-r1.log'"
J_OK=$(ctl --get .id job add --group ev-rm --handler probeIn --param ok)
OK1=$(trig "$J_OK")
# A4: one-second crons removed (or stopped) just before a second's fire,
# while its prepared RUNs wait for the instant: no row planned after the
# removal's reply may start (to the millisecond: the rows are read just
# before it)
# at_boundary MS: returns MS ms before the next whole second
at_boundary () {
    local now; now=$(now_ms)
    local wait=$(( 1000 - now % 1000 - $1 ))
    [ "$wait" -gt 0 ] || wait=$((wait + 1000))
    sleep "0.$(printf '%03d' "$wait")"
}
# cut_job JOB rm|stop: removes or stops JOB just before a second; appends to
# $T/cut "logId scheduleTime cutMs" for each of its rows planned after the
# cut, which must never start
cut_job () {
    sql "SELECT id, COALESCE(schedule_time, 0) FROM xxl_job_log WHERE job_id = $1" > "$T/cut-rows"
    ctl job "$2" "$1" >/dev/null
    local done_ms; done_ms=$(now_ms)
    awk -F'|' -v t="$done_ms" '$2 > t { print $1, $2, t }' "$T/cut-rows" >> "$T/cut"
    # (a row not read before the cut, made just before it, was planned 5 s
    # ahead: after it)
    echo "$1 $done_ms $(cut -d'|' -f1 "$T/cut-rows" | sort -n | tail -1)" >> "$T/cut-jobs"
}
: > "$T/cut"; : > "$T/cut-jobs"
CUTS=$(pick 8 30)
for i in $(seq "$CUTS"); do
    rnd 3
    case $R in
        0) J=$(ctl --get .id job add --group ev-rm --handler probeIn --cron '* * * * * ?' --param "cut-$i" --start) ;;
        1) J=$(ctl --get .id job add --group ev-rm --handler probe --cron '* * * * * ?' --param "cut-$i" --start) ;;
        2) J=$(ctl --get .id job add --group ev-rm --glue-type GLUE_SHELL --glue-source "$GLUE" --cron '* * * * * ?' --param "cut-$i" --start) ;;
    esac
    j_ran () { [ "$(job_starts "$1" | wc -l)" -ge 1 ]; }
    wait_until 10 j_ran "$J"
    rnd 60; at_boundary $((R + 5))
    rnd 2; if [ "$R" = 0 ]; then cut_job "$J" rm; else cut_job "$J" stop; fi
done
wait_until 10 sleep_until_ms $(( $(now_ms) + 3000 ))
late_starts () {    # started rows planned after their job's cut, or made after it was read
    awk 'FNR == NR { bad[$1] = 1; next } ($1 in bad)' "$T/cut" "$PROBE"
    awk 'FNR == NR { max[$1] = $3; cut[$1] = $2; next }
         ($2 in max) && $1 > max[$2] && $5 > cut[$2]' "$T/cut-jobs" "$PROBE"
}
say "A4: $CUTS crons cut just before a fire; $(wc -l < "$T/cut") planned row(s) after the cuts"
check "A4: no row planned after its job's removal or stop starts" test -z "$(late_starts)"
late_starts | head -5 | sed 's/^/    late: /'
check "A: a later run of another job finishes 200" wait_until 10 field_is "$OK1" handleCode 200
# (the alarm works: a live job's last failure sends it)
J_AL=$(ctl --get .id job add --group ev-rm --handler probeIn --param fail --alarm-email script:alarm.sh)
AL1=$(trig "$J_AL")
check "A: a live job's failure does send its alarm" \
    wait_until 15 grep -q "^$J_AL $AL1\$" "$T/alarms.out"
check "A: no logId started twice" no_twice

# ------------------------------------------------------ B. JOB_UPDATE, JOB_STOP
# B1: handler and param changed while a run executes and one waits behind
# it; the next trigger carries the new handler: the agent replaces the
# job's queue (XXL-JOB's rule), ending the old runs with the reason
JU=$(ctl --get .id job add --group ev-rm --handler probeIn --param "sleep=3000 old")
# (the first sleeps 8 s: the update and the next trigger come while it
# runs, on a loaded machine too)
U1=$(trig "$JU" --param "sleep=8000 old"); U2=$(trig "$JU")
check "B1: the first run executes" wait_until 10 started "$U1"
check "B1: job update of handler and param while it runs" \
    q ctl job update "$JU" --handler probe --param "sleep=10 new"
U3=$(trig "$JU")
check "B1: the run after the update finishes 200" wait_until 15 field_is "$U3" handleCode 200
check "B1: ... with the new handler (isolated) and param" \
    test "$(awk -v id="$U3" '$1 == id { print $7 }' "$PROBE") $(log_field "$U3" executorParam) $(log_field "$U3" executorHandler)" = "iso sleep=10 new probe"
replaced () { [ "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE id IN ($U1, $U2) AND handle_code = 500 AND handle_msg LIKE '%change jobhandler%'")" = 2 ]; }
check "B1: the runs sent before the update end (killed by the change, saying so)" wait_until 10 replaced
check "B1: ... the queued one never started, the running one once" \
    test "$(starts_of "$U1") $(starts_of "$U2") $(starts_of "$U3")" = "1 0 1"

# B2: a one-second cron's schedule changed to every third second while fires
# are planned ahead: none of the old plan fires after the change
JS=$(ctl --get .id job add --group ev-rm --handler probeIn --cron '* * * * * ?' --param sleep=100 --start)
js_ran () { [ "$(job_starts "$JS" | wc -l)" -ge 2 ]; }
check "B2: the cron runs" wait_until 10 js_ran
UPD_S=$(now_ms)
check "B2: job update of the schedule while planned ahead" q ctl job update "$JS" --cron '0/3 * * * * ?'
js_new () { [ "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $JS AND schedule_time > $((UPD_S + 1000)) AND handle_code = 200")" -ge 2 ]; }
check "B2: the new schedule fires" wait_until 15 js_new
check "B2: every fire after the change is on the new schedule" \
    test "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $JS AND schedule_time > $((UPD_S + 1000)) AND schedule_time % 3000 != 0")" = 0

# B3: a GLUE cron's source changed while a fire is planned (prepared with
# the old source): what runs after the change is the new source
printf 'echo "v1 $(date +%%s%%3N)" >> %s/glue.out\n' "$T" > "$T/v1.sh"
printf 'echo "v2 $(date +%%s%%3N)" >> %s/glue.out\n' "$T" > "$T/v2.sh"
: > "$T/glue.out"
JG=$(ctl --get .id job add --group ev-rm --glue-type GLUE_SHELL --glue-source "$T/v1.sh" --cron '* * * * * ?' --start)
v_lines () { grep -c "^$1 " "$T/glue.out"; }
v1_ran () { [ "$(v_lines v1)" -ge 2 ]; }
check "B3: the GLUE cron runs" wait_until 10 v1_ran
UPD_G=$(now_ms)
check "B3: job update of the GLUE source while a fire is planned" q ctl job update "$JG" --glue-source "$T/v2.sh"
v2_ran () { [ "$(v_lines v2)" -ge 3 ]; }
check "B3: the new source runs" wait_until 15 v2_ran
check "B3: the old source never runs after the change (1 s margin)" \
    test "$(awk -v t=$((UPD_G + 1000)) '$1 == "v1" && $2 > t' "$T/glue.out" | wc -l)" = 0
ctl job stop "$JG" >/dev/null

# B4: a cron stopped with fires planned ahead: none of them fires; started
# again, it fires again
stop_planned () { [ "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $JS AND schedule_time > $(now_ms)")" -ge 1 ]; }
check "B4: fires are planned ahead" wait_until 10 stop_planned
STOP_S=$(now_ms)
check "B4: job stop" q ctl job stop "$JS"
check "B4: the job shows stopped, no next time" \
    test "$(ctl job show "$JS" | jq -c '[.triggerStatus, .triggerNextTime]')" = "[0,0]"
sleep_past () { [ "$(now_ms)" -gt $((STOP_S + $1)) ]; }
wait_until 10 sleep_past 4000
check "B4: no planned row is left after the stop" \
    test "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $JS AND schedule_time > $((STOP_S + 1000))")" = 0
check "B4: nothing of it started after the stop (1 s margin)" \
    test "$(job_starts "$JS" | awk -v t=$((STOP_S + 1000)) '$5 > t' | wc -l)" = 0
ctl job start "$JS" >/dev/null
js_again () { [ "$(job_starts "$JS" | awk -v t=$((STOP_S + 4000)) '$5 > t' | wc -l)" -ge 1 ]; }
check "B4: started again, it fires again" wait_until 10 js_again
ctl job stop "$JS" >/dev/null
# B5: crons whose next fire is a minute away (the planner keeps no
# snapshot of such a job between its fires): stopped, removed, or given a
# new GLUE source after their fire was planned and prepared, 1-4 s before
# it.  The stopped and removed ones never run; the updated one runs the
# new source (before the fix all three ran as planned, the first two
# without a row)
printf 'echo "b5v1 $(date +%%s%%3N)" >> %s/glue.out\n' "$T" > "$T/b5v1.sh"
printf 'echo "b5v2 $(date +%%s%%3N)" >> %s/glue.out\n' "$T" > "$T/b5v2.sh"
B5_T=$(( ($(now_ms) / 1000 + 9) * 1000 ))
B5_S=$(( B5_T / 1000 % 60 ))
J5S=$(ctl --get .id job add --group ev-rm --handler probeIn --cron "$B5_S * * * * ?" --param b5-stop --start)
J5R=$(ctl --get .id job add --group ev-rm --handler probe --cron "$B5_S * * * * ?" --param b5-rm --start)
J5G=$(ctl --get .id job add --group ev-rm --glue-type GLUE_SHELL --glue-source "$T/b5v1.sh" --cron "$B5_S * * * * ?" --start)
b5_planned () { [ "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id IN ($J5S, $J5R, $J5G) AND schedule_time = $B5_T")" = 3 ]; }
check "B5: the minute crons' fire is planned ahead" wait_until 15 b5_planned
rnd 3000; wait_until 10 sleep_until_ms $(( B5_T - 4000 + R ))
B5_CUT=$(now_ms)
say "B5: cut $(( B5_T - B5_CUT )) ms before the fire"
cut_job "$J5S" stop
B5_STOPPED=$(now_ms)
cut_job "$J5R" rm
B5_REMOVED=$(now_ms)
q ctl job update "$J5G" --glue-source "$T/b5v2.sh"
B5_UPDATED=$(now_ms)
wait_until 15 sleep_until_ms $(( B5_T + 3000 ))
b5_v2 () { grep -q '^b5v2 ' "$T/glue.out"; }
wait_until 5 b5_v2
# b5_judge NAME ACKED_MS CHECK...: the check when the change was answered
# before the fire (on a loaded machine it may come after: the fire may
# then have gone, and nothing is judged)
b5_judge () {
    local what="$1" acked="$2"; shift 2
    if [ "$acked" -lt "$B5_T" ]; then check "$what" "$@"
    else say "B5: not judged, the change was answered $((acked - B5_T)) ms after the fire: $what"; fi
}
b5_judge "B5: the cron stopped after its fire was planned does not run" "$B5_STOPPED" \
    test "$(job_starts "$J5S" | wc -l)" = 0
b5_judge "B5: the cron removed after its fire was planned does not run" "$B5_REMOVED" \
    test "$(job_starts "$J5R" | wc -l)" = 0
b5_judge "B5: the cron given a new GLUE source after its fire was planned runs the new one, once" \
    "$B5_UPDATED" test "$(grep -c '^b5v1 ' "$T/glue.out") $(grep -c '^b5v2 ' "$T/glue.out")" = "0 1"
ctl job stop "$J5G" >/dev/null

# B6: a FIX_DELAY job stopped while its next run is planned (prepared a
# second ahead, as its run ended): it does not run
J6=$(ctl --get .id job add --group ev-rm --handler probeIn --fix-delay 1 --param sleep=300 --start)
b6_planned () { [ "$(sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $J6 AND trigger_code = 0 AND schedule_time > $(now_ms) + 300")" -ge 1 ] && [ "$(job_starts "$J6" | wc -l)" -ge 1 ]; }
check "B6: a FIX_DELAY run is planned" wait_until 15 b6_planned
cut_job "$J6" stop
wait_until 10 sleep_until_ms $(( $(now_ms) + 2500 ))
check "B6: the FIX_DELAY job stopped with its next run planned does not run it" test -z "$(late_starts)"
late_starts | head -5 | sed 's/^/    late: /'

# B7: a FIX_DELAY job updated while its run runs: it goes on waiting for
# the run (its next run starts the delay after this one ended, not while
# it runs: before the fix every later run started a run behind)
J7=$(ctl --get .id job add --group ev-rm --handler probeIn --fix-delay 1 --param sleep=2000 --start)
b7_started () { [ "$(job_starts "$J7" | wc -l)" -ge 1 ]; }
check "B7: the FIX_DELAY run executes" wait_until 15 b7_started
q ctl job update "$J7" --desc "updated while it runs"
b7_more () { [ "$(job_starts "$J7" | wc -l)" -ge 3 ]; }
check "B7: it runs on after the update" wait_until 20 b7_more
ctl job stop "$J7" >/dev/null
# each run starts at least the run (2 s) and the delay (1 s) after the one before
b7_gaps () { job_starts "$J7" | awk '{ print $5 }' | sort -n | awk 'NR > 1 { print $1 - p } { p = $1 }'; }
say "B7: starts apart (ms): $(b7_gaps | tr '\n' ' ')"
check "B7: no run of it started before the one before ended and its delay passed" \
    test "$(b7_gaps | awk '$1 < 2900' | wc -l)" = 0

check "B: no logId started twice" no_twice

# ------------------------------------------------- C. groups with runs in flight
# C1: a manual group's list changed while its run is in flight on m1
ctl group add ev-man --address-list m1 >/dev/null
fagent m1 ev-man
fagent m2 ev-man
check "C1: agents m1 and m2 register" wait_until 10 agent_registered ev-man m1
wait_until 10 agent_registered ev-man m2
JM=$(ctl --get .id job add --group ev-man --handler probeIn --param sleep=2000)
M1=$(trig "$JM")
check "C1: the run executes on m1" wait_until 10 started "$M1"
check "C1: group update --address-list m2 while it runs" q ctl group update ev-man --address-list m2
M2=$(trig "$JM")
check "C1: the run in flight ends 200 on m1" wait_until 10 field_is "$M1" handleCode 200
check "C1: ... the next goes to m2 and ends 200" wait_until 10 field_is "$M2" handleCode 200
check "C1: ... (its row and its probe line say m2)" \
    test "$(log_field "$M2" executorAddress) $(awk -v id="$M2" '$1 == id { print $6 }' "$PROBE")" = "m2 m2"
ctl group update ev-man --address-list nobody >/dev/null
M3=$(trig "$JM")
check "C1: a list of an address not connected fails the trigger, saying so" \
    wait_until 10 bash -c "$CTL --api $API --json log show $M3 | jq -e '.triggerCode == 500 and (.triggerMsg | test(\"nobody\"))'"
ctl group update ev-man --auto >/dev/null
M4=$(trig "$JM")
check "C1: made automatic, it runs on a registered agent" wait_until 10 field_is "$M4" handleCode 200

# C2: the group removed while a run is in flight (its job removed first:
# a group with jobs is refused)
ctl group add ev-gone >/dev/null
fagent g1 ev-gone
check "C2: agent g1 registers" wait_until 10 agent_registered ev-gone g1
JGN=$(ctl --get .id job add --group ev-gone --handler probeIn --param sleep=2000)
G1=$(trig "$JGN")
check "C2: the run executes on g1" wait_until 10 started "$G1"
check "C2: group rm with a job is refused" bash -c "! $CTL --api $API --json group rm ev-gone >/dev/null 2>&1"
ctl job rm "$JGN" >/dev/null
check "C2: group rm once its job is gone, while its run is in flight" q ctl group rm ev-gone
wait_until 10 bash -c "[ \$(awk -v j=$JGN '\$2 == j' '$PROBE' | wc -l) -ge 1 ] && sleep 2.5"
check "C2: the scheduler is alive" alive
check "C2: no group came back" test "$(ctl group list | jq '[.groups[] | select(.appname == "ev-gone")] | length')" = 0
ctl group add ev-gone >/dev/null
check "C2: the group added again lists its live agent" \
    wait_until 10 bash -c "$CTL --api $API --json group show ev-gone | jq -e '.addressList == \"g1\"'"
JGN2=$(ctl --get .id job add --group ev-gone --handler probeIn)
G2=$(trig "$JGN2")
check "C2: ... and runs there" wait_until 10 field_is "$G2" handleCode 200
check "C: no logId started twice" no_twice

# ------------------------------------------------------------ D. agents
# D1: an agent killed mid-run and back at once under another app, same
# address and logdir
ctl group add ev-g1 >/dev/null
ctl group add ev-g2 >/dev/null
fagent mv ev-g1
check "D1: agent mv registers in ev-g1" wait_until 10 agent_registered ev-g1 mv
JD1=$(ctl --get .id job add --group ev-g1 --handler probeIn --param sleep=5000)
JD2=$(ctl --get .id job add --group ev-g2 --handler probeIn)
D1=$(trig "$JD1")
check "D1: its run executes" wait_until 10 started "$D1"
kill_agent mv KILL
fagent mv ev-g2
check "D1: the agent is back in ev-g2" wait_until 10 agent_registered ev-g2 mv
check "D1: its lost run fails at once, saying the agent restarted" \
    wait_until 10 bash -c "$CTL --api $API --json log show $D1 | jq -e '.handleCode == 500 and (.handleMsg | test(\"lost\"))'"
D2=$(trig "$JD2")
check "D1: ev-g2's job runs on it" wait_until 10 field_is "$D2" handleCode 200
g1_empty () { [ "$(ctl --get .addressList group show ev-g1)" = "" ]; }
check "D1: ev-g1 no longer lists it (within the dead time)" wait_until 10 g1_empty
D3=$(trig "$JD1")
check "D1: ev-g1's job then fails: no agent" \
    wait_until 10 bash -c "$CTL --api $API --json log show $D3 | jq -e '.triggerCode == 500 and (.triggerMsg | test(\"address list is empty\"))'"
check "D1: the run of ev-g1 ran once (before the kill), none after" \
    test "$(starts_of "$D1") $(starts_of "$D3")" = "1 0"

# D2: the plugins folder loses the handler while it runs
mkdir -p "$T/plugins-pl"
cp "$T/plugins/probe.so" "$T/plugins/demo.so" "$T/plugins-pl/"
ctl group add ev-pl >/dev/null
AGENT_PLUGINS="$T/plugins-pl" fagent pl ev-pl
check "D2: agent pl registers" wait_until 10 agent_registered ev-pl pl
JP=$(ctl --get .id job add --group ev-pl --handler probe --param sleep=2000)
P1=$(trig "$JP")
check "D2: the isolated run executes" wait_until 10 started "$P1"
rm "$T/plugins-pl/probe.so"
check "D2: the agent unloads the removed plugin" \
    wait_until 10 grep -q "plugins-pl/probe.so" "$T/agent-pl.log"
P2=$(trig "$JP")
check "D2: a trigger now is refused: handler not found" \
    wait_until 10 bash -c "$CTL --api $API --json log show $P2 | jq -e '.triggerCode == 500 and (.triggerMsg | test(\"not found\"))'"
check "D2: the run in flight keeps its code and ends 200" wait_until 10 field_is "$P1" handleCode 200
cp "$T/plugins/probe.so" "$T/plugins-pl/.probe.tmp" && mv "$T/plugins-pl/.probe.tmp" "$T/plugins-pl/probe.so"
p_back () { P3=$(trig "$JP"); wait_until 10 log_finished "$P3"; field_is "$P3" handleCode 200; }
check "D2: the handler back, it runs again" wait_until 20 p_back
check "D: no logId started twice" no_twice
check "the scheduler is alive at the end" alive

xxl_done
