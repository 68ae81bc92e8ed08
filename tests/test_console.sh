#!/bin/bash
# The web console in headless Chromium against a real xxl-scheduler (with
# its HTTP server) and a real agent: sign in, add a GLUE_SHELL job with the
# next fire times previewed, trigger it and follow its log to the end, make
# a second GLUE version, diff, roll back to version 1, switch to Chinese
# (Simplified, then Traditional: each page with no text missing; each
# language table of console/src/i18n.js with exactly en's keys; the first
# visit's language from the browser's), sign out (tests/console/drive.mjs, playwright-core on Debian's chromium);
# and probes of the console's layout and guards: each page at a phone's
# 390 px no wider than the screen with its actions on it, the dashboard's
# chart cards inside their grid at 1366 and 1920 px, its date range and
# "—" while no run has finished, the cron field refusing a bad expression
# (and workflows: the JSON editor's live graph preview, drawn by dagre, a
# cycle refused with the scheduler's text, a run's nodes coloured by state,
# a node opening its log, the page at 390 px and in Chinese)
# before anything is sent, Kill asking first, Kill of a run waiting for a
# maxRunning slot in the log list, deep links (/logs/1) styled.
# All of it under the Content-Security-Policy the scheduler sends: the
# browser's reports of any refusal (securitypolicyviolation events, console
# errors) fail the run, and an inline script added on purpose must be
# refused and reported.  What the browser did is then read back with xxl-ctl.  Screenshots of each
# step: $XXL_BUILD/tests/console-shots/*.png (kept).
# Skipped (77) only when chromium or node is not installed; playwright-core
# comes from the npm registry at the version tests/console/package-lock.json
# pins, into $XXL_BUILD/tests/console-node (npm ci, once).
. "$XXL_SRC/tests/lib.sh"

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ] || ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "# skipped: needs chromium, node and npm (scripts/deps installs them)"
    exit 77
fi
# (XXL_CONSOLE_DIST: another build of the console to drive, e.g. an older one)
DIST="${XXL_CONSOLE_DIST:-$XXL_SRC/console/dist}"
SHOTS="$XXL_BUILD/tests/console-shots"
NODEDIR="$XXL_BUILD/tests/console-node"

# playwright-core, as pinned: installed again only when the lock changed
mkdir -p "$NODEDIR"
if ! cmp -s "$XXL_SRC/tests/console/package-lock.json" "$NODEDIR/package-lock.json" \
    || [ ! -f "$NODEDIR/node_modules/playwright-core/package.json" ]; then
    cp "$XXL_SRC/tests/console/package.json" "$XXL_SRC/tests/console/package-lock.json" "$NODEDIR/"
    chmod u+w "$NODEDIR"/package*.json
    if ! npm ci --prefix "$NODEDIR" --no-audit --no-fund --loglevel=error >"$NODEDIR/npm.log" 2>&1; then
        echo "FAIL - npm ci of tests/console (playwright-core) failed:"; tail -n 20 "$NODEDIR/npm.log"
        exit 1
    fi
fi
# (an ES module finds its packages from its own folder)
cp "$XXL_SRC/tests/console/drive.mjs" "$NODEDIR/drive.mjs"

xxl_store_blind "the console's pages (their REST calls run on both stores in test_http.sh)"
xxl_setup
rm -rf "$SHOTS"; mkdir -p "$SHOTS"

# The scheduler with HTTP on a port of 19000-19999 (this test's range), the
# console served from the source tree's built assets (scheduler/http/console)
cat >>"$T/scheduler.cfg" <<CFG
    http
        console = $DIST
CFG
start_http_scheduler () {
    for _ in 1 2 3 4 5; do
        HTTP_PORT=$((19000 + RANDOM % 1000))
        XXL_SCHEDULER_ARGS="--http 127.0.0.1:$HTTP_PORT" start_scheduler || continue
        if wait_for 10 curl -sf "http://127.0.0.1:$HTTP_PORT/healthz"; then return 0; fi
        kill "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null
    done
    return 1
}
if ! start_http_scheduler; then
    check "the scheduler serves HTTP (--http, scheduler/http/console)" false
    exit 1
fi
URL="http://127.0.0.1:$HTTP_PORT/"
curl -sf "$URL" >"$T/index.html"
check "the console's index.html is served at /" grep -q 'assets/index-' "$T/index.html"
check "its scripts come from files (no inline script, for script-src 'self')" \
    bash -c "grep -q '<script' '$T/index.html' && ! grep -Eq '<script( [^>]*)?>[^<]' '$T/index.html'"

APP=console-app
ctl group add "$APP" --title "Console test" >/dev/null
start_agent console-a "$APP" --tag console=yes
check "agent registered" wait_for 15 agent_registered "$APP" console-a

PASSWORD="pw-$RANDOM-$RANDOM"
check "xxl-ctl user add makes the admin" bash -c \
    "printf '%s\n' '$PASSWORD' | '$CTL' --api '$API' user add console-admin --role admin --password-stdin >/dev/null"

VPASSWORD="pw-$RANDOM-$RANDOM"
check "xxl-ctl user add makes a viewer" bash -c \
    "printf '%s\n' '$VPASSWORD' | '$CTL' --api '$API' user add console-viewer --role viewer --password-stdin >/dev/null"

MARK="mark$RANDOM$RANDOM"
XXL_URL="$URL" XXL_USER=console-admin XXL_PASSWORD="$PASSWORD" XXL_APP="$APP" SHOTS="$SHOTS" \
    XXL_VIEWER=console-viewer XXL_VIEWER_PASSWORD="$VPASSWORD" \
    CHROMIUM="$CHROMIUM" XXL_MARK="$MARK" HOME="$T" XXL_I18N="$XXL_SRC/console/src/i18n.js" \
    timeout 600 node "$NODEDIR/drive.mjs" >"$T/drive.out" 2>&1
rc=$?
cat "$T/drive.out"
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$T/drive.out" | tail -n 1)
if [ -n "$line" ]; then
    PASSED=$((PASSED + ${line%% passed*})); f=${line#*passed, }; FAILED=$((FAILED + ${f%% failed}))
fi
check "the browser's steps ran to the end (exit $rc)" test "$rc" -eq 0 -a -n "$line"

# What the browser did, read back through the api
JOB=$(sed -n 's/^# job //p' "$T/drive.out")
RUN=$(sed -n 's/^# log //p' "$T/drive.out")
if [ -n "$JOB" ] && [ "$JOB" != 0 ]; then
    ctl job show "$JOB" >"$T/job.json"
    ctl glue history "$JOB" >"$T/glue.json"
    check "the job is in $APP, GLUE_SHELL, with its cron, zone and edited author" jq -e \
        '.glueType == "GLUE_SHELL" and .scheduleConf == "0 30 3 * * ?" and .timezone == "Asia/Shanghai" and .author == "console-edited"' \
        "$T/job.json"
    check "its agent tags, typed in the form, canonical" jq -e '.agentTags == "console=yes"' "$T/job.json"
    check "its source is version 1's again after the rollback" bash -c \
        "jq -r .glueSource '$T/job.json' | grep -q '$MARK-v1'"
    check "its GLUE history: v3 'rollback to version 1', v2, v1" jq -e \
        '[.glues[] | .version] == [3,2,1] and .glues[0].glueRemark == "rollback to version 1" and .glues[1].glueRemark == "second version"' \
        "$T/glue.json"
    ctl job list --group "$APP" >"$T/jobs.json"
    check "its copy exists, stopped" jq -e \
        '[.jobs[] | select(.jobDesc | endswith(" copy")) | .triggerStatus] == [0]' "$T/jobs.json"
else
    check "the browser made a job" false
fi
if [ -n "$RUN" ] && [ "$RUN" != 0 ]; then
    check "the triggered run succeeded with the console's parameter" bash -c \
        "'$CTL' --api '$API' --json log show $RUN | jq -e '.handleCode == 200 and .executorParam == \"from-console\"' >/dev/null"
else
    check "the browser triggered a run" false
fi
ctl audit list --limit 1000 >"$T/audit.json"
check "the console's writes are in the audit as console-admin's" jq -e \
    '[.audit[] | select(.who | test("(^|:)console-admin$")) | .type] | (index("JOB_ADD") != null and index("GLUE_ROLLBACK") != null and index("JOB_COPY") != null)' \
    "$T/audit.json"
[ "$FAILED" -eq 0 ] || jq -c '.audit[]' "$T/audit.json" | head -n 30
check "screenshots kept in $SHOTS" test "$(ls "$SHOTS"/*.png | wc -l)" -ge 15
echo "# screenshots: $SHOTS"
xxl_done
