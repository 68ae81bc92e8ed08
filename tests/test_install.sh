#!/usr/bin/env bash
# test_install.sh BINDIR [UNITDIR [MANDIR]] -- run by `make installcheck`
# (and so by distcheck): the installed daemons, given no --plugins and no
# runner path, find the installed routers, handlers and xxl-runner, and a
# run succeeds; the installed systemd units (in UNITDIR) start the
# installed binaries and pass `systemd-analyze verify` where it exists;
# the installed man pages (in MANDIR) read without warnings.
set -u
BIN="$1"
UNITS="${2:-}"
MANS="${3:-}"
T=$(mktemp -d /tmp/xxl-install.XXXXXX)
PIDS=""
trap 'for p in $PIDS; do kill $p 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"' EXIT
port=$((30000 + (RANDOM % 1000) * 2))
API="tcp://127.0.0.1:$port"
AGENTS="tcp://127.0.0.1:$((port + 1))"
unset XXL_RUNNER
# No security flags: the scheduler makes its local keys in the state folder
# ($T/state here, not /var/lib/xxl), where the agent and xxl-ctl find them
export XXL_STATE_DIR="$T/state"
# The installed sample configs (SYSCONFDIR/xxl) would be read by the
# daemons without -c: the runs below stand on their flags alone
export XXL_CONFIG_DIR="$T/etc"
"$BIN/xxl-scheduler" --db "$T/xxl.db" --api "$API" --agents "$AGENTS" --ready-file "$T/ready" \
    2>"$T/scheduler.log" &
PIDS="$PIDS $!"
for _ in $(seq 200); do [ -f "$T/ready" ] && break; sleep 0.05; done
"$BIN/xxl-agent" --app install-app --scheduler "$AGENTS" --address i1 --logdir "$T/logs" \
    2>"$T/agent.log" &
PIDS="$PIDS $!"
ctl () { "$BIN/xxl-ctl" --api "$API" --json "$@"; }
for _ in $(seq 200); do
    [ "$(ctl agent list 2>/dev/null | jq '.agents | length')" = 1 ] && break
    sleep 0.05
done
passed=0; failed=0
check () { if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $*"; fi; }
ctl group add install-app >/dev/null
# ROUND comes from the installed routers folder
J=$(ctl --get .id job add --group install-app --handler shardingJobHandler --route ROUND)
check test "$J" -gt 0
L=$(ctl --get '.logIds[0]' job trigger "$J")
for _ in $(seq 200); do
    [ "$(ctl log show "$L" | jq .handleCode)" != 0 ] && break
    sleep 0.05
done
# shardingJobHandler runs isolated: the installed xxl-runner was found
check test "$(ctl log show "$L" | jq .handleCode)" = 200
check bash -c "$BIN/xxl-ctl --api $API --json log cat $L | jq -r .logContent | grep -q 'shard index = 0'"
# A handler plugin built out of tree against the installed SDK, as
# README.md and docs/plugins.md show it
PREFIX=$(cd "$BIN/.." && pwd)
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
mkdir -p "$T/plugins"
cat > "$T/hello.c" <<'C'
#include <xxl/handler.h>
static int s_hello (xxl_run_t *run) {
    xxl_run_log (run, "param=%s", xxl_run_param (run));
    return xxl_run_success (run, "done");
}
static const xxl_handler_t s_handlers [] = { { "helloJobHandler", s_hello, 0 }, { NULL, NULL, 0 } };
XXL_HANDLER_PLUGIN ("hello", "1.0", NULL, NULL, s_handlers)
C
check cc -shared -fPIC -Wall $(pkg-config --cflags xxl) "$T/hello.c" -o "$T/plugins/hello.so"
"$BIN/xxl-agent" --app hello-app --scheduler "$AGENTS" --address h1 --logdir "$T/logs-h" \
    --plugins "$T/plugins" 2>"$T/agent-h.log" &
PIDS="$PIDS $!"
ctl group add hello-app >/dev/null
H=$(ctl --get .id job add --group hello-app --handler helloJobHandler --param from-outside)
for _ in $(seq 200); do
    [ "$(ctl agent list | jq '[.agents[] | select(.app == "hello-app")] | length')" = 1 ] && break
    sleep 0.05
done
HL=$(ctl --get '.logIds[0]' job trigger "$H")
for _ in $(seq 200); do
    [ "$(ctl log show "$HL" | jq .handleCode)" != 0 ] && break
    sleep 0.05
done
check test "$(ctl --get .handleMsg log show "$HL")" = done
check bash -c "$BIN/xxl-ctl --api $API --json log cat $HL | jq -r .logContent | grep -q param=from-outside"
# The units name the installed binaries (configure's bindir), which exist
if [ -n "$UNITS" ] && [ "$UNITS" != no ]; then
    for unit in xxl-scheduler xxl-agent xxl-bridge; do
        file="$UNITS/$unit.service"
        check test -f "$file"
        exec_start=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$file")
        check test "$exec_start" = "$BIN/$unit"
        check test -x "$exec_start"
        if command -v systemd-analyze >/dev/null 2>&1; then
            # (clean: status 0 and not a line said)
            check bash -c "out=\$(systemd-analyze verify '$file' 2>&1) && [ -z \"\$out\" ] || { echo \"\$out\"; exit 1; }"
        fi
    done
fi
# The man pages are installed and read clean
if [ -n "$MANS" ] && command -v man >/dev/null 2>&1; then
    for page in man1/xxl-ctl.1 man8/xxl-scheduler.8 man8/xxl-agent.8 man5/xxl-scheduler.cfg.5 \
                man5/xxl-agent.cfg.5 man5/xxl-ctl.cfg.5; do
        check test -f "$MANS/$page"
        check bash -c "! LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l '$MANS/$page' 2>&1 >/dev/null | grep ."
    done
fi
if [ "$failed" -gt 0 ]; then cat "$T"/*.log; fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
