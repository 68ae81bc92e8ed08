/*  xxl_lease.h -- the shares of the jobs this scheduler plans.

    Owns this scheduler's node name, the shares it holds with their epochs,
    and until when they are sure (monotonic ms), and the store's clock lead.
    A lease round takes and renews shares in the store (on the store's
    clock); settle keeps what a turn took only once it committed.
    MUST: fence every write of a planned row by the held epochs.
    MUST NOT: plan or send: the planner asks engine_lease_holds.
    Called by: the actor (rounds, settle), the planner (holds, fence).
*/

#ifndef XXL_LEASE_H_INCLUDED
#define XXL_LEASE_H_INCLUDED

#include "xxl_engine_base.h"
#include "xxl_lease_rules.h"

typedef struct {
    char node [XXL_STORE_NODE_MAX];     //  its name among the schedulers of the store
    uint64_t held;                      //  shares held, bit s for share s
    int64_t epochs [XXL_STORE_SHARES];  //  each held share's epoch
    int64_t lease_until;                //  mono ms: the held leases are sure until then
    int64_t store_ahead;                //  the store's clock - ours, ms, as last read
    int64_t next_lease;                 //  monotonic ms of the next lease round
    int64_t lease_rounds;               //  rounds done (0: the start's is next)
    uint64_t lease_taken;               //  shares taken in this turn (not committed yet)
    int64_t lease_until_committed;      //  lease_until as of the last commit
    xxl_lease_read_t last_read;         //  the last round's read of the store's clock
    int64_t back_unjudged;              //  ms the store's clock stepped back, seen by
                                        //  rounds that could not read the leases since
    int64_t no_take_until;              //  mono ms: others' shares are not taken before
    xxl_lease_seen_t seen [XXL_STORE_SHARES];  //  the rows as the last round read them
    bool deaf;                          //  hears no agent while another does (xxl_lease_deaf)
} leases_t;

//  The shares held (bit s for share s), this scheduler's name among the
//  schedulers of the store, and the store's clock lead (ms)
uint64_t engine_lease_held (server_t *self);
const char *engine_lease_node (server_t *self);
int64_t engine_lease_store_ahead (server_t *self);
//  Monotonic ms of the last round's read of the store's clock (0: none)
int64_t engine_lease_read_at (server_t *self);
//  Deaf to the store's agents (xxl_lease_deaf, judged by the registry's
//  check): the next round gives every share back; routes hold what they
//  would fail for an empty address list
void engine_lease_set_deaf (server_t *self, bool deaf);
bool engine_lease_deaf (server_t *self);

//  xxl_lease.c
uint64_t engine_lease_round (server_t *self);
void engine_lease_check (server_t *self);
uint64_t engine_lease_fence (server_t *self);
void engine_lease_settle (server_t *self, bool committed);
bool engine_lease_holds (server_t *self, int64_t job_id);
uint64_t engine_share_bit (int64_t job_id);
void engine_recover_resends (server_t *self);


#endif
