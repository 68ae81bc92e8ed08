/*  xxl_api_group.c -- the client api's groups: GROUP_ADD, GROUP_LIST,
    GROUP_SHOW, GROUP_UPDATE, GROUP_RM.
*/

#include "xxl_api.h"

//  Reads the group fields present in the (judged) request onto group;
//  returns 0 or -1 with the reason latched in the message
static int
s_group_read (request_t *request, xxl_group_t *group)
{
    xxl_msg_t *msg = request->msg;
    const char *app = api_str (request, "appname");
    const char *title = api_str (request, "title");
    int64_t type = xxl_args_given (&request->args, msg, "addressType")? api_int (request, "addressType")
                                                        : group->address_type;
    const char *list = api_str (request, "addressList");
    if (app) {
        free (group->app_name);
        group->app_name = strdup (app);
    }
    if (title) {
        free (group->title);
        group->title = strdup (title);
    }
    group->address_type = (int) type;
    if (list && *list && api_addresses_check (msg, "addressList", list))
        return -1;
    if (list) {
        char **items;
        size_t count = engine_split_addresses (list, &items);
        size_t size = 1;
        for (size_t i = 0; i < count; i++)
            size += strlen (items [i]) + 1;
        char *joined = (char *) zmalloc (size);
        for (size_t i = 0; i < count; i++) {
            if (i)
                strcat (joined, ",");
            strcat (joined, items [i]);
        }
        engine_free_addresses (items, count);
        free (group->address_list);
        group->address_list = joined;
    }
    if (group->address_type == 1 && (!group->address_list || !*group->address_list))
        return xxl_msg_fail (msg, "a manual group (addressType 1) needs an addressList");
    return 0;
}

void
api_group_add (server_t *self, request_t *request)
{
    xxl_group_t group = { 0 };
    group.title = strdup ("");
    if (s_group_read (request, &group)) {
        engine_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
        xxl_group_free (&group);
        return;
    }
    xxl_group_t existing;
    if (xxl_store_group_find (self->store, group.app_name, &existing) == 0) {
        char text [512];
        snprintf (text, sizeof text, "group '%s' exists (id %" PRId64 ")",
                  group.app_name, existing.id);
        xxl_group_free (&existing);
        engine_reply (self, request, XXL_CONFLICT, text);
        xxl_group_free (&group);
        return;
    }
    group.update_time = engine_now ();
    int64_t id = xxl_store_group_add (self->store, &group);
    //  An automatic group's address list is the registry's, as XXL-JOB's
    //  registry monitor writes it
    if (id < 0 || (group.address_type == 0
                   && xxl_store_group_refresh_app (self->store, group.app_name,
                                                   group.update_time)))
        engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
    else
        engine_reply_id (self, request, id);
    xxl_group_free (&group);
}

//  Finds the group named by field `group` (app name or id); replies itself
//  when absent
static int
s_group_from_request (server_t *self, request_t *request, xxl_group_t *group)
{
    const char *key = api_str (request, "group");
    int rc = xxl_store_group_find (self->store, key, group);
    if (rc) {
        char text [512];
        snprintf (text, sizeof text, "group '%s' not found", key);
        engine_reply (self, request, rc < 0? XXL_FAILURE: XXL_NOT_FOUND, text);
        return -1;
    }
    return 0;
}


static void
s_encode_registry_list (server_t *self, const char *app)
{
    const char *const *addresses;
    size_t count = xxl_registry_addresses (self->registry, app, &addresses);
    xxl_enc_key (self->enc, "registryList");
    xxl_enc_array_begin (self->enc);
    for (size_t i = 0; i < count; i++)
        xxl_enc_str (self->enc, addresses [i]);
    xxl_enc_array_end (self->enc);
}

//  The groups of the apps of a key whose reads are scoped, by id, in
//  GROUP_LIST's row shape (xxl_store_group_encode_all's)
static void
s_encode_scoped_groups (server_t *self, const xxl_who_t *who)
{
    xxl_group_t *groups;
    size_t count = engine_who_groups (self, who, &groups);
    xxl_enc_array_begin (self->enc);
    for (size_t i = 0; i < count; i++) {
        xxl_group_t *group = &groups [i];
        xxl_enc_map_begin (self->enc);
        xxl_enc_kint (self->enc, "id", group->id);
        xxl_enc_kstr (self->enc, "appname", group->app_name);
        xxl_enc_kstr (self->enc, "title", group->title);
        xxl_enc_kint (self->enc, "addressType", group->address_type);
        xxl_enc_kstr (self->enc, "addressList", group->address_list? group->address_list: "");
        xxl_enc_kint (self->enc, "updateTime", group->update_time);
        xxl_enc_map_end (self->enc);
        xxl_group_free (group);
    }
    xxl_enc_array_end (self->enc);
    free (groups);
}

//  GROUP_LIST: every group, or for a key whose reads are scoped the groups
//  of its apps
void
api_group_list (server_t *self, request_t *request)
{
    engine_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_key (self->enc, "groups");
    if (engine_reads_scoped (request->who))
        s_encode_scoped_groups (self, request->who);
    else
        xxl_store_group_encode_all (self->store, self->enc);
    xxl_enc_map_end (self->enc);
    engine_reply_end (self, request);
}

void
api_group_show (server_t *self, request_t *request)
{
    xxl_group_t group;
    if (s_group_from_request (self, request, &group))
        return;
    engine_reply_begin (self, request);
    xxl_enc_map_begin (self->enc);
    xxl_enc_kint (self->enc, "id", group.id);
    xxl_enc_kstr (self->enc, "appname", group.app_name);
    xxl_enc_kstr (self->enc, "title", group.title);
    xxl_enc_kint (self->enc, "addressType", group.address_type);
    xxl_enc_kstr (self->enc, "addressList", group.address_list);
    xxl_enc_kint (self->enc, "updateTime", group.update_time);
    s_encode_registry_list (self, group.app_name);
    xxl_enc_map_end (self->enc);
    engine_reply_end (self, request);
    xxl_group_free (&group);
}

void
api_group_update (server_t *self, request_t *request)
{
    xxl_group_t group;
    if (s_group_from_request (self, request, &group))
        return;
    if (api_judge (self, request, 1)) {
        xxl_group_free (&group);
        return;
    }
    char *old_app = strdup (group.app_name);
    if (s_group_read (request, &group))
        engine_reply (self, request, XXL_BAD_REQUEST, xxl_msg_error (request->msg));
    else {
        xxl_group_t other;
        if (strneq (old_app, group.app_name)
        &&  xxl_store_group_find (self->store, group.app_name, &other) == 0) {
            xxl_group_free (&other);
            engine_reply (self, request, XXL_CONFLICT, "another group has that appname");
        }
        else {
            group.update_time = engine_now ();
            engine_job_changed (self, 0, XXL_CHANGED_GROUPS);
            if (xxl_store_group_update (self->store, &group)
            ||  (group.address_type == 0
                 && xxl_store_group_refresh_app (self->store, group.app_name,
                                                 group.update_time)))
                engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
            else
                engine_reply_id (self, request, group.id);
        }
    }
    free (old_app);
    xxl_group_free (&group);
}

void
api_group_rm (server_t *self, request_t *request)
{
    xxl_group_t group;
    if (s_group_from_request (self, request, &group))
        return;
    engine_job_changed (self, 0, XXL_CHANGED_GROUPS);
    int64_t jobs = xxl_store_group_jobs (self->store, group.id);
    if (jobs != 0) {
        char text [128];
        snprintf (text, sizeof text, "group %" PRId64 " still has %" PRId64 " job(s); remove them first",
                  group.id, jobs);
        engine_reply (self, request, XXL_CONFLICT, text);
    }
    else
    if (xxl_store_group_rm (self->store, group.id))
        engine_reply (self, request, XXL_FAILURE, xxl_store_error (self->store));
    else
        engine_reply_id (self, request, group.id);
    xxl_group_free (&group);
}
