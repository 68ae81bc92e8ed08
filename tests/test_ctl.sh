#!/usr/bin/env bash
# test_ctl.sh -- everyday xxl-ctl use against a real scheduler and agent
# (issue 16): job rm takes its runs and leaves no dangling child ids; an
# impossible cron names a date; automatic groups list their live agents;
# paged glue history with versions, show, diff, rollback; job copy; job
# and log list filters; planned fires hidden until due; list replies cut
# before the frame limit; plugin list.
. "$(dirname "$0")/lib.sh"
xxl_setup
# Under ASan (scripts/test) xxl-ctl's leak check, off elsewhere
# (tests/asan/xxl-ctl.opts), is on here, every program's reports in
# $T/sanitizer.PID, which xxl_cleanup reads
[ -z "${ASAN_OPTIONS:-}" ] || export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=1:log_path=$T/sanitizer"
REQ="$XXL_REQ"
req () { "$REQ" "$API" "$@"; }

start_scheduler || exit 1
start_agent agent-a demo-app
check "agent-a registers" wait_for 10 agent_registered demo-app agent-a

# 3. An automatic group lists the live registry, not a manual list it had
ctl group add demo-app --address-list m1,m2 >/dev/null
check "a manual group lists its addresses" \
    test "$(ctl group list | jq -r '.groups[] | select(.appname == "demo-app") | .addressList')" = m1,m2
ctl group update demo-app --auto >/dev/null
ctl group add empty-app >/dev/null
check "an automatic group with no agent: addressList \"\" in group list and group show alike" \
    test "$(ctl group list | jq -c '.groups[] | select(.appname == "empty-app") | .addressList') $(ctl group show empty-app | jq -c .addressList)" = '"" ""'
check "group list: after --auto, addressList is the registry's" \
    test "$(ctl group list | jq -r '.groups[] | select(.appname == "demo-app") | .addressList')" = agent-a
check "group show: the same" test "$(ctl --get .addressList group show demo-app)" = agent-a
ctl group add late-app >/dev/null
check "an automatic group added with no agent lists none" \
    test "$(ctl group show late-app | jq -r '.addressList // ""')" = ""

# 1. job rm deletes the job's runs and drops it from parents' children
J1=$(ctl --get .id job add --group demo-app --handler demoJobHandler --desc child-one --author alice)
C2=$(ctl --get .id job add --group demo-app --handler demoJobHandler --desc child-two --author bob)
P=$(ctl --get .id job add --group demo-app --handler demoJobHandler --desc parent --child "$J1,$C2")
L1=$(ctl --get '.logIds[0]' job trigger "$J1")
L2=$(ctl --get '.logIds[0]' job trigger "$J1")
check "the child's runs finish" wait_for 10 bash -c "$CTL --api $API --json log show $L1 | jq -e '.handleCode == 200' && $CTL --api $API --json log show $L2 | jq -e '.handleCode == 200'"
check "job rm reports the runs it deleted" test "$(ctl --get .deletedLogs job rm "$J1")" = 2
check "the removed job's runs are gone" bash -c "! $CTL --api $API --json log show $L1 >/dev/null 2>&1"
check "log list has none of them" test "$(ctl log list --job "$J1" | jq '.logs | length')" = 0
check "the parent no longer names the removed child" \
    test "$(ctl --get .childJobId job show "$P")" = "$C2"
check "the parent can be updated after its child was removed" ctl job update "$P" --desc parent2
OUT=$(ctl job add --group demo-app --handler demoJobHandler --child 999999 2>&1)
check "a dangling child id is refused with how to fix it" \
    bash -c "echo '$OUT' | grep -q 'child job 999999 does not exist' && echo '$OUT' | grep -q -- '--child'"
# A run still on an agent when its job is removed finishes there; its
# callback is acknowledged and ignored; nothing runs again
printf 'sleep 1\ntouch %s/slow-done\n' "$T" > "$T/slow.sh"
SJ=$(ctl --get .id job add --group demo-app --glue-type GLUE_SHELL --glue-source "$T/slow.sh")
SL=$(ctl --get '.logIds[0]' job trigger "$SJ")
check "the slow run is accepted" wait_for 10 field_is "$SL" triggerCode 200
check "job rm while it runs" test "$(ctl --get .id job rm "$SJ")" = "$SJ"
check "the run finishes on the agent" wait_for 10 test -f "$T/slow-done"
AFTER=$(ctl --get .id job add --group demo-app --handler demoJobHandler)
AL=$(ctl --get '.logIds[0]' job trigger "$AFTER")
check "the scheduler goes on (a later run finishes)" wait_for 10 field_is "$AL" handleCode 200
check "the agent's callback was acknowledged (nothing left to resend)" \
    wait_for 10 bash -c "! grep -q 'callback.*retry\|callback.*failed' '$T/agent-agent-a.log'"
check "no row of the removed job came back" \
    test "$(ctl log list --limit 1000 | jq --argjson j "$SJ" '[.logs[] | select(.jobId == $j)] | length')" = 0

# 2. An impossible cron names the date, not an epoch
OUT=$(ctl job add --group demo-app --handler demoJobHandler --cron '0 0 0 1 1 ? 2020' --start 2>&1)
check "an impossible cron names an ISO date in UTC" \
    bash -c "echo '$OUT' | grep -Eq 'no time after [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z'"
check "... and no raw epoch" bash -c "! echo '$OUT' | grep -Eq '[0-9]{13}'"
OUT=$(ctl job add --group demo-app --handler demoJobHandler --cron '0 0 0 1 1 ? 2020' \
      --timezone Asia/Shanghai --start 2>&1)
check "... and in the job's time zone" \
    bash -c "echo '$OUT' | grep -Eq 'Z \([0-9-]{10}T[0-9:.]{12}\+08:00 Asia/Shanghai\)'"

# 4. Glue history: paged, small, numbered; show, diff, rollback
printf 'echo one\necho two\necho three\n' > "$T/g1.sh"
printf 'echo one\necho TWO\necho three\n' > "$T/g2.sh"
printf 'echo one\necho TWO\necho three\necho four\n' > "$T/g3.sh"
G=$(ctl --get .id job add --group demo-app --glue-type GLUE_SHELL --glue-source "$T/g1.sh")
ctl job update "$G" --glue-source "$T/g2.sh" >/dev/null
ctl job update "$G" --glue-source "$T/g3.sh" >/dev/null
H=$(ctl glue history "$G")
check "glue history: versions 3, 2, 1, newest first" test "$(echo "$H" | jq -c '[.glues[].version]')" = '[3,2,1]'
check "glue history: total" test "$(echo "$H" | jq .total)" = 3
check "glue history: no source, its size" \
    test "$(echo "$H" | jq -c '([.glues[] | has("glueSource")] | any), .glues[2].size')" = "$(printf 'false\n%s' "$(wc -c < "$T/g1.sh")")"
check "glue history --limit 2" test "$(ctl glue history "$G" --limit 2 | jq -c '[.glues[].version]')" = '[3,2]'
check "GLUE_HISTORY offset" test "$(req GLUE_HISTORY jobId="$G" limit=1 offset=1 | jq -c '[.content.glues[].version]')" = '[2]'
check "GLUE_HISTORY limit 101 is refused" test "$(req GLUE_HISTORY jobId="$G" limit=101 | jq .code)" = 400
check "GLUE_HISTORY of an unknown job is 404" test "$(req GLUE_HISTORY jobId=999999 | jq .code)" = 404
check "glue show --version 1" bash -c "$CTL --api $API --json glue show $G --version 1 | jq -j .glueSource | cmp -s - '$T/g1.sh'"
check "glue show: the newest by default" test "$(ctl glue show "$G" | jq .version)" = 3
check "glue show of a version never made is 404" test "$(req GLUE_SHOW jobId="$G" version=9 | jq .code)" = 404
D=$("$CTL" --api "$API" glue diff "$G" 1 3)
check "glue diff: a unified diff" bash -c "printf '%s\n' '$D' | grep -qx -- '-echo two' && printf '%s\n' '$D' | grep -qx -- '+echo TWO' && printf '%s\n' '$D' | grep -qx -- '+echo four' && printf '%s\n' '$D' | grep -q '^@@ -1,3 +1,4 @@'"
check "glue history --diff shows each version against the one before" \
    bash -c "$CTL --api $API glue history $G --diff | grep -c '^+++ job $G version' | grep -qx 2"
check "glue history --diff with --get is a usage error that names --get" \
    bash -c "$CTL --api $API --get .versions glue history $G --diff 2>&1 >/dev/null; test \$? = 2 \
             && $CTL --api $API --get .versions glue history $G --diff 2>&1 | grep -q 'without --get'"
check "glue rollback to 1 makes version 4" test "$(ctl glue rollback "$G" 1 | jq .version)" = 4
check "... the job's source is version 1's" bash -c "$CTL --api $API --json job show $G | jq -j .glueSource | cmp -s - '$T/g1.sh'"
check "... with a remark" test "$(ctl glue history "$G" --limit 1 | jq -r '.glues[0].glueRemark')" = "rollback to version 1"
check "glue history (text) shows version, time, remark, size" \
    bash -c "$CTL --api $API glue history $G | head -2 | grep -q 'rollback to version 1' && $CTL --api $API glue history $G | head -1 | grep -q 'VERSION.*SAVED.*SIZE.*REMARK'"
for i in $(seq 30); do printf 'echo %s\n' "$i" > "$T/gn.sh"; ctl job update "$G" --glue-source "$T/gn.sh" >/dev/null; done
check "the last 30 versions are kept" test "$(ctl glue history "$G" --limit 100 | jq -c '[.total, .glues[-1].version, .glues[0].version]')" = '[30,5,34]'
# 1 MiB sources: the history stays small
head -c 1000000 /dev/zero | tr '\0' 'x' > "$T/big.sh"
BG=$(ctl --get .id job add --group demo-app --glue-type GLUE_SHELL --glue-source "$T/big.sh")
for i in 1 2 3 4 5; do echo "#$i" >> "$T/big.sh"; ctl job update "$BG" --glue-source "$T/big.sh" >/dev/null; done
check "GLUE_HISTORY of six 1 MB versions is small" test "$(req GLUE_HISTORY jobId="$BG" | jq .size)" -lt 4096

# 5. job copy; job list and log list filters
CP=$(ctl --get .id job copy "$G" --desc copied)
check "job copy: a new stopped job" test "$(ctl job show "$CP" | jq -c '[.triggerStatus, .jobDesc, .glueType]')" = '[0,"copied","GLUE_SHELL"]'
check "job copy: the glue source too" test "$(ctl --get .glueSource job show "$CP")" = "$(ctl --get .glueSource job show "$G")"
check "job copy: its glue history starts at 1" test "$(ctl glue history "$CP" | jq -c '[.glues[].version]')" = '[1]'
RUNJ=$(ctl --get .id job add --group demo-app --handler demoJobHandler --desc runner --author alice --fix-rate 3600 --start)
check "job list --handler" test "$(ctl job list --handler demoJob | jq '[.jobs[] | select(.executorHandler != "demoJobHandler")] | length')" = 0
check "job list --desc (a substring)" test "$(ctl job list --desc hild-tw | jq -c '[.jobs[].id]')" = "[$C2]"
check "job list --author" test "$(ctl job list --author alice | jq -c '[.jobs[].id]')" = "[$RUNJ]"
check "job list filters ignore ASCII case, as XXL-JOB's LIKE" \
    test "$(ctl job list --author ALIce --desc RUNN --handler DEMOJOB | jq -c '[.jobs[].id]')" = "[$RUNJ]"
check "job list --status running" test "$(ctl job list --status running | jq -c '[.jobs[].id]')" = "[$RUNJ]"
check "job list --status stopped leaves it out" test "$(ctl job list --status stopped | jq --argjson r "$RUNJ" '[.jobs[] | select(.id == $r)] | length')" = 0
check "job list: total counts the filtered jobs" test "$(ctl job list --author alice | jq .total)" = 1
printf 'exit 1\n' > "$T/fail.sh"
FJ=$(ctl --get .id job add --group demo-app --glue-type GLUE_SHELL --glue-source "$T/fail.sh")
FL=$(ctl --get '.logIds[0]' job trigger "$FJ")
check "a failing run ends" wait_for 10 field_is "$FL" handleCode 500
check "log list --status failure" test "$(ctl log list --status failure | jq -c '[.logs[].id]')" = "[$FL]"
check "log list --status success has only successes" test "$(ctl log list --status success | jq '[.logs[] | select(.handleCode != 200)] | length')" = 0
check "log list --status success has some" test "$(ctl log list --status success | jq '.logs | length')" -ge 1
printf 'while [ ! -f %s/go-on ]; do sleep 0.1; done\n' "$T" > "$T/wait.sh"
WJ=$(ctl --get .id job add --group demo-app --glue-type GLUE_SHELL --glue-source "$T/wait.sh")
WL=$(ctl --get '.logIds[0]' job trigger "$WJ")
check "a waiting run is accepted" wait_for 10 field_is "$WL" triggerCode 200
check "log list --status running: the waiting run, and only runs without a result" \
    test "$(ctl log list --status running | jq -c --argjson w "$WL" '[([.logs[].id] | index($w) != null), ([.logs[] | select(.handleCode != 0)] | length)]')" = '[true,0]'
touch "$T/go-on"
check "... once it ends" wait_for 10 field_is "$WL" handleCode 200
check "... it is not listed running" \
    test "$(ctl log list --status running | jq --argjson w "$WL" '[.logs[] | select(.id == $w)] | length')" = 0
check "... and failures are still only the failed run" test "$(ctl log list --status failure | jq -c '[.logs[].id]')" = "[$FL]"
FT=$(log_field "$FL" triggerTime)
check "log list --from/--to (epoch ms)" test "$(ctl log list --from "$FT" --to "$FT" | jq -c '[.logs[].id]')" = "[$FL]"
check "log list --from a later time has none of the earlier runs" test "$(ctl log list --from $((FT + 1)) | jq --argjson f "$FL" '[.logs[] | select(.id <= $f)] | length')" = 0
check "log list --from YYYY-MM-DD" test "$(ctl log list --from 2000-01-01 --to '2000-01-02 10:00' | jq '.logs | length')" = 0
check "LOG_LIST jobGroup" test "$(req LOG_LIST jobGroup=999 | jq '.content.logs | length')" = 0
check "LOG_LIST limit 1001 is refused" test "$(req LOG_LIST limit=1001 | jq .code)" = 400
check "LOG_LIST logStatus 4 is refused" test "$(req LOG_LIST logStatus=4 | jq .code)" = 400
check "LOG_LIST offset" test "$(req LOG_LIST limit=1 offset=1 | jq '.content.logs[0].id')" = "$(ctl log list --limit 2 | jq '.logs[1].id')"

# 6. A planned fire is not listed before its time; until its trigger is
# recorded its triggerTime is null
CJ=$(ctl --get .id job add --group demo-app --handler demoJobHandler --cron '* * * * * ?' --start)
check "the cron job runs" wait_for 10 job_ran "$CJ" 1
check "planned rows are in the store ahead of their time (the pre-read)" \
    test "$(xxl_sql "SELECT COUNT(*) FROM xxl_job_log WHERE job_id = $CJ AND schedule_time > $(( $(date +%s%3N) + 1000 ))" 2>/dev/null || echo 1)" -ge 1
ctl log list --job "$CJ" > "$T/planned.json"
NOW=$(date +%s%3N)
check "log list shows no fire before its time" \
    test "$(jq --argjson n "$NOW" '[.logs[] | select(.scheduleTime > $n)] | length' "$T/planned.json")" = 0
check "no listed triggerTime is its planning time" \
    test "$(jq '[.logs[] | select(.triggerTime != null and .triggerTime < .scheduleTime - 5)] | length' "$T/planned.json")" = 0
ctl job stop "$CJ" >/dev/null

# 7. List replies stop before the frame limit, and say where to go on
head -c 1000000 /dev/zero | tr '\0' 'x' > "$T/big.sh"
for i in 1 2 3 4 5; do ctl job add --group demo-app --glue-type GLUE_SHELL --glue-source "$T/big.sh" >/dev/null; done
R=$(req JOB_LIST)
check "JOB_LIST of 7 MB of jobs: truncated, under 4 MiB" \
    test "$(echo "$R" | jq -c '[.code, .content.truncated, (.size < 4194304), (.content.jobs | length) < .content.total, .content.nextOffset == (.content.jobs | length)]')" = '[200,true,true,true,true]'
NEXT=$(echo "$R" | jq .content.nextOffset)
LAST=$(echo "$R" | jq '.content.jobs[-1].id')
check "JOB_LIST from nextOffset goes on after the last job sent" \
    test "$(req JOB_LIST offset="$NEXT" | jq --argjson l "$LAST" '.content.jobs[0].id > $l')" = true
check "job list (text) says where to go on" bash -c "$CTL --api $API job list | grep -q 'more from --offset'"
head -c 65000 /dev/zero | tr '\0' 'p' > "$T/param"
ctl group add lonely-app >/dev/null
BJ=$(ctl job add --group lonely-app --handler demoJobHandler --param "$(cat "$T/param")" | jq -r .id)
for i in $(seq 70); do ctl job trigger "$BJ" >/dev/null; done
R=$(req LOG_LIST jobId="$BJ" limit=1000)
check "LOG_LIST of 70 runs with 64 KB params: truncated, under 4 MiB" \
    test "$(echo "$R" | jq -c '[.code, .content.truncated, (.size < 4194304), (.content.logs | length) < 70, .content.nextOffset == (.content.logs | length)]')" = '[200,true,true,true,true]'
check "log list --limit 1000 fetches all 70 across pages" \
    test "$(ctl log list --job "$BJ" --limit 1000 | jq '[.logs[].id] | unique | length')" = 70
check "GLUE_HISTORY and a small LOG_LIST say not truncated" \
    test "$(req LOG_LIST limit=1 | jq .content.truncated),$(req GLUE_HISTORY jobId="$G" | jq .content.truncated)" = false,false

# plugin list: the route strategies and alarm kinds the scheduler loaded
check "plugin list --json: routers and alarm kinds" \
    test "$(ctl plugin list | jq -c '[(.routers | index("FIRST") != null), (.routers | index("SHARDING_BROADCAST") != null), (.alarms | index("webhook") != null)]')" = '[true,true,true]'
check "plugin list: a KIND NAME table" \
    bash -c "$CTL --api $API plugin list | grep -Eq '^router +FIRST$' && $CTL --api $API plugin list | grep -Eq '^alarm +webhook$'"

# log list's MSG: a result's message, and a failed trigger's reason (the
# last line of its triggerMsg, not the first, "Trigger type: ...")
EJ=$(ctl --get .id job add --group empty-app --handler demoJobHandler)
EL=$(ctl --get '.logIds[0]' job trigger "$EJ")
check "log list's table: a failed trigger's MSG is its reason" \
    bash -c "$CTL --api $API log list --job $EJ | grep -E '^$EL ' | grep -q 'trigger failed: the address list is empty'"
check "log list's table: a failed run's MSG is its handleMsg" \
    bash -c "$CTL --api $API log list --job $FJ | grep -E '^$FL ' | grep -Eq ' 500 +[^ ]+ +.*exit'"

# --get PATH: one value of the JSON answer, as jq -r would print it
gget () { "$CTL" --api "$API" --get "$@"; }
GJ=$(gget id job add --group demo-app --handler demoJobHandler --desc 'get me' --param 'a b')
check "--get id: job add prints the new id alone" \
    bash -c "[[ '$GJ' =~ ^[0-9]+\$ ]] && test \"\$($CTL --api $API --json job show $GJ | jq -r .id)\" = '$GJ'"
check "--get: a string as its text, a missing key and a null as null" \
    test "$(gget .jobDesc job show "$GJ")|$(gget executorParam job show "$GJ")|$(gget .nothing.there job show "$GJ")" = "get me|a b|null"
GL=$(gget '.logIds[0]' job trigger "$GJ")
check "--get .logIds[0]: the trigger's logId, the same as jq's" \
    test "$GL" = "$(ctl log list --job "$GJ" | jq -r '.logs[0].id')"
check "--get on log list (paged): [-1] is the last row, [N] past the end is null" \
    test "$(gget '.logs[-1].id' log list --job "$FJ" --limit 1000)|$(gget '.logs[99999].id' log list --job "$FJ")" \
         = "$(ctl log list --job "$FJ" --limit 1000 | jq -r '.logs[-1].id')|null"
check "--get: an object or an array as compact JSON" \
    test "$(gget .logIds job trigger "$GJ" | jq -c 'length')" = 1
check "--get: a bad path is a usage error (2) that says so; a good one on the same command is 0" \
    bash -c "$CTL --api $API --get 'a[x]' job show $GJ 2>&1 >/dev/null | grep -q 'is not a path'; test \${PIPESTATUS[0]} = 2 && $CTL --api $API --get a job show $GJ >/dev/null"
check "--get: a refused request prints nothing on out, the error on err, exit 1" \
    bash -c "out=\$($CTL --api $API --get id job show 999999 2>$T/get.err); rc=\$?; test \$rc = 1 && test -z \"\$out\" && grep -q . $T/get.err"

# The commands are in the help
for c in "job copy" "glue show" "glue diff" "glue rollback" "plugin list"; do
    check "xxl-ctl --help lists $c" bash -c "$CTL --help | grep -Eq '^  $c( |$)'"
done
check "log list --help shows its filters" bash -c "$CTL log list --help | grep -q -- '--status' && $CTL log list --help | grep -q -- '--from'"
check "job list --help shows its filters" bash -c "$CTL job list --help | grep -q -- '--handler' && $CTL job list --help | grep -q -- '--author'"
xxl_done
