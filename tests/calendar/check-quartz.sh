#!/bin/sh
#  check-quartz.sh - regenerates the calendar fixture with the real Quartz
#  (tests/calendar/QuartzCalendarFixture.java) and compares it with the
#  committed tests/calendar/fixture.txt, as tests/cron/check-quartz.sh
#  does for the cron fixture (same skips: XXL_CHECK_QUARTZ unset, no java
#  11+, no Quartz jar).  About 15 seconds.
srcdir=${srcdir:-.}
XXL_QUARTZ_FIXTURE="$srcdir/tests/calendar/fixture.txt" \
XXL_QUARTZ_GENERATOR="$srcdir/tests/calendar/QuartzCalendarFixture.java" \
    exec sh "$srcdir/tests/cron/check-quartz.sh"
