#!/usr/bin/env bash
# test_import.sh -- xxl-ctl import xxl-job against a real scheduler
# (issue 32, DESIGN §11): the dumps in tests/import/ (XXL-JOB 2.4 as
# mysqldump writes it, the hand-written shape of XXL-JOB's schema file, 3.x
# columns, pre-2.3 job_cron) map every field, schedule, route, block,
# glue type and glue history; children are remapped; jobs stay stopped
# unless --start; what cannot be mapped is listed; a dry run and a bad
# dump change nothing; a failure midway is undone; a re-run duplicates
# nothing.
. "$(dirname "$0")/lib.sh"
xxl_setup
D="$XXL_SRC/tests/import"

start_scheduler || exit 1

# A dry run judges, prints, and changes nothing
OUT=$(ctl import xxl-job "$D/full.sql" --dry-run)
check "dry run: the counts (2 groups, 14 jobs, 11 glue versions)" \
    test "$(jq -c '[.groups, .jobs, .glues, .dryRun]' <<<"$OUT")" = '[2,14,11,true]'
check "dry run: nothing created" test "$(ctl group list | jq '.groups | length')" = 0

# A malformed dump: its line named, nothing created
has () { grep -q -- "$2" <<<"$1"; }
ERR=$("$CTL" --api "$API" import xxl-job "$D/bad.sql" 2>&1 >/dev/null); RC=$?
check "a malformed dump fails (status 1)" test "$RC" = 1
check "  naming its line" has "$ERR" "bad.sql: line 4: a quoted text (') that never ends (nothing imported)"
check "  and creates nothing" test "$(ctl group list | jq '.groups | length')" = 0
ERR=$("$CTL" --api "$API" import xxl-job "$T/none.sql" 2>&1 >/dev/null); RC=$?
check "a missing file: status 1, a clear error" has "$RC $ERR" "1 xxl-ctl: cannot read"

# The full dump
OUT=$(ctl import xxl-job "$D/full.sql")
check "import: 2 groups, 14 jobs, 11 glue versions" \
    test "$(jq -c '[.groups, .jobs, .glues, .dryRun]' <<<"$OUT")" = '[2,14,11,false]'
id () { jq -r ".jobIds[\"$1\"]" <<<"$OUT"; }
skipped () { jq -e --arg s "$1" '.skipped | any(contains($s))' <<<"$OUT" >/dev/null; }
check "skipped: the invalid appname" skipped "group 3 'bad app!': appname"
check "skipped: the job of that group" skipped "job 14 'in a bad group': its group is skipped"
check "skipped: a bad cron" skipped "job 16 'bad cron': cron 'not a cron'"
check "skipped: a child not in the dump" skipped "child job 99 not linked: no such job in the dump"
check "skipped: a link that closes a cycle" skipped "job 13 'cycle b': child job 12 not linked: it would close a cycle"
check "5 skipped in all (GLUE_PYTHON2 is not)" test "$(jq '.skipped | length' <<<"$OUT")" = 5

check "a manual group keeps its addresses, its title its quote" \
    test "$(ctl group show imp-billing | jq -c '[.addressType, .addressList, .title]')" = \
         '[1,"http://127.0.0.1:9999/,http://127.0.0.1:9998/","Billing '"'"'prod'"'"'"]'
J1=$(ctl job show "$(id 1)")
check "CRON job: schedule, route, block, misfire, author, alarm e-mail, Chinese desc" \
    test "$(jq -c '[.jobDesc, .scheduleType, .scheduleConf, .executorRouteStrategy, .executorBlockStrategy, .misfireStrategy, .author, .alarmEmail, .executorHandler]' <<<"$J1")" = \
         '["测试任务1 daily","CRON","0 0 0 * * ? *","FIRST","SERIAL_EXECUTION","DO_NOTHING","XXL","ops@example.com","demoJobHandler"]'
check "children remapped to the new ids" \
    test "$(jq -r .childJobId <<<"$J1")" = "$(id 2),$(id 3)"
check "imported jobs are stopped (XXL-JOB's were running)" \
    test "$(ctl job list | jq '[.jobs[] | select(.triggerStatus != 0)] | length')" = 0
J2=$(ctl job show "$(id 2)")
check "FIX_RATE job: conf, misfire, block, timeout, retries, author in Chinese" \
    test "$(jq -c '[.scheduleType, .scheduleConf, .misfireStrategy, .executorBlockStrategy, .executorTimeout, .executorFailRetryCount, .author, .executorRouteStrategy]' <<<"$J2")" = \
         '["FIX_RATE","30","FIRE_ONCE_NOW","DISCARD_LATER",60,3,"李雷","ROUND"]'
check "param with quotes, backslashes, newline and tab survives byte-exact" \
    test "$(jq -c .executorParam <<<"$J2")" = '"{\"a\":\"b'"'"'s \\\\ c\",\n \"tab\":\"\t\"}"'
check "NONE job with NULL param: empty, COVER_EARLY, RANDOM" \
    test "$(ctl job show "$(id 3)" | jq -c '[.scheduleType, .executorParam, .executorBlockStrategy, .executorRouteStrategy]')" = \
         '["NONE","","COVER_EARLY","RANDOM"]'
for pair in 5:GLUE_PYTHON:CONSISTENT_HASH 6:GLUE_NODEJS:LEAST_FREQUENTLY_USED \
            7:GLUE_PHP:LEAST_RECENTLY_USED 8:GLUE_POWERSHELL:FAILOVER 9:GLUE_GROOVY:FIRST \
            10:BEAN:SHARDING_BROADCAST 11:BEAN:BUSYOVER 15:GLUE_PYTHON2:FIRST; do
    IFS=: read -r old glue route <<<"$pair"
    check "job $old: glue type $glue, route $route" \
        test "$(ctl job show "$(id "$old")" | jq -r '[.glueType, .executorRouteStrategy] | join(":")')" = "$glue:$route"
done
H=$(ctl glue history "$(id 4)")
check "glue history: XXL-JOB's three versions, oldest first, with their remarks" \
    test "$(jq -c '[.glues[] | [.version, .glueRemark]]' <<<"$H")" = '[[3,"第三版"],[2,"second"],[1,"第一版"]]'
check "glue version 1's source" \
    test "$(ctl glue show "$(id 4)" --version 1 | jq -r .glueSource)" = $'#!/bin/bash\necho v1'
printf '#!/bin/bash\necho "hello" '"'"'world'"'"' \\\\n\r\necho 你好\n\texit 0\n' >"$T/want4"
ctl glue show "$(id 4)" | jq -j .glueSource >"$T/got4"
check "the newest source: quotes, escapes, CRLF, tab, Chinese byte-exact" cmp "$T/want4" "$T/got4"
check "GLUE job with one history row equal to its source: one version" \
    test "$(ctl glue history "$(id 5)" | jq .total)" = 1
check "GLUE_PYTHON2 job (XXL-JOB 3.2): its history row, then its source" \
    test "$(ctl glue history "$(id 15)" | jq -c '[.glues[] | [.version, .glueType, .glueRemark]]')" = \
         '[[2,"GLUE_PYTHON2",""],[1,"GLUE_PYTHON2","py2 v1"]]'
check "GLUE_PYTHON2 job's source byte-exact" \
    test "$(ctl glue show "$(id 15)" | jq -c .glueSource)" = '"# -*- coding: utf-8 -*-\nimport sys\nprint \"py2\", sys.argv[1]\n"'
check "cycle a -> cycle b linked, the link back dropped" \
    test "$(ctl job show "$(id 12)" | jq -r .childJobId):$(ctl job show "$(id 13)" | jq -r .childJobId)" = "$(id 13):"

# A re-run duplicates nothing: groups by appname, jobs by (group, desc, handler)
JOBS=$(ctl job list | jq '.jobs | length')
AGAIN=$(ctl import xxl-job "$D/full.sql")
check "re-run: nothing new, 2 groups and 14 jobs reused" \
    test "$(jq -c '[.groups, .jobs, .glues, .reused.groups, .reused.jobs]' <<<"$AGAIN")" = '[0,0,0,2,14]'
check "re-run: the same ids" test "$(jq -c .jobIds <<<"$AGAIN")" = "$(jq -c .jobIds <<<"$OUT")"
check "re-run: job count unchanged" test "$(ctl job list | jq '.jobs | length')" = "$JOBS"
check "re-run (text): says what exists" \
    has "$("$CTL" --api "$API" import xxl-job "$D/full.sql")" "job 4 'shell 脚本': exists as job $(id 4), not imported again"

# A failure midway removes what the run created
ERR=$("$CTL" --api "$API" import xxl-job "$D/midway.sql" 2>&1 >/dev/null); RC=$?
check "midway failure: status 1" test "$RC" = 1
check "  the failing job named" has "$ERR" "import failed at job 2: alarm targets"
check "  the undo said" has "$ERR" "undone: removed the 1 job(s) and 1 group(s) it had created"
check "  its group is gone" bash -c "! '$CTL' --api '$API' group show imp-midway >/dev/null 2>&1"
check "  its job is gone" test "$(ctl job list | jq '.jobs | length')" = "$JOBS"

# --timezone: XXL-JOB ran crons in its admin's local time.  An unknown
# zone is a usage error before anything is made; without the option the
# text says the crons run in UTC
NGROUPS=$(ctl group list | jq '.groups | length')
ERR=$("$CTL" --api "$API" import xxl-job "$D/sample.sql" --timezone Mars/Base 2>&1 >/dev/null); RC=$?
check "--timezone of an unknown zone: status 2, named, nothing imported" \
    has "$RC $ERR" "^2 xxl-ctl: --timezone: unknown time zone 'Mars/Base' (nothing imported)"
check "  nothing created" test "$(ctl group list | jq '.groups | length')" = "$NGROUPS"
check "without --timezone the text says the crons run in UTC" \
    has "$("$CTL" --api "$API" import xxl-job "$D/sample.sql" --dry-run)" \
        "^note: 1 cron job(s) would run in UTC; XXL-JOB ran them in its admin's local time"
# XXL-JOB's schema file's shape (now(), USE, commit), 3.x columns, job_cron
OUT=$(ctl import xxl-job "$D/sample.sql" --timezone Asia/Shanghai)
check "sample: the demo group and job, in the zone given" \
    test "$(jq -c '[.groups, .jobs, .timezone]' <<<"$OUT")" = '[1,1,"Asia/Shanghai"]'
SJ=$(jq -r '.jobIds["1"]' <<<"$OUT")
check "sample: the demo job's cron, Chinese desc and zone" \
    test "$(ctl job show "$SJ" | jq -c '[.jobDesc, .scheduleConf, .executorHandler, .timezone]')" = \
         '["演示任务1","0 0 3 * * ? *","demoJobHandler","Asia/Shanghai"]'
# (03:00 in Shanghai is 19:00 UTC; UTC's 03:00 would be 3)
check "  its 03:00 is Shanghai's: 19:00 UTC" \
    test "$(ctl job next "$SJ" -n 1 | jq '.next[0] / 1000 | strftime("%H")' -r)" = 19
OUT=$(ctl import xxl-job "$D/v3.sql" --start)
check "3.x: name columns, CRLF, column order; --start starts what ran, not NONE" \
    test "$(ctl job show "$(jq -r '.jobIds["21"]' <<<"$OUT")" | jq -c '[.jobDesc, .triggerStatus, .executorParam, .childJobId]')" = \
         "[\"每分钟任务\",1,\"{\\r\\n  \\\"k\\\": \\\"v\\\"\\r\\n}\",\"$(jq -r '.jobIds["22"]' <<<"$OUT")\"]"
check "3.x: the group's title from name; the NONE job stopped; started 1" \
    test "$(ctl --get .title group show imp-v3):$(ctl job show "$(jq -r '.jobIds["22"]' <<<"$OUT")" | jq .triggerStatus):$(jq .started <<<"$OUT")" = "三号执行器:0:1"
check "--start: a cron that fires never again is imported stopped, and said" \
    test "$(ctl job show "$(jq -r '.jobIds["23"]' <<<"$OUT")" | jq .triggerStatus):$(jq -r '.skipped[0]' <<<"$OUT")" = \
         "0:job 23 'expired': not started: cron '0 0 0 1 1 ? 2001' fires never again"
OUT=$(ctl import xxl-job "$D/old.sql")
check "2.x before 2.3: job_cron is a CRON schedule" \
    test "$(ctl job show "$(jq -r '.jobIds["1"]' <<<"$OUT")" | jq -c '[.scheduleType, .scheduleConf]')" = '["CRON","0 0/5 * * * ?"]'
check "a text that is not UTF-8: the job skipped, the JSON still valid (U+FFFD)" \
    test "$(jq -r '.skipped[0]' <<<"$OUT")" = "job 2 'bad � byte' (line 9): a column is not valid UTF-8"


# A big dump: 50,000 jobs in two chains of 25,000 (one each way, so that
# a walk from each job in turn goes down the whole first chain), the last
# job's child closing a cycle, and a job whose desc holds an ESC and a
# newline.  Judged in O(n log n) (no timing asserted): the cycle's last
# link is the one dropped, every other link kept; the desc escaped
N=50000
awk -v n=$N 'BEGIN {
    q = "\047"
    print "INSERT INTO `xxl_job_group` (`id`, `app_name`, `title`, `address_type`," \
          " `address_list`) VALUES (1," q "imp-chains" q "," q "chains" q ",0,NULL);"
    for (i = 1; i <= n + 1; i++) {
        if ((i - 1) % 1000 == 0)
            printf "INSERT INTO `xxl_job_info` (`id`, `job_group`, `job_desc`," \
                   " `executor_handler`, `child_jobid`) VALUES "
        else
            printf ","
        child = i <= n / 2? (i > 1? i - 1: ""): i < n? i + 1: i == n? n - 2: ""
        if (i == n + 1)
            printf "(%d,99,%sevil\033[31m\\nline%s,%sh%s,%s%s)", i, q, q, q, q, q, q
        else
            printf "(%d,1,%sj%d%s,%sh%s,%s%s%s)", i, q, i, q, q, q, q, child, q
        if (i % 1000 == 0 || i == n + 1)
            print ";"
    }
}' >"$T/chains.sql"
OUT=$(ctl import xxl-job "$T/chains.sql" --dry-run)
check "50,000 chained jobs: 1 group and every job mapped, 2 skipped" \
    test "$(jq -c '[.groups, .jobs, (.skipped | length)]' <<<"$OUT")" = "[1,$N,2]"
check "  the link closing the cycle dropped" \
    test "$(jq -r '.skipped[1]' <<<"$OUT")" = \
         "job $N 'j$N': child job $((N - 2)) not linked: it would close a cycle, which xxl refuses"
check "  the ESC and newline of the dump escaped in the reason" \
    test "$(jq -r '.skipped[0]' <<<"$OUT")" = \
         "job $((N + 1)) 'evil\\x1b[31m\\nline': its group is not in the dump"
"$CTL" --api "$API" import xxl-job "$T/chains.sql" --dry-run >"$T/chains.txt"
check "  every other link kept: $((N - 2)) children, one a job but the chains' ends" \
    test "$(grep -o '[0-9]* child(ren)' "$T/chains.txt" | sort | uniq -c | awk '{ printf "%s:%s ", $1, $2 }')" = \
         "2:0 $((N - 2)):1 "
check "  the text holds no control character of the dump" \
    bash -c '! grep -q "$(printf "\033")" "$1"' _ "$T/chains.txt"
xxl_done
