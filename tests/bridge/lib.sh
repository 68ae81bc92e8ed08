# tests/bridge/lib.sh -- starting xxl-bridge in a test (after tests/lib.sh
# and a scheduler: T, AGENTS, PIDS, wait_for)
#
# bridge_cfg [LINE...]: $T/bridge.cfg with the tests' short timers (beat
# 1 s, executors expire after 4 s, RUN answers within 3 s, lost runs
# checked every second), and each LINE ("key = value") under bridge
bridge_cfg () {
    { printf 'bridge\n    beat = 1\n    expire = 4\n    run_timeout = 3000\n    lost_check = 1\n'
      for line in "$@"; do printf '    %s\n' "$line"; done; } > "$T/bridge.cfg"
}

# bridge_start PORT [flags]: the bridge of the build tree on 127.0.0.1:PORT
# (0: any free port) with $T/bridge.cfg, its spool, journal and routes in
# $T/bridge, its log appended to $T/bridge.log, and the flags given (e.g.
# --access-token-file F); waits until it listens.  Sets BRPID, BPORT and
# ADMIN (the admin address its executors call); 1 when it did not start.
bridge_start () {
    local port="$1"; shift
    rm -f "$T/bridge.ready"
    "$XXL_BRIDGE" -c "$T/bridge.cfg" --scheduler "$AGENTS" \
        --listen "127.0.0.1:$port" --logdir "$T/bridge" --ready-file "$T/bridge.ready" \
        "$@" >>"$T/bridge.log" 2>&1 &
    BRPID=$!
    PIDS="$PIDS $BRPID"
    wait_for 10 test -s "$T/bridge.ready" || return 1
    BPORT=$(sed -n 's/^port=//p' "$T/bridge.ready")
    ADMIN="http://127.0.0.1:$BPORT/xxl-job-admin"
}
