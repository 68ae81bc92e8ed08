#!/bin/sh
#  check-quartz.sh - regenerates the cron fixture with the real Quartz and
#  compares it with the committed tests/cron/fixture.txt (comment lines,
#  which name the Java version, are ignored). Exits 0 when they match, 1
#  when they differ, and 77 (automake's "skipped") when java 11+ or the
#  Quartz jar (QUARTZ_JAR, default /usr/share/java/quartz2.jar) is missing.
#  Takes about a minute: some expressions make Quartz loop forever and
#  each such call is given a second before it is abandoned.
#  XXL_QUARTZ_FIXTURE and XXL_QUARTZ_GENERATOR name another fixture and its
#  generator (tests/calendar/check-quartz.sh).

srcdir=${srcdir:-.}
#  Two minutes: run when asked (scripts/test asks once per run)
if [ -z "${XXL_CHECK_QUARTZ:-}" ]; then
    echo "check-quartz: set XXL_CHECK_QUARTZ=1 to run the live comparison; skipped"
    exit 77
fi
jar=${QUARTZ_JAR:-/usr/share/java/quartz2.jar}
fixture=${XXL_QUARTZ_FIXTURE:-"$srcdir/tests/cron/fixture.txt"}
generator=${XXL_QUARTZ_GENERATOR:-"$srcdir/tests/cron/QuartzFixture.java"}

if ! command -v java >/dev/null 2>&1; then
    echo "check-quartz: java not found, skipped"
    exit 77
fi
if [ ! -r "$jar" ]; then
    echo "check-quartz: $jar not found, skipped"
    exit 77
fi
major=$(java -version 2>&1 | sed -n 's/.*version "\([0-9][0-9]*\).*/\1/p' | head -n 1)
if [ -z "$major" ] || [ "$major" -lt 11 ]; then
    echo "check-quartz: java 11 or later needed (found '${major:-?}'), skipped"
    exit 77
fi

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
if ! java -cp "$jar" "$generator" > "$tmp/new.txt"; then
    echo "check-quartz: generator failed"
    exit 1
fi
grep -v '^#' "$fixture" > "$tmp/old" || exit 1
grep -v '^#' "$tmp/new.txt" > "$tmp/new" || exit 1
if ! diff -u "$tmp/old" "$tmp/new" > "$tmp/diff"; then
    echo "check-quartz: Quartz disagrees with $fixture:"
    head -n 40 "$tmp/diff"
    echo "1 passed, 1 failed"
    exit 1
fi
echo "check-quartz: fixture matches Quartz ($(grep -c '^[RN]' "$tmp/old") cases)"
echo "1 passed, 0 failed"
exit 0
