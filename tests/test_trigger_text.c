/*  test_trigger_text.c -- the trigger path's triggerMsg text, linking the
    engine's functions directly: an answer's section, and the count of
    characters by which the store takes a presumed section back
    (xxl_store_log_unroute), which must equal what was appended, whatever
    the note and address hold (UTF-8 counts as SQLite's length() does,
    and PostgreSQL's on a UTF8 database).  The store is SQLite's, or
    PostgreSQL's with XXL_TEST_STORE_URL (tests/xxl_test_store.h).
*/

#include "xxl_engine.h"
#include "xxl_test_store.h"
#include "xxl_test.h"

static char s_dir [] = "/tmp/xxl-test-trigger-XXXXXX";

//  Characters as SQLite's length() counts them
static int64_t
s_utf8_chars (const char *text)
{
    int64_t chars = 0;
    for (const unsigned char *c = (const unsigned char *) text; *c; c++)
        chars += (*c & 0xC0) != 0x80;
    return chars;
}

int
main (void)
{
    zsys_init ();
    zsys_set_logstream (NULL);
    //  The section's exact text
    char *section = engine_section ("route: ROUND\n", "10.0.0.1:9999", 200, NULL);
    XXL_CHECK (streq (section, "\n>>>>>>>>>>> Trigger <<<<<<<<<<<\nroute: ROUND\n"
                               "address: 10.0.0.1:9999\ncode: 200\nmsg: null\n"));
    zstr_free (&section);
    section = engine_section (NULL, "a1", 500, "refused: busy");
    XXL_CHECK (streq (section, "\n>>>>>>>>>>> Trigger <<<<<<<<<<<\naddress: a1\ncode: 500\n"
                               "msg: refused: busy\n"));
    zstr_free (&section);

    //  A retry's section, and a planned row made the outage's misfire
    //  compensation (its type line, and why)
    char *text = engine_text_retry (2, 3, 77, 10);
    XXL_CHECK (streq (text, "\n>>>>>>>>>>> Fail retry <<<<<<<<<<<\nretry 2 of 3 as log 77 in 10 s\n"));
    zstr_free (&text);
    text = engine_text_misfire ("Trigger type: Cron trigger\nroute: FIRST\n");
    XXL_CHECK (streq (text, "Trigger type: Misfire compensation trigger\nroute: FIRST\n"
                            "Misfire: the scheduler was down at the planned time; FIRE_ONCE_NOW\n"));
    zstr_free (&text);
    text = engine_text_misfire ("");
    XXL_CHECK (streq (text, "Misfire: the scheduler was down at the planned time; FIRE_ONCE_NOW\n"));
    zstr_free (&text);

    //  The presumed section's length, for notes and addresses of every kind
    const char *notes [] = { NULL, "", "route: FIRST\n", "路由: 第一个\n", "émoji 🚀\n" };
    const char *addresses [] = { "a1", "10.0.0.1:9999", "节点-1", "host-é" };
    for (size_t n = 0; n < sizeof notes / sizeof notes [0]; n++)
        for (size_t a = 0; a < sizeof addresses / sizeof addresses [0]; a++) {
            section = engine_section (notes [n], addresses [a], XXL_OK, NULL);
            XXL_CHECK (engine_section_chars (notes [n], addresses [a]) == s_utf8_chars (section));
            zstr_free (&section);
        }

    //  In the store: a row routed with its presumed section and taken
    //  back by that count has the text it had before, byte for byte
    XXL_CHECK (mkdtemp (s_dir) != NULL);
    char file [256], err [256];
    snprintf (file, sizeof file, "%s/xxl.db", s_dir);
    //  (or the PostgreSQL database XXL_TEST_STORE_URL names)
    const char *path = xxl_test_store_url (file);
    xxl_store_t *store = xxl_store_new (path, err, sizeof err);
    XXL_CHECK (store);
    if (!store)
        return xxl_test_done ();
    for (size_t n = 0; n < sizeof notes / sizeof notes [0]; n++)
        for (size_t a = 0; a < sizeof addresses / sizeof addresses [0]; a++) {
            const char *head = "Trigger type: 手动\nAdmin address: x\n";
            xxl_log_t log = { .job_group = 1, .job_id = 1, .executor_handler = "h",
                              .executor_param = "", .trigger_time = 1, .trigger_msg = (char *) head,
                              .trigger_type = "MANUAL" };
            XXL_CHECK (xxl_store_begin (store) == 0);
            XXL_CHECK (xxl_store_log_add (store, &log) == 0);
            section = engine_section (notes [n], addresses [a], XXL_OK, NULL);
            XXL_CHECK (xxl_store_log_route (store, log.id, 2, addresses [a], section) == 1);
            XXL_CHECK (xxl_store_log_unroute (store, log.id, section, 0) == 1);
            zstr_free (&section);
            XXL_CHECK (xxl_store_commit (store) == 0);
            xxl_log_t back;
            XXL_CHECK (xxl_store_log_load (store, log.id, &back) == 0);
            XXL_CHECK (back.trigger_msg && streq (back.trigger_msg, head));
            XXL_CHECK (back.executor_address && streq (back.executor_address, ""));
            xxl_log_free (&back);
        }
    xxl_store_destroy (&store);
    char command [512];
    snprintf (command, sizeof command, "rm -rf %s", s_dir);
    XXL_CHECK (system (command) == 0);
    return xxl_test_done ();
}
