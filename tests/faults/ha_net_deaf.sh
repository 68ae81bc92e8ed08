#!/usr/bin/env bash
# ha_net_deaf.sh -- ha_net.sh's cuts of scheduler 0's agents port made
# long (9-14 s, past the registry's dead time of 3 s), both ways or one:
# scheduler 0 stops hearing every agent while schedulers 1 and 2 hear
# them.  Scheduler 0 is deaf (docs/design.md, "Leases"): it gives every
# share back and stops beating its node row, so the other two plan its
# jobs, and it holds its clients' acknowledged triggers and retries
# unrouted until it hears an agent again; the guarantees are ha_net.sh's.
# Before that rule, it kept its shares, dropped the agents from its
# registry at the dead time and failed what it routed meanwhile, "trigger
# failed: the address list is empty" (seed 305, short form, SQLite: 386 of
# 1,072 rows never ran).  One way only is the same state: with its sends
# dropped it hears REGISTERs until the agents, answered by nobody, connect
# again, and a new connection's handshake cannot finish.
XXL_HA_NET_DEAF=1 exec bash "$(dirname "$0")/ha_net.sh" "$@"
