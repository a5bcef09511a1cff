/* Pieces shared by the ant colonies' construction kernels, kernels_cl/aco.cl (MAX-MIN Ant
 * System, Skinderowicz 2020) and kernels_cl/acs.cl (Ant Colony System, Skinderowicz
 * 2016): one work-group per ant, its tabu in local memory, Philox draws keyed by (ant,
 * iteration, step, slot) and streams started from Philox by (ant, iteration, stream),
 * and the work-group minimum reductions that pick a next node.
 *   -D TABU=<TABU_LC|TABU_CT|TABU_BT>   list compression, compact tabu, bitmask
 *                                       (Skinderowicz 2020, section 4.1, Table 1)
 *   -D CL=<cl>                          candidate list length (0: none)
 */
#ifndef TSPCL_ANTS_H
#define TSPCL_ANTS_H
#include "tour.h"

/* The host passes the tabu and selection codes TABU_LC, TABU_CT, TABU_BT, SELECT_RWM,
 * SELECT_WRS (tspcl/solvers/mmas.py ant_defines): a missing one would read as 0 in #if. */
#if !defined(TABU_LC) || !defined(TABU_CT) || !defined(TABU_BT) || !defined(SELECT_RWM) \
    || !defined(SELECT_WRS) || !defined(TABU)
#error "the host passes TABU, SELECT and their codes TABU_LC, TABU_CT, TABU_BT, SELECT_RWM, SELECT_WRS (mmas.py ant_defines)"
#endif

#ifndef CL
#define CL 0
#endif

#define NONE 0xffffffffu  /* sentinel: no node */

/* The Philox draws of an ant: counter (ant, iteration, step, slot) (common.h rng_philox). */
inline uint4 ant_draws(const rng_key_t key, const uint ant, const uint iteration,
                       const uint step, const uint slot)
{
    return rng_philox(key, ant, iteration, step, slot);
}

/* A uniform float in (0, 1), (m + 1/2) / 2^23 for the draw's top 23 bits m: never 0, so
 * log() is finite, and never 1, whose log would be 0 whatever a WRS slot's weight (an
 * earlier (m + 1) / 2^24 gave 1 once in 2^24 draws).  The bits go straight into a float
 * in [1, 2) and 1 - 2^-24 comes off it, exactly (Sterbenz): no int-to-float conversion,
 * which made MMAS's WRS without lists 2-4 % slower (H100, docs/notebook/mmas.md). */
inline float unit_open0(const uint draw)
{
    return as_float(0x3f800000u | (draw >> 9)) - (1.0f - 0x1p-24f);
}

/* ---- tabu structures (section 4.1, Table 1) --------------------------------------------
 * tabu_candidate(i): an unvisited node or NONE, for i below the entries to scan (LC and
 * CT: the unvisited count L, which the kernels know from the step, the paper's length();
 * BT: n); tabu_visited(v); tabu_mark(v) by one work-item. */
#if TABU == TABU_LC
/* List compression: unvisited[0..L) the nodes to visit, indices[v] the position of v. */
#define TABU_DECL __local ushort *unvisited, __local ushort *indices, __local uint *l_count
#define TABU_ARGS unvisited, indices, l_count
inline void tabu_init(TABU_DECL, const uint n)
{
    for (uint i = get_local_id(0); i < n; i += get_local_size(0)) {
        unvisited[i] = (ushort)i;
        indices[i] = (ushort)i;
    }
    if (get_local_id(0) == 0)
        *l_count = n;
}
inline uint tabu_candidate(TABU_DECL, const uint n, const uint i) { return unvisited[i]; }
inline int tabu_visited(TABU_DECL, const uint n, const uint v) { return indices[v] >= *l_count; }
inline void tabu_mark(TABU_DECL, const uint n, const uint v)
{
    const uint last = *l_count - 1, i = indices[v], t = unvisited[last];
    unvisited[i] = (ushort)t;
    indices[t] = (ushort)i;
    unvisited[last] = (ushort)v;
    indices[v] = (ushort)last;
    *l_count = last;
}
#elif TABU == TABU_CT
/* Compact tabu: entries[0..L) the nodes to visit; entries[v] for v >= L the position of
 * a relocated unvisited node v, or n once v is visited.  A node at index j is never
 * smaller than j, so v is visited exactly when entries[v] > v. */
#define TABU_DECL __local ushort *entries, __local uint *l_count
#define TABU_ARGS entries, l_count
inline void tabu_init(TABU_DECL, const uint n)
{
    for (uint i = get_local_id(0); i < n; i += get_local_size(0))
        entries[i] = (ushort)i;
    if (get_local_id(0) == 0)
        *l_count = n;
}
inline uint tabu_candidate(TABU_DECL, const uint n, const uint i) { return entries[i]; }
inline int tabu_visited(TABU_DECL, const uint n, const uint v) { return entries[v] > v; }
/* Mark v, which sits at entries[i] of the L unvisited: a caller that knows i (aco.cl's
 * reservoir draw) saves tabu_mark's lookup. */
inline void tabu_mark_at(TABU_DECL, const uint n, const uint v, const uint i, const uint L)
{
    const uint t = entries[L - 1];  /* the list's last node */
    if (i != L - 1) {
        entries[i] = (ushort)t;   /* t moves down into v's place */
        entries[t] = (ushort)i;   /* t >= L - 1: its slot is in the right part now */
    } else {
        entries[L - 1] = (ushort)n;  /* slot L-1 belongs to node L-1, visited */
    }
    if (v >= L - 1)
        entries[v] = (ushort)n;   /* v's own slot is in the right part: mark it */
    *l_count = L - 1;
}
inline void tabu_mark(TABU_DECL, const uint n, const uint v)
{
    const uint L = *l_count;
    tabu_mark_at(TABU_ARGS, n, v, (v < L && entries[v] == v) ? v : entries[v], L);
}
#else
/* Bitmask: bit v set when v is visited; every node is a candidate slot. */
#define TABU_DECL __local uint *bits
#define TABU_ARGS bits
inline void tabu_init(TABU_DECL, const uint n)
{
    for (uint i = get_local_id(0); i < (n + 31) / 32; i += get_local_size(0))
        bits[i] = 0u;
}
inline int tabu_visited(TABU_DECL, const uint n, const uint v) { return (bits[v >> 5] >> (v & 31)) & 1u; }
inline uint tabu_candidate(TABU_DECL, const uint n, const uint i)
{
    return tabu_visited(TABU_ARGS, n, i) ? NONE : i;
}
inline void tabu_mark(TABU_DECL, const uint n, const uint v) { bits[v >> 5] |= 1u << (v & 31); }
#endif

/* The Philox draws of a list slot: counter (ant, iteration, step / 4, LIST_PHASE | slot),
 * list_draw() taking its four words for four steps (kept between steps): a quarter of
 * the Philox work.  The streams' starts: (ant, iteration, 0, STREAM_PHASE | stream). */
#define LIST_PHASE 0x80000000u
#define STREAM_PHASE 0x40000000u

/* Stream lid of an ant's tour (common.h rng_stream_t), from the Philox draw (ant,
 * iteration, 0, STREAM_PHASE | lid). */
inline rng_stream_t ant_stream(const rng_key_t key, const uint ant, const uint iteration,
                               const uint lid)
{
    return ant_draws(key, ant, iteration, 0u, STREAM_PHASE | lid);
}

/* A selection's local scratch (aco.cl's RWM: 3p floats and a uint; group_min_entry and
 * group_least_node: two accumulators of two uints, then list_least: two of two uints,
 * then list_winner: CL nodes, then group_least_node: p nodes), the counts of
 * group_min_entry (and group_least_node) and list_least calls so far, the work-item's
 * list-phase draw for its first slot, and its stream (aco.cl sets it: ant_stream());
 * select_init() must be followed by a barrier. */
typedef struct {
    __local void *scratch;
    uint calls, list_calls;
    uint4 list_words;   /* the draw of block list_block for slot get_local_id(0) */
    uint list_block;
    rng_stream_t stream;
} select_state_t;

inline select_state_t select_init(__local void *scratch)
{
    if (get_local_id(0) < 8)
        ((__local uint *)scratch)[get_local_id(0)] = ~0u;
    select_state_t st = {scratch, 0u, 0u, (uint4)(0u), ~0u, (rng_stream_t)(0u)};
    return st;
}

/* A reduction's accumulators: two pairs of uints from word `base` of the scratch, taken
 * in turn by its calls (*calls counts them).  A call uses `acc` and resets `other` after
 * its first barrier (reset_other()), when every work-item has read it last, so the next
 * call finds it reset. */
typedef struct {
    volatile __local uint *acc, *other;
} acc_pair_t;

inline acc_pair_t next_accumulators(const select_state_t *st, const uint base, uint *calls)
{
    volatile __local uint *pairs = (volatile __local uint *)st->scratch + base;
    const acc_pair_t a = {pairs + 2 * (*calls & 1), pairs + 2 * (~*calls & 1)};
    (*calls)++;
    return a;
}

inline void reset_other(const acc_pair_t a)
{
    if (get_local_id(0) == 0)
        a.other[0] = a.other[1] = ~0u;
}

inline uint word_of(const uint4 w, const uint k)
{
    return k == 0 ? w.x : k == 1 ? w.y : k == 2 ? w.z : w.w;
}

/* The list-phase word for slot i at `step`: word step % 4 of the draw (ant, iteration,
 * step / 4, LIST_PHASE | i); slot get_local_id(0) reuses its draw for four steps. */
inline uint list_draw(select_state_t *st, const rng_key_t key, const uint ant,
                      const uint iteration, const uint step, const uint i)
{
    if (i != get_local_id(0))
        return word_of(ant_draws(key, ant, iteration, step >> 2, LIST_PHASE | i), step & 3);
    if (st->list_block != step >> 2) {
        st->list_words = ant_draws(key, ant, iteration, step >> 2, LIST_PHASE | i);
        st->list_block = step >> 2;
    }
    return word_of(st->list_words, step & 3);
}

#if CL > 0
/* A list slot's word in the work-group minimum (beyond the papers, which reduce (value,
 * node) pairs): the bits of a non-negative float value with their low LIST_SLOT_BITS
 * bits replaced by the slot, so that one 32-bit atomic min finds the slot of the least
 * value.  Values within 2^(LIST_SLOT_BITS - 23) of each other (relative) tie and the
 * lower slot takes them; ~0u is no value. */
#define LIST_SLOT_BITS (CL > 1 ? 32 - clz(CL - 1) : 0)
#define LIST_SLOT_MASK ((1u << LIST_SLOT_BITS) - 1u)
inline uint list_slot_word(const float value, const uint slot)
{
    return (as_uint(value) & ~LIST_SLOT_MASK) | slot;
}

/* The least of each of two words over the work-group (~0u where no work-item offered
 * one): a local atomic min for each and one barrier (group_min_entry needs two).  The
 * accumulators alternate like the full phase's, apart from them, so that a full
 * selection right after a list one finds its own accumulators reset. */
inline uint2 list_least(select_state_t *st, const uint a, const uint b)
{
    const acc_pair_t pair = next_accumulators(st, 4, &st->list_calls);
    if (a != ~0u)
        atomic_min(pair.acc, a);
    if (b != ~0u)
        atomic_min(pair.acc + 1, b);
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint2 least = (uint2)(pair.acc[0], pair.acc[1]);
    reset_other(pair);
    return least;
}

/* The list phase's nodes by slot, in local memory: list_offer() before list_winner(). */
inline __local uint *list_nodes(const select_state_t *st) { return (__local uint *)st->scratch + 8; }
inline void list_offer(select_state_t *st, const uint slot, const uint node) { list_nodes(st)[slot] = node; }

/* The list phase's winner, the node offered for the least word's slot (NONE when every
 * work-item offered ~0u): read from local memory, not from the list again (which was an
 * L1 round trip after the barrier: pr1002 wrs-bt cl 32 0.592 -> 0.575 ms, H100).  The
 * next step offers its nodes only after the end-of-step barrier. */
inline uint list_winner(select_state_t *st, const uint word)
{
    const uint least = list_least(st, word, ~0u).x;
    return least == ~0u ? NONE : list_nodes(st)[least & LIST_SLOT_MASK];
}
#endif

/* The least entry over the work-group, every work-item gets it: a local atomic min on
 * the high words, then one on the low words of the entries that hold the least high word
 * (order-free, so the same for any schedule).  Two barriers instead of a tree's log2(p):
 * st->calls alternates two accumulators, and the one not in use is reset between the
 * barriers, after every work-item has read it last. */
inline ulong group_min_entry(select_state_t *st, const ulong entry)
{
    const acc_pair_t pair = next_accumulators(st, 0, &st->calls);
    const uint high = (uint)(entry >> 32);
    if (entry != ULONG_MAX)
        atomic_min(pair.acc, high);
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint least = pair.acc[0];
    reset_other(pair);
    if (entry != ULONG_MAX && high == least)
        atomic_min(pair.acc + 1, (uint)entry);
    barrier(CLK_LOCAL_MEM_FENCE);
    return least == ~0u ? ULONG_MAX : ((ulong)least << 32) | pair.acc[1];
}

/* The node offered with the least value over the work-group (values non-negative floats,
 * INFINITY offers nothing) and the work-item that offered it, in one barrier instead of
 * group_min_entry's two: each work-item puts its node in local memory, and one atomic
 * min takes the value's bits with their low log2(p) bits replaced by the work-item's id
 * (list_slot_word's trick, work-items for slots).  Values within 2^(log2(p) - 23) of
 * each other (relative) tie, and the lower work-item takes them.  (NONE, p) when no
 * work-item offered a value.  Accumulators as group_min_entry's; p a power of two. */
inline uint2 group_least_node(select_state_t *st, const float value, const uint node)
{
    const uint lid = get_local_id(0), p = get_local_size(0), id_mask = p - 1;
    const acc_pair_t pair = next_accumulators(st, 0, &st->calls);
    __local uint *nodes = (__local uint *)st->scratch + 8 + CL;
    if (value < INFINITY) {
        nodes[lid] = node;
        atomic_min(pair.acc, (as_uint(value) & ~id_mask) | lid);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint least = pair.acc[0];
    reset_other(pair);
    return least == ~0u ? (uint2)(NONE, p) : (uint2)(nodes[least & id_mask], least & id_mask);
}

#endif
