/*  test_ctl_print.c -- xxl-ctl's output (outside findings #31, items 11
    and 15): table columns align by display width, CJK taking two columns;
    a cell cut to its column budget ends between characters; fire times
    show in the zone asked for, with its offset and name, whatever the
    machine's zone; `cron next --json` keeps its epoch ms.
*/

#include "xxl_ctl_cmd.h"
#include "xxl_ctl_print.h"
#include "xxl_test.h"
#include "xxl_test_ctl.h"

#include <czmq.h>

//  The display column at which needle starts in line (by xxl_ctl_width of
//  the text before it), or -1
static long
s_column (const char *line, const char *needle)
{
    const char *at = strstr (line, needle);
    if (!at)
        return -1;
    char *before = strndup (line, (size_t) (at - line));
    long column = (long) xxl_ctl_width (before);
    free (before);
    return column;
}

//  Runs xxl-ctl with the words of line (split at '|'); its out in *text
//  (caller frees)
static int
s_ctl (const char *line, char **text)
{
    return xxl_test_ctl (line, "|", NULL, text);
}

int
main (void)
{
    //  The machine's zone must not matter
    setenv ("TZ", "America/Los_Angeles", 1);
    tzset ();

    //  Display width: ASCII 1, CJK and fullwidth 2, combining marks 0,
    //  halfwidth kana 1, a stray byte 1
    XXL_CHECK (xxl_ctl_width ("abc") == 3);
    XXL_CHECK (xxl_ctl_width ("任务") == 4);
    XXL_CHECK (xxl_ctl_width ("日报-daily") == 10);
    XXL_CHECK (xxl_ctl_width ("한국어") == 6);
    XXL_CHECK (xxl_ctl_width ("かな") == 4);
    XXL_CHECK (xxl_ctl_width ("ＡＢ") == 4);
    XXL_CHECK (xxl_ctl_width ("ｶﾅ") == 2);
    XXL_CHECK (xxl_ctl_width ("e\xCC\x81") == 1);       //  e + U+0301
    XXL_CHECK (xxl_ctl_width ("\xF0\x9F\x98\x80") == 2);    //  U+1F600
    XXL_CHECK (xxl_ctl_width ("a\xFF" "b") == 3);
    XXL_CHECK (xxl_ctl_width ("\xE4\xBB") == 2);        //  a cut sequence: its bytes
    XXL_CHECK (xxl_ctl_width ("") == 0);

    //  A table whose cells mix CJK and ASCII: every column starts at the
    //  same display column on every row
    ctl_table_t table;
    const char *headers [] = { "ID", "DESC", "HANDLER" };
    xxl_ctl_table_init (&table, 3, headers);
    const char *rows [][3] = {
        { "1", "每日报表任务", "reportHandler" },
        { "22", "nightly", "demoJobHandler" },
        { "333", "数据同步 sync", "syncHandler" }
    };
    for (size_t r = 0; r < 3; r++)
        for (size_t c = 0; c < 3; c++)
            xxl_ctl_table_add (&table, strdup (rows [r][c]));
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream (&text, &size);
    xxl_ctl_table_print (&table, out, NULL);
    fclose (out);
    char *save = NULL;
    char *line = strtok_r (text, "\n", &save);
    XXL_CHECK (line && s_column (line, "DESC") == 5 && s_column (line, "HANDLER") == 20);
    for (size_t r = 0; r < 3; r++) {
        line = strtok_r (NULL, "\n", &save);
        XXL_CHECK (line && s_column (line, rows [r][1]) == 5);
        XXL_CHECK (line && s_column (line, rows [r][2]) == 20);
    }
    free (text);

    //  A cut keeps whole characters within max columns, "..." included
    char cell [64];
    snprintf (cell, sizeof cell, "任务任务任务");
    XXL_CHECK (streq (xxl_ctl_first_line (cell, 8), "任务..."));
    snprintf (cell, sizeof cell, "ab任务任务");
    XXL_CHECK (streq (xxl_ctl_first_line (cell, 8), "ab任..."));
    snprintf (cell, sizeof cell, "任务任务");
    XXL_CHECK (streq (xxl_ctl_first_line (cell, 8), "任务任务"));
    snprintf (cell, sizeof cell, "abcdefghijk");
    XXL_CHECK (streq (xxl_ctl_first_line (cell, 8), "abcde..."));

    //  Fire times in the zone, labelled: 2026-11-29T02:00:00Z
    char buf [128];
    int64_t ms = INT64_C (1795917600000);
    XXL_CHECK (xxl_ctl_zone_time (ms, "Asia/Shanghai", buf, sizeof buf) == 0);
    XXL_CHECK (streq (buf, "2026-11-29 10:00:00 +08:00 Asia/Shanghai"));
    XXL_CHECK (xxl_ctl_zone_time (ms, NULL, buf, sizeof buf) == 0);
    XXL_CHECK (streq (buf, "2026-11-29 02:00:00 +00:00 UTC"));
    XXL_CHECK (xxl_ctl_zone_time (ms, "", buf, sizeof buf) == 0);
    XXL_CHECK (streq (buf, "2026-11-29 02:00:00 +00:00 UTC"));
    XXL_CHECK (xxl_ctl_zone_time (ms, "America/St_Johns", buf, sizeof buf) == 0);
    XXL_CHECK (streq (buf, "2026-11-28 22:30:00 -03:30 America/St_Johns"));
    XXL_CHECK (xxl_ctl_zone_time (ms, "Nowhere/Atlantis", buf, sizeof buf) == -1);
    XXL_CHECK (streq (buf, "2026-11-29 02:00:00 +00:00 UTC"));

    //  cron next: in --tz's zone, labelled; --json keeps epoch ms
    text = NULL;
    XXL_CHECK (s_ctl ("cron|next|0 0 10 * * ?|-n|2|--tz|Asia/Shanghai|--from|1795917600000",
                      &text) == XXL_CTL_OK);
    XXL_CHECK (text && streq (text, "2026-11-30 10:00:00 +08:00 Asia/Shanghai\n"
                                    "2026-12-01 10:00:00 +08:00 Asia/Shanghai\n"));
    free (text);
    text = NULL;
    XXL_CHECK (s_ctl ("cron|next|0 0 10 * * ?|-n|1|--from|1795917600000", &text) == XXL_CTL_OK);
    XXL_CHECK (text && streq (text, "2026-11-29 10:00:00 +00:00 UTC\n"));
    free (text);
    text = NULL;
    XXL_CHECK (s_ctl ("--json|cron|next|0 0 10 * * ?|-n|1|--tz|Asia/Shanghai"
                      "|--from|1795917600000", &text) == XXL_CTL_OK);
    XXL_CHECK (text && streq (text, "{\"next\":[1796004000000]}\n"));
    free (text);

    //  --get PATH: a value of the document; nothing there is null; an
    //  array or object compact JSON; a bad path a usage error
    const char *gets [][2] = {
        { ".next[0]", "1795946400000\n" }, { "next[-1]", "1795946400000\n" },
        { ".next", "[1795946400000]\n" }, { ".next[1]", "null\n" },
        { ".next[-2]", "null\n" }, { ".nothing", "null\n" }, { ".next.x", "null\n" },
        { ".next[0].x", "null\n" }
    };
    for (size_t i = 0; i < sizeof gets / sizeof gets [0]; i++) {
        char line [160];
        snprintf (line, sizeof line, "--get|%s|cron|next|0 0 10 * * ?|-n|1|--from|1795917600000",
                  gets [i][0]);
        text = NULL;
        XXL_CHECK (s_ctl (line, &text) == XXL_CTL_OK);
        XXL_CHECK (text && streq (text, gets [i][1]));
        free (text);
    }
    const char *good [] = { "id", ".id", ".logIds[0]", ".a.b[-1].c", "[2]", ".x[123456789]" };
    for (size_t i = 0; i < sizeof good / sizeof good [0]; i++)
        XXL_CHECK (xxl_ctl_get_path_ok (good [i]));
    const char *bad [] = { "", ".", "..id", "a.", "a[", "a[]", "a[x]", "a[1", "a]",
                           "a[-]", ".x[1234567890]", "a[1]b", "a[1]." };
    for (size_t i = 0; i < sizeof bad / sizeof bad [0]; i++)
        XXL_CHECK (!xxl_ctl_get_path_ok (bad [i]));
    text = NULL;
    XXL_CHECK (s_ctl ("--get|a[x]|cron|next|0 0 10 * * ?", &text) == XXL_CTL_USAGE);
    free (text);
    return xxl_test_done ();
}
