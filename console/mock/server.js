// A stand-in for xxl-scheduler's HTTP side, for developing the console
// without a scheduler: the REST contract's paths over an in-memory state,
// the built console from dist/ with a strict Content-Security-Policy.
// Not a test of the server: tests/test_console.sh runs the real one.
//   node mock/server.js [PORT]   (default 8090; users admin / admin, viewer / viewer)
import http from 'node:http'
import fs from 'node:fs'
import path from 'node:path'
import crypto from 'node:crypto'

const port = Number(process.argv[2] || 8090)
const root = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'dist')
const now = () => Date.now()
const S = {
  users: [{ username: 'admin', password: 'admin', role: 'admin', apps: [], addTime: now() },
    { username: 'viewer', password: 'viewer', role: 'viewer', apps: [], addTime: now() }],
  tokens: [], sessions: new Map(), calendars: [], backfills: [],
  groups: [{ id: 1, appname: 'demo', title: 'Demo executor', addressType: 0, addressList: 'a1', updateTime: now() }],
  jobs: [], glues: [], logs: [], audit: [], ids: { job: 0, log: 0, group: 1, audit: 0 },
}
const JOB_DEFAULTS = { jobDesc: '', author: '', scheduleType: 'NONE', scheduleConf: '', timezone: '', misfireStrategy: 'DO_NOTHING',
  executorRouteStrategy: 'FIRST', executorHandler: '', executorParam: '', executorBlockStrategy: 'SERIAL_EXECUTION',
  executorTimeout: 0, executorFailRetryCount: 0, retryInterval: 0, retryBackoff: 1, retryMaxInterval: 0, glueType: 'BEAN',
  glueSource: '', glueRemark: '', childJobId: '', alarmEmail: '',
  agentTags: '' }

// What GET /meta and /plugins answer: the scheduler's lists, and the routes
// and alarm kinds of the plugins it ships
const PLUGINS = { routers: ['BUSYOVER', 'CONSISTENT_HASH', 'FAILOVER', 'FIRST', 'LAST', 'LEAST_FREQUENTLY_USED',
  'LEAST_RECENTLY_USED', 'RANDOM', 'ROUND', 'SHARDING_BROADCAST'], alarms: ['email', 'script', 'webhook'] }
const META_LISTS = { scheduleTypes: ['NONE', 'CRON', 'FIX_RATE', 'FIX_DELAY'], misfireStrategies: ['DO_NOTHING', 'FIRE_ONCE_NOW'],
  blockStrategies: ['SERIAL_EXECUTION', 'DISCARD_LATER', 'COVER_EARLY'],
  glueTypes: ['BEAN', 'GLUE_SHELL', 'GLUE_PYTHON', 'GLUE_PYTHON2', 'GLUE_NODEJS', 'GLUE_PHP', 'GLUE_POWERSHELL'], triggerTypes: ['MANUAL', 'API'],
  roles: ['admin', 'operator', 'viewer'], routeStrategies: PLUGINS.routers, alarmKinds: PLUGINS.alarms }

class E extends Error { constructor(code, msg) { super(msg); this.code = code } }
const find = (arr, pred, what) => { const x = arr.find(pred); if (!x) throw new E(404, `no such ${what}`); return x }
const group = (g) => find(S.groups, (x) => String(x.id) === String(g) || x.appname === g, 'group')
const job = (id) => find(S.jobs, (x) => x.id === Number(id), 'job')
const audit = (who, type, target, code = 200) => S.audit.push({ id: ++S.ids.audit, time: now(), who, role: 'admin', type, target, code })

function addGlue(j, remark) {
  const mine = S.glues.filter((g) => g.jobId === j.id)
  const version = mine.length ? Math.max(...mine.map((g) => g.version)) + 1 : 1
  S.glues.push({ version, jobId: j.id, glueType: j.glueType, glueRemark: remark || '', addTime: now(), updateTime: now(),
    size: Buffer.byteLength(j.glueSource), glueSource: j.glueSource })
  return version
}
// tzOffset(ms, tz): the zone's offset from UTC at that instant, in ms
function tzOffset(ms, tz) {
  const p = Object.fromEntries(new Intl.DateTimeFormat('en-US', { timeZone: tz || 'UTC', hourCycle: 'h23', year: 'numeric',
    month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' }).formatToParts(ms).map((x) => [x.type, x.value]))
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - Math.floor(ms / 1000) * 1000
}
// A stand-in for the scheduler's cron: "s m h * * ?" daily in the zone, "0 0/N * * * ?" every N minutes, else every minute
function cronNext(expr, n, tz) {
  const f = expr.trim().split(/\s+/)
  if (f.length < 6 || f.length > 7) throw new E(400, `cron expression '${expr}' has ${f.length} fields, not 6 or 7`)
  if (f.slice(0, 2).some((x) => /^\d+$/.test(x) && Number(x) > 59)) throw new E(400, `cron expression '${expr}': a value is out of range`)
  if (f.slice(0, 3).every((x) => /^\d+$/.test(x))) {
    const out = []
    for (let d = -1; out.length < n; d++) {
      const base = new Date(now() + d * 86400000)
      const guess = Date.UTC(base.getUTCFullYear(), base.getUTCMonth(), base.getUTCDate(), +f[2], +f[1], +f[0])
      const at = guess - tzOffset(guess, tz)
      if (at > now() && !out.includes(at)) out.push(at)
    }
    return out
  }
  const step = /^0\/(\d+)$/.test(f[1]) ? Number(f[1].slice(2)) * 60000 : 60000
  const t0 = Math.ceil((now() + 1) / step) * step
  return Array.from({ length: n }, (_, k) => t0 + k * step)
}
function trigger(j, body) {
  const id = ++S.ids.log
  const log = { id, jobId: j.id, jobGroup: j.jobGroup, triggerCode: 200, triggerTime: now(), triggerType: 'MANUAL',
    triggerMsg: 'Trigger type: manual\nAddress: a1\ncode: 200', executorAddress: (body.address || 'a1').split(',')[0],
    executorHandler: j.executorHandler, executorParam: body.executorParam ?? j.executorParam, executorShardingParam: null,
    executorFailRetryCount: 0, scheduleTime: null, handleTime: null, handleCode: 0, handleMsg: null, alarmStatus: 0,
    lines: [], started: now() }
  S.logs.push(log)
  // GLUE_SHELL's echo lines stand in for running the script
  const echoes = j.glueType === 'GLUE_SHELL'
    ? j.glueSource.split('\n').map((l) => /^echo "?(.*?)"?$/.exec(l)).filter(Boolean).map((m) => m[1].replaceAll('$1', log.executorParam)) : []
  const lines = ['execute start', `----------- param:${log.executorParam}`, ...echoes, 'execute end: 200']
  lines.forEach((l, i) => setTimeout(() => {
    log.lines.push(`${new Date().toISOString()} [mock] ${l}`)
    if (i === lines.length - 1) { log.handleCode = 200; log.handleTime = now() }
  }, 600 * (i + 1)))
  return id
}

function session(req) {
  const m = /(?:^|;\s*)xxl_session=([^;]+)/.exec(req.headers.cookie || '')
  return m ? S.sessions.get(m[1]) : null
}

async function api(req, url, body) {
  const m = req.method
  const p = url.pathname.replace(/^\/api\/v1/, '')
  const q = Object.fromEntries(url.searchParams)
  const seg = p.split('/').filter(Boolean)
  if (p === '/login' && m === 'POST') {
    const u = S.users.find((x) => x.username === body.username && x.password === body.password)
    if (!u) throw new E(401, 'wrong user name or password')
    const sid = crypto.randomBytes(16).toString('hex')
    const me = { username: u.username, role: u.role, apps: u.apps, csrf: crypto.randomBytes(16).toString('hex') }
    S.sessions.set(sid, me)
    const age = body.remember === true ? '; Max-Age=1209600' : ''
    return [200, me, { 'Set-Cookie': `xxl_session=${sid}; HttpOnly; SameSite=Strict; Path=/${age}` }]
  }
  const me = session(req)
  if (!me) throw new E(401, 'log in first')
  if (m !== 'GET' && req.headers['x-csrf-token'] !== me.csrf) throw new E(403, 'missing or wrong X-CSRF-Token')
  const who = me.username
  if (p === '/me') return me
  if (p === '/logout') { S.sessions.forEach((v, k) => { if (v === me) S.sessions.delete(k) }); return [200, {}, { 'Set-Cookie': 'xxl_session=; Max-Age=0; Path=/' }] }
  if (p === '/me/password') { const u = find(S.users, (x) => x.username === who, 'user'); if (u.password !== body.oldPassword) throw new E(403, 'wrong password'); u.password = body.newPassword; return {} }
  if (p === '/report') {
    const fin = S.logs.filter((l) => l.handleCode)
    const suc = fin.filter((l) => l.handleCode === 200).length
    const day = 86400000, d0 = Math.floor(now() / day) * day
    return { jobCount: S.jobs.length, jobRunningCount: S.jobs.filter((j) => j.triggerStatus).length, groupCount: S.groups.length,
      agentCount: 1, runCount: S.logs.length, sucCount: suc, failCount: fin.length - suc, successRate: fin.length ? suc / fin.length : 1,
      days: [0, 1, 2, 3, 4, 5, 6].map((k) => ({ triggerDay: d0 - k * day, runningCount: k ? 0 : S.logs.length - fin.length,
        sucCount: k ? 10 + 3 * k : suc, failCount: k % 3, updateTime: now() })) }
  }
  if (p === '/plugins') return { routers: PLUGINS.routers, alarms: PLUGINS.alarms }
  // (the real one lists every api command too: docs/http.md)
  if (p === '/meta') return { protocol: 1, commands: [], lists: META_LISTS }
  if (p === '/agents') return { agents: [{ app: 'demo', address: 'a1', updateTime: now(), handlers: ['demoJobHandler'], connected: true, tags: 'zone=eu' }] }
  if (p === '/cron/next') return { next: cronNext(q.expr || '', Number(q.n || 5), q.tz) }
  if (p === '/audit') return { audit: [...S.audit].reverse().filter((a) => !q.before || a.id < Number(q.before)).slice(0, Number(q.limit || 100)), truncated: false }
  if (seg[0] === 'groups') {
    if (seg.length === 1 && m === 'GET') return { groups: S.groups }
    if (seg.length === 1 && m === 'POST') {
      if (S.groups.some((g) => g.appname === body.appname)) throw new E(409, `app name '${body.appname}' exists`)
      const g = { id: ++S.ids.group, appname: body.appname, title: body.title || '', addressType: body.addressType || 0, addressList: body.addressList || '', updateTime: now() }
      S.groups.push(g); audit(who, 'GROUP_ADD', g.id); return [201, { id: g.id }]
    }
    const g = group(decodeURIComponent(seg[1]))
    if (m === 'GET') return { ...g, registryList: g.addressType ? [] : ['a1'] }
    if (m === 'PUT') { Object.assign(g, body, { id: g.id }); return { id: g.id } }
    if (m === 'DELETE') { if (S.jobs.some((j) => j.jobGroup === g.id)) throw new E(409, 'the group has jobs'); S.groups.splice(S.groups.indexOf(g), 1); return { id: g.id } }
  }
  // Backfills: made DONE at once (the stand-in runs nothing); one per whole second
  if (seg[0] === 'jobs' && seg[2] === 'backfills' && m === 'POST') {
    const from = Number(body.from), to = Number(body.to)
    if (!(from <= to)) throw new E(400, `from (${from}) is after to (${to})`)
    if (to > now()) throw new E(400, `to (${to}) is in the future (now ${now()}): a backfill makes past fire times, the planner makes the others`)
    const total = Math.floor(to / 1000) - Math.ceil(from / 1000) + 1
    const row = { id: S.backfills.length + 1, jobId: Number(seg[1]), from, to, perSecond: body.perSecond || 100, cursor: to, total, made: total, skipped: 0, state: 'DONE', by: "key 'admin' (admin)", msg: '', addTime: now(), updateTime: now() }
    S.backfills.push(row)
    return [201, row]
  }
  if (seg[0] === 'backfills') {
    if (seg.length === 1 && m === 'GET') return { backfills: S.backfills.filter((b) => (!q.jobId || b.jobId === Number(q.jobId)) && (!q.before || b.id < Number(q.before))).slice().reverse().slice(0, Number(q.limit || 100)), truncated: false }
    const b = find(S.backfills, (x) => x.id === Number(seg[1]), 'backfill')
    if (m === 'GET') return b
    if (seg[2] === 'stop' && m === 'POST') {
      if (b.state !== 'RUNNING') throw new E(409, `backfill ${b.id} is ${b.state}, not RUNNING`)
      b.state = 'STOPPED'
      return b
    }
  }
  if (seg[0] === 'jobs') {
    if (seg.length === 1 && m === 'GET') {
      const like = (a, b) => !b || (a || '').toLowerCase().includes(b.toLowerCase())
      const all = S.jobs.filter((j) => (!q.group || j.jobGroup === group(q.group).id) && like(j.jobDesc, q.jobDesc) && like(j.executorHandler, q.executorHandler)
        && like(j.author, q.author) && (q.triggerStatus === undefined || q.triggerStatus === '-1' || j.triggerStatus === Number(q.triggerStatus)))
      const off = Number(q.offset || 0)
      return { jobs: all.slice(off, off + Number(q.limit || 1000)), total: all.length, truncated: false }
    }
    if (seg.length === 1 && m === 'POST') {
      const g = group(body.jobGroup)
      if (body.glueType === 'BEAN' && !body.executorHandler) throw new E(400, 'field \'executorHandler\' is required for BEAN')
      const j = { ...JOB_DEFAULTS, ...body, id: ++S.ids.job, jobGroup: g.id, triggerStatus: body.start ? 1 : 0, addTime: now(), updateTime: now(),
        glueUpdatetime: now(), triggerLastTime: 0, triggerNextTime: 0 }
      delete j.start
      S.jobs.push(j)
      if (j.glueType !== 'BEAN') addGlue(j, j.glueRemark)
      audit(who, 'JOB_ADD', j.id)
      return [201, { id: j.id }]
    }
    const j = job(seg[1])
    if (seg.length === 2) {
      if (m === 'GET') return j
      if (m === 'PUT') {
        const changed = body.glueSource !== undefined && body.glueSource !== j.glueSource
        Object.assign(j, body, { id: j.id, jobGroup: body.jobGroup ? group(body.jobGroup).id : j.jobGroup, updateTime: now() })
        if (changed) addGlue(j, body.glueRemark)
        audit(who, 'JOB_UPDATE', j.id); return { id: j.id }
      }
      if (m === 'DELETE') { S.jobs.splice(S.jobs.indexOf(j), 1); return { id: j.id, deletedLogs: 0 } }
    }
    if (seg[2] === 'start' || seg[2] === 'stop') { j.triggerStatus = seg[2] === 'start' ? 1 : 0; return { id: j.id } }
    if (seg[2] === 'trigger') return { logIds: [trigger(j, body)] }
    if (seg[2] === 'copy') {
      const c = { ...j, id: ++S.ids.job, jobDesc: body.jobDesc ?? j.jobDesc, triggerStatus: 0 }
      S.jobs.push(c); if (c.glueType !== 'BEAN') addGlue(c, `copy of job ${j.id}`); return [201, { id: c.id }]
    }
    if (seg[2] === 'next') {
      if (j.scheduleType === 'CRON') return { next: cronNext(j.scheduleConf, Number(q.count || 5), j.timezone) }
      throw new E(400, 'the job has no schedule')
    }
    if (seg[2] === 'glue') {
      const mine = S.glues.filter((g) => g.jobId === j.id).sort((a, b) => b.version - a.version)
      if (seg.length === 3) return { glues: mine.map(({ glueSource, ...g }) => g), total: mine.length, truncated: false }
      const g = seg[3] === 'latest' ? mine[0] : mine.find((x) => x.version === Number(seg[3]))
      if (!g) throw new E(404, 'no such version')
      if (seg[4] === 'rollback') { j.glueType = g.glueType; j.glueSource = g.glueSource; return { id: j.id, version: addGlue(j, `rollback to version ${g.version}`) } }
      return g
    }
  }
  if (seg[0] === 'logs') {
    if (seg.length === 1) {
      const rows = S.logs.filter((l) => (!q.jobId || l.jobId === Number(q.jobId)) && (!q.jobGroup || l.jobGroup === Number(q.jobGroup))
        && (!q.maxId || l.id <= Number(q.maxId)) && (!q.logStatus || q.logStatus === String(
          l.handleCode === 200 ? 1 : (l.triggerCode !== 0 && l.triggerCode !== 200) || (l.handleCode !== 0 && l.handleCode !== 200) ? 2 : 3))).reverse()
      const off = Number(q.offset || 0)
      return { logs: rows.slice(off, off + Number(q.limit || 100)).map(({ lines, started, ...l }) => l), truncated: false }
    }
    if (seg[1] === 'clear') return { deleted: 0 }
    const l = find(S.logs, (x) => x.id === Number(seg[1]), 'log')
    if (seg.length === 2) { const { lines, started, ...row } = l; return row }
    if (seg[2] === 'cat') {
      const from = Number(q.from || 1)
      const page = l.lines.slice(from - 1)
      return { fromLineNum: from, toLineNum: from - 1 + page.length, logContent: page.map((x) => x + '\n').join(''),
        isEnd: l.handleCode !== 0 && from - 1 + page.length >= l.lines.length }
    }
    if (seg[2] === 'kill') { if (l.handleCode) throw new E(409, 'the run is not running'); l.handleCode = 500; l.handleMsg = 'killed'; return {} }
  }
  if (seg[0] === 'users') {
    if (me.role !== 'admin') throw new E(403, 'users: admin only')
    if (seg.length === 1 && m === 'GET') return { users: S.users.map(({ password, ...u }) => u) }
    if (seg.length === 1 && m === 'POST') { S.users.push({ ...body, addTime: now() }); return [201, { username: body.username }] }
    const u = find(S.users, (x) => x.username === decodeURIComponent(seg[1]), 'user')
    if (m === 'PUT') { Object.assign(u, body); return { username: u.username } }
    if (m === 'DELETE') { S.users.splice(S.users.indexOf(u), 1); return { username: u.username } }
  }
  if (seg[0] === 'calendars') {
    if (seg.length === 1 && m === 'GET') return { calendars: S.calendars }
    if (seg.length === 1 && m === 'POST') {
      const old = S.calendars.find((c) => c.name === body.name)
      if (old && !body.replace) throw new E(409, `calendar '${body.name}' exists already`)
      const dates = String(body.dates || '').split(/[\s,]+/).filter(Boolean).sort().join(',')
      const row = { name: body.name, dates, excludeCron: body.excludeCron || '', timezone: body.timezone || '', addTime: now(), updateTime: now() }
      S.calendars = S.calendars.filter((c) => c.name !== body.name).concat([row]).sort((a, b) => a.name.localeCompare(b.name))
      return [201, { name: body.name, dates: dates ? dates.split(',').length : 0, jobs: 0 }]
    }
    const c = find(S.calendars, (x) => x.name === decodeURIComponent(seg[1]), 'calendar')
    if (m === 'GET') return c
    if (m === 'DELETE') { S.calendars.splice(S.calendars.indexOf(c), 1); return { name: c.name, jobs: 0 } }
  }
  if (seg[0] === 'tokens') {
    if (seg.length === 1 && m === 'GET') return { tokens: S.tokens }
    if (seg.length === 1 && m === 'POST') { S.tokens.push({ name: body.name, role: body.role, apps: body.apps, addTime: now() }); return [201, { name: body.name, token: crypto.randomBytes(24).toString('base64url') }] }
    if (m === 'DELETE') { S.tokens = S.tokens.filter((k) => k.name !== decodeURIComponent(seg[1])); return { name: seg[1] } }
  }
  throw new E(404, 'no such path')
}

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml' }
http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x')
  let raw = ''
  req.on('data', (c) => { raw += c })
  req.on('end', async () => {
    if (url.pathname.startsWith('/api/')) {
      try {
        const body = raw ? JSON.parse(raw) : {}
        let r = await api(req, url, body)
        if (!Array.isArray(r)) r = [200, r]
        res.writeHead(r[0], { 'Content-Type': 'application/json', ...(r[2] || {}) })
        res.end(JSON.stringify(r[1]))
      } catch (e) {
        res.writeHead(e.code || 400, { 'Content-Type': 'application/json' })
        res.end(JSON.stringify({ error: e.message }))
      }
      return
    }
    let f = path.join(root, path.normalize(url.pathname).replace(/^(\.\.[/\\])+/, ''))
    if (!f.startsWith(root) || !fs.existsSync(f) || fs.statSync(f).isDirectory()) f = path.join(root, 'index.html')
    res.writeHead(200, { 'Content-Type': TYPES[path.extname(f)] || 'application/octet-stream',
      'Content-Security-Policy': "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:" })
    fs.createReadStream(f).pipe(res)
  })
}).listen(port, '127.0.0.1', () => console.log(`mock xxl on http://127.0.0.1:${port}/ (admin/admin)`))
