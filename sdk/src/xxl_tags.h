/*  xxl_tags.h -- agent tags: "K=V" labels an agent says at REGISTER
    (xxl-agent --tag, agent/tags) and a job's agentTags, the tags an agent
    must all have to run it (DESIGN §13).  Internal to xxl.

    A tag is KEY=VALUE: KEY 1-64 and VALUE 1-128 bytes of letters, digits,
    '_', '-', '.', ':', '/'; keys are case-sensitive and unique in a set.
    A set is written "K=V,K=V" (spaces around items ignored, "" for none),
    at most XXL_TAGS_MAX tags.  Its canonical form has its tags sorted by
    key, no spaces: what the scheduler keeps and shows.
*/

#ifndef XXL_TAGS_H_INCLUDED
#define XXL_TAGS_H_INCLUDED

#include <stdbool.h>
#include <stddef.h>

#define XXL_TAGS_MAX            16      //  tags in a set at most
#define XXL_TAG_KEY_MAX         64      //  bytes of a key at most
#define XXL_TAG_VALUE_MAX       128     //  bytes of a value at most
//  Longest canonical set (every tag at its longest), and its buffer size
#define XXL_TAGS_TEXT_MAX       (XXL_TAGS_MAX * (XXL_TAG_KEY_MAX + 1 + XXL_TAG_VALUE_MAX + 1) - 1)
#define XXL_TAGS_BUF            (XXL_TAGS_TEXT_MAX + 1)

//  Checks one tag "K=V".  Returns 0, or -1 with the reason in why.
int
    xxl_tag_check (const char *tag, char *why, size_t whylen);

//  Parses a set "K=V,K=V" (NULL or "": no tags) and writes its canonical
//  form into out (outlen >= XXL_TAGS_BUF holds any valid set).  Returns
//  the number of tags, or -1 with the reason in why (a bad tag, a key
//  given twice, more than XXL_TAGS_MAX tags, out too small); out is then
//  "".
int
    xxl_tags_normalize (const char *text, char *out, size_t outlen,
                        char *why, size_t whylen);

//  True when every tag of want is in have (sets as written above; an
//  empty want matches any agent).  Neither need be canonical.
bool
    xxl_tags_match (const char *have, const char *want);

#endif
