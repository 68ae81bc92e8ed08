# probe_glue.sh -- the GLUE_SHELL probe: the source of GLUE jobs in the fault
# suite (run by the agent as `sh FILE PARAM SHARD_INDEX SHARD_TOTAL`, stdout
# and stderr appended to the run's log file {logdir}/yyyy-mm-dd/{logId}.log,
# the file {logdir}/gluesource/{jobId}_{glueUpdatetime}.sh).  A GLUE script
# is given no logId: it reads it from the name of its stdout, and the job id
# from its own file name.  Appends one line, as probe.c does, to
# $XXL_PROBE_FILE (the agent's environment) with one write (printf of one
# short line to an O_APPEND fd), then sleeps sleep=N ms if the param says so.
f=$(readlink /proc/$$/fd/1)
id=${f##*/}; id=${id%.log}
j=${0##*/}; j=${j%%_*}
printf '%s %s %s/%s %s %s %s glue\n' "$id" "$j" "${2:-0}" "${3:-1}" "$$" "$(date +%s%3N)" \
    "${XXL_PROBE_TAG:--}" >> "${XXL_PROBE_FILE:?no XXL_PROBE_FILE}"
case "$1" in
    *sleep=*)
        ms=${1#*sleep=}; ms=${ms%%[!0-9]*}
        [ -n "$ms" ] && sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))" ;;
esac
case "$1" in *fail*) exit 1 ;; esac
exit 0
