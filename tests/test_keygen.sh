#!/usr/bin/env bash
# test_keygen.sh -- xxl-ctl keygen (DESIGN §8), no scheduler: it writes
# NAME.cert (0644, metadata name, role, apps) and NAME.cert_secret (0600);
# it refuses bad names, roles and app lists, an agent key without apps,
# and an existing key unless --force (which replaces it); a link planted at
# either name is refused, never written through; no private folder is left.
. "$(dirname "$0")/lib.sh"
xxl_store_blind "xxl-ctl keygen"
xxl_setup
K="$T/keys"
mkdir -p "$K"
kg () { "$CTL" keygen "$@" >/dev/null; }
meta () { sed -n "s/^    $2 = \"\(.*\)\"\$/\1/p" "$1"; }   # meta FILE KEY
mode () { stat -c %a "$1"; }

check "keygen of an admin key succeeds with no scheduler" \
    bash -c "'$CTL' --api tcp://127.0.0.1:1 keygen scheduler --role admin --dir '$K' > '$T/out'"
check "... it prints both paths and the public key" bash -c "
    grep -qxF 'public certificate: $K/scheduler.cert' '$T/out' &&
    grep -qxF 'secret certificate: $K/scheduler.cert_secret' '$T/out' &&
    grep -qxF 'public key: $(meta "$K/scheduler.cert" public-key)' '$T/out'"
check "the public file holds name, role, apps and a public key only" bash -c "
    [ \"\$(sed -n 's/^    name = \"\(.*\)\"\$/\1/p' '$K/scheduler.cert')\" = scheduler ] &&
    grep -q '^    role = \"admin\"\$' '$K/scheduler.cert' &&
    grep -q '^    apps = \"\"\$' '$K/scheduler.cert' &&
    grep -Eq '^    public-key = \".{40}\"\$' '$K/scheduler.cert' &&
    ! grep -q secret-key '$K/scheduler.cert'"
check "the secret file holds the same public key and a secret one" bash -c "
    grep -qF \"\$(grep public-key '$K/scheduler.cert')\" '$K/scheduler.cert_secret' &&
    grep -Eq '^    secret-key = \".{40}\"\$' '$K/scheduler.cert_secret'"
check "the secret file is 0600, the public one 0644" \
    test "$(mode "$K/scheduler.cert_secret") $(mode "$K/scheduler.cert")" = "600 644"
check "... also under a permissive umask" bash -c "
    umask 000 && '$CTL' keygen loose --role viewer --dir '$K' >/dev/null &&
    [ \"\$(stat -c %a '$K/loose.cert_secret')\" = 600 ]"

kg worker-1 --apps myapp,other-app --dir "$K" >/dev/null
check "an agent key (the default role) keeps its apps" \
    test "$(meta "$K/worker-1.cert" role) $(meta "$K/worker-1.cert" apps)" = "agent myapp,other-app"
check "--json prints one document with the key" bash -c "
    '$CTL' --json keygen op.alice --role operator --apps myapp --dir '$K' |
    jq -e '.name == \"op.alice\" and .role == \"operator\" and .apps == \"myapp\"
           and (.publicKey | length) == 40 and .secret == \"$K/op.alice.cert_secret\"' >/dev/null"

# Refusals: status 2 for a bad argument, 1 for an existing key; no file made
refused () {   # refused STATUS MESSAGE-PART ARGS...: exits STATUS, says it
    local want="$1" part="$2"; shift 2
    local rc=0
    "$CTL" keygen "$@" >"$T/r.out" 2>"$T/r.err" || rc=$?
    [ "$rc" = "$want" ] && grep -qF -- "$part" "$T/r.err"
}
check "a name with a slash is refused" refused 2 "NAME must be" ../x --role admin --dir "$K"
check "an empty name is refused" refused 2 "NAME must be" "" --role admin --dir "$K"
check "a hidden name is refused" refused 2 "not starting with '.'" .hidden --role admin --dir "$K"
check "a name of 65 characters is refused" refused 2 "NAME must be" \
    "$(printf 'a%.0s' $(seq 65))" --role admin --dir "$K"
check "... one of 64 is taken" kg "$(printf 'a%.0s' $(seq 64))" --role admin --dir "$K"
check "an unknown role is refused" refused 2 "--role must be admin, operator, viewer or agent" \
    x1 --role root --dir "$K"
check "an agent key without apps is refused" refused 2 "needs --apps" x2 --dir "$K"
check "an operator key without apps is refused (it could act on nothing)" refused 2 \
    "an operator key needs --apps" x5 --role operator --dir "$K"
check "... a viewer key without apps is made (it reads every app)" kg v0 --role viewer --dir "$K"
check "an app name with a space is refused" refused 2 "may hold only" \
    x3 --apps "my app" --dir "$K"
check "an all-digits app name is refused (it names a group id)" refused 2 "all digits" \
    x4 --apps 42 --dir "$K"
check "an empty item in the apps is refused" refused 2 "comma-separated" x5 --apps "a,,b" --dir "$K"
check "nothing was written for the refused names" \
    bash -c "! ls '$K' | grep -Eq '^(x[1-5]|\.hidden)'"
check "a missing folder is refused" refused 1 "cannot write keys in" x6 --role admin --dir "$T/nope"

OLD=$(meta "$K/scheduler.cert" public-key)
check "an existing key is not overwritten" refused 1 "exists" scheduler --role admin --dir "$K"
check "... its files are as they were" test "$(meta "$K/scheduler.cert" public-key)" = "$OLD"
: > "$K/half.cert_secret"
check "a lone existing secret file is not overwritten either" \
    refused 1 "half.cert_secret' exists" half --role admin --dir "$K"
check "... and no public file is left behind" test ! -e "$K/half.cert"
chmod 644 "$K/scheduler.cert_secret"
check "--force replaces the key" kg scheduler --role admin --dir "$K" --force
check "... with a new key" test "$(meta "$K/scheduler.cert" public-key)" != "$OLD"
check "... whose secret file is 0600 again" test "$(mode "$K/scheduler.cert_secret")" = 600
ln -s "$T/elsewhere" "$K/linked.cert_secret"
check "--force replaces a link, it does not write through it" bash -c "
    '$CTL' keygen linked --role admin --dir '$K' --force >/dev/null &&
    [ ! -L '$K/linked.cert_secret' ] && [ ! -e '$T/elsewhere' ]"

# A link planted where the secret goes is refused and its target untouched;
# the same name without the link is made
echo untouched > "$T/victim"
ln -s "$T/victim" "$K/planted.cert_secret"
check "a link at NAME.cert_secret makes keygen refuse" \
    refused 1 "planted.cert_secret' exists" planted --role admin --dir "$K"
check "... its target is untouched, the link still a link, no public file made" bash -c "
    [ \"\$(cat '$T/victim')\" = untouched ] && [ -L '$K/planted.cert_secret' ] &&
    [ ! -e '$K/planted.cert' ]"
rm "$K/planted.cert_secret"
check "... and without it the key is made" kg planted --role admin --dir "$K"
check "... a secret 0600 there, not at the link's target" bash -c "
    [ ! -L '$K/planted.cert_secret' ] && [ \"\$(stat -c %a '$K/planted.cert_secret')\" = 600 ] &&
    grep -q secret-key '$K/planted.cert_secret' && [ \"\$(cat '$T/victim')\" = untouched ]"
ln -s "$T/nowhere" "$K/dangling.cert"
check "a dangling link at NAME.cert makes keygen refuse" \
    refused 1 "dangling.cert' exists" dangling --role admin --dir "$K"
check "... nothing is made at its target" test ! -e "$T/nowhere" -a ! -e "$K/dangling.cert_secret"
mkdir -p "$K/blocked.cert_secret/x"
check "--force cannot replace a folder at NAME.cert_secret (a clear error)" \
    refused 1 "cannot move 'blocked.cert_secret' into" blocked --role admin --dir "$K" --force
check "... and leaves no public file" test ! -e "$K/blocked.cert"
# The race a planted link would win: no file is ever opened for writing by
# its path in the folder (a path another writer of it could have replaced)
if strace -f -o /dev/null true 2>/dev/null; then
    strace -f -e trace=open,openat,creat -o "$T/trace" \
        "$CTL" keygen traced --role admin --dir "$K" >/dev/null
    check "keygen opens no path in the folder for writing (strace)" bash -c "
        grep -q 'traced.cert' '$T/trace' &&
        ! grep -E 'O_WRONLY|O_RDWR|O_CREAT|creat\\(' '$T/trace' | grep -qF '\"$K/traced.cert'"
else
    echo "# test_keygen: no working strace; the opened-paths check is skipped"
fi
check "no private folder is left behind, whatever the outcome" \
    bash -c "! ls -A '$K' | grep -q keygen"
check "keygen is in xxl-ctl --help" bash -c "'$CTL' --help | grep -q '^  keygen'"
xxl_done
