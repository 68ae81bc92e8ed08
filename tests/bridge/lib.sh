# tests/bridge/lib.sh -- starting xxl-bridge in a test (after tests/lib.sh
# and a scheduler: T, AGENTS, PIDS, wait_for)
#
# bridge_start PORT [flags]: the bridge of the build tree on 127.0.0.1:PORT
# (0: any free port) with $T/bridge.cfg, its spool, journal and routes in
# $T/bridge, its log appended to $T/bridge.log, and the flags given (e.g.
# --access-token-file F); waits until it listens.  Sets BRPID, BPORT and
# ADMIN (the admin address its executors call); 1 when it did not start.
bridge_start () {
    local port="$1"; shift
    rm -f "$T/bridge.ready"
    "$XXL_BUILD/bridge/xxl-bridge" -c "$T/bridge.cfg" --scheduler "$AGENTS" \
        --listen "127.0.0.1:$port" --logdir "$T/bridge" --ready-file "$T/bridge.ready" \
        "$@" >>"$T/bridge.log" 2>&1 &
    BRPID=$!
    PIDS="$PIDS $BRPID"
    wait_for 10 test -s "$T/bridge.ready" || return 1
    BPORT=$(sed -n 's/^port=//p' "$T/bridge.ready")
    ADMIN="http://127.0.0.1:$BPORT/xxl-job-admin"
}
