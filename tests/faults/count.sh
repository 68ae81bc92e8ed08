#!/usr/bin/env bash
# count.sh -- the fault suite's checker: how many times did each trigger run?
#
# usage: count.sh --db PATH|URL [--probe FILE]... [--acked FILE]... [options]
#
# It joins three sources:
#   - the probe file(s): one line per run start, "<logId> <jobId> i/n pid ms
#     tag mode" (tests/faults/probe.c, probe_glue.sh);
#   - the acknowledged logIds: files whose lines start with a logId the
#     client got back from `job trigger` (other fields ignored);
#   - the store, read with `sqlite3 -readonly` (xxl_job_log), or with psql
#     in a read-only session when --db is a postgresql:// URL: every row of
#     the jobs under test (the planner's CRON/FIX_RATE/MISFIRE rows, retries,
#     children, and manual triggers whether or not their reply arrived).
# and counts, for every logId of (acknowledged ids U store rows):
#   once        started exactly once
#   twice       started two or more times                          (never allowed)
#   never       never started, and not excused (below)
#   excused     never started, its row failed, and its triggerMsg or
#               handleMsg matches --excuse REGEX (e.g. a run its agent's
#               death ended before it started, when the scenario allows it)
#   unfinished  its row has handleCode 0 and triggerCode not 500
#   missing     acknowledged, but no row in the store              (never allowed)
#   lied        its row says handleCode 200 but no run started     (never allowed)
#   late        started although its row says the trigger failed (500): the
#               scheduler gave up on it, a retry or failover may replace it (never allowed)
#   unknown     a run started whose logId has no row and was not acknowledged
#               (a run with no trace in the store)                 (never allowed)
# and for each --cron job: every planned instant between its first and last
# CRON row present exactly once (gaps: missing instants; the unique index
# forbids duplicates), unless the job's rows say MISFIRE for the outage.
#
# Options:
#   --jobs "ID ..."        only store rows of these jobs (default: every job)
#   --exclude "ID ..."     ignore store rows and runs of these jobs (witnesses)
#   --cron "ID ..."        jobs whose CRON rows must cover every instant
#   --cron-step MS         the step of those crons (default 1000)
#   --excuse REGEX         see `excused` (extended regex, matched by awk)
#   --chains               also count by executor param: rows with the same
#               param are one logical trigger and its retries; a chain that
#               ran more than once counts as twice, one that never ran as
#               never (or excused, by its last row's message)
#   --min-id N --max-id N  only logIds in [N, M] (store rows, acked ids, runs)
#   --removed "ID ..."     removed jobs: their acked ids may be missing/never
#   --allow-twice N  --allow-never N  --allow-unfinished N  --allow-gaps N
#   --allow-late N         allowances (default 0 each; a scenario that allows
#                          late runs shows itself why each one is excusable)
#   --show N               print at most N offending ids per category (20)
#   --label TEXT           a prefix for the verdict line
# Prints "counts: ..." and "verdict: PASS" or "verdict: FAIL (...)" and
# exits 0 on PASS, 1 on FAIL, 2 on a usage error.

set -u
CHAINS=0 MINID=0 MAXID=9223372036854775807 DB="" PROBES=() ACKED=() JOBS="" EXCLUDE="" CRON="" STEP=1000 EXCUSE="" REMOVED=""
ALLOW_TWICE=0 ALLOW_NEVER=0 ALLOW_UNFINISHED=0 ALLOW_GAPS=0 ALLOW_LATE=0 SHOW=20 LABEL=""
while [ $# -gt 0 ]; do
    case "$1" in
        --db) DB="$2"; shift 2 ;;
        --probe) PROBES+=("$2"); shift 2 ;;
        --acked) ACKED+=("$2"); shift 2 ;;
        --jobs) JOBS="$2"; shift 2 ;;
        --exclude) EXCLUDE="$2"; shift 2 ;;
        --cron) CRON="$2"; shift 2 ;;
        --cron-step) STEP="$2"; shift 2 ;;
        --excuse) EXCUSE="$2"; shift 2 ;;
        --removed) REMOVED="$2"; shift 2 ;;
        --min-id) MINID="$2"; shift 2 ;;
        --chains) CHAINS=1; shift ;;
        --max-id) MAXID="$2"; shift 2 ;;
        --allow-twice) ALLOW_TWICE="$2"; shift 2 ;;
        --allow-never) ALLOW_NEVER="$2"; shift 2 ;;
        --allow-unfinished) ALLOW_UNFINISHED="$2"; shift 2 ;;
        --allow-gaps) ALLOW_GAPS="$2"; shift 2 ;;
        --allow-late) ALLOW_LATE="$2"; shift 2 ;;
        --show) SHOW="$2"; shift 2 ;;
        --label) LABEL="$2 "; shift 2 ;;
        -h|--help) sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "count.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
case "$DB" in
    postgresql://*|postgres://*) PG=1 ;;
    *) PG=0
       [ -n "$DB" ] && [ -f "$DB" ] || { echo "count.sh: --db PATH of an existing store needed" >&2; exit 2; } ;;
esac

W=$(mktemp -d /tmp/xxl-count.XXXXXX)
trap 'rm -rf "$W"' EXIT

idlist () { echo "$1" | tr -s ' ,' '\n' | grep -E '^[0-9]+$' | paste -sd, -; }
WHERE="id BETWEEN $MINID AND $MAXID"
[ -n "$(idlist "$JOBS")" ] && WHERE="$WHERE AND job_id IN ($(idlist "$JOBS"))"
[ -n "$(idlist "$EXCLUDE")" ] && WHERE="$WHERE AND job_id NOT IN ($(idlist "$EXCLUDE"))"

# A store that the scheduler is writing can be busy for a moment
q () {
    local out
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        if [ "$PG" = 1 ]; then
            out=$(PGOPTIONS="-c default_transaction_read_only=on -c client_min_messages=warning" \
                  "${PG_BIN:-/usr/bin}/psql" -X -q -A -t -F $'\t' -d "$DB" -c "$1" 2>"$W/sqlerr")
        else
            out=$(sqlite3 -readonly -batch -noheader -separator $'\t' "$DB" \
                  ".timeout 5000" "$1" 2>"$W/sqlerr")
        fi
        if [ $? = 0 ]; then
            printf '%s\n' "$out"; return 0
        fi
        sleep 0.2
    done
    echo "count.sh: the store's query failed: $(cat "$W/sqlerr")" >&2
    return 1
}

# rows: id job trigger_code handle_code trigger_type schedule_time msg
#  (msg: the last line of triggerMsg and handleMsg, tabs and newlines made spaces)
if [ "$PG" = 1 ]; then
    q "SELECT id, job_id, trigger_code, handle_code, COALESCE(trigger_type,''),
              COALESCE(CAST(schedule_time AS TEXT),''),
              replace(replace(COALESCE(executor_param,''), chr(9), ' '), chr(10), ' '),
              replace(replace(replace('...' || right(COALESCE(trigger_msg,''), 160) || ' | ' || substr(COALESCE(handle_msg,''), 1, 200),
                      chr(9), ' '), chr(10), ' '), chr(13), ' ')
       FROM xxl_job_log WHERE $WHERE ORDER BY id" > "$W/rows" || exit 2
else
    q "SELECT id, job_id, trigger_code, handle_code, IFNULL(trigger_type,''), IFNULL(schedule_time,''),
              replace(replace(IFNULL(executor_param,''), char(9), ' '), char(10), ' '),
              replace(replace(replace('...' || substr(IFNULL(trigger_msg,''), -160) || ' | ' || substr(IFNULL(handle_msg,''), 1, 200),
                      char(9), ' '), char(10), ' '), char(13), ' ')
       FROM xxl_job_log WHERE $WHERE ORDER BY id" > "$W/rows" || exit 2
fi
# all rows' ids (an unknown run is one with no row at all, whatever its job)
q "SELECT id, job_id FROM xxl_job_log" > "$W/allids" || exit 2

: > "$W/probe"
for f in ${PROBES[@]+"${PROBES[@]}"}; do [ -f "$f" ] && cat "$f" >> "$W/probe"; done
: > "$W/acked"
for f in ${ACKED[@]+"${ACKED[@]}"}; do
    [ -f "$f" ] && awk '$1 ~ /^[0-9]+$/ { print $1 }' "$f" >> "$W/acked"
done

awk -F'\t' -v excuse="$EXCUSE" -v removed=" $(echo "$REMOVED" | tr -s ',' ' ') " \
    -v exclude=" $(echo "$EXCLUDE" | tr -s ',' ' ') " -v show="$SHOW" -v minid="$MINID" -v maxid="$MAXID" -v chains="$CHAINS" \
    -v probe="$W/probe" -v acked="$W/acked" -v allids="$W/allids" '
BEGIN {
    while ((getline l < probe) > 0) {
        split(l, f, " ")
        if (f[1] !~ /^[0-9]+$/) { bad_lines++; continue }
        if (f[1] + 0 < minid + 0 || f[1] + 0 > maxid + 0) continue
        runs[f[1]]++; rjob[f[1]] = f[2]; rwho[f[1]] = rwho[f[1]] " " f[6] "/" f[4] "@" f[5]
    }
    while ((getline l < allids) > 0) { split(l, f, "\t"); inall[f[1]] = f[2] }
    while ((getline l < acked) > 0) if (l + 0 >= minid + 0 && l + 0 <= maxid + 0) { ack[l] = 1; nacked++ }
}
{
    id = $1; row[id] = 1; job[id] = $2; tc[id] = $3; hc[id] = $4; type[id] = $5; par[id] = $7; msg[id] = $8
    nrows++
}
function note(cat, id, text,   r) {
    count[cat]++
    if (count[cat] <= show) detail = detail sprintf("  %-10s logId %s %s\n", cat, id, text)
    # the cause, for a summary: the end of the trigger section, and handleMsg
    r = (id in msg) ? msg[id] : text
    sub(/.*<<<<<<<<<<< /, "", r); gsub(/[0-9]+/, "N", r); gsub(/  +/, " ", r)
    cause[cat ": " substr(r, 1, 140)]++
}
function rowtext(id) {
    return sprintf("job %s %s triggerCode=%s handleCode=%s runs=%d%s: %s",
                   job[id], type[id], tc[id], hc[id], runs[id] + 0, rwho[id], substr(msg[id], 1, 300))
}
END {
    # the universe: rows under test, and acknowledged ids
    for (id in row) u[id] = 1
    for (id in ack) u[id] = 1
    for (id in u) {
        n = runs[id] + 0
        if (!(id in row)) {
            if (id in inall) {     # acked, row of a job not under test
                j = inall[id]
                if (index(exclude, " " j " ")) continue
                note("other", id, "acked, its row belongs to job " j " (not under test)")
                continue
            }
            if (n >= 2) note("twice", id, "acked, no row, started " n " times:" rwho[id])
            if (index(removed, " " rjob[id] " ")) { count["removed"]++; continue }
            if (n == 0) note("missing", id, "acknowledged, but no row in the store and no run")
            else if (n == 1) note("missing", id, "acknowledged and ran, but no row in the store:" rwho[id])
            continue
        }
        if (n >= 1 && tc[id] == 500) note("late", id, rowtext(id))
        if (chains) {
            # chain: all rows of the job with this param; counted at its last row
            ck = job[id] SUBSEP par[id]; cruns[ck] += n
            cmem[ck] = cmem[ck] sprintf(" %s(%s,tc=%s,hc=%s,runs=%d%s)", id, type[id], tc[id], hc[id], n, rwho[id])
            if (!(ck in clast) || id + 0 > clast[ck] + 0) clast[ck] = id
        }
        if (n >= 2) note("twice", id, rowtext(id))
        else if (n == 1) count["once"]++
        else if (chains) ;      # judged by its chain
        else {
            failed = (tc[id] != 0 && tc[id] != 200) || (hc[id] != 0 && hc[id] != 200)
            if (hc[id] == 200) note("lied", id, rowtext(id))
            else if (index(removed, " " job[id] " ")) count["removed"]++
            else if (failed && excuse != "" && msg[id] ~ excuse) count["excused"]++
            else if (hc[id] == 0 && tc[id] != 500) ;   # unfinished, below
            else note("never", id, rowtext(id))
        }
        if (hc[id] == 0 && tc[id] != 500) note("unfinished", id, rowtext(id))
    }
    for (ck in clast) {
        id = clast[ck]; count["chains"]++
        if (cruns[ck] >= 2) note("twice", id, "chain of param [" par[id] "] ran " cruns[ck] " times; rows" cmem[ck] "; last row " rowtext(id))
        else if (cruns[ck] == 0) {
            if (hc[id] == 200) note("lied", id, rowtext(id))
            else if (excuse != "" && msg[id] ~ excuse) count["excused"]++
            else if (hc[id] == 0 && tc[id] != 500) ;
            else note("never", id, "chain of param [" par[id] "] never ran; last row " rowtext(id))
        }
    }
    for (id in runs) if (!(id in u) && !(id in inall)) {
        if (index(exclude, " " rjob[id] " ") || index(removed, " " rjob[id] " ")) continue
        note("unknown", id, "job " rjob[id] ": started " runs[id] " time(s) with no row and no ack:" rwho[id])
    }
    printf "rows=%d acked=%d once=%d twice=%d never=%d excused=%d unfinished=%d missing=%d lied=%d late=%d unknown=%d removed=%d other=%d%s\n",
        nrows, nacked, count["once"], count["twice"], count["never"], count["excused"], count["unfinished"],
        count["missing"], count["lied"], count["late"], count["unknown"], count["removed"], count["other"],
        chains ? " chains=" count["chains"] + 0 : "" > "/dev/stderr"
    printf "%d %d %d %d %d %d %d %d\n", count["twice"], count["never"], count["unfinished"],
        count["missing"], count["lied"], count["unknown"], count["once"], count["late"]
    for (c in cause) printf "  cause     %5d x %s\n", cause[c], c > "/dev/stderr"
    printf "%s", detail > "/dev/stderr"
}' "$W/rows" > "$W/nums" 2> "$W/report"

read -r TWICE NEVER UNFINISHED MISSING LIED UNKNOWN ONCE LATE < "$W/nums"
COUNTS=$(head -1 "$W/report")

# Cron coverage: every instant from the first to the last CRON row, once
GAPS=0
GAPTEXT=""
for j in $(echo "$CRON" | tr -s ',' ' '); do
    q "SELECT schedule_time, trigger_type FROM xxl_job_log WHERE job_id = $j
       AND schedule_time IS NOT NULL ORDER BY schedule_time" > "$W/cron-$j" || exit 2
    read -r g text < <(awk -F'\t' -v step="$STEP" -v j="$j" '
        $2 == "CRON" { n++; if (n == 1) first = $1; else if ($1 - last > step) {
                           # instants missing between two CRON rows, unless a MISFIRE row stands for them
                           miss = ($1 - last) / step - 1
                           if (!misfire_since) { gaps += miss; txt = txt sprintf(" %.0f-%.0f(%d)", last + step, $1 - step, miss) } }
                       last = $1; misfire_since = 0; next }
        $2 == "MISFIRE" { misfire_since = 1; nmis++ }
        END { printf "%d job %s: %d CRON rows, %d MISFIRE,%s\n", gaps, j, n, nmis, (txt == "" ? " no gaps" : " gaps" txt) }' "$W/cron-$j")
    GAPS=$((GAPS + g))
    GAPTEXT="$GAPTEXT
  cron $text"
done

echo "counts: $COUNTS gaps=$GAPS"
[ -n "$CRON" ] && echo "${GAPTEXT#?}"
WHY=""
[ "$TWICE" -gt "$ALLOW_TWICE" ] && WHY="$WHY; $TWICE run twice (allowed $ALLOW_TWICE): no run executes twice"
[ "$NEVER" -gt "$ALLOW_NEVER" ] && WHY="$WHY; $NEVER never ran (allowed $ALLOW_NEVER): every acknowledged trigger runs exactly once"
[ "$UNFINISHED" -gt "$ALLOW_UNFINISHED" ] && WHY="$WHY; $UNFINISHED unfinished (allowed $ALLOW_UNFINISHED): no lost result / a stuck run ends"
[ "$MISSING" -gt 0 ] && WHY="$WHY; $MISSING acknowledged without a row: a trigger's row exists before it is acknowledged"
[ "$LIED" -gt 0 ] && WHY="$WHY; $LIED rows say 200 with no run: no lost result"
[ "$LATE" -gt "$ALLOW_LATE" ] && WHY="$WHY; $LATE ran after the scheduler gave up on them: a RUN given up on never starts later (allowed $ALLOW_LATE)"
[ "$UNKNOWN" -gt 0 ] && WHY="$WHY; $UNKNOWN runs without a row: a row exists before its RUN is sent"
[ "$GAPS" -gt "$ALLOW_GAPS" ] && WHY="$WHY; $GAPS planned instants without a row (allowed $ALLOW_GAPS): every planned second fires once"
sed -n '2,$p' "$W/report" | grep '^  cause' | sort -k2,2nr
sed -n '2,$p' "$W/report" | grep -v '^  cause' | sort -k3,3n
if [ -z "$WHY" ]; then
    echo "${LABEL}verdict: PASS (once=$ONCE)"
    exit 0
fi
echo "${LABEL}verdict: FAIL (${WHY#; })"
exit 1
