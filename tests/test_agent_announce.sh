#!/usr/bin/env bash
# test_agent_announce.sh -- an agent announces its handlers when its
# plugins change, not at its next beat: with a 30 s beat, a plugin dropped
# into its folder shows in AGENT_LIST's handlers within seconds, and one
# taken out leaves them as soon.
. "$(dirname "$0")/lib.sh"
xxl_store_blind "the agent's announce"
xxl_setup

cat > "$T/scheduler.cfg" <<CFG
scheduler
    registry
        beat = 30
        dead = 90
CFG
cat > "$T/agent.cfg" <<CFG
agent
    beat = 30
CFG
mkdir -p "$T/plugins"
cp "$HANDLERS/demo.so" "$T/plugins/"
export AGENT_PLUGINS="$T/plugins"
start_scheduler || exit 1
start_agent an-1 an-app
check "agent registers" wait_for 10 agent_registered an-app an-1
has_handler () {
    ctl agent list | jq -e --arg h "$1" \
        '.agents | any(.address == "an-1" and (.handlers | split(",") | index($h)))' >/dev/null
}
check "its first REGISTER names demoJobHandler" has_handler demoJobHandler
gone () { ! has_handler okJobHandler; }
check "... and not okJobHandler yet" gone
cp "$XXL_TEST_PLUGINS/test_handlers.so" "$T/plugins/"
check "a plugin dropped in shows in agent list within 10 s (the beat is 30 s)" \
    wait_for 10 has_handler okJobHandler
rm "$T/plugins/test_handlers.so"
check "a plugin taken out leaves agent list within 10 s" wait_for 10 gone
check "demoJobHandler stays" has_handler demoJobHandler
xxl_done
