#!/usr/bin/env bash
# clock_step_ha.sh -- clock_step.sh on two schedulers sharing the store,
# the agents connected to both, one-second crons until each scheduler
# plans two at least.
# Under PostgreSQL scheduler 0's wall clock is stepped alone (the two are
# other hosts; leases are written and compared on the server's clock);
# on SQLite the two share one host's clock and are stepped together.  The
# same guarantees, and the two hold the 16 shares at the end; on SQLite
# the schedulers saw the steps ahead of the store's clock (no share taken
# across one: seed 318, long, ran one logId twice before), on PostgreSQL
# none.  Last, scheduler 1 is frozen, the clock stepped back 60 s while the
# store's write lock is held (scheduler 0's round that sees the step cannot
# read the leases) and scheduler 1 killed: scheduler 0 takes its shares
# within 12 s (its leases, written before the step, are judged as much
# earlier).
XXL_CLOCK_HA=1 exec bash "$(dirname "$0")/clock_step.sh" "$@"
