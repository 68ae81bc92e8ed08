// Drives the xxl web console in headless Chromium (playwright-core, the
// system's chromium): the steps of tests/test_console.sh, each checked on
// the page's content, a screenshot after each in $SHOTS, under the
// server's Content-Security-Policy with every refusal reported.
// Environment: XXL_URL (the console), XXL_USER, XXL_PASSWORD, XXL_APP (the
// group the job goes in), SHOTS (folder), CHROMIUM (the browser binary),
// XXL_MARK (a text unique to this run), XXL_I18N (console/src/i18n.js).  Prints "ok - …" / "FAIL - …" and
// "N passed, M failed"; exits 1 on any failure.
// Besides the steps (each building on the last), probes check one thing of
// the console each whatever came before: a phone's width, the dashboard at
// 1366 and 1920 px, its range and no-run figures, the cron field, the kill
// confirmation, deep links.
import { chromium } from 'playwright-core'
import fs from 'node:fs'
import path from 'node:path'

const env = (k, d) => process.env[k] || d
const URL = env('XXL_URL'), USER = env('XXL_USER', 'admin'), PASSWORD = env('XXL_PASSWORD')
const APP = env('XXL_APP', 'demo'), SHOTS = env('SHOTS', 'console-shots'), MARK = env('XXL_MARK', 'm' + process.pid)
const VIEWER = env('XXL_VIEWER'), VIEWER_PASSWORD = env('XXL_VIEWER_PASSWORD')
const WAIT = 30000
let passed = 0, failed = 0, shot = 0, broken = false
fs.mkdirSync(SHOTS, { recursive: true })

function check(what, ok, detail) {
  if (ok) { passed++; console.log('ok - ' + what) } else { failed++; console.log('FAIL - ' + what + (detail ? ': ' + detail : '')) }
  return ok
}
// step(what, fn): fn throws on failure (a wait that timed out, a missing element)
// Once one fails, the rest are reported as not run (each builds on the last)
async function step(what, fn) {
  if (broken) return check(what, false, 'not run: an earlier step failed')
  try { await fn(); return check(what, true) } catch (e) { broken = true; return check(what, false, String(e.message || e).split('\n')[0]) }
}
// probe(what, fn): as a step, but it runs whatever failed before it and
// stops nothing after it (it needs only what it makes itself)
async function probe(what, fn) {
  try { await fn(); return check(what, true) } catch (e) { return check(what, false, String(e.message || e).split('\n')[0]) }
}
async function snap(page, name) {
  shot++
  await page.screenshot({ path: path.join(SHOTS, `${String(shot).padStart(2, '0')}-${name}.png`), fullPage: true }).catch(() => {})
}
const until = async (fn, what) => {
  const end = Date.now() + WAIT
  for (;;) {
    const v = await fn()
    if (v) return v
    if (Date.now() > end) throw new Error('timed out waiting for ' + what)
    await new Promise((r) => setTimeout(r, 100))
  }
}

// The language tables of console/src/i18n.js (its `messages` object, read
// as text: the module itself needs Vue and a browser)
const messages = (() => {
  const src = fs.readFileSync(env('XXL_I18N'), 'utf8')
  const from = src.indexOf('const messages = {'), to = src.indexOf('\n}\n', from)
  if (from < 0 || to < 0) throw new Error('no `const messages = {…\n}` in ' + env('XXL_I18N'))
  return new Function('return ' + src.slice(from + 'const messages = '.length, to + 2))()
})()
check('each language table of console/src/i18n.js (' + Object.keys(messages).join(', ') +
  ') has exactly the keys of en, none empty, with the same {placeholders}', (() => {
  const holes = (v) => JSON.stringify((v.match(/\{\w+\}/g) || []).sort())
  const wrong = []
  for (const [l, table] of Object.entries(messages)) {
    for (const k of Object.keys(messages.en)) if (!(k in table)) wrong.push(`${l} lacks ${k}`)
    for (const [k, v] of Object.entries(table)) {
      if (!(k in messages.en)) wrong.push(`${l} has ${k}, en has not`)
      else if (typeof v !== 'string' || !v.trim()) wrong.push(`${l} ${k} is empty`)
      else if (holes(v) !== holes(messages.en[k])) wrong.push(`${l} ${k}: ${holes(v)}, en ${holes(messages.en[k])}`)
    }
  }
  if (wrong.length) console.log('# ' + wrong.join('\n# '))
  return Object.keys(messages).length >= 3 && !wrong.length
})())

const browser = await chromium.launch({
  executablePath: env('CHROMIUM', '/usr/bin/chromium'),
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
})
const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, locale: 'en-US' })
// The console must work under the policy the server sends (scripts only
// from its files): the first step checks the page has it, and any
// refusal the browser reports (a securitypolicyviolation event, or a
// console error about the policy) fails the last check
const problems = []
await context.exposeBinding('xxlCspViolation', (_source, what) => { problems.push('CSP violation: ' + what) })
await context.addInitScript(() => {
  document.addEventListener('securitypolicyviolation', (e) => {
    window.xxlCspViolation(`${e.effectiveDirective} refused ${e.blockedURI || 'inline'} (${e.sourceFile || '?'}:${e.lineNumber})`)
  })
})
// Dialogs (confirm) are accepted unless a probe says otherwise; each one's
// text is kept
const dialogs = []
let dialogAnswer = true
// Requests the pages made (method and path), for probes that check one was not made
const requests = []
const watchPage = (p) => {
  p.on('pageerror', (e) => problems.push('page error: ' + e.message))
  p.on('console', (m) => { if (m.type() === 'error' && /Content.Security.Policy|Refused to/i.test(m.text())) problems.push('console: ' + m.text()) })
  // (i18n.js's report of a key the chosen language lacks)
  p.on('console', (m) => { if (/^xxl i18n:/.test(m.text())) problems.push('console: ' + m.text()) })
  p.on('dialog', (d) => { dialogs.push(d.message()); return dialogAnswer ? d.accept() : d.dismiss() })
  p.on('request', (r) => requests.push(r.method() + ' ' + new globalThis.URL(r.url()).pathname))
  p.setDefaultTimeout(WAIT)
  return p
}
const page = watchPage(await context.newPage())
const base = URL.replace(/\/$/, '')
// apiCall(method, path, body): the REST api from the page, with the session's CSRF token
const apiCall = (method, p, body) => page.evaluate(async ([method, p, body]) => {
  const me = await (await fetch('/api/v1/me')).json()
  const r = await fetch('/api/v1' + p, { method, body: body === undefined ? undefined : JSON.stringify(body),
    headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': me.csrf || '' } })
  return { status: r.status, data: await r.json().catch(() => null) }
}, [method, p, body])
const today = (days = 0) => {
  const d = new Date()
  d.setDate(d.getDate() + days)
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`
}
// The page's width as laid out (the document's, and the viewport's)
const widths = (p) => p.evaluate(() => ({ doc: document.documentElement.scrollWidth, view: window.innerWidth }))

let jobId = 0
let logId = 0
try {
  await step('the console loads under the server\'s policy (script-src \'self\' only, never framed) and shows the login form', async () => {
    const resp = await page.goto(URL)
    const headers = resp.headers()
    const policy = Object.fromEntries((headers['content-security-policy'] || '').split(';')
      .map((d) => d.trim().split(/\s+/)).filter((d) => d[0]).map((d) => [d[0], d.slice(1)]))
    if (JSON.stringify(policy['script-src']) !== JSON.stringify(["'self'"])) throw new Error('script-src: ' + policy['script-src'])
    if (JSON.stringify(policy['frame-ancestors']) !== JSON.stringify(["'none'"])) throw new Error('frame-ancestors: ' + policy['frame-ancestors'])
    if (headers['x-frame-options'] !== 'DENY' || headers['x-content-type-options'] !== 'nosniff') throw new Error('headers: ' + JSON.stringify(headers))
    await page.locator('[data-test=login-form]').waitFor()
  })
  await snap(page, 'login')

  await step('a wrong password is refused with the server\'s text', async () => {
    await page.fill('input[name=username]', USER)
    await page.fill('input[name=password]', PASSWORD + 'x')
    await page.click('[data-test=login-form] button[type=submit]')
    const text = await page.locator('[data-test=login-error]').innerText()
    if (!/wrong user name or password/.test(text)) throw new Error('error shown: ' + text)
  })
  await snap(page, 'login-refused')

  await step('the right password signs in with "Remember me": the dashboard shows the report, the cookie lasts 14 days', async () => {
    await page.fill('input[name=password]', PASSWORD)
    if ((await page.locator('[data-test=login-form] label.check').innerText()).trim() !== 'Remember me') throw new Error('no "Remember me" box')
    await page.check('[data-test=login-remember]')
    await page.click('[data-test=login-form] button[type=submit]')
    await page.locator('[data-test=report]').waitFor()
    const cookie = (await context.cookies()).find((c) => c.name === 'xxl_session')
    const days = cookie ? (cookie.expires - Date.now() / 1000) / 86400 : 0
    if (!(days > 13.9 && days <= 14)) throw new Error('the session cookie expires in ' + days + ' days')
    const who = await page.locator('[data-test=who]').innerText()
    if (!who.includes(USER) || !who.includes('admin')) throw new Error('top bar says ' + who)
    const agents = Number(await page.locator('[data-test=agent-count]').innerText())
    if (!(agents >= 1)) throw new Error('agent count ' + agents)
    await page.locator('[data-test=chart-days]').waitFor()
  })
  await snap(page, 'dashboard')

  await probe('with no run yet the dashboard\'s success rate is "—" (no finished run), not 100%', async () => {
    const rate = page.locator('.stat', { hasText: 'Success rate' }).locator('b')
    await rate.waitFor()
    const text = (await rate.innerText()).trim()
    if (text !== '—') throw new Error('success rate shown: ' + text)
    const sum = (await page.locator('[data-test=range-sum]').innerText({ timeout: 5000 })).trim()
    if (sum !== 'No runs in these days') throw new Error('outcome card says: ' + sum)
  })
  await snap(page, 'dashboard-no-runs')

  // (loaded at each width, and 1366 also reached by narrowing the window
  // from 1920: a chart's canvas must shrink with its card)
  for (const [width, how] of [[1920, 'loaded'], [1366, 'narrowed'], [1366, 'loaded']]) {
    await probe(`the dashboard ${how} at ${width} px: both chart cards inside their grid, and no sideways scroll`, async () => {
      await page.setViewportSize({ width, height: 900 })
      if (how === 'loaded') await page.reload()
      await page.locator('[data-test=chart-share]').waitFor()
      await until(async () => (await page.locator('[data-test=chart-share]').boundingBox())?.height > 50, 'the doughnut drawn')
      // (Chart.js fits a canvas to its box on the next frame: 3 s to settle)
      const measure = () => page.evaluate(() => {
        const grid = document.querySelector('.charts').getBoundingClientRect()
        return { grid: [grid.left, grid.right], cards: [...document.querySelectorAll('.charts > .card')].map((c) => {
          const b = c.getBoundingClientRect()
          const canvas = c.querySelector('canvas').getBoundingClientRect()
          return [b.left, b.right, canvas.right] }) }
      })
      let m, w, out
      for (const end = Date.now() + 3000; ;) {
        m = await measure()
        w = await widths(page)
        out = m.cards.filter(([l, r, cr]) => l < m.grid[0] - 0.5 || r > m.grid[1] + 0.5 || cr > r + 0.5)
        if ((!out.length && w.doc <= w.view) || Date.now() > end) break
        await new Promise((r) => setTimeout(r, 100))
      }
      if (out.length || w.doc > w.view) throw new Error(`grid ${JSON.stringify(m.grid)} cards ${JSON.stringify(m.cards)} page ${w.doc}/${w.view} px`)
    })
    await snap(page, `dashboard-${width}-${how}`)
  }
  await page.setViewportSize({ width: 1400, height: 900 })

  const desc = 'console job ' + MARK
  const badDesc = 'console bad cron ' + MARK
  await probe('the cron field holds what is typed into it (no value to append to), a valid one previewed', async () => {
    await page.goto(base + '/#/jobs')
    await page.click('[data-test=job-add]')
    const form = page.locator('[data-test=job-form]')
    await form.locator('select[name=scheduleType]').selectOption('CRON')
    await form.locator('input[name=scheduleConf]').click()
    await page.keyboard.type('0 30 3 * * ?')
    const value = await form.locator('input[name=scheduleConf]').inputValue()
    if (value !== '0 30 3 * * ?') throw new Error('the field holds: ' + value)
    await until(async () => {
      const items = await page.locator('[data-test=cron-preview] li').allInnerTexts()
      return items.length === 5 && items.every((x) => / 03:30:00 UTC$/.test(x))
    }, 'five 03:30:00 UTC fire times')
  })
  await snap(page, 'cron-typed')
  // (hour 25: the scheduler's 400; a value typed after another: 11 fields)
  for (const bad of ['0 30 25 * * ?', '0 0/5 * * * ?0 30 3 * * ?']) {
    await probe(`an invalid cron '${bad}' is refused by the form with its reason: nothing is sent, the form stays`, async () => {
      const form = page.locator('[data-test=job-form]')
      if (!(await form.count())) { await page.goto(base + '/#/jobs'); await page.click('[data-test=job-add]') }
      await form.locator('input[name=jobDesc]').fill(badDesc)
      await form.locator('select[name=glueType]').selectOption('BEAN')
      await form.locator('input[name=executorHandler]').fill('demoJobHandler')
      await form.locator('input[name=scheduleConf]').fill(bad)
      await until(async () => /\S/.test(await page.locator('[data-test=cron-error]').innerText().catch(() => '')),
        'the reason in the preview')
      const before = requests.length
      await page.click('[data-test=job-save]')
      await until(async () => (await page.locator('[data-test=job-form-error]').count()) || !(await form.count()), 'an error or the form closed')
      const listed = (await apiCall('GET', '/jobs?jobDesc=' + encodeURIComponent(badDesc))).data.jobs || []
      if (listed.length) throw new Error(`the job was made, with cron '${listed[0].scheduleConf}'`)
      const sent = requests.slice(before).filter((r) => r === 'POST /api/v1/jobs')
      if (sent.length) throw new Error('the job was sent to the scheduler')
      const text = await page.locator('[data-test=job-form-error]').innerText()
      if (!/^Not a valid cron expression: ./.test(text)) throw new Error('form says: ' + text)
    })
    await snap(page, 'cron-refused')
  }
  await snap(page, 'cron-refused')
  if (await page.locator('.modal .close').count()) await page.locator('.modal .close').click()

  await step('add a GLUE_SHELL job: the form previews the next fire times in the job\'s zone', async () => {
    await page.click('[data-nav=jobs]')
    await page.click('[data-test=job-add]')
    const form = page.locator('[data-test=job-form]')
    await form.waitFor()
    const opt = await form.locator('select[name=jobGroup] option', { hasText: `(${APP})` }).getAttribute('value')
    await form.locator('select[name=jobGroup]').selectOption(opt)
    await form.locator('input[name=jobDesc]').fill(desc)
    await form.locator('input[name=author]').fill('console-test')
    await form.locator('select[name=scheduleType]').selectOption('CRON')
    await form.locator('input[name=scheduleConf]').fill('0 30 3 * * ?')
    await form.locator('input[name=timezone]').fill('Asia/Shanghai')
    // (the test's agent has this tag: the job's runs go to it)
    await form.locator('input[name=agentTags]').fill(' console=yes ')
    // five times, each 03:30:00 in Shanghai (UTC+8): the scheduler's answer shown in the zone
    await until(async () => {
      const items = await page.locator('[data-test=cron-preview] li').allInnerTexts()
      return items.length === 5 && items.every((x) => / 03:30:00 GMT\+8$/.test(x))
    }, 'five 03:30:00 GMT+8 fire times')
    // the form's closed lists are the scheduler's (GET /api/v1/meta): the
    // route strategies of the router plugins it loaded, sorted
    let routes = []
    await until(async () => {
      routes = await form.locator('select[name=executorRouteStrategy] option').allInnerTexts()
      return routes.includes('SHARDING_BROADCAST')
    }, 'the router plugins\' routes in the form')
    check('the route strategies are the loaded router plugins\' (GET meta)',
      routes.includes('SHARDING_BROADCAST') && routes.includes('CONSISTENT_HASH')
        && routes.join() === [...routes].sort().join(), routes.join())
    await form.locator('select[name=glueType]').selectOption('GLUE_SHELL')
    await form.locator('textarea[name=glueSource]').fill(`#!/bin/bash\necho "${MARK}-v1 param=$1"\n`)
    await form.locator('input[name=glueRemark]').fill('first version')
  })
  await snap(page, 'job-form')

  await step('a bad cron is shown with the scheduler\'s reason, and the job saves with a good one', async () => {
    const form = page.locator('[data-test=job-form]')
    await form.locator('input[name=scheduleConf]').fill('0 60 3 * * ?')
    // (minute 60: refused; Quartz takes 99 as its '*')
    const reason = await page.locator('[data-test=cron-error]').innerText()
    if (!/59/.test(reason)) throw new Error('reason shown: ' + reason)
    await form.locator('input[name=scheduleConf]').fill('0 30 3 * * ?')
    await until(async () => (await page.locator('[data-test=cron-preview] li').count()) === 5, 'the preview back')
    await page.click('[data-test=job-save]')
    await page.locator('[data-test=job-form]').waitFor({ state: 'detached' })
    const row = page.locator('[data-test=jobs] tr', { hasText: desc })
    await row.waitFor()
    jobId = Number(await row.getAttribute('data-job'))
    if (!(jobId > 0)) throw new Error('no job id in the row')
    const text = await row.innerText()
    if (!/GLUE_SHELL/.test(text) || !/Asia\/Shanghai/.test(text)) throw new Error('row: ' + text)
  })
  await snap(page, 'jobs')
  console.log('# job ' + jobId)

  await step('trigger the job with a parameter: the log view tails its run log to the end', async () => {
    const row = page.locator(`[data-test=jobs] tr[data-job="${jobId}"]`)
    await row.locator('[data-act=trigger]').click()
    await page.locator('[data-test=trigger-form] textarea[name=executorParam]').fill('from-console')
    await page.click('[data-test=trigger-go]')
    await page.waitForURL(/#\/logs\/\d+$/)
    logId = Number(page.url().match(/#\/logs\/(\d+)$/)[1])
    await until(async () => (await page.locator('[data-test=tail]').innerText()).includes(`${MARK}-v1 param=from-console`), 'the script\'s line in the tail')
    await until(async () => /end of log/.test(await page.locator('[data-test=tail-state]').innerText()), 'the end of the log')
    await until(async () => (await page.locator('[data-test=handle-code]').innerText()).trim() === '200', 'handleCode 200')
  })
  await snap(page, 'log-tail')
  console.log('# log ' + logId)

  // Download: the run's whole log, fetched by byte offset, saved as a file
  await step('the log view downloads the whole run log as a file', async () => {
    const [file] = await Promise.all([page.waitForEvent('download'), page.click('[data-test=download]')])
    const saved = fs.readFileSync(await file.path(), 'utf8')
    if (file.suggestedFilename() !== `xxl-run-${logId}.log`) throw new Error('file name ' + file.suggestedFilename())
    if (!saved.includes(`${MARK}-v1 param=from-console`) || !saved.endsWith('\n')) throw new Error('file: ' + saved.slice(-300))
    const shown = await page.locator('[data-test=tail]').innerText()
    if (saved.trim() !== shown.trim()) throw new Error('the file is not the log shown')
  })

  await probe('the dashboard\'s date range: today counts the run, a range that ends yesterday none', async () => {
    await page.goto(base + '/#/')
    const from = page.locator('[data-test=range] input[name=rangeFrom]')
    const to = page.locator('[data-test=range] input[name=rangeTo]')
    if ((await from.inputValue()) !== today(-6) || (await to.inputValue()) !== today()) throw new Error('default range: ' + (await from.inputValue()) + ' – ' + (await to.inputValue()))
    const sum = page.locator('[data-test=range-sum]')
    await until(async () => /^Runs: [1-9]\d* · success 100\.0%$/.test((await sum.innerText()).trim()), 'the run counted in the last 7 days')
    await page.locator('[data-test=range] [data-range="30"]').click()
    if ((await from.inputValue()) !== today(-29)) throw new Error('30 days from ' + (await from.inputValue()))
    await to.fill(today(-1))
    await until(async () => (await sum.innerText()).trim() === 'No runs in these days', 'no runs up to yesterday')
    await from.fill(today())
    await to.fill(today())
    await until(async () => /^Runs: [1-9]/.test((await sum.innerText()).trim()), 'the run counted today')
    await from.fill(today(1))
    await page.locator('[data-test=range-error]').waitFor()
    // a range asks REPORT for its days (from, to: epoch ms), at most 366
    const asked = page.waitForRequest((r) => /\/api\/v1\/report\?from=\d+&to=\d+$/.test(r.url()), { timeout: 5000 })
    await from.fill(today(-3))
    await asked
    await from.fill(today(-400))
    await until(async () => /366/.test(await page.locator('[data-test=range-error]').innerText()), 'the 366-day limit named')
  })
  await snap(page, 'dashboard-range')

  await step('the run is listed in the run logs filtered by its job, and not under another status', async () => {
    await page.goto(`${URL.replace(/\/$/, '')}/#/logs?jobId=${jobId}`)
    await page.locator(`[data-test=logs] tr[data-log="${logId}"]`).waitFor()
    await page.locator('select[name=logStatus]').selectOption('2')
    await page.locator(`[data-test=logs] tr[data-log="${logId}"]`).waitFor({ state: 'detached' })
    await page.locator('select[name=logStatus]').selectOption('1')
    await page.locator(`[data-test=logs] tr[data-log="${logId}"]`).waitFor()
    // a time range that ends before the run hides it, one around it shows it
    await page.fill('input[name=to]', '2020-01-01T00:00')
    await page.click('.filters button[type=submit]')
    await page.locator(`[data-test=logs] tr[data-log="${logId}"]`).waitFor({ state: 'detached' })
    await page.fill('input[name=from]', '2020-01-01T00:00')
    await page.fill('input[name=to]', '2099-01-01T00:00')
    await page.click('.filters button[type=submit]')
    await page.locator(`[data-test=logs] tr[data-log="${logId}"]`).waitFor()
  })
  await snap(page, 'logs')

  await step('the clear dialog clears one group\'s runs: its job list is the group\'s, and it sends jobGroup (no jobId)', async () => {
    const group = (await apiCall('GET', `/jobs/${jobId}`)).data.jobGroup
    await page.goto(`${base}/#/logs`)
    await page.locator(`[data-test=logs] tr[data-log="${logId}"]`).waitFor()
    await page.click('.filters button.danger')
    const dialog = page.locator('[data-test=log-clear]')
    await dialog.locator('select[name=clearGroup]').selectOption(String(group))
    const shown = await dialog.locator('select[name=clearJob] option').evaluateAll((os) => os.map((o) => o.value).filter(Boolean))
    const others = ((await apiCall('GET', `/jobs?group=${group}&limit=1000`)).data.jobs || []).map((j) => String(j.id))
    if (!shown.includes(String(jobId)) || shown.some((v) => !others.includes(v)))
      throw new Error(`the job list shows ${shown}, the group's jobs are ${others}`)
    // (runs older than 36,500 days: none, so the other steps keep theirs)
    await dialog.locator('input[type=number]').fill('36500')
    const sent = page.waitForRequest((r) => r.method() === 'POST' && /\/api\/v1\/logs\/clear$/.test(r.url()))
    await dialog.locator('button[type=submit]').click()
    const body = (await sent).postDataJSON()
    if (body.jobGroup !== group || 'jobId' in body || body.beforeDays !== 36500)
      throw new Error('it sent ' + JSON.stringify(body))
    await dialog.waitFor({ state: 'detached' })
    await page.locator(`[data-test=logs] tr[data-log="${logId}"]`).waitFor()
  })

  const editor = () => page.locator('[data-test=glue-editor] .cm-content')
  await step('the GLUE IDE shows version 1 highlighted as shell; an edit saves version 2', async () => {
    await page.goto(`${URL.replace(/\/$/, '')}/#/jobs/${jobId}/glue`)
    await until(async () => (await editor().innerText()).includes(`${MARK}-v1`), 'version 1 in the editor')
    await page.locator('[data-test=glue-versions] tr[data-version="1"]').waitFor()
    if ((await page.locator('[data-test=glue-editor] .cm-line span').count()) === 0) throw new Error('no highlighted tokens')
    await editor().click()
    await page.keyboard.press('Control+A')
    await page.keyboard.type(`echo ${MARK}-v2\n`)
    await page.fill('input[name=glueRemark]', 'second version')
    await page.click('[data-test=glue-save]')
    await page.locator('[data-test=glue-versions] tr[data-version="2"]').waitFor()
    const text = await editor().innerText()
    if (!text.includes(`${MARK}-v2`) || text.includes(`${MARK}-v1`)) throw new Error('editor: ' + text)
  })
  await snap(page, 'glue-v2')

  await step('the diff of versions 1 and 2 shows both sources with the change marked', async () => {
    await page.locator('[data-test=glue-versions] tr[data-version="1"] [data-act=diff]').click()
    const diff = page.locator('[data-test=diff]')
    await until(async () => {
      const t = await diff.innerText().catch(() => '')
      return t.includes(`${MARK}-v1`) && t.includes(`${MARK}-v2`)
    }, 'both versions in the diff')
    if ((await diff.locator('.cm-changedLine, .cm-changedText, .cm-deletedChunk').count()) === 0) throw new Error('no change marked')
  })
  await snap(page, 'glue-diff')
  if (!broken) await page.locator('.modal .close').click()

  await step('roll back to version 1: version 3 "rollback to version 1" and the source back', async () => {
    await page.locator('[data-test=glue-versions] tr[data-version="1"] [data-act=rollback]').click()
    const v3 = page.locator('[data-test=glue-versions] tr[data-version="3"]')
    await v3.waitFor()
    if (!/rollback to version 1/.test(await v3.innerText())) throw new Error('v3: ' + await v3.innerText())
    await until(async () => {
      const t = await editor().innerText()
      return t.includes(`${MARK}-v1 param=$1`) && !t.includes(`${MARK}-v2`)
    }, 'version 1\'s source in the editor')
  })
  await snap(page, 'glue-rollback')

  await step('edit the job (author), copy it (stopped), start and stop the copy', async () => {
    await page.goto(`${base}/#/jobs`)
    const row = () => page.locator(`[data-test=jobs] tr[data-job="${jobId}"]`)
    await row().locator('[data-act=edit]').click()
    const form = page.locator('[data-test=job-form]')
    await until(async () => (await form.locator('input[name=jobDesc]').inputValue()) === desc, 'the job in the form')
    await form.locator('input[name=author]').fill('console-edited')
    await page.click('[data-test=job-save]')
    await form.waitFor({ state: 'detached' })
    await until(async () => (await row().innerText()).includes('console-edited'), 'the new author listed')
    await row().locator('[data-act=copy]').click()
    await page.locator('.modal input[name=jobDesc]').fill(desc + ' copy')
    await page.locator('.modal button[type=submit]').click()
    const copy = page.locator('[data-test=jobs] tr', { hasText: desc + ' copy' })
    await copy.waitFor()
    if (!(await copy.locator('[data-act=start]').count())) throw new Error('the copy is not stopped')
    await copy.locator('[data-act=start]').click()
    await copy.locator('[data-act=stop]').waitFor()
    await copy.locator('[data-act=stop]').click()
    await copy.locator('[data-act=start]').waitFor()
  })
  await snap(page, 'jobs-edited')

  await step('executors list the app with its agent\'s address; agents show it connected', async () => {
    await page.click('[data-nav=groups]')
    const g = page.locator('[data-test=groups] tr', { hasText: APP })
    await g.waitFor()
    await until(async () => (await g.innerText()).includes(env('XXL_AGENT', 'console-a')), 'the address in the group row')
    await page.click('[data-nav=agents]')
    const a = page.locator('[data-test=agents] tr', { hasText: env('XXL_AGENT', 'console-a') })
    await a.waitFor()
    const text = await a.innerText()
    if (!text.includes(APP) || !/yes/.test(text)) throw new Error('agent row: ' + text)
    const tags = await a.locator('[data-test=agent-tags]').innerText()
    if (tags !== 'console=yes') throw new Error('agent tags: ' + tags)
  })
  await snap(page, 'agents')

  await step('users and tokens: the users listed; a new token is shown once and then listed by name only', async () => {
    await page.click('[data-nav=users]')
    await page.locator('[data-test=users] tr', { hasText: USER }).waitFor()
    await page.click('[data-test=token-add]')
    await page.locator('.modal input').first().fill('console-token')
    await page.locator('.modal button[type=submit]').click()
    const token = (await page.locator('[data-test=token-value]').innerText()).trim()
    if (token.length < 16) throw new Error('token shown: ' + token)
    await page.locator('.modal .buttons button').click()
    const row = page.locator('[data-test=tokens] tr', { hasText: 'console-token' })
    await row.waitFor()
    if ((await page.locator('[data-test=tokens]').innerText()).includes(token)) throw new Error('the token is listed')
    console.log('# token made')
  })
  await snap(page, 'users-tokens')

  await step('calendars: one added on its page is listed and stored; the job form offers it and its preview skips the calendar\'s times', async () => {
    await page.click('[data-nav=calendars]')
    await page.click('[data-test=calendar-add]')
    const form = page.locator('[data-test=calendar-form]')
    await form.waitFor()
    await form.locator('input[name=name]').fill('console-cal')
    await form.locator('textarea[name=dates]').fill('2030-12-25\n2030-01-01\n')
    await form.locator('input[name=excludeCron]').fill('* * * ? * SAT,SUN')
    await page.click('[data-test=calendar-save]')
    const row = page.locator('[data-test=calendars] tr', { hasText: 'console-cal' })
    await row.waitFor()
    const text = await row.innerText()
    if (!text.includes('SAT,SUN')) throw new Error('calendar row: ' + text)
    const stored = (await apiCall('GET', '/calendars/console-cal')).data
    check('the calendar is stored with its dates sorted', stored && stored.dates === '2030-01-01,2030-12-25', JSON.stringify(stored))
    await page.click('[data-nav=jobs]')
    await page.click('[data-test=job-add]')
    const jf = page.locator('[data-test=job-form]')
    await jf.waitFor()
    await jf.locator('select[name=scheduleType]').selectOption('CRON')
    await jf.locator('input[name=scheduleConf]').fill('0 0 12 * * ?')
    await until(async () => (await jf.locator('select[name=calendar] option', { hasText: 'console-cal' }).count()) === 1, 'the calendar offered')
    const asked = requests.length
    await jf.locator('select[name=calendar]').selectOption('console-cal')
    // (the preview is the scheduler's, the calendar's weekends skipped)
    await until(async () => requests.slice(asked).includes('GET /api/v1/schedules/next'), 'the preview asked with the calendar')
    await until(async () => (await jf.locator('[data-test=cron-preview] ol li').count()) === 5, 'five times previewed')
    const next = (await apiCall('GET', '/schedules/next?scheduleType=CRON&scheduleConf=' + encodeURIComponent('0 0 12 * * ?') + '&calendar=console-cal&count=5')).data
    check('the preview\'s times skip the calendar\'s weekends', next && next.next.length === 5
      && next.next.every((t) => ![0, 6].includes(new Date(t).getUTCDay())), JSON.stringify(next))
    check('... and no note says the preview is before the calendar', (await page.locator('[data-test=preview-calendar]').count()) === 0, '')
    await page.locator('.modal .close').click()
  })
  await snap(page, 'calendars')

  await step('backfill: a job\'s Backfill action over the last hour makes a backfill listed with its progress, DONE', async () => {
    const g = ((await apiCall('GET', '/groups')).data.groups || []).find((x) => x.appname === APP)
    const add = await apiCall('POST', '/jobs', { jobGroup: String(g.id), jobDesc: 'console backfill ' + MARK, author: 'console-test',
      scheduleType: 'CRON', scheduleConf: '0 * * * * ?', glueType: 'GLUE_SHELL', glueSource: '#!/bin/bash\necho backfilled\n',
      glueRemark: 'backfill', executorRouteStrategy: 'FIRST', misfireStrategy: 'DO_NOTHING', executorBlockStrategy: 'SERIAL_EXECUTION' })
    if (!add.data || !add.data.id) throw new Error('job add: ' + add.status + ' ' + JSON.stringify(add.data))
    const id = add.data.id
    await page.click('[data-nav=jobs]')
    await page.locator('form.filters input[name=jobDesc]').fill('console backfill ' + MARK)
    await page.locator('form.filters button[type=submit]').click()
    const row = page.locator(`[data-test=jobs] tr[data-job="${id}"]`)
    await row.waitFor()
    await row.locator('[data-act=backfill]').click()
    const form = page.locator('[data-test=backfill-form]')
    await form.waitFor()
    // The last whole hour, local: 60 minutes' fire times
    const pad = (n) => String(n).padStart(2, '0')
    const local = (d) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`
    const end = new Date(); end.setMinutes(0, 0, 0)
    const start = new Date(end.getTime() - 3600 * 1000)
    await form.locator('input[name=from]').fill(local(start))
    await form.locator('input[name=to]').fill(local(new Date(end.getTime() - 60 * 1000)))
    await form.locator('input[name=perSecond]').fill('1000')
    await page.click('[data-test=backfill-go]')
    await until(async () => (await page.locator('[data-test=backfills]').count()) === 1
                            || (await page.locator('[data-test=backfill-error]').count()) === 1, 'the backfills page, or a refusal')
    if (await page.locator('[data-test=backfill-error]').count())
      throw new Error('refused: ' + await page.locator('[data-test=backfill-error]').innerText())
    const b = page.locator('[data-test=backfills] tr', { hasText: 'DONE' }).first()
    await b.waitFor()
    const text = await b.innerText()
    if (!text.includes('60')) throw new Error('backfill row: ' + text)
    const list = (await apiCall('GET', `/backfills?jobId=${id}`)).data
    check('the backfill made 60 runs', list && list.backfills && list.backfills[0] && list.backfills[0].made === 60, JSON.stringify(list))
  })
  await snap(page, 'backfills')

  await step('the audit page lists the console\'s changes', async () => {
    await page.click('[data-nav=audit]')
    await page.locator('[data-test=audit] tr', { hasText: 'GLUE_ROLLBACK' }).first().waitFor()
    await page.locator('[data-test=audit] tr', { hasText: 'JOB_COPY' }).first().waitFor()
  })
  await snap(page, 'audit')

  // A run that sleeps (its job made through the api), for the Kill probes
  let sleeperJob = 0, sleeper = 0
  await probe('a run that sleeps is running (a job made and triggered through the api)', async () => {
    const g = ((await apiCall('GET', '/groups')).data.groups || []).find((x) => x.appname === APP)
    const add = await apiCall('POST', '/jobs', { jobGroup: String(g.id), jobDesc: 'console kill ' + MARK, author: 'console-test',
      scheduleType: 'NONE', scheduleConf: '', glueType: 'GLUE_SHELL', glueSource: '#!/bin/bash\necho sleeping\nsleep 300\n',
      glueRemark: 'sleeper', executorRouteStrategy: 'FIRST', misfireStrategy: 'DO_NOTHING', executorBlockStrategy: 'SERIAL_EXECUTION' })
    if (!add.data || !add.data.id) throw new Error('job add: ' + add.status + ' ' + JSON.stringify(add.data))
    sleeperJob = add.data.id
    const trig = await apiCall('POST', `/jobs/${sleeperJob}/trigger`, { executorParam: '' })
    sleeper = trig.data && trig.data.logIds && trig.data.logIds[0]
    if (!sleeper) throw new Error('trigger: ' + trig.status + ' ' + JSON.stringify(trig.data))
    await until(async () => {
      const l = (await apiCall('GET', `/logs/${sleeper}`)).data
      return l && l.triggerCode === 200 && l.handleCode === 0
    }, 'the run started (triggerCode 200, handleCode 0)')
  })

  // Each page at a phone's width: no wider than the screen; its actions
  // within the screen once scrolled to (inside their table's own box)
  const phone = watchPage(await context.newPage())
  await phone.setViewportSize({ width: 390, height: 844 })
  const reachable = async (loc) => {
    await loc.scrollIntoViewIfNeeded()
    const ok = await loc.evaluate((el) => {
      const b = el.getBoundingClientRect()
      const hit = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2)
      return b.left >= 0 && b.right <= window.innerWidth && (hit === el || el.contains(hit))
    })
    if (!ok) throw new Error(`${await loc.innerText()} is off the screen or covered`)
  }
  const phonePages = [
    ['dashboard', '/#/', '[data-test=chart-share]'],
    ['jobs', '/#/jobs', `[data-test=jobs] tr[data-job="${jobId}"]`],
    ['job form', '/#/jobs', '[data-test=job-form]', async () => phone.click('[data-test=job-add]')],
    ['run logs', `/#/logs?jobId=${sleeperJob}`, `[data-test=logs] tr[data-log="${sleeper}"]`],
    ['run log', `/#/logs/${logId}`, '[data-test=log-row]'],
    ['GLUE IDE', `/#/jobs/${jobId}/glue`, '[data-test=glue-versions] tr[data-version="3"]'],
    ['executors', '/#/groups', '[data-test=groups] tbody tr'],
    ['agents', '/#/agents', '[data-test=agents] tbody tr'],
    ['users', '/#/users', '[data-test=tokens] tbody tr'],
    ['audit', '/#/audit', '[data-test=audit] tbody tr'],
  ]
  for (const [name, where, ready, then] of phonePages) {
    await probe(`at 390 px the ${name} page is no wider than the screen`, async () => {
      await phone.goto('about:blank')
      await phone.goto(base + where)
      if (then) { await phone.locator(ready === '[data-test=job-form]' ? '[data-test=job-add]' : ready).first().waitFor(); await then() }
      await phone.locator(ready).first().waitFor()
      const w = await widths(phone)
      if (w.doc > w.view) throw new Error(`the page is ${w.doc} px wide on a ${w.view} px screen`)
      if (name === 'jobs') for (const b of await phone.locator(`[data-test=jobs] tr[data-job="${jobId}"] td.acts > *`).all()) await reachable(b)
      if (name === 'run logs') await reachable(phone.locator(`[data-test=logs] tr[data-log="${sleeper}"] button`, { hasText: 'Kill' }))
    })
    await snap(phone, 'phone-' + name.replace(/ /g, '-'))
  }
  await phone.close()

  // Workflows: the JSON editor's live preview (a graph laid out by dagre),
  // the scheduler's refusal shown as it gave it, a run's nodes coloured by
  // state, a node's click opening its log; at a phone's width; in Chinese
  let flowRun = 0
  await probe('a workflow is added in the JSON editor: the preview draws its graph, bad JSON and a cycle are refused with the reason', async () => {
    await page.goto(base + '/#/workflows')
    await page.click('[data-test=flow-add]')
    const form = page.locator('[data-test=flow-form]')
    await form.locator('input[name=name]').fill('console-' + MARK)
    const json = form.locator('[data-test=flow-json]')
    await json.fill('{"nodes": [')
    await form.locator('[data-test=flow-json-error]').waitFor()
    await json.fill(JSON.stringify({ nodes: [{ id: 'a', job: jobId }, { id: 'b', job: jobId }], edges: [{ from: 'a', to: 'b' }, { from: 'b', to: 'a' }] }))
    await until(async () => (await form.locator('.flow-node').count()) === 2, 'the preview of 2 nodes')
    await form.locator('[data-test=flow-save]').click()
    const refusal = await form.locator('[data-test=flow-save-error]').innerText()
    if (!/cycle: a -> b -> a/.test(refusal)) throw new Error('refusal: ' + refusal)
    await snap(page, 'workflow-editor-refused')
    await json.fill(JSON.stringify({ nodes: [{ id: 'extract', job: jobId }, { id: 'clean', job: jobId, param: '${extract.msg}' },
      { id: 'alert', job: jobId, join: 'any' }, { id: 'report', job: jobId }],
    edges: [{ from: 'extract', to: 'clean' }, { from: 'extract', to: 'alert', on: 'failure' }, { from: 'clean', to: 'report', on: 'always' }] }))
    await until(async () => (await form.locator('.flow-node').count()) === 4, 'the preview of 4 nodes')
    await snap(page, 'workflow-editor')
    await form.locator('[data-test=flow-save]').click()
    await form.waitFor({ state: 'detached' })
    await page.locator('[data-test=flow-detail] .flow-node').first().waitFor()
  })
  await probe('a run of it: its nodes coloured by state (alert skipped), the run SUCCESS; a node opens its log', async () => {
    const row = page.locator('[data-test=workflows] tr', { hasText: 'console-' + MARK })
    await row.locator('[data-act=trigger]').click()
    await page.locator('[data-test=flow-trigger-form] button[type=submit]').click()
    await until(async () => (await page.locator('[data-test=flow-run-status]').innerText().catch(() => '')) === 'Success', 'the run SUCCESS')
    const st = async (n) => page.locator(`[data-test=flow-detail] .flow-node[data-node="${n}"]`).getAttribute('data-status')
    if ((await st('extract')) !== 'SUCCESS' || (await st('report')) !== 'SUCCESS' || (await st('alert')) !== 'SKIPPED')
      throw new Error(`states: extract ${await st('extract')}, alert ${await st('alert')}, report ${await st('report')}`)
    flowRun = Number((await page.locator('[data-test=flow-run]').innerText()).match(/\d+/)[0])
    await snap(page, 'workflow-run')
    await page.locator('[data-test=flow-detail] .flow-node[data-node="clean"]').click()
    await page.locator('[data-test=log-row]').waitFor()
    if (!/#\/logs\/\d+/.test(page.url())) throw new Error('not on a log page: ' + page.url())
  })
  await probe('its schedule is edited in the form: a cron, a zone and a calendar, stored as given', async () => {
    await page.goto(base + '/#/workflows')
    const row = page.locator('[data-test=workflows] tr', { hasText: 'console-' + MARK })
    const id = Number(await row.getAttribute('data-workflow'))
    await row.locator('[data-act=edit]').click()
    const form = page.locator('[data-test=flow-form]')
    await form.locator('[data-test=flow-schedule-type]').selectOption('CRON')
    await form.locator('input[name=scheduleConf]').fill('0 0 3 * * ?')
    await form.locator('input[name=timezone]').fill('Asia/Shanghai')
    await until(async () => (await form.locator('[data-test=flow-calendar] option', { hasText: 'console-cal' }).count()) === 1, 'the calendar offered')
    await form.locator('[data-test=flow-calendar]').selectOption('console-cal')
    await snap(page, 'workflow-schedule')
    await form.locator('[data-test=flow-save]').click()
    await form.waitFor({ state: 'detached' })
    const w = (await apiCall('GET', '/workflows/' + id)).data
    check('the workflow is stored with its schedule and calendar',
      w && w.scheduleType === 'CRON' && w.scheduleConf === '0 0 3 * * ?' && w.timezone === 'Asia/Shanghai' && w.calendar === 'console-cal',
      JSON.stringify(w))
  })
  // A workflow's older runs: 20 a page, Older (`before` the last shown),
  // Previous back to the newest
  await probe('a workflow\'s runs page back: 21 runs show 20, Older shows the first, Previous the newest again', async () => {
    //  (a copy of the job runs its nodes: the job's own run logs stay as they were)
    const job = (await apiCall('POST', `/jobs/${jobId}/copy`, { jobDesc: 'pages ' + MARK })).data
    const add = (await apiCall('POST', '/workflows', { name: 'pages-' + MARK, definition: { nodes: [{ id: 'p', job: job.id }] } })).data
    const made = []
    for (let i = 0; i < 21; i++) made.push((await apiCall('POST', `/workflows/${add.id}/trigger`, { param: String(i) })).data.runId)
    await page.goto(base + '/#/workflows')
    await page.reload()                 //  (the list as it is now)
    await page.locator('[data-test=workflows] tr', { hasText: 'pages-' + MARK }).locator('a.desc').click()
    const rows = page.locator('[data-test=flow-runs] tr[data-run]')
    const ids = async () => Promise.all((await rows.all()).map(async (r) => Number(await r.getAttribute('data-run'))))
    const pager = page.locator('[data-test=flow-runs-pager]')
    await until(async () => (await rows.count()) === 20, '20 runs listed')
    if ((await ids())[0] !== made[20]) throw new Error('first page: ' + (await ids()).join(','))
    await pager.locator('[data-act=older]').click()
    await until(async () => (await rows.count()) === 1, 'the oldest run alone')
    if ((await ids())[0] !== made[0] || !(await pager.locator('[data-act=older]').isDisabled()))
      throw new Error('older page: ' + (await ids()).join(','))
    await snap(page, 'workflow-runs-older')
    await pager.locator('button', { hasText: 'Previous' }).click()
    await until(async () => (await rows.count()) === 20 && (await ids())[0] === made[20], 'the newest page again')
  })
  await probe('at 390 px the workflows page (its graph in a box of its own) is no wider than the screen; in Chinese', async () => {
    const small = watchPage(await context.newPage())
    await small.setViewportSize({ width: 390, height: 844 })
    await small.goto(base + '/#/workflows')
    await small.locator('[data-test=workflows] tr', { hasText: 'console-' + MARK }).locator('a.desc').click()
    await small.locator('[data-test=flow-detail] .flow-node').first().waitFor()
    const w = await widths(small)
    if (w.doc > w.view) throw new Error(`the page is ${w.doc} px wide on a ${w.view} px screen`)
    await snap(small, 'phone-workflows')
    await small.selectOption('[data-test=lang]', 'zh')
    await small.locator('[data-nav=workflows]', { hasText: '工作流' }).waitFor()
    await small.locator('[data-test=flow-run-status]', { hasText: '成功' }).waitFor()
    await snap(small, 'phone-workflows-zh')
    await small.selectOption('[data-test=lang]', 'en')
    await small.close()
    if (!flowRun) throw new Error('no run shown before')
  })

  await probe('Kill asks first (in the list and on the run\'s page): cancelled, nothing is sent and the run goes on; confirmed, it is killed', async () => {
    if (!sleeper) throw new Error('no sleeping run')
    const asks = async (button) => {
      dialogAnswer = false
      const d0 = dialogs.length, r0 = requests.length
      try {
        await button.click()
        // (the page's handler has run by the time an evaluate gets its turn)
        const l = (await apiCall('GET', `/logs/${sleeper}`)).data
        const sent = requests.slice(r0).filter((r) => r === `POST /api/v1/logs/${sleeper}/kill`)
        if (dialogs.length === d0) throw new Error('no confirmation asked' + (sent.length ? ': the kill was sent at once' : ''))
        if (!dialogs[d0].includes(String(sleeper))) throw new Error('it asks: ' + dialogs[d0])
        if (sent.length) throw new Error('cancelled, and yet the kill was sent')
        if (l.handleCode !== 0) throw new Error('the run ended: ' + l.handleCode + ' ' + l.handleMsg)
      } finally { dialogAnswer = true }
    }
    await page.goto(`${base}/#/logs?jobId=${sleeperJob}`)
    await asks(page.locator(`[data-test=logs] tr[data-log="${sleeper}"] button`, { hasText: 'Kill' }))
    await page.goto(`${base}/#/logs/${sleeper}`)
    await asks(page.locator('[data-test=kill]'))
    await page.locator('[data-test=kill]').click()
    await until(async () => (await apiCall('GET', `/logs/${sleeper}`)).data.handleCode === 500, 'the run killed (handleCode 500)')
  })
  await snap(page, 'killed')

  await probe('a run waiting for a maxRunning slot has Kill in the list too: confirmed, it ends at once (triggerCode 500, never sent) while the running one goes on', async () => {
    const g = ((await apiCall('GET', '/groups')).data.groups || []).find((x) => x.appname === APP)
    const add = await apiCall('POST', '/jobs', { jobGroup: String(g.id), jobDesc: 'console slot kill ' + MARK, author: 'console-test',
      scheduleType: 'NONE', scheduleConf: '', glueType: 'GLUE_SHELL', glueSource: '#!/bin/bash\nsleep 300\n', glueRemark: 'slot',
      executorRouteStrategy: 'FIRST', misfireStrategy: 'DO_NOTHING', executorBlockStrategy: 'SERIAL_EXECUTION', maxRunning: 1 })
    if (!add.data || !add.data.id) throw new Error('job add: ' + add.status + ' ' + JSON.stringify(add.data))
    const job = add.data.id
    const ids = []
    for (let i = 0; i < 2; i++) {
      const trig = await apiCall('POST', `/jobs/${job}/trigger`, { executorParam: '' })
      if (!trig.data || !trig.data.logIds) throw new Error('trigger: ' + trig.status + ' ' + JSON.stringify(trig.data))
      ids.push(trig.data.logIds[0])
    }
    const row = async (id) => (await apiCall('GET', `/logs/${id}`)).data
    await until(async () => (await row(ids[0])).triggerCode === 200, 'the first run started')
    const waiting = await row(ids[1])
    if (waiting.triggerCode !== 0 || waiting.handleCode !== 0) throw new Error('the second is not waiting: ' + JSON.stringify(waiting))
    try {
      await page.goto(`${base}/#/logs?jobId=${job}`)
      await page.locator(`[data-test=logs] tr[data-log="${ids[1]}"] button`, { hasText: 'Kill' }).click()
      await until(async () => (await row(ids[1])).triggerCode === 500, 'the waiting run ended (triggerCode 500)')
      const killed = await row(ids[1])
      if (!/before it was sent/.test(killed.triggerMsg || '')) throw new Error('its triggerMsg: ' + killed.triggerMsg)
      const first = await row(ids[0])
      if (first.handleCode !== 0) throw new Error('the running run ended too: ' + first.handleCode + ' ' + first.handleMsg)
    } finally {
      await apiCall('POST', `/logs/${ids[0]}/kill`)
    }
  })

  // A page's own path (no #) opened in a fresh tab: its styles and scripts load
  for (const [where, ready] of [[`/jobs/${jobId}/glue`, '[data-test=glue-versions]'], [`/logs/${logId}`, '[data-test=log-row]'],
    [`/logs?jobId=${jobId}`, `[data-test=logs] tr[data-log="${logId}"]`]]) {
    const tab = watchPage(await context.newPage())
    await probe(`a deep link ${where} opens its page, styled (the menu's colour from the stylesheet)`, async () => {
      await tab.goto(base + where)
      await tab.locator(ready).waitFor({ timeout: 10000 })
      const side = await tab.evaluate(() => getComputedStyle(document.querySelector('.side')).backgroundColor)
      if (side !== 'rgb(34, 48, 63)') throw new Error('the menu\'s background: ' + side)
      if (new globalThis.URL(tab.url()).hash !== '#' + where) throw new Error('at ' + tab.url())
    })
    await snap(tab, 'deep-link')
    await tab.close()
  }

  await step('switch to Chinese (简体中文 in the language menu): Chinese labels, kept after a reload', async () => {
    await page.selectOption('[data-test=lang]', 'zh')
    await page.locator('[data-nav=jobs]', { hasText: '任务管理' }).waitFor()
    await page.reload()
    await page.locator('[data-nav=logs]', { hasText: '调度日志' }).waitFor()
    await page.click('[data-nav=dashboard]')
    await page.locator('.stat span', { hasText: '任务数量' }).waitFor()
    if ((await page.evaluate(() => document.documentElement.lang)) !== 'zh-CN') throw new Error('html lang is not zh-CN')
  })
  await snap(page, 'chinese')

  // Traditional Chinese: each page in it (i18n.js reports on the console a
  // key it lacks, which fails the run), then back to 简体中文 for the rest
  await probe('繁體中文 in the language menu: the menu\'s words from the zh-TW table, html lang zh-TW, kept after a reload; each page shown with no key missing', async () => {
    const before = problems.length
    try {
      await page.selectOption('[data-test=lang]', 'zh-TW')
      await page.locator('[data-nav=jobs]', { hasText: messages['zh-TW']['nav.jobs'] }).waitFor()
      await page.reload()
      await page.locator('[data-nav=logs]', { hasText: messages['zh-TW']['nav.logs'] }).waitFor()
      if ((await page.evaluate(() => document.documentElement.lang)) !== 'zh-TW') throw new Error('html lang is not zh-TW')
      for (const a of await page.locator('[data-nav]').all()) {
        const want = messages['zh-TW']['nav.' + await a.getAttribute('data-nav')], got = (await a.innerText()).trim()
        if (got !== want) throw new Error(`the menu says ${got}, not ${want}`)
      }
      const pages = [['/#/', '[data-test=chart-share]'], ['/#/jobs', `[data-test=jobs] tr[data-job="${jobId}"]`],
        ['/#/jobs', '[data-test=job-form]', '[data-test=job-add]'], ['/#/workflows', '[data-test=workflows]'],
        [`/#/logs?jobId=${jobId}`, `[data-test=logs] tr[data-log="${logId}"]`], [`/#/logs/${logId}`, '[data-test=log-row]'],
        [`/#/jobs/${jobId}/glue`, '[data-test=glue-versions] tr[data-version="3"]'], ['/#/groups', '[data-test=groups] tbody tr'],
        ['/#/agents', '[data-test=agents] tbody tr'], ['/#/calendars', '[data-test=calendars] tbody tr'], ['/#/backfills', '[data-test=backfills] tbody tr'],
        ['/#/users', '[data-test=tokens] tbody tr'], ['/#/audit', '[data-test=audit] tbody tr']]
      for (const [where, ready, click] of pages) {
        await page.goto(base + where)
        if (click) await page.click(click)
        await page.locator(ready).first().waitFor()
        if (where === '/#/') await snap(page, 'zh-TW-dashboard')
      }
      const missing = problems.slice(before).filter((p) => /xxl i18n/.test(p))
      if (missing.length) throw new Error(missing.join(' | '))
      if ((await page.locator('[data-test=lang]').inputValue()) !== 'zh-TW') throw new Error('the menu no longer says zh-TW')
    } finally {
      await page.selectOption('[data-test=lang]', 'zh')
      await page.locator('[data-nav=jobs]', { hasText: messages.zh['nav.jobs'] }).waitFor()
    }
  })

  // With no choice kept, the first visit's language is the browser's
  // first: a fresh context's own (zh-HK), then navigator.languages as the
  // page's sessionStorage 'test.langs' says, reloaded (its files loaded once)
  await probe('the first visit follows the browser\'s first language: zh-HK, zh-Hant: 繁體中文; zh-CN (then zh-TW): 简体中文; fr-FR (then zh-TW): English (menu and html lang)', async () => {
    const ctx = await browser.newContext({ locale: 'zh-HK' })
    try {
      const p = watchPage(await ctx.newPage())
      await p.addInitScript(() => {
        const l = sessionStorage.getItem('test.langs')
        if (l) Object.defineProperty(Navigator.prototype, 'languages', { get: () => JSON.parse(l) })
      })
      await p.goto(URL)
      for (const [langs, code, tag] of [[null, 'zh-TW', 'zh-TW'], [['zh-Hant', 'en'], 'zh-TW', 'zh-TW'],
        [['zh-CN', 'zh-TW'], 'zh', 'zh-CN'], [['fr-FR', 'zh-TW'], 'en', 'en']]) {
        if (langs) { await p.evaluate((l) => sessionStorage.setItem('test.langs', JSON.stringify(l)), langs); await p.reload() }
        await p.locator('[data-test=login-form]').waitFor()
        const [first, html] = await p.evaluate(() => [navigator.languages.join(','), document.documentElement.lang])
        const menu = await p.locator('[data-test=lang]').inputValue(), title = await p.locator('[data-test=lang]').getAttribute('title')
        if (menu !== code || html !== tag || title !== messages[code]['lang.menu'])
          throw new Error(`browser ${first}: menu ${menu} (${title}), html lang ${html}; wanted ${code}, ${tag}`)
      }
      if (await p.evaluate(() => localStorage.getItem('xxl.lang')) !== null) throw new Error('a choice was kept with none made')
    } finally { await ctx.close() }
  })

  await step('a write without the X-CSRF-Token header is refused 403 (the console\'s own carry it)', async () => {
    const status = await page.evaluate(async (id) => (await fetch(`api/v1/jobs/${id}/stop`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' })).status, jobId)
    if (status !== 403) throw new Error('POST without the token: ' + status)
  })

  await step('sign out: back at the login form, and the api answers 401 without the session', async () => {
    await page.click('[data-test=logout]')
    await page.locator('[data-test=login-form]').waitFor()
    const status = await page.evaluate(async () => (await fetch('api/v1/me')).status)
    if (status !== 401) throw new Error('GET /api/v1/me after sign-out: ' + status)
  })
  await snap(page, 'signed-out')
  if (VIEWER) {
    await step('a viewer signs in (not remembered: a browser-session cookie): no add button, and a page of admins shows the server\'s 403 text', async () => {
      await page.fill('input[name=username]', VIEWER)
      await page.fill('input[name=password]', VIEWER_PASSWORD)
      if (await page.isChecked('[data-test=login-remember]')) throw new Error('"Remember me" ticked from the last sign-in')
      await page.click('[data-test=login-form] button[type=submit]')
      await page.locator('[data-test=report]').waitFor()
      const cookie = (await context.cookies()).find((c) => c.name === 'xxl_session')
      if (!cookie || cookie.expires !== -1) throw new Error('not a browser-session cookie: expires ' + (cookie && cookie.expires))
      await page.click('[data-nav=jobs]')
      await page.locator(`[data-test=jobs] tr[data-job="${jobId}"]`).waitFor()
      if (await page.locator('[data-test=job-add]').count()) throw new Error('a viewer sees the add button')
      if (await page.locator('[data-nav=users]').count()) throw new Error('a viewer sees the users page in the menu')
      await page.goto(`${URL.replace(/\/$/, '')}/#/users`)
      const text = (await page.locator('section .error').first().innerText()).trim()
      if (!text) throw new Error('no error text shown')
      console.log('# 403 shown: ' + text)
    })
    await snap(page, 'viewer-403')

    await step('the viewer changes her password (a wrong current one refused): the new one signs in, the old one no more', async () => {
      const NEW = VIEWER_PASSWORD + '-new'
      const form = page.locator('[data-test=password-form]')
      await page.click('[data-test=password]')
      await form.locator('input[name=oldPassword]').fill(VIEWER_PASSWORD + '-wrong')
      await form.locator('input[name=newPassword]').fill(NEW)
      await form.locator('input[name=again]').fill(NEW)
      await form.locator('button[type=submit]').click()
      await page.locator('[data-test=password-error]').waitFor()
      await form.locator('input[name=oldPassword]').fill(VIEWER_PASSWORD)
      await form.locator('button[type=submit]').click()
      await form.waitFor({ state: 'detached' })
      await page.click('[data-test=logout]')
      await page.fill('input[name=username]', VIEWER)
      await page.fill('input[name=password]', VIEWER_PASSWORD)
      await page.click('[data-test=login-form] button[type=submit]')
      await page.locator('[data-test=login-error]').waitFor()
      await page.fill('input[name=password]', NEW)
      await page.click('[data-test=login-form] button[type=submit]')
      await page.locator('[data-test=report]').waitFor()
    })
    await snap(page, 'viewer-new-password')
  }
  await step('an inline script is refused by the server\'s policy, and the refusal is seen', async () => {
    const before = problems.length
    const ran = await page.evaluate(() => {
      window.xxlInlineRan = false
      const script = document.createElement('script')
      script.textContent = 'window.xxlInlineRan = true'
      document.head.appendChild(script)
      return window.xxlInlineRan
    })
    if (ran) throw new Error('the inline script ran')
    await until(async () => problems.slice(before).some((p) => /^CSP violation: script-src\S* refused inline/.test(p)), 'the violation reported')
    // (that refusal was on purpose: only it, and the console's line about it, go)
    for (let i = problems.length - 1; i >= before; i--)
      if (/^CSP violation: script-src\S* refused inline|^console: .*inline script/i.test(problems[i])) problems.splice(i, 1)
  })
} finally {
  await snap(page, 'last')
  check('no page errors and no Content-Security-Policy refusals', problems.length === 0, problems.join(' | '))
  await browser.close()
}
console.log(`${passed} passed, ${failed} failed`)
process.exit(failed ? 1 : 0)
