#!/usr/bin/env bash
# test_wal.sh -- under a load that never pauses, the store's WAL starts over
# at its size (scheduler/wal_size) instead of growing without end: the
# checkpointer's passes never copy a whole WAL while commits keep coming,
# so the engine copies the last frames between two turns.  No run is lost.
. "$(dirname "$0")/lib.sh"
xxl_setup
BENCH="$XXL_BUILD/bench/xxl_bench"

cat >> "$T/scheduler.cfg" <<CFG
    wal_size = 1
CFG
start_scheduler || exit 1
AGENT_PLUGINS="$XXL_BUILD/bench/.libs" start_agent wal-a bench
"$BENCH" group "$API" bench >/dev/null
check "agent registers" wait_for 10 agent_registered bench wal-a

jq_quiet () { jq -e "$@" >/dev/null; }
wal_bytes () { stat -c %s "$T/xxl.db-wal" 2>/dev/null || echo 0; }
# Sampled while the load runs: the largest size seen
( max=0; while kill -0 "$SPID" 2>/dev/null && [ ! -f "$T/load.done" ]; do
      s=$(wal_bytes); [ "$s" -gt "$max" ] && max=$s && echo "$max" > "$T/wal.max"
      sleep 0.02
  done ) &
SAMPLER=$!
# 5 s of no-op runs, up to 2,000 in flight (tens of MB of WAL at any speed)
"$BENCH" e2e "$API" "$T/xxl.db" bench noop 16 5 2000 "$SPID" "${APID_wal_a}" > "$T/load.json"
touch "$T/load.done"
wait "$SAMPLER"
echo "# load: $(jq -c '{triggered, final, ok, lost, runs_per_s}' "$T/load.json")"
echo "# largest WAL seen: $(cat "$T/wal.max" 2>/dev/null) bytes"

check "every triggered run ended 200, none lost" jq_quiet \
    '.triggered > 1000 and .lost == 0 and .ok == .triggered' "$T/load.json"
# Without the restart this WAL grows by the whole load (~1 KiB a run); with
# it, it stays within four times its size plus a commit's frames
check "the load wrote over twice the 5 MiB bound into the WAL" \
    jq_quiet '.triggered * 1024 > 2 * 5 * 1048576' "$T/load.json"
check "the WAL stayed within 5 MiB" bash -c "[ \$(cat '$T/wal.max') -le $((5 * 1048576)) ]"
check "the WAL file ends within 5 MiB" bash -c "[ \$(stat -c %s '$T/xxl.db-wal') -le $((5 * 1048576)) ]"
check "the store is whole" bash -c \
    "[ \"\$(sqlite3 '$T/xxl.db' 'PRAGMA integrity_check')\" = ok ]"
xxl_done
