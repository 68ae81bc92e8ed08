#!/bin/bash
# pg.sh -- a throwaway PostgreSQL server for the tests (Debian's
# postgresql package: initdb, pg_ctl).
#
# Sourced (bash):
#   pg_start DIR   creates a cluster in DIR (made, emptied first) and starts
#                  it on a unix socket in DIR only (no TCP; with PG_TCP=1
#                  also on 127.0.0.1, on a free port: PG_PORT); waits until it
#                  answers.  Sets PG_DIR, PG_HOST (the socket folder),
#                  PG_PORT, PG_USER, and PG_URL (database "postgres").
#   pg_newdb NAME  creates database NAME on the server pg_start started (a
#                  database of that name is dropped first, its sessions
#                  cut); prints its URL
#                  and sets PG_URL to it:
#                    postgresql:///NAME?host=DIR&port=PORT&user=USER
#   pg_restart [DIR]  restarts the server in DIR (default PG_DIR): its
#                  connections are cut; waits until it answers again.
#   pg_stop [DIR]  stops the server in DIR (default PG_DIR) and removes DIR.
#   pg_cleanup     stops every server this shell started (pg_start installs
#                  it as the EXIT trap when the shell has none; a script
#                  with its own trap calls it there, as tests/lib.sh does).
# Run: tests/pg.sh start DIR | newdb DIR NAME | restart DIR | stop DIR
# (start and newdb print the URL; nothing is stopped when the script
# exits).
#
# As root (CI) the server runs as the `postgres` user (initdb refuses
# root): DIR is owned by it, and DIR's parent folders get o+x so that it
# can reach DIR.  As anyone else it runs as that user.  Authentication is
# trust on the socket only; the folder's mode (0700) keeps other users out.
# Durability is off (fsync, full_page_writes, synchronous_commit): a test
# server is thrown away; PG_DURABLE=1 keeps PostgreSQL's defaults (for
# speed figures).  initdb runs once per PG_TEMPLATE folder (default
# /tmp/xxl-pg-template-UID-VERSION) and each cluster is a copy of it: a
# start costs a copy and the server's start, not an initdb.

PG_STARTED="${PG_STARTED:-}"

pg_bindir () {
    local d
    for d in "${PG_BINDIR:-}" "$(pg_config --bindir 2>/dev/null)" \
             $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        [ -n "$d" ] && [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && { echo "$d"; return 0; }
    done
    d=$(dirname "$(command -v initdb 2>/dev/null)" 2>/dev/null)
    [ -n "$d" ] && [ -x "$d/pg_ctl" ] && { echo "$d"; return 0; }
    echo "pg.sh: no initdb/pg_ctl found (install Debian's postgresql)" >&2
    return 1
}

# pg_as CMD...: runs CMD as the server's user
pg_as () {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_user () {
    if [ "$(id -u)" -eq 0 ]; then echo postgres; else id -un; fi
}

# pg_template BIN: a folder holding an initdb'ed cluster, made once (under
# a lock, so that parallel tests make it once)
pg_template () {
    local bin="$1" version template lock
    version=$("$bin/initdb" --version | sed 's/.* //')
    template="${PG_TEMPLATE:-/tmp/xxl-pg-template-$(id -u)-$version}"
    if [ ! -f "$template/done" ]; then
        lock="$template.lock"
        (
            flock 9
            if [ ! -f "$template/done" ]; then
                rm -rf "$template"
                mkdir -p "$template"
                [ "$(id -u)" -eq 0 ] && chown postgres: "$template"
                chmod 700 "$template"
                pg_as "$bin/initdb" -D "$template/data" -U "$(pg_user)" -A trust -E UTF8 \
                    --locale=C -N >"$template/initdb.log" 2>&1 \
                    || { cat "$template/initdb.log" >&2; exit 1; }
                pg_as touch "$template/done"
            fi
        ) 9>"$lock" || return 1
    fi
    echo "$template"
}

pg_start () {
    local dir="${1:?pg_start DIR}" bin template port user d
    bin=$(pg_bindir) || return 1
    template=$(pg_template "$bin") || return 1
    mkdir -p "$dir" || return 1
    dir=$(cd "$dir" && pwd)
    user=$(pg_user)
    if [ "$(id -u)" -eq 0 ]; then
        # The server's user must reach DIR through its parents
        d=$(dirname "$dir")
        while [ "$d" != / ]; do
            [ -n "$(find "$d" -maxdepth 0 -perm -o+x)" ] || chmod o+x "$d"
            d=$(dirname "$d")
        done
        chown postgres: "$dir"
    fi
    chmod 700 "$dir"
    pg_as rm -rf "$dir/data"
    pg_as cp -a "$template/data" "$dir/data" || return 1
    port=${PG_PORT_WANTED:-5432}
    local listen="''" tries=1 opts
    if [ -n "${PG_TCP:-}" ]; then
        # Also on TCP, 127.0.0.1 only, on a port free now (its unix
        # socket takes the same number); another process may take it
        # before the server binds it: then again with another
        listen="'127.0.0.1'"
        tries=5
    fi
    while :; do
        if [ -n "${PG_TCP:-}" ]; then
            port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') \
                || return 1
        fi
        opts="-k $dir -p $port -c listen_addresses=$listen -c max_connections=50"
        opts="$opts -c shared_buffers=32MB -c max_wal_size=1GB"
        # PG_EXTRA_OPTS: more server settings (the bench sizes its buffers)
        [ -n "${PG_EXTRA_OPTS:-}" ] && opts="$opts $PG_EXTRA_OPTS"
        [ -n "${PG_DURABLE:-}" ] \
            || opts="$opts -c fsync=off -c full_page_writes=off -c synchronous_commit=off"
        pg_as "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -o "$opts" -s start >/dev/null \
            && break
        tries=$((tries - 1))
        if [ "$tries" -le 0 ] || ! grep -q "could not bind\|Address already in use" "$dir/server.log"; then
            echo "pg.sh: the server did not start:" >&2; tail -n 20 "$dir/server.log" >&2
            return 1
        fi
        echo "pg.sh: port $port was taken before the server bound it; trying another" >&2
    done
    # (pg_ctl start waits for the server to accept connections; check it)
    "$bin/pg_isready" -q -h "$dir" -p "$port" -t 10 \
        || { echo "pg.sh: the server does not answer" >&2; return 1; }
    case " $PG_STARTED " in *" $dir "*) ;; *) PG_STARTED="$PG_STARTED $dir" ;; esac
    PG_DIR="$dir" PG_HOST="$dir" PG_PORT="$port" PG_USER="$user" PG_BIN="$bin"
    PG_URL="postgresql:///postgres?host=$dir&port=$port&user=$user"
    export PG_DIR PG_HOST PG_PORT PG_USER PG_BIN PG_URL PG_STARTED
    # Sourced: stop it when the shell exits, unless the shell has an EXIT
    # trap of its own (which must call pg_cleanup)
    if [ "${PG_SOURCED:-0}" = 1 ] && [ -z "$(trap -p EXIT)" ]; then
        trap pg_cleanup EXIT
    fi
}

pg_newdb () {
    local name="${1:?pg_newdb NAME}"
    : "${PG_DIR:?pg_newdb: no server (pg_start first)}"
    PGOPTIONS="-c client_min_messages=warning" "$PG_BIN/psql" -X -q -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d postgres \
        -v ON_ERROR_STOP=1 -c "DROP DATABASE IF EXISTS \"$name\" WITH (FORCE)" \
        -c "CREATE DATABASE \"$name\"" >/dev/null || return 1
    PG_URL="postgresql:///$name?host=$PG_HOST&port=$PG_PORT&user=$PG_USER"
    export PG_URL
    echo "$PG_URL"
}

pg_restart () {
    local dir="${1:-${PG_DIR:-}}" bin port
    [ -n "$dir" ] && [ -f "$dir/data/postmaster.pid" ] || { echo "pg.sh: no server in $dir" >&2; return 1; }
    bin=$(pg_bindir) || return 1
    port=$(sed -n 4p "$dir/data/postmaster.pid")
    pg_as "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -s -m fast -w restart >/dev/null \
        || { tail -n 20 "$dir/server.log" >&2; return 1; }
    "$bin/pg_isready" -q -h "$dir" -p "$port" -t 10
}

pg_stop () {
    local dir="${1:-${PG_DIR:-}}" bin
    [ -n "$dir" ] && [ -d "$dir" ] || return 0
    bin=$(pg_bindir) || return 1
    if [ -f "$dir/data/postmaster.pid" ]; then
        pg_as "$bin/pg_ctl" -D "$dir/data" -s -m immediate -w stop >/dev/null 2>&1
    fi
    rm -rf "$dir"
    PG_STARTED=$(echo " $PG_STARTED " | sed "s| $dir | |; s/^ *//; s/ *$//")
    [ "$dir" = "${PG_DIR:-}" ] && unset PG_DIR PG_HOST PG_PORT PG_URL
    return 0
}

pg_cleanup () {
    local dir
    for dir in $PG_STARTED; do pg_stop "$dir"; done
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -u
    PG_SOURCED=0
    case "${1:-}" in
        start) pg_start "${2:?start DIR}" && echo "$PG_URL" ;;
        newdb) pg_start_found=$(cd "${2:?newdb DIR NAME}" && pwd)
               PG_DIR="$pg_start_found" PG_HOST="$pg_start_found" PG_USER=$(pg_user)
               PG_PORT=$(sed -n 4p "$pg_start_found/data/postmaster.pid")
               PG_BIN=$(pg_bindir) && pg_newdb "${3:?newdb DIR NAME}" ;;
        restart) pg_restart "${2:?restart DIR}" ;;
        stop) pg_stop "${2:?stop DIR}" ;;
        *) echo "usage: $0 start DIR | newdb DIR NAME | restart DIR | stop DIR" >&2; exit 2 ;;
    esac
else
    PG_SOURCED=1
fi
