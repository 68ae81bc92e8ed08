#!/usr/bin/env bash
# test_demo.sh -- scripts/demo (outside finding 22), run from a copy of the
# tree whose scripts/deps and scripts/build are stand-ins (the packages
# are not installed, the build is this suite's, reached after a few
# seconds, as a slow build would be): it asks deps for the demo's set
# only, prints progress lines while the build runs, no escape sequence
# when stdout is not a terminal, a console on a free port when 8080 is
# taken, ends with status 0 leaving nothing behind; when the scheduler
# cannot start it names a log that is still there.
. "$(dirname "$0")/lib.sh"
xxl_store_blind "the demo"
xxl_setup
check "scripts/demo parses (sh -n)" sh -n "$XXL_SRC/scripts/demo"
check "scripts/deps parses (sh -n)" sh -n "$XXL_SRC/scripts/deps"
check "scripts/deps refuses an unknown set" bash -c "! '$XXL_SRC/scripts/deps' everything 2>/dev/null"

# fake_top DIR BUILD: a tree with the real demo, stand-in deps and build
# (the build takes 3 s, then links BUILD in as build/)
fake_top () {
    mkdir -p "$1/scripts"
    cp "$XXL_SRC/scripts/demo" "$1/scripts/demo"
    ln -s "$XXL_SRC/console" "$1/console"
    ln -s "$XXL_SRC/sdk" "$1/sdk"
    printf '#!/bin/sh\necho "deps called with: $*" >> "%s/deps.args"\n' "$1" > "$1/scripts/deps"
    printf '#!/bin/sh\nsleep 3\nln -sfn "%s" "%s/build"\n' "$2" "$1" > "$1/scripts/build"
    chmod +x "$1/scripts/deps" "$1/scripts/build"
}

# Port 8080 taken (by this listener, or by whatever holds it already)
python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try: s.bind(("127.0.0.1", 8080)); s.listen(1)
except OSError: pass
print("listening", flush=True); time.sleep(120)' > "$T/listener.out" 2>&1 &
LPID=$!
PIDS="$PIDS $LPID"
wait_for 5 grep -q listening "$T/listener.out"

fake_top "$T/top" "$XXL_BUILD"
mkdir -p "$T/tmp"
TMPDIR="$T/tmp" XXL_DEMO_TICK=1 "$T/top/scripts/demo" </dev/null >"$T/demo.out" 2>"$T/demo.err"
rc=$?
check "the demo ends with status 0" test "$rc" = 0
check "it asks scripts/deps for the demo's set only" grep -qx "deps called with: demo" "$T/top/deps.args"
check "it says what each step does: [1/6] .. [6/6]" \
    bash -c "grep -q '^== \[1/6\] the packages' '$T/demo.out' && grep -q '^== \[2/6\] building xxl' '$T/demo.out' && grep -q '^== \[6/6\] stopping' '$T/demo.out'"
check "it says how long the first build takes" grep -q 'the first time 1 to 4 minutes' "$T/demo.out"
check "it prints progress while the build runs" \
    grep -qE '^   \.\.\. build: [0-9]+ s so far \([0-9]+ of about [0-9]+ files compiled\)' "$T/demo.out"
check "no escape sequence when stdout is not a terminal" bash -c "! grep -q $'\\033' '$T/demo.out' '$T/demo.err'"
check "8080 taken: it says so" grep -q '127.0.0.1:8080 is in use: the console takes a free port' "$T/demo.out"
check "8080 taken: the console still runs, on another port" \
    grep -qE '^console:  http://127\.0\.0\.1:[0-9]+/$' "$T/demo.out"
check "the console is not on 8080" bash -c "! grep -q '^console:  http://127.0.0.1:8080/' '$T/demo.out'"
check "both runs succeeded" \
    bash -c "grep -q 'GLUE_SHELL says: param=demo-param' '$T/demo.out'"
check "every process stopped cleanly" \
    test "$(grep -c '^   process [0-9]* exited 0$' "$T/demo.out")" = 3
check "demo done" grep -q '^== demo done' "$T/demo.out"
check "nothing left behind in TMPDIR" test -z "$(ls -A "$T/tmp")"

# A scheduler that cannot start: the demo fails, naming a log it keeps
mkdir -p "$T/badbuild/scheduler"
printf '#!/bin/sh\necho "E: boom: cannot open the store" >&2\nexit 1\n' > "$T/badbuild/scheduler/xxl-scheduler"
chmod +x "$T/badbuild/scheduler/xxl-scheduler"
fake_top "$T/top2" "$T/badbuild"
mkdir -p "$T/tmp2"
TMPDIR="$T/tmp2" XXL_DEMO_TICK=1 "$T/top2/scripts/demo" </dev/null >"$T/demo2.out" 2>&1
rc=$?
check "a scheduler that cannot start: status 1" test "$rc" = 1
check "it shows the scheduler's last lines" grep -q '| E: boom: cannot open the store' "$T/demo2.out"
kept=$(sed -n 's/^the demo.s logs are kept in //p' "$T/demo2.out")
check "it names the folder of its logs" test -n "$kept"
check "and that folder and the log it named are still there" \
    bash -c "[ -n '$kept' ] && grep -q boom '$kept/scheduler.log'"
kill "$LPID" 2>/dev/null
xxl_done
