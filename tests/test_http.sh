#!/usr/bin/env bash
# test_http.sh -- the scheduler's HTTP side against real daemons: every
# REST path, each role (viewer, operator with apps, admin) with a refusal
# beside the allowed case, bearer tokens and sessions with CSRF, login,
# logout and a password change, bad JSON, wrong content type, an oversized
# body, unknown paths and methods, the console's files, /healthz, /readyz,
# and /metrics parsed by Prometheus' own text parser with values that move
# as runs happen; a session made on one scheduler holds on a second one
# sharing the store; the security headers of every answer; the limits on
# wrong passwords (per address, per user name, the table's bound).  The
# checks are in tests/test_http.py.  Here: the first login (user admin
# made on a store with none, its password file: mode, login, removal at a
# new password, no second admin at a second start or a restart,
# http/initial_admin = 0); CALLBACKs with and without
# startTime (xxl_peer as the agent) against xxl_trigger_start_seconds,
# HTTPS (HSTS, Secure cookies); XXL-JOB admin's endpoints under
# /xxl-job-admin (tests/test_http_xxladmin.py), http/xxl_admin_path.
. "$(dirname "$0")/lib.sh"
xxl_setup
PY=/usr/bin/python3
"$PY" -c 'import prometheus_client.parser' 2>/dev/null || {
    echo "FAIL - python3-prometheus-client is not installed (scripts/deps)"; FAILED=1; exit 1; }
mkdir -p "$T/console/assets"
echo '<!doctype html><title>xxl console</title>' > "$T/console/index.html"
echo 'console.log("xxl")' > "$T/console/assets/app.js"
echo 'secret' > "$T/console/.hidden"
echo 'outside' > "$T/outside.txt"
ln -s "$T/outside.txt" "$T/console/filelink"     # symbolic links: never served,
ln -s "$T" "$T/console/dirlink"                  # to a file or to a folder
cat >> "$T/scheduler.cfg" <<CFG
    http
        max_body = 65536
        console = $T/console
        session_idle_s = 3600
        login_burst = 5
        login_interval_s = 3600
        login_slots = 64
        xxl_admin_timezone = Asia/Shanghai
CFG
export XXL_SCHEDULER_ARGS="--http 127.0.0.1:0"
start_scheduler || exit 1
API1=$API HTTP1=$HTTP_EP AGENTS1=$AGENTS SPID1=$SPID
start_agent h1 http-app
check "agent registers" wait_for 10 agent_registered http-app h1
check "the scheduler serves HTTP on a port of its own" test -n "$HTTP1" -a "$HTTP1" != none

# The first login (docs/operations.md, First login): a store with no user
# gets user admin, its random password in STATE/initial-admin-password
# (0600), named in the log, never shown there
PWFILE="$XXL_STATE_DIR/initial-admin-password"
check "no user at first: admin made, its password in STATE/initial-admin-password, mode 0600" \
    bash -c "test -f '$PWFILE' && test \"\$(stat -c %a '$PWFILE')\" = 600 && grep -qE '^[2-9a-zA-Z]{24}\$' '$PWFILE'"
ADMIN_PW=$(cat "$PWFILE" 2>/dev/null)
check "... logged naming the user and the file, never the password" \
    bash -c "grep -q 'made user admin (role admin), its password in $PWFILE' '$T/scheduler.log' && ! grep -qF '${ADMIN_PW:-none}' '$T/scheduler.log'"
# admin_login EP PASSWORD NAME: status into $T/NAME.code, headers and body
# beside it (from an address of its own: test_http.py counts 127.0.0.1's
# wrong passwords)
admin_login () {
    curl -s --interface 127.0.0.9 -D "$T/$3.h" -o "$T/$3.b" -w '%{http_code}' -H 'Content-Type: application/json' \
        -d "{\"username\": \"admin\", \"password\": \"$2\"}" "http://$1/api/v1/login" >"$T/$3.code"
}
admin_login "$HTTP1" "wrong-$ADMIN_PW" admin_wrong
admin_login "$HTTP1" "$ADMIN_PW" admin_first
check "... the file's password logs admin in (200, role admin), a wrong one does not (401)" \
    bash -c "test \"\$(cat '$T/admin_first.code') \$(cat '$T/admin_wrong.code')\" = '200 401' \
             && jq -e '.role == \"admin\"' '$T/admin_first.b' >/dev/null"

# Users and tokens through the ZeroMQ api (xxl-ctl), as an admin would
echo 'alice-pass-1' | "$CTL" --api "$API" user add alice --role admin --password-stdin >/dev/null
echo 'olga-pass-12' | "$CTL" --api "$API" user add olga --role operator --apps http-app \
    --password-stdin >/dev/null
check "user add refuses a short password (400)" \
    bash -c "echo short | '$CTL' --api '$API' user add bob --role viewer --password-stdin 2>/dev/null; test \$? -ne 0"
check "user add refuses an unknown role" \
    bash -c "echo long-enough | '$CTL' --api '$API' user add bob --role root --password-stdin 2>/dev/null; test \$? -ne 0"
check "user add refuses a name taken (409)" \
    bash -c "echo alice-pass-1 | '$CTL' --api '$API' user add alice --role viewer --password-stdin 2>/dev/null; test \$? -ne 0"
ADMIN_TOKEN=$(ctl --get .token token add ci-admin --role admin)
VIEWER_TOKEN=$(ctl --get .token token add ci-viewer --role viewer)
OPERATOR_TOKEN=$(ctl --get .token token add ci-op --role operator --apps http-app)
check "token add prints a token once (xxl_ + 64 hex digits)" \
    bash -c "echo '$ADMIN_TOKEN' | grep -qE '^xxl_[0-9a-f]{64}$'"
check "token list never shows a token" bash -c "! '$CTL' --api '$API' --json token list | grep -q xxl_"
check "user list shows the users and their roles" \
    test "$(ctl user list | jq -r '[.users[] | .username + ":" + .role] | join(",")')" = "admin:admin,alice:admin,olga:operator"
check "the store holds the token's SHA-256, not the token" \
    test "$(xxl_sql "SELECT hash FROM xxl_token WHERE name = 'ci-admin'")" = "$(printf %s "$ADMIN_TOKEN" | sha256sum | cut -d' ' -f1)"
stored_hash () { xxl_sql "SELECT password FROM xxl_user WHERE username = 'alice'" | grep -q '^\$y\$'; }
check "the store holds the password's yescrypt hash" stored_hash

# A second scheduler on the same store, for the sessions shared by both;
# its wrong passwords are limited to one a second (test_http.py waits out
# its window), one client address may hold 4 of its connections, it
# answers for the Host names of http/hosts only (and IP addresses), and it
# remembers no login (http/remember_s = 0)
sed -i 's/login_interval_s = 3600/login_interval_s = 1/' "$T/scheduler.cfg"
sed -i 's/^        login_slots = 64$/        login_slots = 64\n        per_address = 4\n        hosts = "console.example, *.corp.example"\n        remember_s = 0/' "$T/scheduler.cfg"
start_scheduler || exit 1
API2=$API HTTP2=$HTTP_EP API=$API1
check "the second scheduler serves HTTP too" test -n "$HTTP2" -a "$HTTP2" != "$HTTP1"
admin_count () { xxl_sql "SELECT COUNT(*) FROM xxl_user WHERE username = 'admin'"; }
check "a second scheduler on the store makes no second admin, keeps the file" \
    bash -c "test '$(admin_count)' = 1 && test \"\$(cat '$PWFILE')\" = '$ADMIN_PW'"
# admin's new password (through the second scheduler): the file goes
ADMIN_SID=$(sed -n 's/^Set-Cookie: xxl_session=\([0-9a-f]*\);.*/\1/Ip' "$T/admin_first.h" | tr -d '\r')
curl -s -o /dev/null -w '%{http_code}' -X PUT -b "xxl_session=$ADMIN_SID" \
    -H "X-CSRF-Token: $(jq -r .csrf "$T/admin_first.b" 2>/dev/null)" -H 'Content-Type: application/json' \
    -d "{\"oldPassword\": \"$ADMIN_PW\", \"newPassword\": \"admin-pass-new-1\"}" \
    "http://$HTTP2/api/v1/me/password" >"$T/admin_pw.code"
check "admin changes its password (200): then STATE/initial-admin-password is gone" \
    bash -c "test \"\$(cat '$T/admin_pw.code')\" = 200 && $(declare -f wait_for); wait_for 10 test ! -e '$PWFILE'"
admin_login "$HTTP1" "admin-pass-new-1" admin_new
check "... and the new password logs admin in (200)" test "$(cat "$T/admin_new.code")" = 200

# Remember me: a login with "remember": true gets a cookie with Max-Age =
# http/remember_s (default 14 days) and a session whose idle limit is that;
# without it, or where remember_s = 0, a browser-session cookie and
# http/session_idle_s (3600 here).  Idle time is made by moving sessions'
# last-seen time back in the store: nothing waits.
echo 'remy-pass-12' | "$CTL" --api "$API1" user add remy --role viewer --password-stdin >/dev/null
RP='"username": "remy", "password": "remy-pass-12"'
# login NAME EP JSON-FIELDS: logs remy in; status, headers and body in $T/NAME.{code,h,b}
login () {
    curl -s -D "$T/$1.h" -o "$T/$1.b" -w '%{http_code}' -H 'Content-Type: application/json' \
        -d "{$RP$3}" "http://$2/api/v1/login" >"$T/$1.code"
}
code_is () { test "$(cat "$T/$1.code")" = "$2"; }
cookie_of () { sed -n 's/^Set-Cookie: xxl_session=\([0-9a-f]*\);.*/\1/Ip' "$T/$1.h" | tr -d '\r'; }
no_max_age () { grep -qi '^Set-Cookie: xxl_session=[0-9a-f]\{64\}; HttpOnly; SameSite=Strict; Path=/' "$T/$1.h" \
                && ! grep -qi '^Set-Cookie:.*Max-Age' "$T/$1.h"; }
me_code () { curl -s -o /dev/null -w '%{http_code}' -b "xxl_session=$2" "http://$1/api/v1/me"; }
# idle SECONDS COOKIE...: the sessions were last seen SECONDS longer ago
idle () {
    local s="$1" ids="" c; shift
    for c in "$@"; do ids="$ids${ids:+,}'$(printf %s "$c" | sha256sum | cut -d' ' -f1)'"; done
    xxl_sql "UPDATE xxl_session SET seen = seen - $s * 1000 WHERE id IN ($ids)"
}
login plain "$HTTP1" ""
check "a login without remember: 200, a cookie without Max-Age (today's)" \
    bash -c "$(declare -f code_is no_max_age); T='$T'; code_is plain 200 && no_max_age plain"
login unremembered "$HTTP1" ', "remember": false'
check "... and with \"remember\": false the same" \
    bash -c "$(declare -f code_is no_max_age); T='$T'; code_is unremembered 200 && no_max_age unremembered"
login remembered "$HTTP1" ', "remember": true'
check "with \"remember\": true: 200, the cookie has Max-Age=1209600 (http/remember_s's default)" \
    bash -c "$(declare -f code_is); T='$T'; code_is remembered 200 && grep -qi '^Set-Cookie: xxl_session=[0-9a-f]\{64\}; HttpOnly; SameSite=Strict; Path=/; Max-Age=1209600' '$T/remembered.h'"
login remembered_off "$HTTP2" ', "remember": true'
check "with \"remember\": true where http/remember_s = 0: 200, no Max-Age" \
    bash -c "$(declare -f code_is no_max_age); T='$T'; code_is remembered_off 200 && no_max_age remembered_off"
login yes "$HTTP1" ', "remember": "yes"'
check "\"remember\": \"yes\": 400 naming it, no cookie" \
    bash -c "$(declare -f code_is); T='$T'; code_is yes 400 && grep -q 'remember' '$T/yes.b' && ! grep -qi '^Set-Cookie' '$T/yes.h'"
login one "$HTTP1" ', "remember": 1'
check "... and \"remember\": 1 as well" \
    bash -c "$(declare -f code_is); T='$T'; code_is one 400 && grep -q 'remember' '$T/one.b'"
PLAIN=$(cookie_of plain) REM=$(cookie_of remembered) REM_OFF=$(cookie_of remembered_off)
idle 3601 "$PLAIN" "$REM" "$REM_OFF"
check "past http/session_idle_s idle, a remembered session holds (200)" test "$(me_code "$HTTP1" "$REM")" = 200
check "... an unremembered one has ended (401)" test "$(me_code "$HTTP1" "$PLAIN")" = 401
check "... as has one asked to be remembered where remembering is off (401)" \
    test "$(me_code "$HTTP1" "$REM_OFF")" = 401
REM_CSRF=$(jq -r .csrf "$T/remembered.b")
check "a remembered session changes its password: 200" \
    test "$(curl -s -o /dev/null -w '%{http_code}' -X PUT -b "xxl_session=$REM" -H "X-CSRF-Token: $REM_CSRF" \
             -H 'Content-Type: application/json' -d '{"oldPassword": "remy-pass-12", "newPassword": "remy-pass-34"}' \
             "http://$HTTP1/api/v1/me/password")" = 200
idle 3601 "$REM"
check "... and stays remembered: past session_idle_s again, it holds" test "$(me_code "$HTTP1" "$REM")" = 200
idle 1209601 "$REM"
check "past http/remember_s idle, a remembered session ends too (401)" test "$(me_code "$HTTP1" "$REM")" = 401
RP='"username": "remy", "password": "remy-pass-34"'
login again "$HTTP1" ', "remember": true'
REM=$(cookie_of again)
"$CTL" --api "$API1" user rm remy >/dev/null
check "a remembered session ends with its user's removal (401)" test "$(me_code "$HTTP1" "$REM")" = 401
for bad in 30 -1 abc; do
    printf 'scheduler\n    http\n        remember_s = %s\n' "$bad" > "$T/remember.cfg"
    check "http/remember_s = $bad is refused at start, naming it" \
        bash -c "! timeout 10 '$SCHEDULER' -c '$T/remember.cfg' --db '$T/remember.db' --api tcp://127.0.0.1:0 \
                 --agents tcp://127.0.0.1:0 --plugins '$XXL_BUILD/plugins/routers/.libs' --http 127.0.0.1:0 \
                 >'$T/remember.out' 2>&1 && grep -q 'http/remember_s' '$T/remember.out'"
done

# REPORT by range (test_http.py): day rows of 2001-01-01 to 2001-02-09
# (local midnights, no runs), older than the newest 30 a REPORT without a
# range answers
rows=""
for k in $(seq 0 39); do
    rows="$rows${rows:+,}($(( $(date -d "2001-01-01 + $k days" +%s) * 1000 )), 0, 0, 0, 1)"
done
xxl_sql "INSERT INTO xxl_job_log_report (trigger_day, running_count, suc_count, fail_count,
         update_time) VALUES $rows"
export HTTP1 HTTP2 ADMIN_TOKEN VIEWER_TOKEN OPERATOR_TOKEN T
export XXL_STORE="${XXL_STORE:-sqlite}"
"$PY" "$XXL_SRC/tests/test_http.py" > "$T/py.out" 2>&1
rc=$?
cat "$T/py.out"
PASSED=$((PASSED + $(grep -c '^ok - ' "$T/py.out")))
FAILED=$((FAILED + $(grep -c '^FAIL - ' "$T/py.out")))
check "test_http.py ran to its end" test "$rc" -eq 0 -a "$(grep -c '^done$' "$T/py.out")" -eq 1

# Trigger to handler start: a CALLBACK item's startTime (xxl-agent sends
# it; test_http.py saw the histogram count its runs).  xxl_peer plays an
# agent that leaves it out, gives it, gives it ill-typed, or gives times
# that cannot be a start (an hour in the future, an hour before the trigger)
PEER="$XXL_PEER"
metric () { curl -s "http://$HTTP1/metrics" | awk -v n="$1" '$1 == n { print $2 }'; }
metric_is () { test "$(metric "$1")" = "$2"; }
RUNS='xxl_runs_total{code="200"}' STARTS=xxl_trigger_start_seconds_count
ctl group add peer-app >/dev/null
PJOB=$(ctl --get .id job add --group peer-app --handler peerHandler --desc peer)
peer_gone () { ! agent_registered peer-app peer-1; }
# peer_run NAME CALLBACK-STEP...: one RUN to the peer, accepted, then the
# steps; its lines in $T/NAME.json: REGISTER, RUN, reply, the steps, UNREGISTER
peer_run () {
    local out="$T/$1.json" reg="registryGroup=s:EXECUTOR registryKey=s:peer-app registryValue=s:peer-1"
    shift
    # shellcheck disable=SC2086
    "$PEER" "$AGENTS1" --timeout 8000 -- send REGISTER $reg -- expect RUN -- reply 200 "$@" \
        -- send UNREGISTER $reg >"$out" &
    local pid=$!
    wait_for 10 agent_registered peer-app peer-1
    PLOG=$(ctl --get '.logIds[0]' job trigger "$PJOB")
    wait "$pid"
    wait_for 10 peer_gone
    [ "$(jq -s '.[1].logId' "$out")" = "$PLOG" ] || { echo "# $out:"; cat "$out"; }
}
callback_code () { jq -s ".[$2].code" "$T/$1.json"; }
finished () { test "$(ctl --get .handleCode log show "$1")" = 200; }
RUNS0=$(metric "$RUNS") START0=$(metric "$STARTS")
peer_run peer1 -- send CALLBACK 'items=cb:$LOG:200'
check "a CALLBACK without startTime (a third-party agent) is taken: 200" \
    test "$(callback_code peer1 3)" = 200
check "... and finishes its run" finished "$PLOG"
check "... which /metrics counts" wait_for 10 metric_is "$RUNS" $((RUNS0 + 1))
check "... but not in the trigger-to-start histogram" metric_is "$STARTS" "$START0"
peer_run peer2 -- send CALLBACK 'items=cb:$LOG:200:now'
check "a CALLBACK with startTime: 200" test "$(callback_code peer2 3)" = 200
check "... its run counted in the histogram" wait_for 10 metric_is "$STARTS" $((START0 + 1))
check "... with its run" metric_is "$RUNS" $((RUNS0 + 2))
peer_run peer3 -- send CALLBACK 'items=cb:$LOG:200:s:soon' -- send CALLBACK 'items=cb:$LOG:200'
check "an ill-typed startTime: 400 naming it, as any ill-typed field" \
    bash -c "jq -se '.[3].code == 400 and (.[3].msg | test(\"startTime\"))' '$T/peer3.json' >/dev/null"
check "... the item did not count; sent again without it: 200, the run finished" \
    bash -c "test '$(callback_code peer3 4)' = 200 && $(declare -f finished ctl); API='$API' CTL='$CTL' finished $PLOG"
peer_run peer4 -- send CALLBACK 'items=cb:$LOG:200:now+3600000'
check "a startTime an hour ahead: 200, the run finishes" \
    bash -c "test '$(callback_code peer4 3)' = 200 && $(declare -f finished ctl); API='$API' CTL='$CTL' finished $PLOG"
peer_run peer5 -- send CALLBACK 'items=cb:$LOG:200:now-3600000'
check "one an hour before the trigger: 200, the run finishes" \
    bash -c "test '$(callback_code peer5 3)' = 200 && $(declare -f finished ctl); API='$API' CTL='$CTL' finished $PLOG"
check "... counted as runs" wait_for 10 metric_is "$RUNS" $((RUNS0 + 5))
check "... but neither as a start" metric_is "$STARTS" $((START0 + 1))

# XXL-JOB admin's console endpoints (/xxl-job-admin, docs/migrating.md):
# the checks are in tests/test_http_xxladmin.py, as a script would call them
# (after the runs counted above: its run moves /metrics' counts)
echo 'xa-admin-pass-1' | "$CTL" --api "$API1" user add xa-admin --role admin --password-stdin >/dev/null
echo 'xa-viewer-pass-1' | "$CTL" --api "$API1" user add xa-viewer --role viewer --password-stdin >/dev/null
XA_ADMIN_PW=xa-admin-pass-1 XA_VIEWER_PW=xa-viewer-pass-1 XA_APP=http-app XA_ZONE=Asia/Shanghai API="$API1" CTL="$CTL" \
    "$PY" "$XXL_SRC/tests/test_http_xxladmin.py" > "$T/xa.out" 2>&1
rc=$?
cat "$T/xa.out"
PASSED=$((PASSED + $(grep -c '^ok - ' "$T/xa.out")))
FAILED=$((FAILED + $(grep -c '^FAIL - ' "$T/xa.out")))
check "test_http_xxladmin.py ran to its end" test "$rc" -eq 0 -a "$(grep -c '^done$' "$T/xa.out")" -eq 1
# XXL-JOB 3.5's job OpenAPI (/xxl-job-admin/api/addJob, ...): tests/test_http_openapi.py
echo 'xa-three-pass-1' | "$CTL" --api "$API1" user add xa-three --role admin --password-stdin >/dev/null
XA3_USER=xa-three XA3_PW=xa-three-pass-1 XA_APP=http-app XA_ZONE=Asia/Shanghai "$PY" "$XXL_SRC/tests/test_http_openapi.py" > "$T/oa.out" 2>&1
rc=$?
cat "$T/oa.out"
PASSED=$((PASSED + $(grep -c '^ok - ' "$T/oa.out")))
FAILED=$((FAILED + $(grep -c '^FAIL - ' "$T/oa.out")))
check "test_http_openapi.py ran to its end" test "$rc" -eq 0 -a "$(grep -c '^done$' "$T/oa.out")" -eq 1

# A client's oversized headers (431 from libmicrohttpd, each a line of its
# logger): 60 of them log at most 10 a minute (the log is no client's to
# fill), a held-back count coming with the next line; a request of
# ordinary headers beside them is served
big_headers () {
    "$PY" - "$HTTP1" "$1" <<'PY'
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
codes = []
for _ in range(int(sys.argv[2])):
    s = socket.create_connection((host, int(port)), timeout=30)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 200000 + b"\r\n\r\n")
    answer = b""
    try:
        while b"\r\n" not in answer:
            chunk = s.recv(4096)
            if not chunk:
                break
            answer += chunk
    except OSError:
        pass
    s.close()
    codes.append(answer.split(b" ")[1].decode() if answer.count(b" ") else "none")
print(" ".join(sorted(set(codes))))
PY
}
MHD_BEFORE=$(grep -c 'http: Error processing request' "$T/scheduler.log")
check "60 requests with a 200 KB header: each refused 431" test "$(big_headers 60)" = 431
MHD_AFTER=$(grep -c 'http: Error processing request' "$T/scheduler.log")
check "... at most 10 of their lines a minute in the log (60 sent; 20 allow a minute's turn)" \
    test $((MHD_AFTER - MHD_BEFORE)) -le 20
check "... and a request of ordinary headers beside them is served (200)" \
    test "$(curl -s -o /dev/null -w '%{http_code}' "http://$HTTP1/healthz")" = 200

# HTTPS: with http/cert and http/key the same api over TLS, cookies Secure
if command -v openssl >/dev/null; then
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
        -keyout "$T/http.key" -out "$T/http.crt" >/dev/null 2>&1
    cat > "$T/tls.cfg" <<CFG
scheduler
    http
        endpoint = 127.0.0.1:0
        cert = $T/http.crt
        key = $T/http.key
        xxl_admin_path = /jobs/admin
CFG
    XXL_STATE_DIR="$T/tls-state" "$SCHEDULER" -c "$T/tls.cfg" --db "$T/tls.db" --api tcp://127.0.0.1:0 --agents tcp://127.0.0.1:0 \
        --plugins "$XXL_BUILD/plugins/routers/.libs" --ready-file "$T/tls.ready" --open >"$T/tls.log" 2>&1 &
    TLS_PID=$!
    PIDS="$PIDS $TLS_PID"
    check "a TLS scheduler starts" wait_for 10 test -f "$T/tls.ready"
    TLS_HTTP=$(sed -n 's/^http=//p' "$T/tls.ready")
    TLS_API=$(sed -n 's/^api=//p' "$T/tls.ready")
    echo 'tls-pass-123' | "$CTL" --api "$TLS_API" user add tina --role viewer --password-stdin >/dev/null
    curl -s -k -D "$T/tls.headers" -o "$T/tls.body" -H 'Content-Type: application/json' \
        -d '{"username": "tina", "password": "tls-pass-123"}' "https://$TLS_HTTP/api/v1/login"
    check "login over HTTPS" grep -q '"username":"tina"' "$T/tls.body"
    check "its cookie is Secure" grep -qi '^Set-Cookie: xxl_session=.*; Secure' "$T/tls.headers"
    # XXL-JOB's endpoints under another http/xxl_admin_path: their cookie
    # Secure, on that path; /xxl-job-admin is then not theirs
    curl -s -k -D "$T/tls-xa.headers" -o "$T/tls-xa.body" -d 'userName=tina&password=tls-pass-123' \
        "https://$TLS_HTTP/jobs/admin/login"
    check "http/xxl_admin_path = /jobs/admin: login there (ReturnT 200)" \
        grep -q '^{"code":200' "$T/tls-xa.body"
    check "... its cookie XXL_JOB_LOGIN_IDENTITY Secure, HttpOnly, SameSite=Strict, Path=/jobs/admin" \
        grep -qi '^Set-Cookie: XXL_JOB_LOGIN_IDENTITY=[0-9a-f]*; HttpOnly; SameSite=Strict; Path=/jobs/admin; Secure' "$T/tls-xa.headers"
    check "... and /xxl-job-admin/login is not served there" \
        bash -c "! curl -s -k -d 'userName=tina&password=tls-pass-123' 'https://$TLS_HTTP/xxl-job-admin/login' | grep -q '\"code\"'"
    check "HTTPS answers carry Strict-Transport-Security" \
        grep -qi '^Strict-Transport-Security: max-age=[1-9]' "$T/tls.headers"
    curl -s -k -D "$T/tls.index" -o /dev/null "https://$TLS_HTTP/healthz"
    check "... every one of them" grep -qi '^Strict-Transport-Security: max-age=[1-9]' "$T/tls.index"
    check "the HTTPS certificate is the configured one" \
        test "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$T/http.crt" "https://$TLS_HTTP/healthz")" = 200
    tls_version () {    # tls_version -tls1_1: the protocol a handshake at that version settled on
        echo | timeout 10 openssl s_client -connect "$TLS_HTTP" "$1" -cipher 'DEFAULT@SECLEVEL=0' 2>/dev/null \
            | sed -n 's/^New, \(TLSv[0-9.]*\), Cipher is .*/\1/p'
    }
    check "TLS 1.0 and 1.1 are refused" test -z "$(tls_version -tls1)$(tls_version -tls1_1)"
    check "... 1.2 and 1.3 are taken" test "$(tls_version -tls1_2) $(tls_version -tls1_3)" = "TLSv1.2 TLSv1.3"
    check "plain HTTP to the TLS port gets no answer" \
        bash -c "! curl -s -m 5 -o /dev/null 'http://$TLS_HTTP/healthz'"
    kill -TERM "$TLS_PID" 2>/dev/null
else
    echo "# openssl missing: the HTTPS checks are skipped"
fi

# HTTP beyond loopback without TLS is refused at start, unless --insecure
check "a non-loopback HTTP endpoint without TLS is refused at start" \
    bash -c "! timeout 10 '$SCHEDULER' --db '$T/open.db' --api tcp://127.0.0.1:0 --agents tcp://127.0.0.1:0 \
             --plugins '$XXL_BUILD/plugins/routers/.libs' --http 0.0.0.0:0 >'$T/open.out' 2>&1 \
             && grep -q 'without TLS' '$T/open.out'"
XXL_STATE_DIR="$T/open2-state" "$SCHEDULER" --db "$T/open2.db" --api tcp://127.0.0.1:0 --agents tcp://127.0.0.1:0 \
    --plugins "$XXL_BUILD/plugins/routers/.libs" --http 0.0.0.0:0 --insecure --open --ready-file "$T/open2.ready" >"$T/open2.log" 2>&1 &
OPEN_PID=$!
PIDS="$PIDS $OPEN_PID"
check "with --insecure it starts (and says so)" \
    bash -c "for i in \$(seq 200); do test -f '$T/open2.ready' && break; sleep 0.05; done; \
             test -f '$T/open2.ready' && grep -q 'insecure' '$T/open2.log'"
kill -TERM "$OPEN_PID" 2>/dev/null
# An http/hosts entry that is no host name stops the start, naming it (the
# second scheduler above started with a valid list)
printf 'scheduler\n    http\n        hosts = "console.example, bad/name"\n' > "$T/hosts.cfg"
check "an http/hosts entry that is no host name is refused at start" \
    bash -c "! timeout 10 '$SCHEDULER' -c '$T/hosts.cfg' --db '$T/hosts.db' --api tcp://127.0.0.1:0 \
             --agents tcp://127.0.0.1:0 --plugins '$XXL_BUILD/plugins/routers/.libs' --http 127.0.0.1:0 \
             >'$T/hosts.out' 2>&1 && grep -q \"http/hosts: 'bad/name' is not a host name\" '$T/hosts.out'"
# An http/xxl_admin_path that is no path, or that takes /api's, stops the start
for bad in xxl-job-admin /xxl-job-admin/ /api /a//b "/a b"; do
    printf 'scheduler\n    http\n        xxl_admin_path = "%s"\n' "$bad" > "$T/xapath.cfg"
    check "http/xxl_admin_path = '$bad' is refused at start, naming it" \
        bash -c "! timeout 10 '$SCHEDULER' -c '$T/xapath.cfg' --db '$T/xapath.db' --api tcp://127.0.0.1:0 \
                 --agents tcp://127.0.0.1:0 --plugins '$XXL_BUILD/plugins/routers/.libs' --http 127.0.0.1:0 \
                 >'$T/xapath.out' 2>&1 && grep -q 'http/xxl_admin_path' '$T/xapath.out'"
done
# ... and so does an http/xxl_admin_timezone that is no zone
printf 'scheduler\n    http\n        xxl_admin_timezone = Mars/Base\n' > "$T/xazone.cfg"
check "http/xxl_admin_timezone = Mars/Base is refused at start, naming it" \
    bash -c "! timeout 10 '$SCHEDULER' -c '$T/xazone.cfg' --db '$T/xazone.db' --api tcp://127.0.0.1:0 \
             --agents tcp://127.0.0.1:0 --plugins '$XXL_BUILD/plugins/routers/.libs' --http 127.0.0.1:0 \
             >'$T/xazone.out' 2>&1 && grep -q \"http/xxl_admin_timezone: unknown time zone 'Mars/Base'\" '$T/xazone.out'"
# ... and one that lists no name at all (",") answers any Host, as unset
printf 'scheduler\n    http\n        hosts = ","\n        initial_admin = 0\n        xxl_admin_path = ""\n' > "$T/hosts2.cfg"
XXL_STATE_DIR="$T/hosts2-state" "$SCHEDULER" -c "$T/hosts2.cfg" --db "$T/hosts2.db" --api tcp://127.0.0.1:0 --agents tcp://127.0.0.1:0 \
    --plugins "$XXL_BUILD/plugins/routers/.libs" --http 127.0.0.1:0 --ready-file "$T/hosts2.ready" --open \
    >"$T/hosts2.log" 2>&1 &
HOSTS2_PID=$!
PIDS="$PIDS $HOSTS2_PID"
check "http/hosts = \",\" starts" wait_for 10 test -f "$T/hosts2.ready"
check "... and answers any Host" test "$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: evil.example' \
    "http://$(sed -n 's/^http=//p' "$T/hosts2.ready")/healthz")" = 200
check "http/xxl_admin_path = \"\" (hosts2's): XXL-JOB's endpoints are not served (the console's files: 405)" \
    test "$(curl -s -o /dev/null -w '%{http_code}' -d 'userName=a&password=b' \
            "http://$(sed -n 's/^http=//p' "$T/hosts2.ready")/xxl-job-admin/login")" = 405
kill -TERM "$HOSTS2_PID" 2>/dev/null
# http/initial_admin = 0 (hosts2's): a new store keeps no user, and no file
# is made, where the default made both (open2's, a new store too)
users_in () { sqlite3 -cmd ".timeout 5000" "$1" "SELECT group_concat(username) FROM xxl_user"; }
check "http/initial_admin = 0: no user made and no file, where the default made admin and its file" \
    bash -c "test -z '$(users_in "$T/hosts2.db")' && test ! -e '$T/hosts2-state/initial-admin-password' \
             && test '$(users_in "$T/open2.db")' = admin && test -f '$T/open2-state/initial-admin-password'"
# A restart on the store (admin's password changed, the file gone): no
# second admin, no file, nothing made
kill -TERM "$SPID1" 2>/dev/null
wait "$SPID1" 2>/dev/null
USERS_BEFORE=$(xxl_sql "SELECT COUNT(*) FROM xxl_user")
start_scheduler "$API1" "$AGENTS1" || exit 1
check "a restart makes no second admin and no file" \
    bash -c "test '$(admin_count)' = 1 && test '$(xxl_sql "SELECT COUNT(*) FROM xxl_user")' = '$USERS_BEFORE' \
             && test ! -e '$PWFILE' && test \"\$(grep -c 'made user admin' '$T/scheduler.log')\" = 1"
admin_login "$HTTP_EP" "admin-pass-new-1" admin_restart
check "... admin logs in with its new password (200)" test "$(cat "$T/admin_restart.code")" = 200
xxl_done
