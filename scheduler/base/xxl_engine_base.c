/*  xxl_engine_base.c -- the helpers every engine module shares: log
    lines a peer can provoke, limited; maps keyed by 64-bit ids; list and
    map destructors.  Contract in xxl_engine_base.h. */

#include "xxl_engine_base.h"

static size_t s_id_hash (const void *key);
static int s_id_compare (const void *a, const void *b);

//  Writes a warning unless one of this kind went out less than
//  XXL_RATELOG_MS ago (then counts it)
void
engine_warn_limited (ratelog_t *kind, const char *format, ...)
{
    int64_t now = zclock_mono ();
    if (kind->logged_at && now - kind->logged_at < XXL_RATELOG_MS) {
        kind->suppressed++;
        return;
    }
    char line [1024];
    va_list args;
    va_start (args, format);
    vsnprintf (line, sizeof line, format, args);
    va_end (args);
    if (kind->suppressed)
        zsys_warning ("%s (and %" PRIu64 " more like it in the last %d s)", line,
                      kind->suppressed, (int) ((now - kind->logged_at) / 1000));
    else
        zsys_warning ("%s", line);
    kind->logged_at = now;
    kind->suppressed = 0;
}

//  Writes an info line if kind's bucket holds a token (see infolog_t)
void
engine_info_limited (infolog_t *kind, const char *format, ...)
{
    int64_t now = zclock_mono ();
    if (kind->filled_at == 0)
        kind->tokens = XXL_INFOLOG_BURST;
    else {
        kind->tokens += (double) (now - kind->filled_at) * XXL_INFOLOG_PER_S / 1000.0;
        if (kind->tokens > XXL_INFOLOG_BURST)
            kind->tokens = XXL_INFOLOG_BURST;
    }
    kind->filled_at = now;
    if (kind->tokens < 1) {
        kind->suppressed++;
        return;
    }
    kind->tokens -= 1;
    char line [1024];
    va_list args;
    va_start (args, format);
    vsnprintf (line, sizeof line, format, args);
    va_end (args);
    if (kind->suppressed)
        zsys_info ("%s (and %" PRIu64 " lines like it left out before)", line,
                   kind->suppressed);
    else
        zsys_info ("%s", line);
    kind->suppressed = 0;
}

bool
engine_has_control (const char *text)
{
    for (const unsigned char *p = (const unsigned char *) text; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return true;
    return false;
}

static size_t
s_id_hash (const void *key)
{
    //  The id itself: ids are handed out in order, so the entries of one
    //  burst (plans, requests, log ids) sit in neighbouring buckets, which
    //  the cache rewards; the table's prime size spreads any stride
    return (size_t) *(const uint64_t *) key;
}

static int
s_id_compare (const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
    return x < y? -1: x > y? 1: 0;
}

//  A map keyed by an int64_t id that lives in the item (the key is not
//  copied); destructor (may be NULL) destroys the items
zhashx_t *
engine_id_map (zhashx_destructor_fn *destructor)
{
    zhashx_t *map = zhashx_new ();
    zhashx_set_key_hasher (map, s_id_hash);
    zhashx_set_key_comparator (map, s_id_compare);
    zhashx_set_key_duplicator (map, NULL);
    zhashx_set_key_destructor (map, NULL);
    zhashx_set_destructor (map, destructor);
    return map;
}

void
engine_free_item (void **item)
{
    free (*item);
    *item = NULL;
}

void
engine_msg_destroy (void **item)
{
    zmsg_t *msg = (zmsg_t *) *item;
    zmsg_destroy (&msg);
    *item = NULL;
}
