#!/usr/bin/env bash
# ha_net_deaf.sh -- ha_net.sh's cuts of scheduler 0's agents port made
# long (9-14 s, past the registry's dead time of 3 s), both ways or one:
# scheduler 0 stops hearing every agent while schedulers 1 and 2 hear
# them, and keeps its shares and its clients (nothing tells it to let go).
# An expected failure (XFAIL_TESTS): scheduler 0 drops the agents from its
# registry at the dead time and fails what it routes meanwhile, "trigger
# failed: the address list is empty": its shares' cron seconds, the
# triggers its clients got acknowledged, and the retries of its long runs
# (seed 305, short form, SQLite: 386 of 1,072 rows never ran, 353 of them
# "the address list is empty", 33 retries of those; docs/faults.md, Known
# gaps).  One way only is no better: with its sends
# dropped it hears REGISTERs until the agents, answered by nobody, connect
# again, and a new connection's handshake cannot finish.  A fix needs a
# rule for a scheduler that hears none of a group's agents while another
# scheduler of the store does: give its shares up (so that the others
# plan them) and hold or hand over what its clients asked for, rather than
# fail it.
XXL_HA_NET_DEAF=1 exec bash "$(dirname "$0")/ha_net.sh" "$@"
