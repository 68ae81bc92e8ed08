#!/usr/bin/env bash
# test_pack.sh -- packaging and operations of the built binaries (outside
# findings 17, 18, 21): --version on every binary; the default config
# files read without -c (XXL_CONFIG_DIR standing for SYSCONFDIR/xxl, and
# the user's file of xxl-ctl) and their precedence; --log-level and
# */log_level; the journal's priority prefixes; the webhook line through
# the logger; a failed HTTP login logged with its address and user name.
. "$(dirname "$0")/lib.sh"
xxl_store_blind "packaging and logging"
xxl_setup
RUNNER="$XXL_BUILD/agent/xxl-runner"
VERSION=$(sed -n 's/^PACKAGE_VERSION = //p' "$XXL_BUILD/Makefile")

# --version: "NAME VERSION" on stdout, status 0, for every installed binary
for bin in "$SCHEDULER" "$AGENT" "$CTL" "$RUNNER" "$XXL_BUILD/bridge/xxl-bridge"; do
    name=$(basename "$bin")
    check "$name --version prints '$name $VERSION'" \
        test "$("$bin" --version 2>&1)" = "$name $VERSION"
    check "$name --version exits 0" bash -c "'$bin' --version >/dev/null"
done

# --help names the default files and the log levels
check "xxl-scheduler --help names its default file" \
    bash -c "'$SCHEDULER' --help | grep -q '$XXL_CONFIG_DIR/xxl-scheduler.cfg if it exists'"
check "xxl-agent --help names --log-level" \
    bash -c "'$AGENT' --help | grep -q -- '--log-level LEVEL *error|warning|notice|info|debug'"
check "xxl-ctl --help says the precedence" \
    bash -c "'$CTL' --help | grep -q 'the flag; the -c file; the'"

# The daemons' default config file, in the config folder
ETC="$T/etc"
mkdir -p "$ETC"
port=$((20000 + (RANDOM % 5000) * 2))
cat > "$ETC/xxl-scheduler.cfg" <<CFG
scheduler
    api = "tcp://127.0.0.1:$port"
    agents = "tcp://127.0.0.1:$((port + 1))"
    ready_file = "$T/ready-default"
    log_level = "warning"
    http
        endpoint = none
CFG
XXL_CONFIG_DIR="$ETC" "$SCHEDULER" --db "$XXL_DB" --plugins "$XXL_BUILD/plugins/routers/.libs" \
    --alarms "$XXL_BUILD/plugins/alarms/.libs" ${XXL_SCHEDULER_ARGS:-} 2>"$T/default.log" &
DPID=$!
PIDS="$PIDS $DPID"
check "without -c the scheduler reads \$XXL_CONFIG_DIR/xxl-scheduler.cfg" \
    wait_for 10 test -s "$T/ready-default"
check "its api is the file's" grep -q "^api=tcp://127.0.0.1:$port" "$T/ready-default"
API="tcp://127.0.0.1:$port"
AGENTS="tcp://127.0.0.1:$((port + 1))"
# The agent's default file names the app and the scheduler
cat > "$ETC/xxl-agent.cfg" <<CFG
agent
    app = "default-app"
    scheduler = "$AGENTS"
    address = "from-default-file"
    logdir = "$T/logs-default"
    plugins = "$HANDLERS"
CFG
XXL_CONFIG_DIR="$ETC" "$AGENT" 2>"$T/agent-default.log" &
PIDS="$PIDS $!"
check "without -c the agent reads \$XXL_CONFIG_DIR/xxl-agent.cfg (app, scheduler)" \
    wait_for 10 bash -c "'$CTL' --api '$API' --timeout 300 --json agent list | jq -e '.agents[] | select(.address == \"from-default-file\" and .app == \"default-app\")'"
# The file's log_level = warning: the info lines (migrations, start) are gone,
# and the webhook line comes through the logger with its prefix
check "scheduler/log_level = warning: no info line" bash -c "! grep -q '^I: ' '$T/default.log'"
check "the webhook warning has the logger's prefix" \
    grep -q '^W: (xxl-scheduler) .* alarms: webhook: scheduler/alarm/webhook_allow is empty' "$T/default.log"
check "no line without a level prefix" bash -c "! grep -v '^[EWNID]: (xxl-scheduler) ' '$T/default.log'"
kill -TERM "$DPID"; wait "$DPID" 2>/dev/null

# A default file missing is fine; a -c file missing is an error; a
# default file that is not ZPL is an error
check "no default file: the defaults" \
    bash -c "XXL_CONFIG_DIR='$T/none' '$SCHEDULER' --db '$T/x.db' --api tcp://127.0.0.1:0 --agents tcp://127.0.0.1:0 --http none --ready-file '$T/r2' --plugins '$XXL_BUILD/plugins/routers/.libs' ${XXL_SCHEDULER_ARGS:-} 2>/dev/null & p=\$!; for i in \$(seq 100); do [ -f '$T/r2' ] && break; sleep 0.05; done; kill \$p; wait \$p; [ -f '$T/r2' ]"
out=$(timeout 10 "$SCHEDULER" -c "$T/missing.cfg" 2>&1); rc=$?
check "-c missing file: status 2" test "$rc" = 2
check "-c missing file: says why" bash -c "grep -q 'cannot read config file $T/missing.cfg: No such file' <<< '$out'"
mkdir -p "$T/badetc"
printf 'agent\n  app = "x\n    = =\n' > "$T/badetc/xxl-agent.cfg"
out=$(XXL_CONFIG_DIR="$T/badetc" timeout 10 "$AGENT" 2>&1); rc=$?
check "a default file that is not ZPL: status 2 and its path" \
    bash -c "[ $rc = 2 ] && grep -q 'cannot read config file $T/badetc/xxl-agent.cfg' <<< '$out'"

# A value out of its range names its key and the range (status 2); the
# least value allowed passes that check (and stops at the next one: a
# missing certificate)
printf 'agent\n    app = a\n    log_retention_days = 2\n' > "$T/retention.cfg"
nocert=(--cert "$T/none.cert_secret" --scheduler-key "$T/none.cert")
out=$(timeout 10 "$AGENT" -c "$T/retention.cfg" --scheduler tcp://127.0.0.1:9 --logdir "$T/l" "${nocert[@]}" 2>&1); rc=$?
check "agent/log_retention_days = 2: status 2, naming the key and its least value" \
    bash -c "[ $rc = 2 ] && grep -q 'agent/log_retention_days is 2: at least 3' <<< '$out'"
printf 'agent\n    app = a\n    log_retention_days = 3\n' > "$T/retention.cfg"
out=$(timeout 10 "$AGENT" -c "$T/retention.cfg" --scheduler tcp://127.0.0.1:9 --logdir "$T/l" "${nocert[@]}" 2>&1)
check "agent/log_retention_days = 3 is taken" \
    bash -c "! grep -q 'log_retention_days' <<< '$out' && grep -q 'cannot read certificate' <<< '$out'"

# --log-level: a bad name is refused (status 2; timeout: a daemon that
# does not refuse would run on)
out=$(timeout 10 "$AGENT" --log-level loud --app a --scheduler tcp://127.0.0.1:9 --logdir "$T/l" 2>&1); rc=$?
check "--log-level loud: status 2" test "$rc" = 2
check "--log-level loud: names the levels" \
    bash -c "grep -q 'must be one of error|warning|notice|info|debug' <<< '$out'"
printf 'scheduler\n    log_level = verbose\n' > "$T/level.cfg"
out=$(timeout 10 "$SCHEDULER" -c "$T/level.cfg" --db "$T/l.db" --api tcp://127.0.0.1:0 --agents tcp://127.0.0.1:0 --http none 2>&1); rc=$?
check "scheduler/log_level = verbose: status 2" test "$rc" = 2

# A number setting outside its range stops the start, naming the key and
# the range (scheduler/main.c's table); the same key in range is taken
printf 'scheduler\n    http\n        max_body = 10\n' > "$T/range.cfg"
out=$(timeout 10 "$SCHEDULER" --open -c "$T/range.cfg" --db "$T/l.db" --api tcp://127.0.0.1:0 --agents tcp://127.0.0.1:0 --http none 2>&1); rc=$?
check "http/max_body = 10: status 2" test "$rc" = 2
check "... naming the key and its range" \
    bash -c "grep -q 'scheduler/http/max_body must be a number from 1024 to 4194304' <<< '$out'"
printf 'scheduler\n    http\n        max_body = 2048\n' > "$T/range.cfg"
timeout 20 "$SCHEDULER" --open -c "$T/range.cfg" --db "$T/r.db" --api tcp://127.0.0.1:0 \
    --agents tcp://127.0.0.1:0 --http none --ready-file "$T/r-range" \
    --plugins "$XXL_BUILD/plugins/routers/.libs" --alarms "$XXL_BUILD/plugins/alarms/.libs" \
    2>"$T/range.log" &
RPID=$!
check "http/max_body = 2048: the scheduler starts" wait_for 10 test -s "$T/r-range"
kill -TERM "$RPID" 2>/dev/null; wait "$RPID" 2>/dev/null

# Under the journal (stderr is JOURNAL_STREAM): <N> priorities, no czmq
# letters, no debug line at the default level; --log-level debug lets
# them through
: > "$T/journal.log"
JS=$(stat -c '%d:%i' "$T/journal.log")
rm -f "$T/r3"
JOURNAL_STREAM="$JS" "$SCHEDULER" --db "$T/j.db" --api tcp://127.0.0.1:0 --agents tcp://127.0.0.1:0 \
    --http 127.0.0.1:0 --ready-file "$T/r3" --alarms "$XXL_BUILD/plugins/alarms/.libs" \
    --plugins "$XXL_BUILD/plugins/routers/.libs" ${XXL_SCHEDULER_ARGS:-} 2>>"$T/journal.log" &
JPID=$!
PIDS="$PIDS $JPID"
check "the scheduler starts under JOURNAL_STREAM" wait_for 10 test -s "$T/r3"
check "journal lines start with <N>" bash -c "[ -s '$T/journal.log' ] && ! grep -qv '^<[3-7]>' '$T/journal.log'"
check "the webhook line is a warning, <4>" grep -q '^<4>alarms: webhook: ' "$T/journal.log"
check "info lines are <6>" grep -q '^<6>store: migrated' "$T/journal.log"
# The bridge too, libmicrohttpd's own lines included (an address not this
# host's: its bind fails at once)
: > "$T/bridge-journal.log"
JS=$(stat -c '%d:%i' "$T/bridge-journal.log")
JOURNAL_STREAM="$JS" timeout 10 "$XXL_BUILD/bridge/xxl-bridge" --scheduler tcp://127.0.0.1:9 \
    --listen 192.0.2.1:18080 --insecure --logdir "$T/bridge" 2>>"$T/bridge-journal.log"
check "the bridge that cannot listen says so, <3>" \
    grep -q '^<3>bridge: cannot listen on 192.0.2.1:18080' "$T/bridge-journal.log"
check "... and every line of its, libmicrohttpd's too, starts with <N>" \
    bash -c "grep -q '^<4>bridge: http: ' '$T/bridge-journal.log' && ! grep -qv '^<[3-7]>' '$T/bridge-journal.log'"
check "no debug line by default" bash -c "! grep -q '^<7>' '$T/journal.log'"

# A failed HTTP login: a warning with the address and the user name
HTTP=$(sed -n 's/^http=//p' "$T/r3")
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
    -d '{"username":"mallory","password":"guess"}' "http://$HTTP/api/v1/login")
check "a wrong login is 401" test "$code" = 401
check "a failed login is logged at warning with address and user" \
    wait_for 5 grep -q "^<4>http: failed login of user 'mallory' from 127.0.0.1" "$T/journal.log"
kill -TERM "$JPID"; wait "$JPID" 2>/dev/null

# A key not in the keys folder: refused at the handshake (czmq's ZAP
# handler), logged at warning naming the socket (libzmq's monitor tells
# no peer address); a key in the folder is let in and not logged
C="$T/certs"; K="$T/keys"
mkdir -p "$C" "$K"
"$CTL" keygen scheduler --role admin --dir "$C" >/dev/null
"$CTL" keygen boss --role admin --dir "$C" >/dev/null
"$CTL" keygen rogue --role admin --dir "$C" >/dev/null
cp "$C/boss.cert" "$K/"
: > "$T/keyed.log"
JS=$(stat -c '%d:%i' "$T/keyed.log")
rm -f "$T/r4"
JOURNAL_STREAM="$JS" "$SCHEDULER" --db "$T/k.db" --api tcp://127.0.0.1:0 --agents tcp://127.0.0.1:0 \
    --http none --ready-file "$T/r4" --cert "$C/scheduler.cert_secret" --keys "$K" \
    --plugins "$XXL_BUILD/plugins/routers/.libs" 2>>"$T/keyed.log" &
KPID=$!
PIDS="$PIDS $KPID"
check "a keyed scheduler starts" wait_for 10 test -s "$T/r4"
KAPI=$(sed -n 's/^api=//p' "$T/r4")
as () { timeout 10 "$CTL" --api "$KAPI" --cert "$C/$1.cert_secret" --scheduler-key "$C/scheduler.cert" --timeout 1500 --json group list; }
check "a key in the folder is let in" bash -c "$(declare -f as); C='$C' KAPI='$KAPI' CTL='$CTL'; as boss >/dev/null"
check "... and no refusal is logged" bash -c "! grep -q 'CURVE handshake' '$T/keyed.log'"
check "a key not in the folder is refused" bash -c "$(declare -f as); C='$C' KAPI='$KAPI' CTL='$CTL'; ! as rogue >/dev/null 2>&1"
check "the refusal is a warning naming the socket" \
    wait_for 5 grep -q "^<4>api: a CURVE handshake on $KAPI refused: the client's key is not in the keys folder" "$T/keyed.log"
kill -TERM "$KPID"; wait "$KPID" 2>/dev/null

# xxl-ctl's files: the system's (XXL_CONFIG_DIR here), the user's
# ($XDG_CONFIG_HOME/xxl), the environment, -c and the flag, each over the
# ones before.  The api each time is a name that cannot be an endpoint,
# which xxl-ctl names in its error: that tells which one it took.
used () {   # used ENV... -- the api endpoint xxl-ctl took
    env "$@" "$CTL" job list 2>&1 | sed -n "s/.*cannot use api endpoint '\\([^']*\\)'.*/\\1/p"
}
mkdir -p "$T/sys" "$T/home/xxl"
printf 'ctl\n    api = "from-system"\n' > "$T/sys/xxl-ctl.cfg"
printf 'ctl\n    api = "from-user"\n' > "$T/home/xxl/xxl-ctl.cfg"
printf 'ctl\n    api = "from-c"\n' > "$T/c.cfg"
check "the system file" test "$(used -u XXL_API XXL_CONFIG_DIR="$T/sys")" = from-system
check "the user's file over the system's" \
    test "$(used -u XXL_CONFIG_DIR -u XXL_API XDG_CONFIG_HOME="$T/home")" = from-user
check "the user's file, under HOME/.config" \
    bash -c "mkdir -p '$T/h2/.config' && cp -r '$T/home/xxl' '$T/h2/.config/' && [ \"\$(env -u XXL_CONFIG_DIR -u XDG_CONFIG_HOME -u XXL_API HOME='$T/h2' '$CTL' job list 2>&1 | grep -o from-user)\" = from-user ]"
check "XXL_CONFIG_DIR set: no user's file" \
    test "$(used -u XXL_API XXL_CONFIG_DIR="$T/sys" XDG_CONFIG_HOME="$T/home")" = from-system
check "the environment over the files" \
    test "$(used -u XXL_CONFIG_DIR XDG_CONFIG_HOME="$T/home" XXL_API=from-env)" = from-env
check "-c over the environment, and instead of the default files" \
    test "$(env -u XXL_CONFIG_DIR XDG_CONFIG_HOME="$T/home" XXL_API=from-env "$CTL" -c "$T/c.cfg" job list 2>&1 | grep -o "from-[a-z]*")" = from-c
check "the flag over everything" \
    test "$(env -u XXL_CONFIG_DIR XDG_CONFIG_HOME="$T/home" XXL_API=from-env "$CTL" -c "$T/c.cfg" --api from-flag job list 2>&1 | grep -o "from-[a-z]*")" = from-flag
printf 'ctl\n    timeout = 250\n' > "$T/sys/xxl-ctl.cfg"
check "a key the user's file lacks comes from the system's (ctl/timeout)" \
    bash -c "env -u XXL_API XXL_CONFIG_DIR='$T/sys' '$CTL' --api tcp://127.0.0.1:9 job list 2>&1 | grep -q 'within 250 ms'"
check "xxl-ctl -c missing file: status 2" \
    bash -c "'$CTL' -c '$T/missing.cfg' job list >/dev/null 2>&1; [ \$? = 2 ]"
xxl_done
