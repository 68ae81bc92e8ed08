// Lists that page back in time by id (AUDIT_LIST, WORKFLOW_RUNS,
// BACKFILL_LIST: the next page is `before` the last id shown), newest
// first.  fetchPage(query) answers { items, truncated } for { limit, before };
// one row more than shown is asked for, so that `more` is known without an
// empty last page.  The stack keeps the `before` of each newer page
// (Previous); a failed read leaves the page as it was and sets error.
import { ref } from 'vue'

export function useOlder(fetchPage, limit, error) {
  const rows = ref([])
  const more = ref(false)
  const stack = ref([])
  let current = null

  async function load(before) {
    try {
      const { items, truncated } = await fetchPage({ limit: limit + 1, before })
      more.value = items.length > limit || !!truncated
      rows.value = items.slice(0, limit)
      current = before
      error.value = ''
    } catch (e) { error.value = e.message }
  }
  // the page shown, read again; the newest page (the stack emptied)
  function reload() { return load(current) }
  function newest() { stack.value = []; return load(null) }
  function older() {
    if (!rows.value.length) return Promise.resolve()
    stack.value.push(current)
    return load(rows.value[rows.value.length - 1].id)
  }
  function back() { return load(stack.value.pop()) }
  return { rows, more, stack, reload, newest, older, back }
}
