// What the scheduler says of itself (GET /api/v1/meta, docs/http.md): its
// api commands and the closed lists a job's fields take, the route
// strategies and alarm kinds among them as its plugins loaded them.  Read
// once, by the first page that needs it; the lists are empty until then.
import { reactive } from 'vue'
import { api } from './api.js'

export const meta = reactive({
  protocol: 0,
  commands: [],
  lists: { scheduleTypes: [], misfireStrategies: [], blockStrategies: [], glueTypes: [], triggerTypes: [], roles: [],
    routeStrategies: [], alarmKinds: [] },
})

let pending = null
// loadMeta(): the promise of meta read (again after a failure)
export function loadMeta() {
  if (!pending) {
    pending = api.get('/meta').then((m) => {
      meta.protocol = m.protocol
      meta.commands = m.commands || []
      Object.assign(meta.lists, m.lists || {})
      return meta
    }).catch((e) => { pending = null; throw e })
  }
  return pending
}

// choices(list, value): a list's values, with value first when the list
// lacks it (a job's route whose plugin is no longer loaded shows as it is)
export function choices(list, value) {
  return value && !list.includes(value) ? [value, ...list] : list
}
