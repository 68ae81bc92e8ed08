// Drives the xxl web console in headless Chromium (playwright-core, the
// system's chromium): the steps of tests/test_console.sh, each checked on
// the page's content, a screenshot after each in $SHOTS, under the
// server's Content-Security-Policy with every refusal reported.
// Environment: XXL_URL (the console), XXL_USER, XXL_PASSWORD, XXL_APP (the
// group the job goes in), SHOTS (folder), CHROMIUM (the browser binary),
// XXL_MARK (a text unique to this run).  Prints "ok - …" / "FAIL - …" and
// "N passed, M failed"; exits 1 on any failure.
import { chromium } from 'playwright-core'
import fs from 'node:fs'
import path from 'node:path'

const env = (k, d) => process.env[k] || d
const URL = env('XXL_URL'), USER = env('XXL_USER', 'admin'), PASSWORD = env('XXL_PASSWORD')
const APP = env('XXL_APP', 'demo'), SHOTS = env('SHOTS', 'console-shots'), MARK = env('XXL_MARK', 'm' + process.pid)
const VIEWER = env('XXL_VIEWER'), VIEWER_PASSWORD = env('XXL_VIEWER_PASSWORD')
const WAIT = 30000
let passed = 0, failed = 0, shot = 0
fs.mkdirSync(SHOTS, { recursive: true })

function check(what, ok, detail) {
  if (ok) { passed++; console.log('ok - ' + what) } else { failed++; console.log('FAIL - ' + what + (detail ? ': ' + detail : '')) }
  return ok
}
// step(what, fn): fn throws on failure (a wait that timed out, a missing element)
// Once one fails, the rest are reported as not run (each builds on the last)
async function step(what, fn) {
  if (failed) return check(what, false, 'not run: an earlier step failed')
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
const page = await context.newPage()
page.on('pageerror', (e) => problems.push('page error: ' + e.message))
page.on('console', (m) => { if (m.type() === 'error' && /Content.Security.Policy|Refused to/i.test(m.text())) problems.push('console: ' + m.text()) })
page.on('dialog', (d) => d.accept())
page.setDefaultTimeout(WAIT)

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

  await step('the right password signs in: the dashboard shows the report', async () => {
    await page.fill('input[name=password]', PASSWORD)
    await page.click('[data-test=login-form] button[type=submit]')
    await page.locator('[data-test=report]').waitFor()
    const who = await page.locator('[data-test=who]').innerText()
    if (!who.includes(USER) || !who.includes('admin')) throw new Error('top bar says ' + who)
    const agents = Number(await page.locator('[data-test=agent-count]').innerText())
    if (!(agents >= 1)) throw new Error('agent count ' + agents)
    await page.locator('[data-test=chart-days]').waitFor()
  })
  await snap(page, 'dashboard')

  const desc = 'console job ' + MARK
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
  if (!failed) await page.locator('.modal .close').click()

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

  const base = URL.replace(/\/$/, '')
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

  await step('the audit page lists the console\'s changes', async () => {
    await page.click('[data-nav=audit]')
    await page.locator('[data-test=audit] tr', { hasText: 'GLUE_ROLLBACK' }).first().waitFor()
    await page.locator('[data-test=audit] tr', { hasText: 'JOB_COPY' }).first().waitFor()
  })
  await snap(page, 'audit')

  await step('switch to Chinese: Chinese labels, kept after a reload', async () => {
    await page.click('[data-test=lang]')
    await page.locator('[data-nav=jobs]', { hasText: '任务管理' }).waitFor()
    await page.reload()
    await page.locator('[data-nav=logs]', { hasText: '调度日志' }).waitFor()
    await page.click('[data-nav=dashboard]')
    await page.locator('.stat span', { hasText: '任务数量' }).waitFor()
    if ((await page.evaluate(() => document.documentElement.lang)) !== 'zh-CN') throw new Error('html lang is not zh-CN')
  })
  await snap(page, 'chinese')

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
    await step('a viewer signs in: no add button, and a page of admins shows the server\'s 403 text', async () => {
      await page.fill('input[name=username]', VIEWER)
      await page.fill('input[name=password]', VIEWER_PASSWORD)
      await page.click('[data-test=login-form] button[type=submit]')
      await page.locator('[data-test=report]').waitFor()
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
