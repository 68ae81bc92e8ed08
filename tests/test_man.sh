#!/usr/bin/env bash
# test_man.sh -- the man pages (man/) against the binaries (outside
# finding 17): every flag of xxl-scheduler's, xxl-agent's and xxl-bridge's --help, and
# every global flag and command of xxl-ctl's, is in its page; the config
# files' pages are what scripts/cfgman makes of conf/*.cfg; every page
# reads without a warning from man --warnings (groff).
. "$(dirname "$0")/lib.sh"
MAN="$XXL_SRC/man"

# flags HELP: the long flags a --help text names, one a line
flags () { grep -oE -- '(^| |\[)--[a-z][a-z-]*' <<< "$1" | sed 's/^[ [](*//' | sort -u; }
BRIDGE="$XXL_BRIDGE"
for pair in "xxl-scheduler.8:$SCHEDULER" "xxl-agent.8:$AGENT" "xxl-ctl.1:$CTL" "xxl-bridge.8:$BRIDGE"; do
    page="$MAN/${pair%%:*}"; bin="${pair#*:}"
    check "$(basename "$page") exists" test -f "$page"
    help=$("$bin" --help)
    [ "$bin" = "$CTL" ] && help=$(sed '/^commands:/,$d' <<< "$help")
    for flag in $(flags "$help"); do
        roff=${flag//-/\\-}
        check "$(basename "$page") has $flag" grep -qF -- "$roff" "$page"
    done
done
# xxl-ctl's commands, each as --help lists it
while read -r noun verb _; do
    case "$verb" in [a-z]*) cmd="$noun $verb" ;; *) cmd="$noun" ;; esac
    check "xxl-ctl.1 has the command '$cmd'" \
        bash -c "sed 's/\\\\-/-/g' '$MAN/xxl-ctl.1' | grep -qE '^\.BR? \"?$cmd\"?( |\$)'"
done < <("$CTL" --help | sed -n '/^commands:/,/^$/p' | sed '1d;$d')
# Each command's own flags, as its --help lists them
while read -r noun verb _; do
    case "$verb" in [a-z]*) cmd="$noun $verb" ;; *) cmd="$noun" ;; esac
    for flag in $(flags "$("$CTL" $cmd --help 2>&1 | sed 's/(--/ --/g')"); do
        check "xxl-ctl.1 has $cmd's $flag" grep -qF -- "${flag//-/\\-}" "$MAN/xxl-ctl.1"
    done
done < <("$CTL" --help | sed -n '/^commands:/,/^$/p' | sed '1d;$d')
# The config pages: made from conf/*.cfg by scripts/cfgman
if command -v python3 >/dev/null 2>&1; then
    check "man/*.cfg.5 are what scripts/cfgman makes of conf/*.cfg" python3 "$XXL_SRC/scripts/cfgman" --check
fi
# Every config key a --help names beside its flag is in the sample, so in its page
for pair in "scheduler:$SCHEDULER" "agent:$AGENT" "ctl:$CTL" "bridge:$BRIDGE"; do
    root="${pair%%:*}"; bin="${pair#*:}"
    for key in $("$bin" --help | grep -oE "\\($root/[a-z_/]+" | tr -d '(' | sort -u); do
        check "xxl-$root.cfg.5 (conf/xxl-$root.cfg) has $key, which --help names" \
            grep -qF "( $key )" "$MAN/xxl-$root.cfg.5"
    done
done
for key in scheduler/log_level agent/log_level ctl/api scheduler/http/endpoint bridge/listen; do
    check "a config page has $key" grep -qF "( $key )" "$MAN"/xxl-*.cfg.5
done
# groff's warnings
if command -v man >/dev/null 2>&1; then
    for page in "$MAN"/*.[158]; do
        check "man --warnings -l $(basename "$page"): clean" \
            bash -c "out=\$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l '$page' 2>&1 >/dev/null); [ -z \"\$out\" ] || { echo \"\$out\"; exit 1; }"
    done
else
    echo "# man is not installed: the pages' warnings are not checked"
fi
xxl_done
