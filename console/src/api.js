// The REST client: JSON in and out, the session's CSRF token on every
// write, a 401 sends the user to the login page, any other error is thrown
// as ApiError with the server's {"error": text}.
import { reactive } from 'vue'

export const session = reactive({ me: null, checked: false })

export class ApiError extends Error {
  constructor(status, text) {
    super(text)
    this.status = status
  }
}

let onUnauthorized = () => {}
export function setUnauthorizedHandler(fn) { onUnauthorized = fn }

function query(params) {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params || {})) {
    if (v === undefined || v === null || v === '') continue
    q.append(k, String(v))
  }
  const s = q.toString()
  return s ? '?' + s : ''
}

export async function request(method, path, { body, params, quiet401 } = {}) {
  const headers = { Accept: 'application/json' }
  if (body !== undefined) headers['Content-Type'] = 'application/json'
  if (method !== 'GET' && session.me && session.me.csrf) headers['X-CSRF-Token'] = session.me.csrf
  let res
  try {
    res = await fetch('/api/v1' + path + query(params), {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    })
  } catch (e) {
    throw new ApiError(0, 'network error: ' + e.message)
  }
  let data = null
  const text = await res.text()
  if (text) {
    try { data = JSON.parse(text) } catch { data = { error: text } }
  }
  if (res.status === 401) {
    session.me = null
    if (!quiet401) onUnauthorized()
    throw new ApiError(401, (data && data.error) || 'not logged in')
  }
  if (!res.ok) throw new ApiError(res.status, (data && data.error) || res.status + ' ' + res.statusText)
  return data || {}
}

export const api = {
  get: (p, params) => request('GET', p, { params }),
  post: (p, body) => request('POST', p, { body: body === undefined ? {} : body }),
  put: (p, body) => request('PUT', p, { body }),
  del: (p) => request('DELETE', p),
}

// remember: the session outlives the browser's (the scheduler's http/remember_s)
export async function login(username, password, remember = false) {
  const me = await request('POST', '/login', { body: { username, password, remember }, quiet401: true })
  session.me = me
  return me
}

export async function loadMe() {
  try {
    session.me = await request('GET', '/me', { quiet401: true })
  } catch (e) {
    session.me = null
    if (e.status !== 401) throw e
  } finally {
    session.checked = true
  }
  return session.me
}

export async function logout() {
  try { await request('POST', '/logout', { body: {}, quiet401: true }) } catch { /* gone already */ }
  session.me = null
}

export const isAdmin = () => !!(session.me && session.me.role === 'admin')
export const canOperate = () => !!(session.me && (session.me.role === 'admin' || session.me.role === 'operator'))
