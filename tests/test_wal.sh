#!/usr/bin/env bash
# test_wal.sh -- under a load that never pauses, the store's WAL starts over
# at its size (scheduler/wal_size) instead of growing without end: the
# checkpointer's passes never copy a whole WAL while commits keep coming,
# so the engine copies the last frames between two turns.  No run is lost.
. "$(dirname "$0")/lib.sh"
xxl_setup
xxl_sqlite_only "the WAL file's size (PostgreSQL's WAL is the server's)"
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
echo 0 > "$T/wal.max"
( max=0; while kill -0 "$SPID" 2>/dev/null && [ ! -f "$T/load.done" ]; do
      s=$(wal_bytes); [ "$s" -gt "$max" ] && max=$s && echo "$max" > "$T/wal.max"
      sleep 0.02
  done ) &
SAMPLER=$!
# Rounds of 5 s of no-op runs, up to 2,000 in flight, until 24,000 runs
# (a run writes ~1.7 KiB of WAL: 40 MiB, over twice the bound below)
triggered=0
for round in 1 2 3 4 5 6; do
    "$BENCH" e2e "$API" "$T/xxl.db" bench noop 16 5 2000 "$SPID" "${APID_wal_a}" \
        > "$T/load-$round.json"
    echo "# load $round: $(jq -c '{triggered, final, ok, lost, runs_per_s}' "$T/load-$round.json")"
    triggered=$((triggered + $(jq '.triggered // 0' "$T/load-$round.json")))
    [ "$triggered" -ge 24000 ] && break
done
touch "$T/load.done"
wait "$SAMPLER"
echo "# largest WAL seen: $(cat "$T/wal.max") bytes"

check "every triggered run ended 200, none lost" jq_quiet -s \
    'all(.[]; .triggered > 0 and .lost == 0 and .ok == .triggered)' "$T"/load-*.json
# Without the restart this WAL grows by the whole load (40 MiB for 24,000
# runs; 300 MiB for the 180,000 of a fast machine's round); with it, it
# stays within four times its size plus a commit's frames.  A turn of this
# load commits up to ~5 MiB (seen: WALs of 3.3-9.2 MB, 8 KiB pages or 4),
# so 16 MiB; the file is then cut back to four times its size
check "the load ran 24,000 runs" test "$triggered" -ge 24000
check "the WAL stayed within 16 MiB" bash -c "[ \$(cat '$T/wal.max') -le $((16 * 1048576)) ]"
check "the WAL file ends within 5 MiB" bash -c "[ \$(stat -c %s '$T/xxl.db-wal') -le $((5 * 1048576)) ]"
check "the store is whole" bash -c \
    "[ \"\$(sqlite3 '$T/xxl.db' 'PRAGMA integrity_check')\" = ok ]"

# wal_size out of range is refused at start, with the reason
printf 'scheduler\n    wal_size = 0\n' > "$T/bad.cfg"
"$SCHEDULER" -c "$T/bad.cfg" --db "$T/bad.db" --api tcp://127.0.0.1:0 \
    --agents tcp://127.0.0.1:0 > "$T/bad.log" 2>&1
check "wal_size = 0: exit status 2" test $? -eq 2
check "wal_size = 0: the reason names it" grep -q "scheduler/wal_size must be a number from 1 to 65536" "$T/bad.log"
xxl_done
