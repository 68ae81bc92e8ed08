#!/usr/bin/env bash
# test_deb.sh [PACKAGE.deb] -- the Debian package (make deb, scripts/mkdeb).
# Without an argument (make check): packs the build tree ($XXL_BUILD) as
# configured (make deb-pack, no compilation) into a temporary folder; with
# one, checks that package and that its folders are Debian's (/usr, /etc,
# /lib/systemd/system).  Checks its control fields and Depends, its files,
# conffiles and maintainer scripts, that every ELF file in it finds its
# libraries, that the binaries' built-in folders are the package's, and
# runs the extracted scheduler and agent (plugins and runner from the
# extraction) to one successful run.  Installs nothing, needs no root.
# Skipped without dpkg-deb, and under XXL_STORE=pg.
set -u
command -v dpkg-deb >/dev/null 2>&1 || { echo "# skipped: no dpkg-deb"; exit 77; }
# (the package does not depend on the store: the SQLite run covers it)
if [ "${XXL_STORE:-sqlite}" = pg ]; then
    echo "# skipped under XXL_STORE=pg: the package does not depend on the store"
    exit 77
fi
SRC=${XXL_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
T=$(mktemp -d /tmp/xxl-deb.XXXXXX)
PIDS=""
trap 'for p in $PIDS; do kill $p 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"' EXIT
passed=0; failed=0
check () { if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $*"; fi; }

if [ $# -ge 1 ]; then
    DEB=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
    debian=1
else
    : "${XXL_BUILD:?XXL_BUILD (the build folder) or a package is needed}"
    # (a make of its own: not the jobserver of the make check running this)
    if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$XXL_BUILD" deb-pack \
            DEB_ROOT="$T/root" DEB_OUT="$T" >"$T/make.log" 2>&1; then
        cat "$T/make.log"; echo "FAIL: make deb-pack"; exit 1
    fi
    DEB=$(ls "$T"/xxl_*.deb)
    debian=0
fi
check test -f "$DEB"

# The control fields
field () { dpkg-deb -f "$DEB" "$1"; }
version=$(sed -n 's/^AC_INIT(\[xxl\], \[\([^]]*\)\].*/\1/p' "$SRC/configure.ac")
arch=$(dpkg --print-architecture)
check test "$(field Package)" = xxl
check test "$(field Version)" = "$version"
check test "$(field Architecture)" = "$arch"
check test "$(basename "$DEB")" = "xxl_${version}_${arch}.deb"
check test -n "$(field Maintainer)"
check test -n "$(field Description)"
depends=$(field Depends)
for pkg in libc6 libczmq4 libzmq5 libsqlite3-0 libmsgpackc2 libpq5 libcurl4 libmicrohttpd12 libjansson4; do
    check grep -qE "(^|, )$pkg( |,|$)" <<<"$depends"
done
check grep -q 'systemd-sysusers | adduser' <<<"$depends"
check bash -c "! grep -qE '(^|, )xxl( |,|$)' <<<'$depends'"

# The files, and where they are
dpkg-deb -c "$DEB" | awk '{ p = $6; sub(/^\./, "", p); print p }' > "$T/files"
where () { grep -E "$1" "$T/files" | head -n 1; }
BIN=$(dirname "$(where '/bin/xxl-scheduler$')")
PKGLIB=$(dirname "$(dirname "$(where '/xxl/routers/round\.so$')")")
LIBDIR=$(dirname "$PKGLIB")
RUNNER=$(where '/libexec/xxl/xxl-runner$')
ETC=$(dirname "$(where '/xxl/xxl-scheduler\.cfg$')")
UNITS=$(dirname "$(where '/systemd/system/xxl-scheduler\.service$')")
CONSOLE=$(dirname "$(where '/xxl/console/index\.html$')")
for f in xxl-scheduler xxl-agent xxl-bridge xxl-ctl; do check grep -qx "$BIN/$f" "$T/files"; done
check test -n "$RUNNER"
for f in routers/round.so routers/first.so routers/consistent_hash.so routers/sharding_broadcast.so \
         handlers/demo.so handlers/http.so handlers/command.so handlers/ai.so \
         alarms/email.so alarms/webhook.so alarms/script.so; do
    check grep -qx "$PKGLIB/$f" "$T/files"
done
check grep -qx "$LIBDIR/libxxl.so.0" "$T/files"
check grep -qx "$LIBDIR/pkgconfig/xxl.pc" "$T/files"
for h in handler router alarm msg client cron; do check grep -qE "/include/xxl/$h\.h$" "$T/files"; done
for m in man8/xxl-scheduler.8 man8/xxl-agent.8 man8/xxl-bridge.8 man1/xxl-ctl.1 man5/xxl-scheduler.cfg.5; do
    check grep -qE "/man/$m\.gz$" "$T/files"
done
for u in xxl-scheduler xxl-agent xxl-bridge; do check grep -qx "$UNITS/$u.service" "$T/files"; done
check grep -qE '/sysusers\.d/xxl\.conf$' "$T/files"
check grep -qE '/share/doc/xxl/copyright$' "$T/files"
check grep -qE '/share/doc/xxl/operations\.md$' "$T/files"
check bash -c "! grep -qE '\.la$' '$T/files'"
if [ "$debian" = 1 ]; then
    check test "$BIN" = /usr/bin
    check test "$ETC" = /etc/xxl
    check test "$UNITS" = /lib/systemd/system
    check grep -qx /usr/lib/sysusers.d/xxl.conf "$T/files"
    check grep -qx /usr/share/doc/xxl/copyright "$T/files"
    check grep -qE '^/usr/lib/' <<<"$PKGLIB"
    check test "$RUNNER" = /usr/libexec/xxl/xxl-runner
fi

# Control files: the configs are conffiles; the maintainer scripts parse,
# start and enable nothing, and never remove the scheduler's state
dpkg-deb -e "$DEB" "$T/DEBIAN"
sort "$T/DEBIAN/conffiles" > "$T/conffiles"
grep -E "^$ETC/[^/]+\$" "$T/files" | sort > "$T/etc-files"
check test -s "$T/conffiles"
check cmp -s "$T/conffiles" "$T/etc-files"
check grep -qx "$ETC/xxl-scheduler.cfg" "$T/conffiles"
for s in postinst prerm postrm; do
    check test -x "$T/DEBIAN/$s"
    check sh -n "$T/DEBIAN/$s"
    check bash -c "! grep -q '@[a-z]*@' '$T/DEBIAN/$s'"
done
check bash -c "! grep -qE 'systemctl( +-[-a-z]+)* +(enable|start|restart|reenable)( |$)' '$T/DEBIAN/postinst'"
check grep -q 'systemd-sysusers' "$T/DEBIAN/postinst"
check grep -q '\[ -d /run/systemd/system \]' "$T/DEBIAN/postinst"
check bash -c "! grep -qE 'rm .*/lib/xxl' '$T/DEBIAN/postrm' '$T/DEBIAN/prerm'"

# The extraction: every ELF file finds its libraries (libxxl the package's)
X="$T/x"
dpkg-deb -x "$DEB" "$X"
export LD_LIBRARY_PATH="$X$LIBDIR"
elves=0
while read -r f; do
    [ "$(head -c 4 "$X$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
    elves=$((elves + 1))
    check bash -c "! ldd '$X$f' | grep 'not found'"
done < <(grep -v '/$' "$T/files")
check test "$elves" -ge 20
check bash -c "ldd '$X$BIN/xxl-scheduler' | grep -q '=> $X$LIBDIR/libxxl.so.0'"

# The binaries' built-in folders are the package's: the config folder
# (--help), the plugins, the runner, the console (whole strings: a
# /usr/local build's would contain /usr's)
check bash -c "env -u XXL_CONFIG_DIR '$X$BIN/xxl-scheduler' --help 2>&1 | grep -qE '(^| )$ETC/xxl-scheduler\.cfg( |$)'"
check bash -c "env -u XXL_CONFIG_DIR '$X$BIN/xxl-agent' --help 2>&1 | grep -qE '(^| )$ETC/xxl-agent\.cfg( |$)'"
has () { tr '\0' '\n' < "$1" | grep -qxF "$2"; }
check has "$X$BIN/xxl-scheduler" "$PKGLIB/routers"
check has "$X$BIN/xxl-scheduler" "$PKGLIB/alarms"
check has "$X$BIN/xxl-scheduler" "$CONSOLE"
check has "$X$BIN/xxl-agent" "$PKGLIB/handlers"
check has "$X$BIN/xxl-agent" "$RUNNER"
for u in xxl-scheduler xxl-agent xxl-bridge; do
    check grep -qx "ExecStart=$BIN/$u" "$X$UNITS/$u.service"
done

# A run on the extracted daemons: ROUND from the package's routers,
# shardingJobHandler (isolated: the package's xxl-runner) from its handlers
port=$((30000 + (RANDOM % 1000) * 2))
API="tcp://127.0.0.1:$port"
AGENTS="tcp://127.0.0.1:$((port + 1))"
export XXL_STATE_DIR="$T/state" XXL_CONFIG_DIR="$T/etc" XXL_RUNNER="$X$RUNNER"
"$X$BIN/xxl-scheduler" --db "$T/xxl.db" --api "$API" --agents "$AGENTS" --http none \
    --plugins "$X$PKGLIB/routers" --alarms "$X$PKGLIB/alarms" --ready-file "$T/ready" \
    2>"$T/scheduler.log" &
PIDS="$PIDS $!"
for _ in $(seq 200); do [ -f "$T/ready" ] && break; sleep 0.05; done
"$X$BIN/xxl-agent" --app deb-app --scheduler "$AGENTS" --address d1 --logdir "$T/logs" \
    --plugins "$X$PKGLIB/handlers" 2>"$T/agent.log" &
PIDS="$PIDS $!"
ctl () { "$X$BIN/xxl-ctl" --api "$API" --json "$@"; }
for _ in $(seq 200); do
    [ "$(ctl agent list 2>/dev/null | jq '.agents | length')" = 1 ] && break
    sleep 0.05
done
ctl group add deb-app >/dev/null
J=$(ctl --get .id job add --group deb-app --handler shardingJobHandler --route ROUND)
check test "$J" -gt 0
L=$(ctl --get '.logIds[0]' job trigger "$J")
for _ in $(seq 200); do
    [ "$(ctl log show "$L" | jq .handleCode)" != 0 ] && break
    sleep 0.05
done
check test "$(ctl log show "$L" | jq .handleCode)" = 200
check bash -c "'$X$BIN/xxl-ctl' --api $API --json log cat $L | jq -r .logContent | grep -q 'shard index = 0'"

if [ "$failed" -gt 0 ]; then cat "$T"/*.log; fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
