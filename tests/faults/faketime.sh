# faketime.sh -- wall clocks that a fault scenario steps (sourced after
# lib.sh).  Sourcing it finds libfaketime's MT library (XXL_FAKETIME_LIB
# names another) and checks that it steps a running process's wall clock
# here, or skips the scenario (exit 77).  Then:
#   faketime_wrap: after faults_setup ($T exists), SCHEDULER and AGENT
#       become wrappers that preload it, each daemon's clock the file
#       $T/clock-$XXL_CLOCK (the environment of its start names it; "+30"
#       is 30 s ahead of the true clock); monotonic clocks are left alone;
#   setclock NAME SECONDS [FORWARD_COUNT]: NAME's wall clock SECONDS from
#       the true one, said with `elapsed`; a step ahead adds FORWARD_COUNT
#       (default 0) to FORWARD;
#   faketime_setup NAME: faults_setup NAME, T0 (now) for `elapsed` (the
#       time since, "12.3s"), and faketime_wrap;
#   faketime_pair AGENT APP: the probe's end file ($T/ends), the scheduler
#       (clock "sched") and one agent AGENT of APP (clock AGENT), both at
#       the true time, the agent registered and APP's group added.

FT_LIB=""
for f in ${XXL_FAKETIME_LIB:-} /usr/lib/*/faketime/libfaketimeMT.so.1 /usr/lib/faketime/libfaketimeMT.so.1 \
         /usr/local/lib/faketime/libfaketimeMT.so.1 /usr/lib64/faketime/libfaketimeMT.so.1; do
    [ -f "$f" ] && { FT_LIB=$f; break; }
done
if [ -z "$FT_LIB" ]; then
    echo "# skipped: this scenario needs libfaketime's libfaketimeMT.so.1 (Debian: apt-get install libfaketime)"
    exit 77
fi
# ... that fakes the wall clock here and lets a running process see its
# clock file change (perl's time(); without perl, two runs of date)
FT_CHECK=$(mktemp /tmp/xxl-clock.XXXXXX)
echo "+3600" > "$FT_CHECK"
ft_now () {
    LD_PRELOAD="$FT_LIB" FAKETIME_TIMESTAMP_FILE="$FT_CHECK" FAKETIME_NO_CACHE=1 FAKETIME_DONT_FAKE_MONOTONIC=1 "$@" 2>/dev/null
}
if command -v perl >/dev/null; then
    FT_SEEN=$( (sleep 0.3; echo "-3600" > "$FT_CHECK.new"; mv -f "$FT_CHECK.new" "$FT_CHECK") &
        ft_now perl -e '$| = 1; print time, " "; select (undef, undef, undef, 0.8); print time'; wait)
else
    FT_SEEN="$(ft_now date +%s) "; echo "-3600" > "$FT_CHECK"; FT_SEEN="$FT_SEEN$(ft_now date +%s)"
fi
rm -f "$FT_CHECK" "$FT_CHECK.new"
FT_REAL=$(date +%s)
read -r FT_A FT_B <<< "$FT_SEEN"
if [ $(( ${FT_A:-0} - FT_REAL )) -lt 3590 ] || [ $(( ${FT_B:-0} - FT_REAL )) -gt -3590 ]; then
    echo "# skipped: libfaketime ($FT_LIB) does not step a running process's wall clock here (saw '$FT_SEEN' at $FT_REAL, wanted +3600 then -3600)"
    exit 77
fi

# The wrappers the daemons run through (tests/lib.sh starts "$SCHEDULER"
# and "$AGENT"): libfaketime preloaded, the clock file $T/clock-$XXL_CLOCK
# (the environment of the start names it)
faked () {      # faked BINARY: prints a wrapper's text
    cat <<EOF
#!/bin/sh
LD_PRELOAD="$FT_LIB\${LD_PRELOAD:+ \$LD_PRELOAD}"
FAKETIME_TIMESTAMP_FILE="$T/clock-\$XXL_CLOCK"
FAKETIME_NO_CACHE=1
FAKETIME_DONT_FAKE_MONOTONIC=1
FAKETIME_FORCE_MONOTONIC_FIX=0
NO_FAKE_STAT=1
ASAN_OPTIONS="\${ASAN_OPTIONS:+\$ASAN_OPTIONS:}verify_asan_link_order=0"
export LD_PRELOAD FAKETIME_TIMESTAMP_FILE FAKETIME_NO_CACHE FAKETIME_DONT_FAKE_MONOTONIC \\
       FAKETIME_FORCE_MONOTONIC_FIX NO_FAKE_STAT ASAN_OPTIONS
unset FAKETIME
exec "$1" "\$@"
EOF
}
faketime_wrap () {
    faked "$SCHEDULER" > "$T/xxl-scheduler"; faked "$AGENT" > "$T/xxl-agent"
    chmod +x "$T/xxl-scheduler" "$T/xxl-agent"
    SCHEDULER="$T/xxl-scheduler"
    AGENT="$T/xxl-agent"
}

# setclock NAME SECONDS: NAME's wall clock SECONDS from the true one (a
# rename: every read sees the old spec or the new one, whole)
declare -A OFF
FORWARD=0           # forward steps counted by setclock (its third argument)
setclock () {
    printf '%+d\n' "$2" > "$T/clock-$1.new" && mv -f "$T/clock-$1.new" "$T/clock-$1"
    local was=${OFF[$1]:-0}
    OFF[$1]=$2
    echo "$(now_ms) $1 $was $2" >> "$T/steps"
    if [ "$2" -gt "$was" ]; then FORWARD=$((FORWARD + ${3:-0})); fi
    say "$(elapsed): $1's wall clock stepped $( [ "$2" -ge "$was" ] && echo forward || echo back) $(( $2 > was ? $2 - was : was - $2 )) s, now ${2} s from the true time"
}

elapsed () { local d=$(( $(now_ms) - T0 )); echo "$((d / 1000)).$(( d % 1000 / 100 ))s"; }
faketime_setup () {
    faults_setup "$1"
    T0=$(now_ms)
    faketime_wrap
}

faketime_pair () {
    export XXL_PROBE_END_FILE="$T/ends"
    : > "$XXL_PROBE_END_FILE"
    setclock sched 0 >/dev/null; setclock "$1" 0 >/dev/null
    XXL_CLOCK=sched start_scheduler || exit 1
    XXL_CLOCK="$1" fagent "$1" "$2"
    check "agent registers" wait_until 10 agent_registered "$2" "$1"
    ctl group add "$2" >/dev/null
}
