// dashboard.mjs -- make bench's group H: the console's dashboard open in
// headless Chromium (playwright-core, the system's chromium) while the
// e2e phase runs.  Logs in through the REST api (the session cookie goes
// into the browser's context), opens the console at its dashboard, prints
// "ready" once the page shows its figures, and stays until SIGTERM.
// Environment: XXL_URL (the console), XXL_USER, XXL_PASSWORD, CHROMIUM.
import { chromium } from 'playwright-core'

const URL = process.env.XXL_URL
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
})
const context = await browser.newContext({ viewport: { width: 1400, height: 900 } })
const login = await context.request.post(URL + '/api/v1/login', {
  data: { username: process.env.XXL_USER, password: process.env.XXL_PASSWORD },
})
if (!login.ok()) {
  console.log('dashboard: login refused: ' + login.status())
  process.exit(1)
}
const page = await context.newPage()
// (the dashboard loads its figures from /api/v1/report, then every minute;
// the wait is set before the page loads, which may fetch it at once)
const report = page.waitForResponse((r) => r.url().includes('/api/v1/report'), { timeout: 30000 })
await page.goto(URL + '/')
await report
console.log('ready')
const stop = async () => { await browser.close().catch(() => {}); process.exit(0) }
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
await new Promise(() => {})
