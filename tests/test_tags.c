/*  test_tags.c -- agent tags (sdk/src/xxl_tags.h): one tag's check, a
    set's canonical form and its refusals (charset, lengths, count, keys
    twice, empty items), matching a job's tags against an agent's; and the
    router filter (runs/xxl_run_rules.h, xxl_route_tagged): only the
    agents with all the job's tags, in list order, whatever the route.
*/

#include <string.h>
#include "xxl_tags.h"
#include "xxl_run_rules.h"
#include "xxl_test.h"

//  A fake registry: address → its tags
typedef struct {
    const char *address;
    const char *tags;
} agent_t;

static const agent_t s_agents [] = {
    { "a:1", "zone=eu,gpu=true" },
    { "b:2", "zone=us" },
    { "c:3", "" },
    { "d:4", "gpu=true,zone=eu,disk=ssd" },
};

static const char *
s_tags_of (void *ctx, const char *address)
{
    (void) ctx;
    for (size_t i = 0; i < sizeof s_agents / sizeof s_agents [0]; i++)
        if (strcmp (s_agents [i].address, address) == 0)
            return s_agents [i].tags;
    return "";
}

//  The canonical form of text, or "ERR: why"
static const char *
s_norm (const char *text)
{
    static char out [XXL_TAGS_BUF + 300];
    char why [300];
    if (xxl_tags_normalize (text, out, XXL_TAGS_BUF, why, sizeof why) < 0)
        snprintf (out, sizeof out, "ERR: %s", why);
    return out;
}

int
main (void)
{
    char why [300];
    //  One tag
    XXL_CHECK (xxl_tag_check ("zone=eu-west-1", why, sizeof why) == 0);
    XXL_CHECK (xxl_tag_check ("k8s.io/arch=amd64:v2", why, sizeof why) == 0);
    XXL_CHECK (xxl_tag_check ("zone", why, sizeof why) == -1);
    XXL_CHECK_HAS (why, "must be KEY=VALUE");
    XXL_CHECK (xxl_tag_check ("=eu", why, sizeof why) == -1);
    XXL_CHECK_HAS (why, "KEY must be 1-64 and VALUE 1-128 bytes");
    XXL_CHECK (xxl_tag_check ("zone=", why, sizeof why) == -1);
    XXL_CHECK (xxl_tag_check ("zone=e u", why, sizeof why) == -1);
    XXL_CHECK_HAS (why, "only letters, digits");
    XXL_CHECK (xxl_tag_check ("zone=eu=1", why, sizeof why) == -1);
    XXL_CHECK (xxl_tag_check ("zöne=eu", why, sizeof why) == -1);
    char key [80], value [140], tag [240];
    memset (key, 'k', 64); key [64] = 0;
    memset (value, 'v', 128); value [128] = 0;
    snprintf (tag, sizeof tag, "%s=%s", key, value);
    XXL_CHECK (xxl_tag_check (tag, why, sizeof why) == 0);
    snprintf (tag, sizeof tag, "%sk=%s", key, value);
    XXL_CHECK (xxl_tag_check (tag, why, sizeof why) == -1);
    snprintf (tag, sizeof tag, "%s=%sv", key, value);
    XXL_CHECK (xxl_tag_check (tag, why, sizeof why) == -1);

    //  Sets: sorted by key, spaces dropped, "" none
    XXL_CHECK_STR (s_norm (""), "");
    XXL_CHECK_STR (s_norm (NULL), "");
    XXL_CHECK_STR (s_norm ("  "), "");
    XXL_CHECK_STR (s_norm ("zone=eu"), "zone=eu");
    XXL_CHECK_STR (s_norm (" zone=eu , gpu=true,disk=ssd "), "disk=ssd,gpu=true,zone=eu");
    XXL_CHECK_STR (s_norm ("b=1,B=2,a=3"), "B=2,a=3,b=1");
    XXL_CHECK_HAS (s_norm ("zone=eu,zone=us"), "ERR: tag key 'zone' given twice");
    XXL_CHECK_HAS (s_norm ("zone=eu,,gpu=1"), "ERR: tags 'zone=eu,,gpu=1': an empty tag");
    XXL_CHECK_HAS (s_norm ("zone=eu,"), "an empty tag");
    XXL_CHECK_HAS (s_norm (",zone=eu"), "an empty tag");
    XXL_CHECK_HAS (s_norm ("zone=eu,gpu"), "ERR: tag 'gpu' must be KEY=VALUE");
    //  A refused tag is echoed escaped: no control byte reaches a terminal
    XXL_CHECK_HAS (s_norm ("zone=\x1b[31meu"), "ERR: tag 'zone=\\x1b[31meu': KEY and VALUE");
    XXL_CHECK_HAS (s_norm ("g\npu"), "ERR: tag 'g\\npu' must be KEY=VALUE");
    XXL_CHECK_HAS (s_norm ("a=1,,\x07"), "ERR: tags 'a=1,,\\x07': an empty tag");
    //  Count: 16 at most
    char many [400] = "";
    for (int i = 0; i < 16; i++)
        snprintf (many + strlen (many), sizeof many - strlen (many), "%sk%02d=v", i? ",": "", i);
    XXL_CHECK (xxl_tags_normalize (many, tag, sizeof tag, why, sizeof why) == 16);
    strcat (many, ",k16=v");
    XXL_CHECK (xxl_tags_normalize (many, tag, sizeof tag, why, sizeof why) == -1);
    XXL_CHECK_STR (why, "more than 16 tags");
    XXL_CHECK_STR (tag, "");
    //  The longest set fits XXL_TAGS_BUF; a smaller buffer is refused
    char longest [XXL_TAGS_BUF + 16] = "", out [XXL_TAGS_BUF];
    for (int i = 0; i < 16; i++) {
        memset (key, 'a' + i, 64);
        snprintf (longest + strlen (longest), sizeof longest - strlen (longest), "%s%s=%s",
                  i? ",": "", key, value);
    }
    XXL_CHECK_INT (strlen (longest), XXL_TAGS_TEXT_MAX);
    XXL_CHECK (xxl_tags_normalize (longest, out, sizeof out, why, sizeof why) == 16);
    XXL_CHECK_STR (out, longest);
    XXL_CHECK (xxl_tags_normalize (longest, out, 100, why, sizeof why) == -1);
    XXL_CHECK_HAS (why, "tags longer than 99 bytes");

    //  Match: every wanted tag, key and value, case-sensitive
    XXL_CHECK (xxl_tags_match ("zone=eu,gpu=true", ""));
    XXL_CHECK (xxl_tags_match ("", NULL));
    XXL_CHECK (xxl_tags_match ("zone=eu,gpu=true", "gpu=true"));
    XXL_CHECK (xxl_tags_match ("zone=eu,gpu=true", "zone=eu, gpu=true"));
    XXL_CHECK (!xxl_tags_match ("zone=eu,gpu=true", "zone=us"));
    XXL_CHECK (!xxl_tags_match ("zone=eu,gpu=true", "zone=EU"));
    XXL_CHECK (!xxl_tags_match ("zone=eu", "zone=eu,gpu=true"));
    XXL_CHECK (!xxl_tags_match ("", "zone=eu"));
    XXL_CHECK (!xxl_tags_match (NULL, "zone=eu"));
    XXL_CHECK (!xxl_tags_match ("zone=eur", "zone=eu"));
    XXL_CHECK (!xxl_tags_match ("zone=eu", "zon=eu"));
    XXL_CHECK (!xxl_tags_match ("zone=eu", "zone=eu,,"));     //  (a bad set: nothing)

    //  The router filter: the agents with all the job's tags, in order
    const char *const list [] = { "a:1", "b:2", "c:3", "d:4" };
    const char *kept [4];
    XXL_CHECK_INT (xxl_route_tagged ("", list, 4, s_tags_of, NULL, kept), 4);
    XXL_CHECK_STR (kept [3], "d:4");
    XXL_CHECK_INT (xxl_route_tagged (NULL, list, 4, s_tags_of, NULL, kept), 4);
    XXL_CHECK_INT (xxl_route_tagged ("zone=eu", list, 4, s_tags_of, NULL, kept), 2);
    XXL_CHECK_STR (kept [0], "a:1");
    XXL_CHECK_STR (kept [1], "d:4");
    XXL_CHECK_INT (xxl_route_tagged ("disk=ssd,zone=eu", list, 4, s_tags_of, NULL, kept), 1);
    XXL_CHECK_STR (kept [0], "d:4");
    XXL_CHECK_INT (xxl_route_tagged ("zone=us", list, 4, s_tags_of, NULL, kept), 1);
    XXL_CHECK_STR (kept [0], "b:2");
    XXL_CHECK_INT (xxl_route_tagged ("zone=ap", list, 4, s_tags_of, NULL, kept), 0);
    XXL_CHECK_INT (xxl_route_tagged ("zone=eu", list, 0, s_tags_of, NULL, kept), 0);
    return xxl_test_done ();
}
