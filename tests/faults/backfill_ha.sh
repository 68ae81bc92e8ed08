#!/usr/bin/env bash
# backfill_ha.sh -- backfill.sh on three schedulers sharing the store: the
# one holding the job's share is SIGKILLed (another takes the share over
# and goes on from the backfills' cursors), then restarted; eight hours of
# one-second instants backfilled twice at once (a day in the long form).
# Every instant one row, one run.
XXL_BACKFILL_HA=1 exec bash "$(dirname "$0")/backfill.sh" "$@"
