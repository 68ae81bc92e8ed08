#!/usr/bin/env bash
# test_alarm_flow.sh -- alarms through the scheduler: a job's final failed
# attempt (not the retried one) sends its alarm to a webhook on a local
# HTTP listener and to an address on a local SMTP sink; unreachable
# targets end as failed alarms; unknown target kinds are refused at save.
# Webhooks go only where scheduler/alarm/webhook_allow lets them: a target
# outside it (or one hiding its host behind userinfo or a port trick) is
# refused at save and never contacted; one saved under a wider list is
# refused at send after a restart with a narrower one.  A non-2xx answer
# puts its status into the run's row, and none of its body.
. "$(dirname "$0")/lib.sh"
xxl_setup
SINK="$XXL_BUILD/tests/alarms/xxl_sink"
MARKER=sink-body-marker-7b3e            # SINK_BODY_MARKER, tests/alarms/sinks.h
"$SINK" http "$T/http.port" "$T/http.out" 1 30 & PIDS="$PIDS $!"
"$SINK" http "$T/err.port" "$T/err.out" 1 30 500 & PIDS="$PIDS $!"
"$SINK" http "$T/out.port" "$T/out.out" 1 60 & PIDS="$PIDS $!"
"$SINK" http "$T/late.port" "$T/late.out" 1 60 & PIDS="$PIDS $!"
"$SINK" smtp "$T/smtp.port" "$T/smtp.out" 1 30 & PIDS="$PIDS $!"
for s in http err out late smtp; do wait_for 5 test -f "$T/$s.port"; done
HTTP=$(cat "$T/http.port"); ERR=$(cat "$T/err.port"); SMTP=$(cat "$T/smtp.port")
OUT=$(cat "$T/out.port"); LATE=$(cat "$T/late.port")
cat >> "$T/scheduler.cfg" <<CFG
    monitor
        fail_check = 100
    alarm
        smtp_url = "smtp://127.0.0.1:$SMTP"
        smtp_from = "xxl@example.com"
        smtp_tls = none
        webhook_timeout = 2000
        webhook_allow = "http://127.0.0.1:$HTTP/hook, http://127.0.0.1:$ERR/ http://127.0.0.1:9/,http://127.0.0.1:$LATE/"
CFG
start_scheduler || exit 1
start_agent a1 alarm-app
check "agent registers" wait_for 10 agent_registered alarm-app a1
ctl group add alarm-app >/dev/null
printf 'echo failing; exit 1\n' > "$T/fail.sh"
check "the webhook plugin logs its allowed prefixes" \
    grep -q 'webhook: 4 allowed target prefix(es)' "$T/scheduler.log"

check "an unknown alarm kind is refused, naming the known ones" bash -c "
    ! $CTL --api $API --json job add --group alarm-app --glue-type GLUE_SHELL --glue-source $T/fail.sh \
      --alarm-email carrier-pigeon:coop > $T/bad.json; grep -q webhook $T/bad.json"

# job_add_refused NAME TARGET WHY: job add with that alarm target fails, saying WHY
job_add_refused () {
    ! "$CTL" --api "$API" --json job add --group alarm-app --glue-type GLUE_SHELL \
        --glue-source "$T/fail.sh" --alarm-email "$2" > "$T/$1.json" 2>&1 &&
    grep -q "$3" "$T/$1.json"
}
NOT_IN="webhook target not in scheduler/alarm/webhook_allow"
check "a webhook outside webhook_allow is refused at save" \
    job_add_refused out "webhook:http://127.0.0.1:$OUT/hook" "$NOT_IN"
check "... so is a path outside the allowed one on an allowed host" \
    job_add_refused path "webhook:http://127.0.0.1:$HTTP/admin" "$NOT_IN"
check "... a user name before an allowed host" \
    job_add_refused user "webhook:http://allowed@127.0.0.1:$HTTP/hook" "user name or password"
check "... an allowed host:port as the user name of another" \
    job_add_refused user2 "webhook:http://127.0.0.1:$HTTP@127.0.0.1:$OUT/hook" "user name or password"
check "... an allowed port with a host suffix" \
    job_add_refused suffix "webhook:http://127.0.0.1:$HTTP.evil/hook" "not a valid URL"

J=$(ctl --get .id job add --group alarm-app --glue-type GLUE_SHELL --glue-source "$T/fail.sh" --retry 1 \
      --alarm-email "ops@example.com,webhook:http://127.0.0.1:$HTTP/hook")
check "the same job with its webhook in webhook_allow is saved" test "$J" -gt 0
L=$(ctl --get '.logIds[0]' job trigger "$J")
both_failed () { [ "$(ctl log list --job "$J" | jq '[.logs[] | select(.handleCode == 500)] | length')" = 2 ]; }
check "the run fails, then its retry" wait_for 15 both_failed
FINAL=$(ctl log list --job "$J" | jq -r '[.logs[] | select(.triggerType == "RETRY")][0].id')
check "the final attempt's alarm is sent (alarmStatus 2)" wait_for 15 field_is "$FINAL" alarmStatus 2
check "the retried attempt sends no alarm (alarmStatus 1)" field_is "$L" alarmStatus 1
check "the webhook got one POST of JSON" wait_for 5 grep -q '^method: POST' "$T/http.out"
check "the webhook path" grep -q '^path: /hook' "$T/http.out"
check "the webhook body names the job and the failure" bash -c "
    sed -n '/^\$/,\$p' $T/http.out | tail -n +2 | head -1 | jq -e '.jobId == $J and .handleCode == 500 and .logId == $FINAL' >/dev/null"
check "the email reached the SMTP sink" wait_for 5 grep -q 'ops@example.com' "$T/smtp.out"
check "the email's subject names the job" grep -qi "Subject:.*job $J" "$T/smtp.out"
check "the alarm report is in handleMsg" bash -c "
    $CTL --api $API --json log show $FINAL | jq -r .handleMsg | grep -q 'webhook'"

# A webhook answering 500 with a body: the row has the status, not the body
E=$(ctl --get .id job add --group alarm-app --glue-type GLUE_SHELL --glue-source "$T/fail.sh" \
      --alarm-email "webhook:http://127.0.0.1:$ERR/err")
EL=$(ctl --get '.logIds[0]' job trigger "$E")
check "a webhook answering 500 fails the alarm (alarmStatus 3)" wait_for 15 field_is "$EL" alarmStatus 3
check "... after one POST" grep -q '^method: POST' "$T/err.out"
check "... with the status in handleMsg" bash -c "
    $CTL --api $API --json log show $EL | jq -r .handleMsg | grep -q 'webhook http://127.0.0.1:$ERR/err: failed: HTTP 500\$'"
check "... and its response body nowhere in the row" bash -c "
    $CTL --api $API --json log show $EL > $T/err-row.json && ! grep -q $MARKER $T/err-row.json"
check "... nor in the scheduler's log" bash -c "! grep -q $MARKER $T/scheduler.log"

# An unreachable webhook: the alarm fails, visibly
U=$(ctl --get .id job add --group alarm-app --glue-type GLUE_SHELL --glue-source "$T/fail.sh" \
      --alarm-email "webhook:http://127.0.0.1:9/nowhere")
UL=$(ctl --get '.logIds[0]' job trigger "$U")
check "an undeliverable alarm ends with alarmStatus 3" wait_for 15 field_is "$UL" alarmStatus 3

# A job saved while its webhook was allowed; the list narrows at a restart
R=$(ctl --get .id job add --group alarm-app --glue-type GLUE_SHELL --glue-source "$T/fail.sh" \
      --alarm-email "webhook:http://127.0.0.1:$LATE/late")
check "a webhook in webhook_allow is saved" test "$R" -gt 0
kill -TERM "$SPID"; wait "$SPID" 2>/dev/null
sed -i "s|,http://127.0.0.1:$LATE/||" "$T/scheduler.cfg"
check "the scheduler starts again with the narrower list" start_scheduler "$API" "$AGENTS"
check "agent registers again" wait_for 10 agent_registered alarm-app a1
RL=$(ctl --get '.logIds[0]' job trigger "$R")
check "its alarm now fails at send (alarmStatus 3)" wait_for 15 field_is "$RL" alarmStatus 3
check "... saying the target is not in webhook_allow" bash -c "
    $CTL --api $API --json log show $RL | jq -r .handleMsg | grep -q '$NOT_IN'"
check "the refused targets were never contacted" bash -c "
    ! grep -q '^method:' $T/out.out 2>/dev/null && ! grep -q '^method:' $T/late.out 2>/dev/null"
# An empty list: every webhook refused, and the plugin says so once at start
kill -TERM "$SPID"; wait "$SPID" 2>/dev/null
sed -i '/webhook_allow/d' "$T/scheduler.cfg"
SEEN=$(wc -l < "$T/scheduler.log")
check "the scheduler starts with no webhook_allow" start_scheduler "$API" "$AGENTS"
check "... logging once that webhook alarms are disabled" bash -c "
    [ \$(tail -n +$((SEEN + 1)) $T/scheduler.log | grep -c 'webhook alarms are disabled') = 1 ]"
check "... which it did not while the list had entries" bash -c "
    ! head -n $SEEN $T/scheduler.log | grep -q 'webhook alarms are disabled'"
check "... and refusing the webhook it took before" \
    job_add_refused empty "webhook:http://127.0.0.1:$HTTP/hook" "$NOT_IN"
# The list as the design names it: a top-level alarms/webhook_allow
kill -TERM "$SPID"; wait "$SPID" 2>/dev/null
printf 'alarms\n    webhook_allow = "http://127.0.0.1:%s/hook"\n' "$HTTP" >> "$T/scheduler.cfg"
check "the scheduler starts with a top-level alarms/webhook_allow" start_scheduler "$API" "$AGENTS"
TOP=$(ctl --get .id job add --group alarm-app --glue-type GLUE_SHELL --glue-source "$T/fail.sh" \
      --alarm-email "webhook:http://127.0.0.1:$HTTP/hook")
check "... which lets its webhook in" test "$TOP" -gt 0
check "... and no other" job_add_refused top "webhook:http://127.0.0.1:$ERR/x" "$NOT_IN"
xxl_done
