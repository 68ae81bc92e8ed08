#!/usr/bin/env bash
# test_calendar.sh -- calendars end to end (DESIGN §13): xxl-ctl calendar
# add|list|show|rm and their refusals, a job's --calendar, `job next` and the
# planner skipping excluded fires (a one-second cron with a CronCalendar of
# even seconds runs on odd seconds only: no run, no misfire on an even one),
# a replaced calendar taking effect, removal refused while used and forced.
# The evaluation against Quartz itself: tests/test_calendar_class.c.
. "$(dirname "$0")/lib.sh"
xxl_setup

# (HTTP too: roles and REST below)
export XXL_SCHEDULER_ARGS="--http 127.0.0.1:0"
start_scheduler || exit 1
start_agent agent-a cal-app
check "agent registers" wait_for 10 agent_registered cal-app agent-a
ctl group add cal-app >/dev/null

# add: refusals change nothing, each with its reason
refused () {    # refused "reason part" ctl-args...: non-zero exit, reason in the error
    local want="$1"; shift
    local out
    out=$("$CTL" --api "$API" --json "$@" 2>&1) && return 1
    grep -qF -- "$want" <<<"$out" || { echo "  got: $out"; return 1; }
}
printf '2026-02-30\n' > "$T/bad-dates"
check "add needs --dates or --exclude-cron" refused "give --dates FILE, --exclude-cron EXPR or both" calendar add c0
check "an impossible date is refused" refused "date '2026-02-30' is not a date YYYY-MM-DD" \
    calendar add c0 --dates "$T/bad-dates"
check "an invalid expression is refused" refused "invalid cron expression '0 0 0 * *'" \
    calendar add c0 --exclude-cron '0 0 0 * *'
check "an unknown zone is refused" refused "unknown time zone 'Mars/Base'" \
    calendar add c0 --exclude-cron '0 0 0 * * ?' --timezone Mars/Base
check "a bad name is refused" refused "calendar name 'a b' may hold only" \
    calendar add 'a b' --exclude-cron '0 0 0 * * ?'
printf '# holidays of 2031, to come\n\n , \n' > "$T/no-dates"
check "dates of only comments and separators are refused as none" refused \
    "a calendar needs dates or excludeCron: its dates hold no date" calendar add c0 --dates "$T/no-dates"
check "... and none of them was stored" test "$(ctl calendar list | jq '.calendars | length')" = 0

# add, list, show
check "a CronCalendar of even seconds is added" bash -c "
    $CTL --api $API --json calendar add odd --exclude-cron '*/2 * * * * ?' | jq -e '.name == \"odd\"' >/dev/null"
TODAY=$(date -u +%Y-%m-%d)
TOMORROW=$(date -u -d tomorrow +%Y-%m-%d)
printf '# two days\n%s\n%s, %s\n' "$TOMORROW" "$TODAY" "$TOMORROW" > "$T/days"
check "a HolidayCalendar from a file (comments, repeats) is added" bash -c "
    $CTL --api $API --json calendar add days --dates $T/days --timezone UTC | jq -e '.dates == 2' >/dev/null"
check "a second add of a name is refused (409)" refused "calendar 'odd' exists already" \
    calendar add odd --exclude-cron '0 0 0 * * ?'
check "list shows both, by name" test "$(ctl calendar list | jq -c '[.calendars[].name]')" = '["days","odd"]'
check "show gives its normalized dates, zone and expression" bash -c "
    $CTL --api $API --json calendar show days | jq -e '.dates == \"$TODAY,$TOMORROW\" and .timezone == \"UTC\" and .excludeCron == \"\"' >/dev/null"
check "show of an unknown calendar is 404" refused "calendar 'nope' not found" calendar show nope
check "the text list names them" bash -c "$CTL --api $API calendar list | grep -q '^odd .*\*/2 \* \* \* \* ?'"

# A job's calendar: must exist
check "a job naming no such calendar is refused" refused "calendar 'nope' not found" \
    job add --group cal-app --handler demoJobHandler --cron '* * * * * ?' --calendar nope
check "a FIX_DELAY job with a calendar is refused" refused "a calendar applies to CRON and FIX_RATE jobs" \
    job add --group cal-app --handler demoJobHandler --fix-delay 5 --calendar odd
NOON=$(ctl --get .id job add --group cal-app --handler demoJobHandler --cron '0 0 12 * * ?' --timezone UTC \
       --calendar days)
check "job show gives its calendar" test "$(ctl job show "$NOON" | jq -r .calendar)" = days
# job next: noon UTC never on today or tomorrow (both excluded), a day apart
check "job next skips the HolidayCalendar's dates" bash -c "
    $CTL --api $API --json job next $NOON -n 3 | jq -e --arg t '$TODAY' --arg m '$TOMORROW' '
        .next | length == 3 and all(.[]; (./1000 | strftime(\"%Y-%m-%d\")) as \$d | \$d != \$t and \$d != \$m)
        and (.[1] - .[0] == 86400000)' >/dev/null"

# The planner: a one-second cron skipping even seconds
EVERY=$(ctl --get .id job add --group cal-app --handler demoJobHandler --cron '* * * * * ?' \
        --calendar odd)
check "job next shows odd seconds only, two seconds apart" bash -c "
    $CTL --api $API --json job next $EVERY -n 10 | jq -e '.next | length == 10
        and all(.[]; (. / 1000) % 2 == 1) and ([range(1; 10) as \$i | .[\$i] - .[\$i - 1]] | all(. == 2000))' >/dev/null"
ctl job start "$EVERY" >/dev/null
sleep 6
ctl job stop "$EVERY" >/dev/null
idle () { [ "$(ctl log list --job "$EVERY" --limit 1000 | jq '[.logs[] | select(.handleCode == 0 and .triggerCode != 500)] | length')" = 0 ]; }
check "its runs finish" wait_for 20 idle
ctl log list --job "$EVERY" --limit 1000 > "$T/every.json"
check "it ran on odd seconds only, every one of them, and nothing on an even one" jq -e '
    ([.logs[] | .scheduleTime] | sort) as $t
    | ($t | length) >= 2
    and all(.logs[]; .triggerType == "CRON" and .handleCode == 200)
    and all($t[]; (. / 1000) % 2 == 1)
    and ([range(1; $t | length) as $i | $t[$i] - $t[$i - 1]] | all(. == 2000))' "$T/every.json"

# Replacing the calendar re-arms its jobs: even seconds from now on
ctl job start "$EVERY" >/dev/null
check "a replace says it re-armed the job" bash -c "
    $CTL --api $API --json calendar add odd --exclude-cron '1/2 * * * * ?' --replace | jq -e '.jobs == 1' >/dev/null"
check "... and job next follows the new calendar" bash -c "
    $CTL --api $API --json job next $EVERY -n 5 | jq -e 'all(.next[]; (. / 1000) % 2 == 0)' >/dev/null"
STARTED=$(( $(date +%s%3N) + 6000 ))
sleep 3
ctl job stop "$EVERY" >/dev/null
check "its runs finish" wait_for 20 idle
check "runs planned past the pre-read window after the replace fall on even seconds" bash -c "
    $CTL --api $API --json log list --job $EVERY --limit 1000 | jq -e --argjson s $STARTED '
        [.logs[] | select(.scheduleTime > \$s) | .scheduleTime] | all((. / 1000) % 2 == 0)' >/dev/null"

# A calendar that excludes every time: a start is refused with the reason
# (the search skips a day of excluded seconds a step, to its 5 years)
ctl calendar add never --exclude-cron '* * * * * ?' >/dev/null
NEVER=$(ctl --get .id job add --group cal-app --handler demoJobHandler --cron '* * * * * ?' --calendar never)
check "starting a job whose calendar excludes every time is refused" \
    refused "calendar 'never': the calendar excludes every fire time of the next 5 years" \
    job start "$NEVER"
check "... and job next says why" refused "calendar 'never'" job next "$NEVER"

# A workflow's calendar: its schedule skips the excluded times as a job's
cat > "$T/flow.json" <<JSON
{"nodes": [{"id": "a", "job": $NOON}]}
JSON
check "a workflow naming no such calendar is refused" refused "calendar 'nope' not found" \
    workflow add --name wcal0 --file "$T/flow.json" --cron '0 0 12 * * ?' --calendar nope
# (the calendar is judged whatever the schedule, as a job's: a NONE
# workflow used to keep an unknown name, refused only by a later schedule)
check "... so is a NONE workflow naming one, on add and on update" bash -c "
    out=\$($CTL --api $API --json workflow add --name wcal1 --file $T/flow.json --calendar ghost 2>&1) && exit 1
    grep -qF \"calendar 'ghost' not found (xxl-ctl calendar list)\" <<<\"\$out\" || exit 1
    w=\$($CTL --api $API --json workflow add --name wcal1 --file $T/flow.json --calendar days | jq -e .id) \
    && $CTL --api $API --json workflow show \$w | jq -e '.calendar == \"days\" and .scheduleType == \"NONE\"' >/dev/null \
    && out=\$($CTL --api $API --json workflow update \$w --calendar ghost 2>&1); [ \$? != 0 ] \
    && grep -qF \"calendar 'ghost' not found\" <<<\"\$out\" \
    && $CTL --api $API --json workflow show \$w | jq -e '.calendar == \"days\"' >/dev/null \
    && $CTL --api $API workflow rm \$w >/dev/null"
WF=$(ctl --get .id workflow add --name wcal --file "$T/flow.json" --cron '0 0 12 * * ?' --timezone UTC \
     --calendar days --start)
check "workflow show gives its calendar, and its next time falls on neither excluded date" bash -c "
    $CTL --api $API --json workflow show $WF | jq -e --arg t '$TODAY' --arg m '$TOMORROW' '
        .calendar == \"days\" and .triggerStatus == 1
        and ((.triggerNextTime / 1000 | strftime(\"%Y-%m-%d\")) as \$d | \$d != \$t and \$d != \$m)' >/dev/null"
DAY2=$(date -u -d '+2 day' +%F)
printf '%s\n%s\n' "$TOMORROW" "$DAY2" > "$T/days2"
check "replacing its calendar re-arms the workflow" bash -c "
    $CTL --api $API --json calendar add days --dates $T/days2 --timezone UTC --replace | jq -e '.workflows == 1' >/dev/null"
check "... its next time now skips the new dates" bash -c "
    $CTL --api $API --json workflow show $WF | jq -e --arg m '$TOMORROW' --arg n '$DAY2' '
        (.triggerNextTime / 1000 | strftime(\"%Y-%m-%d\")) as \$d | \$d != \$m and \$d != \$n' >/dev/null"

# A replaced calendar that excludes every time stops a started workflow
# (as the planner stops such a job); before, it stayed armed and fired once
# more at its old next time, which the calendar excludes, then showed
# started with no next time.  A started job too, at once: it used to show
# started, with an excluded next time, until the planner reached that time
# (a noon cron: up to a day)
ctl calendar add wall --dates "$T/days2" >/dev/null
WR=$(ctl --get .id workflow add --name wall --file "$T/flow.json" --fix-rate 5 --calendar wall --start)
JWALL=$(ctl --get .id job add --group cal-app --handler demoJobHandler --cron '0 0 12 * * ?' --timezone UTC \
        --calendar wall --start)
OLD_NEXT=$(ctl workflow show "$WR" | jq .triggerNextTime)
ctl --timeout 120000 calendar add wall --exclude-cron '* * * * * ?' --replace >/dev/null
check "a calendar replaced to exclude every time stops its started workflow" bash -c "
    $CTL --api $API --json workflow show $WR | jq -e '.triggerStatus == 0 and .triggerNextTime == 0' >/dev/null"
check "... and its started job, at once" bash -c "
    $CTL --api $API --json job show $JWALL | jq -e '.triggerStatus == 0 and .triggerNextTime == 0' >/dev/null"
past_old_next () { [ "$(date +%s%3N)" -gt $((OLD_NEXT + 1500)) ]; }
wait_for 15 past_old_next
check "... and it did not fire at its old next time" test "$(ctl workflow runs "$WR" | jq '.runs | length')" = 0

# rm: refused while used (naming the jobs), nothing changed; forced
check "rm of a used calendar is refused, naming its jobs" \
    refused "calendar 'odd' is used by 1 job ($EVERY)" calendar rm odd
check "... and it is still there" bash -c "$CTL --api $API --json calendar show odd >/dev/null"
check "rm --force removes it and says its jobs lost it" bash -c "
    $CTL --api $API calendar rm odd --force | grep -q '^1 job no longer use a calendar'"
check "... the job has no calendar now" test "$(ctl job show "$EVERY" | jq -r .calendar)" = ""
check "... and job next gives every second" bash -c "
    $CTL --api $API --json job next $EVERY -n 3 | jq -e '.next[1] - .next[0] == 1000' >/dev/null"
ctl job update "$NOON" --calendar '' >/dev/null
check "rm of a calendar a workflow uses is refused, naming it" \
    refused "calendar 'days' is used by 1 workflow ($WF)" calendar rm days
ctl calendar add wfc --exclude-cron '0 0 0 * * ?' >/dev/null
ctl workflow update "$WF" --calendar wfc >/dev/null
check "rm --force of a calendar a workflow uses says so, and the workflow loses it" bash -c "
    $CTL --api $API --json calendar rm wfc --force | jq -e '.workflows == 1 and .jobs == 0' >/dev/null &&
    $CTL --api $API --json workflow show $WF | jq -e '.calendar == \"\" and .triggerStatus == 1' >/dev/null"
ctl workflow update "$WF" --calendar '' >/dev/null
check "... its calendar given up, the workflow has none" \
    test "$(ctl workflow show "$WF" | jq -r .calendar)" = ""
check "a calendar no job uses is removed" bash -c "$CTL --api $API --json calendar rm days | jq -e '.jobs == 0' >/dev/null"
check "rm of an unknown calendar is 404" refused "calendar 'days' not found" calendar rm days

# Audited like other writes
check "the audit records the calendar writes" bash -c "
    $CTL --api $API --json audit list | jq -e '[.audit[].type] | index(\"CALENDAR_ADD\") and index(\"CALENDAR_RM\")' >/dev/null"

# REST (/api/v1/calendars) and roles: an admin writes, a viewer reads only
ADMIN=$(ctl --get .token token add cal-admin --role admin)
VIEWER=$(ctl --get .token token add cal-viewer --role viewer)
U="http://$HTTP_EP/api/v1"
rest () {   # rest TOKEN STATUS curl-args...: the reply's status is STATUS
    local token="$1" want="$2"; shift 2
    local got
    got=$(curl -s -o "$T/rest.json" -w '%{http_code}' -H "Authorization: Bearer $token" \
          -H 'Content-Type: application/json' "$@")
    [ "$got" = "$want" ] || { echo "  status $got: $(cat "$T/rest.json")"; return 1; }
}
check "a viewer may not add a calendar (403)" \
    rest "$VIEWER" 403 -X POST -d '{"name":"web","excludeCron":"0 0 0 * * ?"}' "$U/calendars"
check "... an admin may (201)" \
    rest "$ADMIN" 201 -X POST -d '{"name":"web","excludeCron":"0 0 0 * * ?"}' "$U/calendars"
check "... and a viewer reads it" rest "$VIEWER" 200 "$U/calendars/web"
check "a viewer may not remove it (403)" rest "$VIEWER" 403 -X DELETE "$U/calendars/web"
ctl job update "$NOON" --calendar web >/dev/null
check "an admin's DELETE of a used calendar is 409" rest "$ADMIN" 409 -X DELETE "$U/calendars/web"
check "... with ?force=yes 400 (booleans: true, 1, false, 0, or the key alone)" \
    rest "$ADMIN" 400 -X DELETE "$U/calendars/web?force=yes"
check "... and with ?force (the key alone) 200, its job re-armed" bash -c "
    curl -s -X DELETE -H 'Authorization: Bearer $ADMIN' '$U/calendars/web?force' | jq -e '.jobs == 1' >/dev/null"

# A schedule not saved yet, with a calendar (the job form's preview):
# GET /api/v1/schedules/next (SCHEDULE_NEXT), any role
ctl calendar add even --exclude-cron '1/2 * * * * ?' >/dev/null
check "schedules/next: a one-second cron with a calendar skipping odd seconds gives even ones" bash -c "
    curl -s -H 'Authorization: Bearer $VIEWER' '$U/schedules/next?scheduleType=CRON&scheduleConf=*+*+*+*+*+%3F&calendar=even&count=6' \
        | jq -e '.next | length == 6 and all(.[]; (. / 1000) % 2 == 0)
                 and ([range(1; 6) as \$i | .[\$i] - .[\$i - 1]] | all(. == 2000))' >/dev/null"
check "... FIX_RATE too, in its zone" bash -c "
    curl -s -H 'Authorization: Bearer $VIEWER' '$U/schedules/next?scheduleType=FIX_RATE&scheduleConf=5&count=3' \
        | jq -e '.next | length == 3 and .[1] - .[0] == 5000' >/dev/null"
check "... a calendar that does not exist is 400 naming it" bash -c "
    curl -s -H 'Authorization: Bearer $VIEWER' '$U/schedules/next?scheduleType=CRON&scheduleConf=*+*+*+*+*+%3F&calendar=nope' \
        | jq -e '.error | test(\"calendar .nope. not found\")' >/dev/null"
check "... a bad expression is 400" rest "$VIEWER" 400 "$U/schedules/next?scheduleType=CRON&scheduleConf=bad"
check "... FIX_DELAY has no planned times (400)" rest "$VIEWER" 400 "$U/schedules/next?scheduleType=FIX_DELAY&scheduleConf=5"
check "... an unknown time zone is 400 'unknown time zone' (the catalogue's text, as JOB_ADD's)" bash -c "
    curl -s -H 'Authorization: Bearer $VIEWER' '$U/schedules/next?scheduleType=CRON&scheduleConf=0+0+*+*+*+%3F&timezone=Bad/Zone' \
        | jq -e '.error | startswith(\"unknown time zone \")' >/dev/null"

# CALENDAR_LIST pages (Large replies): 40 calendars of 10,000 dates pass a
# frame; before, the list answered 400 "ask for fewer items (limit,
# offset)" for good, a command that took neither
python3 -c 'import datetime as d; s = d.date(2030, 1, 1); print("\n".join(str(s + d.timedelta(days=i)) for i in range(10000)))' > "$T/10k.txt"
for i in $(seq 40); do ctl calendar add "big$i" --dates "$T/10k.txt" >/dev/null; done
N=$(ctl calendar list --limit 10000 | jq '.total')
check "calendar list of $N calendars, 40 of 10,000 dates: a page, truncated, with nextOffset" bash -c "
    $CTL --api $API --json calendar list > $T/page1.json
    jq -e '.truncated == true and .nextOffset == (.calendars | length) and .nextOffset < $N' $T/page1.json >/dev/null"
check "... the next page from nextOffset holds the rest, none twice" bash -c "
    next=\$(jq .nextOffset $T/page1.json)
    $CTL --api $API --json calendar list --offset \$next > $T/page2.json
    jq -e '.truncated == false' $T/page2.json >/dev/null &&
    [ \"\$(jq -s '[.[].calendars[].name] | unique | length' $T/page1.json $T/page2.json)\" = $N ]"
check "... limit and offset are judged (400)" bash -c "! $CTL --api $API calendar list --limit 0 2>/dev/null"

xxl_done
