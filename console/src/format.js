// Times and codes as the console shows them.
const pad = (n, w = 2) => String(n).padStart(w, '0')

// fmtTime(ms): "yyyy-MM-dd HH:mm:ss" in the browser's zone, '' for none
export function fmtTime(ms) {
  if (ms === null || ms === undefined || ms === 0) return ''
  const d = new Date(ms)
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
}

// fmtInZone(ms, tz): the same in an IANA zone (UTC when tz is empty or unknown)
export function fmtInZone(ms, tz) {
  let f
  try {
    f = new Intl.DateTimeFormat('en-CA', {
      timeZone: tz || 'UTC', year: 'numeric', month: '2-digit', day: '2-digit',
      hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZoneName: 'short',
    })
  } catch {
    return fmtInZone(ms, 'UTC')
  }
  const p = Object.fromEntries(f.formatToParts(new Date(ms)).map((x) => [x.type, x.value]))
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second} ${p.timeZoneName || ''}`.trim()
}

// fmtDate(ms): "yyyy-MM-dd", the day in the browser's zone (an <input
// type=date>'s value)
export function fmtDate(ms) {
  const d = new Date(ms)
  return `${pad(d.getFullYear(), 4)}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`
}

// dateDays(from, to, most): the days "yyyy-MM-dd" from one to the other,
// both included, oldest first; the newest `most` of them when more
export function dateDays(from, to, most) {
  const at = (s) => { const [y, m, d] = s.split('-').map(Number); return new Date(y, m - 1, d) }
  const day = at(to)
  day.setDate(day.getDate() - (most - 1))
  if (fmtDate(day.getTime()) < from) day.setTime(at(from).getTime())
  const out = []
  for (let s = fmtDate(day.getTime()); s <= to && out.length < most; s = fmtDate(day.getTime())) {
    out.push(s)
    day.setDate(day.getDate() + 1)
  }
  return out
}

// A run's state from its codes (docs/protocol.md, the log object)
export function runState(log) {
  if (log.handleCode === 200) return 'ok'
  if ((log.triggerCode !== 0 && log.triggerCode !== 200) || (log.handleCode !== 0 && log.handleCode !== 200)) return 'failed'
  return 'running'
}

// Whether LOG_KILL can end a run now: one running, or sent and not yet
// answered, or waiting in the scheduler for a slot or an agent; not a
// planned fire whose time has not come (the scheduler answers 409: stop
// its job or change its schedule instead)
export function killable(log, now = Date.now()) {
  if (runState(log) !== 'running') return false
  return !(log.triggerCode === 0 && log.scheduleTime > now)
}

// The closed lists (schedule types, strategies, GLUE types, routes) are
// the scheduler's: meta.js reads them from GET /api/v1/meta

// XXL-JOB's starting script for each GLUE type
export const GLUE_TEMPLATES = {
  GLUE_SHELL: '#!/bin/bash\necho "xxl-job: hello shell"\n\necho "params: $1"\nexit 0\n',
  GLUE_PYTHON: '#!/usr/bin/env python3\nimport sys\nprint("xxl-job: hello python")\nprint("params:", sys.argv[1:])\n',
  GLUE_PYTHON2: '# -*- coding: utf-8 -*-\nimport sys\nprint("xxl-job: hello python2")\nprint("params: " + " ".join(sys.argv[1:]))\n',
  GLUE_NODEJS: '#!/usr/bin/env node\nconsole.log("xxl-job: hello nodejs");\nconsole.log("params:", process.argv.slice(2));\n',
  GLUE_PHP: '<?php\necho "xxl-job: hello php\\n";\necho "params: " . ($argv[1] ?? "") . "\\n";\n',
  GLUE_POWERSHELL: 'Write-Host "xxl-job: hello powershell"\nWrite-Host "params: $args"\nexit 0\n',
}
