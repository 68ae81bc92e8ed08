#!/usr/bin/env bash
# test_layers.sh -- the layering of the C code (scripts/layers,
# docs/layers.md): it prints the file and folder graphs of scheduler/,
# agent/ and sdk/ against scheduler/LAYERS, and fails on an upward call,
# two folders calling each other, a ring of files over max-ring, or a .c
# file over max-lines -- once scheduler/LAYERS says `enforce`; until then
# (the engine is being layered) it prints the figures only.  The tool
# itself is held to two fixtures: tests/layers/bad breaks each rule once
# and is refused, naming each; tests/layers/good (a ring within max-ring,
# calls across one layer one way, an inline function of a header, names in
# comments, strings, members, a static function and a parameter) is
# accepted.
. "$(dirname "$0")/lib.sh"           # check, xxl_done (no daemons here)
SRC="${srcdir:-$XXL_SRC}"
LAYERS="$SRC/scripts/layers"
F="$SRC/tests/layers"
if ! ctags --version 2>/dev/null | grep -q "Universal Ctags"; then
    echo "SKIP - universal-ctags is not installed (scripts/deps installs it)"
    exit 77
fi
T=$(mktemp -d /tmp/xxl-test.XXXXXX)
trap 'rm -rf "$T"' EXIT

# the tree as it stands: the figures always; their verdict when enforced
start=$(date +%s%N)
"$LAYERS" "$SRC" > "$T/tree"
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
cat "$T/tree"
check "the tree's report has the folder graph, the rings, the upward calls and the largest file" \
    bash -c "grep -q '^folder graph' '$T/tree' && grep -q '^  largest ring: ' '$T/tree' &&
             grep -q '^upward calls' '$T/tree' && grep -q '^largest .c file: ' '$T/tree'"
# (its time is reported, not asserted: timings stay out of the tests)
echo "# the check of the tree took ${ms} ms"
if grep -qx 'enforce' "$SRC/scheduler/LAYERS"; then
    check "the tree keeps its layers (scheduler/LAYERS: enforce)" test "$rc" -eq 0
else
    echo "# scheduler/LAYERS has no 'enforce' line: the figures above are a report"
    check "the tree's check ends 0 or 1, not on an error" test "$rc" -le 1
    check "--report ends 0 on the tree" bash -c "'$LAYERS' --report '$SRC' >/dev/null"
fi

# the tool refuses what breaks the rules ...
lay () { local d="$1"; shift; "$LAYERS" --layers "$F/$d/LAYERS" "$@" "$F/$d"; }
lay bad > "$T/bad"
rc=$?
cat "$T/bad"
check "the bad fixture is refused (exit 1)" test "$rc" -eq 1
check "... naming the upward call, at its line" \
    grep -qxF 'FAIL upward: low (layer 2) calls top (layer 1), 2 call sites, e.g. low/b.c:2 -> top_run (top/a.c)' "$T/bad"
check "... the two folders that call each other" \
    grep -qxF 'FAIL both ways: low and top call each other (2 and 2 call sites)' "$T/bad"
check "... the ring of 4 files over max-ring 2" \
    grep -qxF 'FAIL a ring of 4 files, over max-ring 2: low/b.c low/c.c low/d.c top/a.c' "$T/bad"
check "... the file over max-lines 20" \
    grep -qxF 'FAIL low/d.c has 21 lines, over max-lines 20' "$T/bad"
check "... and no other failure" test "$(grep -c '^FAIL' "$T/bad")" -eq 4
check "--report prints the same failures and ends 0" \
    bash -c "'$LAYERS' --report --layers '$F/bad/LAYERS' '$F/bad' | grep -c '^FAIL' | grep -qx 4"
check "--lines does the length check alone: it fails on low/d.c" \
    bash -c "! '$LAYERS' --lines --layers '$F/bad/LAYERS' '$F/bad' > '$T/lines' &&
             grep -qx 'largest .c file: low/d.c, 21 lines (4 files, 48 lines in all)' '$T/lines' &&
             ! grep -q upward '$T/lines'"

# ... and accepts what they allow
lay good > "$T/good"
rc=$?
cat "$T/good"
check "the good fixture is accepted (exit 0, layers: OK)" \
    bash -c "[ $rc -eq 0 ] && tail -n 1 '$T/good' | grep -qx 'layers: OK'"
check "... its ring of two files (b <-> c) is within max-ring 2" \
    grep -qxF '  2 files: low/b.c low/c.c' "$T/good"
check "... top -> side is a call within a layer, one way" \
    grep -qE '^  top +-> side +2 +<- +0$' "$T/good"
check "... an inline function of low/b.h counts as low/b.c's: top -> low, 3 call sites" \
    grep -qE '^  top +-> low +3 +<- +0$' "$T/good"
check "... names in comments, strings, members, static functions and parameters are no call" \
    bash -c "grep -qx '  none' '$T/good' && ! grep -q 'low.*-> top_' '$T/good' &&
             ! grep -q BOTH '$T/good'"
check "--lines passes on the good fixture" \
    bash -c "'$LAYERS' --lines --layers '$F/good/LAYERS' '$F/good' >/dev/null"

# a .c file in a folder LAYERS does not name is refused
cp -r "$F/good" "$T/new"
mkdir "$T/new/low/extra"
echo 'int low_extra (void) { return 0; }' > "$T/new/low/extra/e.c"
check "a .c file in a folder that is in no layer is refused" \
    bash -c "! '$LAYERS' --layers '$T/new/LAYERS' '$T/new' > '$T/out' &&
             grep -qxF 'FAIL low/extra/e.c is in no folder LAYERS names' '$T/out'"

xxl_done
