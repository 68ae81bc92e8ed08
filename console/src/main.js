import { createApp } from 'vue'
import { createRouter, createWebHashHistory } from 'vue-router'
import App from './App.vue'
import { session, loadMe, setUnauthorizedHandler } from './api.js'
import './style.css'

const routes = [
  { path: '/login', name: 'login', component: () => import('./views/Login.vue'), meta: { public: true } },
  { path: '/', name: 'dashboard', component: () => import('./views/Dashboard.vue') },
  { path: '/groups', name: 'groups', component: () => import('./views/Groups.vue') },
  { path: '/jobs', name: 'jobs', component: () => import('./views/Jobs.vue') },
  { path: '/jobs/:id/glue', name: 'glue', component: () => import('./views/Glue.vue') },
  { path: '/workflows', name: 'workflows', component: () => import('./views/Workflows.vue') },
  { path: '/logs', name: 'logs', component: () => import('./views/Logs.vue') },
  { path: '/logs/:id', name: 'log', component: () => import('./views/LogDetail.vue') },
  { path: '/agents', name: 'agents', component: () => import('./views/Agents.vue') },
  { path: '/calendars', name: 'calendars', component: () => import('./views/Calendars.vue') },
  { path: '/backfills', name: 'backfills', component: () => import('./views/Backfills.vue') },
  { path: '/users', name: 'users', component: () => import('./views/Users.vue') },
  { path: '/audit', name: 'audit', component: () => import('./views/Audit.vue') },
  { path: '/:rest(.*)', redirect: '/' },
]

// Pages are addressed in the hash (/#/logs/1): the document is always
// the scheduler's `/`.  A page's path without it (a deep link /logs/1 or
// /jobs/1/glue, which the scheduler answers with index.html) is moved into
// the hash before the router reads it, its query kept
if (location.pathname !== '/' && !location.hash.startsWith('#/')) {
  history.replaceState(null, '', '/#' + location.pathname + location.search)
}

const router = createRouter({ history: createWebHashHistory(), routes })

router.beforeEach(async (to) => {
  if (!session.checked) await loadMe().catch(() => {})
  if (!to.meta.public && !session.me) return { name: 'login', query: { next: to.fullPath } }
  if (to.name === 'login' && session.me) return { name: 'dashboard' }
  return true
})

setUnauthorizedHandler(() => {
  const here = router.currentRoute.value
  if (here.name !== 'login') router.push({ name: 'login', query: { next: here.fullPath } })
})

createApp(App).use(router).mount('#app')
