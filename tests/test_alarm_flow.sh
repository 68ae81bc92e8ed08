#!/usr/bin/env bash
# test_alarm_flow.sh -- alarms through the scheduler: a job's final failed
# attempt (not the retried one) sends its alarm to a webhook on a local
# HTTP listener and to an address on a local SMTP sink; unreachable
# targets end as failed alarms; unknown target kinds are refused at save.
. "$(dirname "$0")/lib.sh"
xxl_setup
SINK="$XXL_BUILD/tests/alarms/xxl_sink"
"$SINK" http "$T/http.port" "$T/http.out" 1 30 & PIDS="$PIDS $!"
"$SINK" smtp "$T/smtp.port" "$T/smtp.out" 1 30 & PIDS="$PIDS $!"
wait_for 5 test -f "$T/http.port" && wait_for 5 test -f "$T/smtp.port"
HTTP=$(cat "$T/http.port"); SMTP=$(cat "$T/smtp.port")
cat >> "$T/scheduler.cfg" <<CFG
    monitor
        fail_check = 100
    alarm
        smtp_url = "smtp://127.0.0.1:$SMTP"
        smtp_from = "xxl@example.com"
        smtp_tls = none
        webhook_timeout = 2000
CFG
start_scheduler || exit 1
start_agent a1 alarm-app
check "agent registers" wait_for 10 agent_registered alarm-app a1
ctl group add alarm-app >/dev/null
printf 'echo failing; exit 1\n' > "$T/fail.sh"

check "an unknown alarm kind is refused, naming the known ones" bash -c "
    ! $CTL --api $API --json job add --group alarm-app --glue-type GLUE_SHELL --glue-source $T/fail.sh \
      --alarm-email carrier-pigeon:coop > $T/bad.json; grep -q webhook $T/bad.json"

J=$(ctl job add --group alarm-app --glue-type GLUE_SHELL --glue-source "$T/fail.sh" --retry 1 \
      --alarm-email "ops@example.com,webhook:http://127.0.0.1:$HTTP/hook" | jq -r .id)
L=$(ctl job trigger "$J" | jq -r '.logIds[0]')
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

# An unreachable webhook: the alarm fails, visibly
U=$(ctl job add --group alarm-app --glue-type GLUE_SHELL --glue-source "$T/fail.sh" \
      --alarm-email "webhook:http://127.0.0.1:9/nowhere" | jq -r .id)
UL=$(ctl job trigger "$U" | jq -r '.logIds[0]')
check "an undeliverable alarm ends with alarmStatus 3" wait_for 15 field_is "$UL" alarmStatus 3
xxl_done
