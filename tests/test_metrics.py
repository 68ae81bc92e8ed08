#!/usr/bin/env python3
"""test_metrics.py URL SECONDS EXPECT.json -- reads /metrics at URL with
Prometheus' own text parser (a malformed exposition raises) until each
sample of EXPECT (a list of [name, {labels}, value-or-null]) is there with
that value (null: any), for up to SECONDS.  Exits 0 once they all are;
else prints the samples missing or different and exits 1."""

import json
import sys
import time
import urllib.request

from prometheus_client.parser import text_string_to_metric_families


def differences(expect):
    text = urllib.request.urlopen(sys.argv[1], timeout=10).read().decode()
    samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    out = []
    for name, labels, value in expect:
        key = (name, tuple(sorted(labels.items())))
        if key not in samples:
            out.append("missing: %s %s" % (name, labels))
        elif value is not None and samples[key] != value:
            out.append("%s %s = %s, not %s" % (name, labels, samples[key], value))
    return out


expect = json.loads(sys.argv[3])
deadline = time.monotonic() + float(sys.argv[2])
while True:
    left = differences(expect)
    if not left:
        sys.exit(0)
    if time.monotonic() > deadline:
        print("\n".join(left))
        sys.exit(1)
    time.sleep(0.2)
