#!/usr/bin/env python3
"""flow_check.py -- the fault suite's checker of workflow runs.

    flow_check.py DAG.json RUNS ROWS PROBE ACKED

DAG.json: the workflow's definition (every run of the scenario runs it).
RUNS: "runId|status" a line, every run of the store.  ROWS: "runId|node|
logId|triggerTime|handleTime|triggerCode|handleCode" a line, every log row
of a workflow node.  PROBE: the probe file (tests/faults/probe.c: "<logId>
<jobId> ... <start-ms> ..." a line per execution).  ACKED: the run ids the
client got back (one a line).

For every run it computes, from the recorded results of the nodes that
ran, what the rules of docs/workflows.md decide (the order of
xxl_flow_step: a node is decided once all its parents are final; it runs
when its join holds, else it is SKIPPED), and checks:
  - every acknowledged run exists and has ended;
  - each node that should run has exactly one row, and ran at most once
    (at most one probe line for its row); each node that should be
    skipped has no row;
  - no node's row was made before all its parents were final (its
    triggerTime not before any parent's handleTime; a skipped parent is
    final when its own parents are), nor did it execute before;
  - the run's status is what the rules give.
Prints one line per problem (at most 20 of each kind) and a summary; exit
status 0 when there is none.
"""

import json
import sys
from collections import defaultdict


def load_dag(path):
    with open(path) as f:
        dag = json.load(f)
    nodes = [n["id"] for n in dag["nodes"]]
    join = {n["id"]: n.get("join", "all") for n in dag["nodes"]}
    parents = defaultdict(list)          # node -> [(parent, on)]
    out_on = defaultdict(list)           # node -> [on]
    for e in dag.get("edges", []):
        parents[e["to"]].append((e["from"], e.get("on", "success")))
        out_on[e["from"]].append(e.get("on", "success"))
    # topological order (parents first; definition order among ready ones)
    order, done = [], set()
    while len(order) < len(nodes):
        for n in nodes:
            if n not in done and all(p in done for p, _ in parents[n]):
                order.append(n)
                done.add(n)
                break
        else:
            raise SystemExit("flow_check: the DAG has a cycle")
    return nodes, join, parents, out_on, order


def holds(on, state):
    if state == "SUCCESS":
        return on in ("success", "always")
    if state == "FAILURE":
        return on in ("failure", "always")
    return False


def main():
    dag_path, runs_path, rows_path, probe_path, acked_path = sys.argv[1:6]
    nodes, join, parents, out_on, order = load_dag(dag_path)
    runs = {}
    for line in open(runs_path):
        line = line.strip()
        if line:
            rid, status = line.split("|")[:2]
            runs[int(rid)] = status
    rows = defaultdict(lambda: defaultdict(list))   # run -> node -> [row]
    for line in open(rows_path):
        line = line.strip()
        if not line:
            continue
        rid, node, log_id, tt, ht, tc, hc = line.split("|")[:7]
        rows[int(rid)][node].append({"id": int(log_id), "tt": int(tt or 0),
                                     "ht": int(ht or 0), "tc": int(tc), "hc": int(hc)})
    starts = defaultdict(list)                    # logId -> [start ms]
    for line in open(probe_path):
        words = line.split()
        if len(words) >= 5 and words[0].isdigit():
            starts[int(words[0])].append(int(words[4]))
    acked = [int(x) for x in open(acked_path).read().split() if x.strip()]

    problems = defaultdict(list)
    ran = skipped = 0
    for rid in acked:
        if rid not in runs:
            problems["an acknowledged run is missing"].append("run %d" % rid)
    for rid, status in sorted(runs.items()):
        if status == "RUNNING":
            problems["a run did not end"].append("run %d" % rid)
            continue
        state, final_at = {}, {}
        for n in order:
            ps = parents[n]
            got = rows[rid].get(n, [])
            if ps:
                held = [holds(on, state[p]) for p, on in ps]
                go = all(held) if join[n] == "all" else any(held)
            else:
                go = True
            ready_at = max([final_at[p] for p, _ in ps], default=0)
            if not go:
                state[n] = "SKIPPED"
                final_at[n] = ready_at
                skipped += 1
                if got:
                    problems["a node the rules skip has a row"].append(
                        "run %d node %s (rows %s)" % (rid, n, [r["id"] for r in got]))
                continue
            if len(got) != 1:
                problems["a node that should run once has %s rows" % ("no" if not got else "several")
                         ].append("run %d node %s" % (rid, n))
                state[n] = "FAILURE"
                final_at[n] = ready_at
                continue
            row = got[0]
            ran += 1
            done = row["hc"] != 0 or row["tc"] not in (0, 200)
            if not done:
                problems["a node's row never ended"].append("run %d node %s log %d" % (rid, n, row["id"]))
            state[n] = "SUCCESS" if row["hc"] == 200 else "FAILURE"
            final_at[n] = row["ht"] if row["ht"] else row["tt"]
            if row["tt"] < ready_at:
                problems["a node started before its parents were final"].append(
                    "run %d node %s: row at %d, parents final at %d" % (rid, n, row["tt"], ready_at))
            executions = starts.get(row["id"], [])
            if len(executions) > 1:
                problems["a node ran more than once"].append(
                    "run %d node %s log %d: %d times" % (rid, n, row["id"], len(executions)))
            for at in executions:
                if at < ready_at:
                    problems["a node executed before its parents were final"].append(
                        "run %d node %s: at %d, parents final at %d" % (rid, n, at, ready_at))
        # the run's status (xxl_flow_run_state)
        if any(s == "FAILURE" and not any(on in ("failure", "always") for on in out_on[n])
               for n, s in state.items()):
            want = "FAILURE"
        else:
            want = "SUCCESS"
        if status != want:
            problems["a run's status is not the rules'"].append(
                "run %d: %s, the rules say %s" % (rid, status, want))

    for kind, items in sorted(problems.items()):
        print("PROBLEM %s: %d, e.g. %s" % (kind, len(items), "; ".join(items[:20])))
    print("# flow_check: %d runs (%d acknowledged), %d node runs checked, %d skips, %d problem kinds"
          % (len(runs), len(acked), ran, skipped, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
