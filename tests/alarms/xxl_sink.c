/*  xxl_sink.c -- the test sinks as a program, for the shell suites.

    Usage: xxl_sink http|smtp PORTFILE OUTFILE COUNT SECONDS [STATUS]
    Listens on 127.0.0.1 (ephemeral port, written to PORTFILE once ready),
    waits up to SECONDS for COUNT requests or mails, writes each received
    one to OUTFILE (method, path, content type, mail from, rcpt, body) and
    exits 0, or 1 when fewer came in time.  STATUS (http only; 200 by
    default) is the status of every answer; a non-2xx one carries
    SINK_HTTP_ERROR_BODY (sinks.h) as its body.
*/

#include "sinks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
main (int argc, char *argv [])
{
    if ((argc != 6 && argc != 7) || (strcmp (argv [1], "http") && strcmp (argv [1], "smtp"))) {
        fprintf (stderr, "usage: xxl_sink http|smtp PORTFILE OUTFILE COUNT SECONDS [STATUS]\n");
        return 2;
    }
    sink_t *sink = strcmp (argv [1], "http") == 0? sink_http_new (): sink_smtp_new ();
    if (!sink)
        return 1;
    sink_set_error_body (sink, SINK_HTTP_ERROR_BODY);
    if (argc == 7)
        sink_set_mode (sink, SINK_HTTP_STATUS, atoi (argv [6]));
    char tmp [4096];
    snprintf (tmp, sizeof tmp, "%s.tmp", argv [2]);
    FILE *file = fopen (tmp, "w");
    if (!file)
        return 1;
    fprintf (file, "%d\n", sink_port (sink));
    fclose (file);
    rename (tmp, argv [2]);
    int count = atoi (argv [4]);
    int seconds = atoi (argv [5]);
    FILE *out = fopen (argv [3], "w");
    int got = 0;
    for (int i = 1; out && i <= count; i++) {
        sink_record_t record;
        if (sink_wait (sink, i, seconds * 1000, &record))
            break;
        fprintf (out, "method: %s\npath: %s\ncontent-type: %s\nmail-from: %s\nrcpt: %s\n\n%s\n",
                 record.method, record.path, record.content_type, record.mail_from,
                 record.rcpt, record.body);
        fflush (out);
        got++;
    }
    if (out)
        fclose (out);
    sink_destroy (&sink);
    return got == count? 0: 1;
}
