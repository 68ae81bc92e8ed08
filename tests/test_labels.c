/*  test_labels.c -- the labelled series of /metrics (scheduler/base/
    xxl_metrics.c, xxl_labels_*): label values escaped as Prometheus' text
    format wants (\\, \" and \n), whole however long; at most `jobs` jobs,
    the one whose runs ended longest ago going first; an agent's figures
    only while a registry entry names its address, only those it gave;
    apps counted by their connected entries; published through the box.
*/

#include "xxl_metrics.h"
#include "xxl_test.h"

#include <czmq.h>

int
main (void)
{
    zsys_init ();
    zsys_set_logstream (NULL);
    char out [64];
    xxl_labels_escape ("a\"b\\c\nd", out, sizeof out);
    XXL_CHECK (streq (out, "a\\\"b\\\\c\\nd"));
    xxl_labels_escape ("\"\"\"\"", out, 6);
    XXL_CHECK (streq (out, "\\\"\\\""));        //  (never half an escape)

    xxl_labels_t *labels = xxl_labels_new (2, 1);
    XXL_CHECK (xxl_labels_job_app (labels, 7) == NULL);
    xxl_labels_run (labels, 7, "we\"ird", true, 200, 1000);
    xxl_labels_run (labels, 7, NULL, true, 500, 2000);
    XXL_CHECK (streq (xxl_labels_job_app (labels, 7), "we\"ird"));
    xxl_labels_run (labels, 8, "plain", false, 500, 3000);     //  (a trigger failed)
    char long_app [300];
    memset (long_app, 'x', 255);
    long_app [255] = 0;
    xxl_labels_registry (labels, "we\"ird", "host:1", true);
    xxl_labels_registry (labels, "we\"ird", "host:2", false);
    xxl_labels_registry (labels, long_app, "host:3", true);
    xxl_agent_figures_t figures = { 2, 1, 0, 200 }, other = { 5, -1, -1, -1 };
    xxl_labels_agent (labels, "host:1", &figures);
    xxl_labels_agent (labels, "host:3", &other);    //  (past the 1 address labelled)
    char *text = xxl_labels_render (labels);
    XXL_CHECK (strstr (text, "xxl_app_agents_connected{app=\"we\\\"ird\"} 1\n"));
    XXL_CHECK (strstr (text, "xxl_app_runs_total{app=\"we\\\"ird\",code=\"200\"} 1\n"));
    XXL_CHECK (strstr (text, "xxl_app_runs_total{app=\"we\\\"ird\",code=\"500\"} 1\n"));
    XXL_CHECK (strstr (text, "xxl_app_runs_total{app=\"plain\",code=\"500\"} 0\n"));
    XXL_CHECK (strstr (text, "xxl_job_runs_total{job=\"7\",app=\"we\\\"ird\",code=\"500\"} 1\n"));
    XXL_CHECK (strstr (text, "xxl_job_last_result{job=\"7\",app=\"we\\\"ird\"} 500\n"));
    XXL_CHECK (strstr (text, "xxl_job_failures_in_row{job=\"7\",app=\"we\\\"ird\"} 1\n"));
    XXL_CHECK (strstr (text, "xxl_job_last_result{job=\"8\",app=\"plain\"} 500\n"));
    XXL_CHECK (strstr (text, "xxl_job_runs_total{job=\"8\",app=\"plain\",code=\"500\"} 0\n"));
    XXL_CHECK (strstr (text, "xxl_agent_runs_running{app=\"we\\\"ird\",address=\"host:1\"} 2\n"));
    XXL_CHECK (strstr (text, "xxl_agent_last_result{app=\"we\\\"ird\",address=\"host:1\"} 200\n"));
    XXL_CHECK (!strstr (text, "host:2") && !strstr (text, "host:3"));
    //  A long app name whole, in a line of its own
    char line [400];
    snprintf (line, sizeof line, "\nxxl_app_agents_connected{app=\"%s\"} 1\n", long_app);
    XXL_CHECK (strstr (text, line));
    zstr_free (&text);

    //  A third job: the one whose runs ended longest ago (7) goes; its
    //  app stays known (its next run's end needs no store read)
    xxl_labels_run (labels, 9, "plain", true, 200, 4000);
    XXL_CHECK (streq (xxl_labels_job_app (labels, 7), "we\"ird"));
    XXL_CHECK (streq (xxl_labels_job_app (labels, 8), "plain"));
    xxl_labels_job_changed (labels, 8);
    XXL_CHECK (xxl_labels_job_app (labels, 8) == NULL);
    xxl_labels_run (labels, 8, "moved", true, 200, 5000);
    XXL_CHECK (streq (xxl_labels_job_app (labels, 8), "moved"));
    //  A group changed: no job's app is known until looked up again
    xxl_labels_job_changed (labels, 0);
    XXL_CHECK (xxl_labels_job_app (labels, 7) == NULL);
    XXL_CHECK (xxl_labels_job_app (labels, 8) == NULL);
    XXL_CHECK (xxl_labels_job_app (labels, 9) == NULL);
    //  ... while their series keep the app last noted (a group removed
    //  elsewhere starts no new series of theirs)
    text = xxl_labels_render (labels);
    XXL_CHECK (strstr (text, "xxl_job_last_result{job=\"8\",app=\"moved\"} 200\n"));
    XXL_CHECK (strstr (text, "xxl_job_last_result{job=\"9\",app=\"plain\"} 200\n"));
    XXL_CHECK (!strstr (text, "app=\"\""));
    zstr_free (&text);
    //  A run whose app could not be looked up (its job removed) keeps it
    xxl_labels_run (labels, 9, NULL, true, 500, 4500);
    XXL_CHECK (xxl_labels_job_app (labels, 9) == NULL);
    text = xxl_labels_render (labels);
    XXL_CHECK (strstr (text, "xxl_job_last_result{job=\"9\",app=\"plain\"} 500\n"));
    zstr_free (&text);
    xxl_labels_run (labels, 8, "moved", true, 200, 5000);
    XXL_CHECK (streq (xxl_labels_job_app (labels, 8), "moved"));
    //  No registry entry names host:1 this round: its figures go; the app
    //  stays, with none connected
    text = xxl_labels_render (labels);
    XXL_CHECK (!strstr (text, "job=\"7\""));
    XXL_CHECK (strstr (text, "xxl_job_failures_in_row{job=\"8\",app=\"moved\"} 0\n"));
    XXL_CHECK (!strstr (text, "host:1"));
    XXL_CHECK (strstr (text, "xxl_app_agents_connected{app=\"we\\\"ird\"} 0\n"));
    zstr_free (&text);
    xxl_labels_registry (labels, "we\"ird", "host:1", true);
    text = xxl_labels_render (labels);
    XXL_CHECK (!strstr (text, "address=\"host:1\""));  //  (until it tells them again)
    zstr_free (&text);

    //  Through the box: the published copy holds no labels pointer, the
    //  text is the labels' as published
    xxl_metrics_box_t *box = xxl_metrics_box_new ();
    text = xxl_metrics_labelled (box);
    XXL_CHECK (streq (text, ""));
    zstr_free (&text);
    xxl_metrics_t metrics = { .labels = labels, .agents = 3 };
    xxl_labels_registry (labels, "plain", "host:9", true);
    xxl_metrics_publish (box, &metrics);
    xxl_metrics_t copy;
    XXL_CHECK (xxl_metrics_read (box, &copy) && copy.labels == NULL && copy.agents == 3);
    text = xxl_metrics_labelled (box);
    XXL_CHECK (strstr (text, "xxl_app_agents_connected{app=\"plain\"} 1\n"));
    zstr_free (&text);
    xxl_metrics_box_destroy (&box);
    xxl_labels_destroy (&labels);
    XXL_CHECK (labels == NULL);

    //  Many jobs through two labels: the two whose runs ended last stay,
    //  a job ending again moves to the back, every app stays known
    labels = xxl_labels_new (2, 0);
    for (int64_t job = 1; job <= 100000; job++)
        xxl_labels_run (labels, job, job % 2? "odd": "even", true, 200, job);
    xxl_labels_run (labels, 99999, NULL, true, 500, 100001);
    xxl_labels_run (labels, 7, "odd", true, 200, 100002);
    text = xxl_labels_render (labels);
    XXL_CHECK (strstr (text, "xxl_job_last_result{job=\"99999\",app=\"odd\"} 500\n"));
    XXL_CHECK (strstr (text, "xxl_job_last_result{job=\"7\",app=\"odd\"} 200\n"));
    XXL_CHECK (!strstr (text, "job=\"100000\""));
    XXL_CHECK (strstr (text, "xxl_app_runs_total{app=\"even\",code=\"200\"} 50000\n"));
    zstr_free (&text);
    XXL_CHECK (streq (xxl_labels_job_app (labels, 100000), "even"));
    XXL_CHECK (streq (xxl_labels_job_app (labels, 40001), "odd"));
    //  (a job whose slot another took since is not known: never another's app)
    XXL_CHECK (xxl_labels_job_app (labels, 12345) == NULL);
    xxl_labels_destroy (&labels);

    //  A run of a changed job whose app could not be looked up counts
    //  under the app last noted, but does not make it known again: once
    //  the job's series go, its app is unknown (a look-up follows)
    labels = xxl_labels_new (2, 0);
    xxl_labels_run (labels, 1, "was", true, 200, 1);
    xxl_labels_job_changed (labels, 1);
    xxl_labels_run (labels, 1, NULL, true, 200, 2);
    XXL_CHECK (xxl_labels_job_app (labels, 1) == NULL);
    xxl_labels_run (labels, 2, "other", true, 200, 3);
    xxl_labels_run (labels, 3, "other", true, 200, 4);     //  (job 1's series go)
    XXL_CHECK (xxl_labels_job_app (labels, 1) == NULL);
    XXL_CHECK (streq (xxl_labels_job_app (labels, 2), "other"));
    xxl_labels_destroy (&labels);

    //  xxl_triggers_total: a series for every trigger type a row can
    //  have (docs/protocol.md, the log object's triggerType), workflow
    //  nodes' and backfills' included; an unknown type has none
    const char *const types [] = { "MANUAL", "CRON", "RETRY", "PARENT", "API",
                                   "MISFIRE", "WORKFLOW", "BACKFILL" };
    xxl_metrics_t counted = { .wal_bytes = -1, .limit_used = -1, .limit_slots = -1 };
    for (size_t i = 0; i < sizeof types / sizeof types [0]; i++) {
        int index = xxl_metrics_trigger_index (types [i]);
        XXL_CHECK (index >= 0 && index < XXL_TRIGGER_TYPES);
        if (index >= 0 && index < XXL_TRIGGER_TYPES)
            counted.triggers [index] = 10 + i;
    }
    XXL_CHECK (xxl_metrics_trigger_index ("NOPE") == -1);
    XXL_CHECK (xxl_metrics_trigger_index (NULL) == -1);
    text = xxl_metrics_render (&counted);
    for (size_t i = 0; i < sizeof types / sizeof types [0]; i++) {
        snprintf (line, sizeof line, "\nxxl_triggers_total{type=\"%s\"} %zu\n", types [i], 10 + i);
        XXL_CHECK (strstr (text, line));
    }
    zstr_free (&text);
    return xxl_test_done ();
}
