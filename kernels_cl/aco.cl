/* Ant colony solution construction and the MAX-MIN Ant System's pheromone kernels
 * (Skinderowicz 2020, ../shared/papers/skinderowicz2020-gpu-mmas.txt).
 *
 * aco_construct: one work-group per ant (section 4.4, the data-parallel scheme); the
 * ant's tabu lives in local memory (section 4.1) and the next node is drawn by the whole
 * group (section 4.2), first among the unvisited cities of the current city's candidate
 * list (section 4.3), over every unvisited city when there is no list.  When the list is
 * used up, FALLBACK_BEST=1 takes the unvisited city of the largest weight (ACOTSP's
 * choose_best_next [43], and the authors' published code); FALLBACK_BEST=0 draws among
 * every unvisited city.  The paper does not say which.  Build with
 *   -D TABU=<TABU_LC|TABU_CT|TABU_BT>   list compression, compact tabu, bitmask (Table 1)
 *   -D SELECT=<SELECT_RWM|SELECT_WRS>   parallel roulette wheel (4.2.1), reservoir (4.2.2)
 *   -D CL=<cl>                          candidate list length (0: none)
 *   -D WEIGHTS=<W_MATRIX|W_CANDIDATES>  n x n weights, or candidate edges only (below)
 *   -D FALLBACK_BEST=<1|0>              a used-up list: the best city, or a draw (above)
 *   -D RWM_KEEP=<1|0>                   RWM keeps its slots' weights in local memory
 * The tabus, the draws and the reductions are in ants.h.  Weights are choice_info =
 * tau^alpha * eta^beta (computed once per iteration by mmas_trails); WRS reads their
 * reciprocals instead.  Random numbers are Philox draws keyed by the seed with counter
 * (ant, iteration, step, slot) where a draw is per slot (the start, WRS's list phase);
 * streams (common.h rng_stream_t) started from Philox by (ant, iteration) where numbers
 * come one after another: WRS's draws over every unvisited city from each work-item's
 * own stream, RWM's draws from one stream that every work-item of the ant holds alike.
 * Tours reproduce on a device for a given work-group size; they are the same for any size
 * only with SELECT_WRS, candidate lists and FALLBACK_BEST (RWM's float sums and WRS's
 * streams follow the work-group's dealing of the slots).
 */
#include "ants.h"

/* ---- the weights a selection reads ------------------------------------------------------
 * The list phase reads lw[cur * CL + i], the weight of the i-th candidate edge of cur,
 * stored next to the list (mmas_list_weights copies it out of the matrix each iteration)
 * so that a step loads the list and its weights together instead of one after the other.
 * The full phase reads WEIGHTS = W_MATRIX: w[cur * n + v] for every edge (choice_info,
 * section 2.1); WEIGHTS = W_CANDIDATES (beyond the paper: pheromone on candidate edges
 * only, O(n cl) memory): an unlisted edge weighs tau_min^alpha * eta^beta (fallback_tau =
 * tau_min^alpha), computed when needed.  WRS reads reciprocals everywhere.  The host
 * passes the stores' codes W_MATRIX, W_CANDIDATES (tspcl/solvers/mmas.py STORES). */
#if !defined(W_MATRIX) || !defined(W_CANDIDATES)
#error "the host passes the stores' codes W_MATRIX, W_CANDIDATES"
#endif
#ifndef FALLBACK_BEST
#define FALLBACK_BEST 1
#endif
#ifndef RWM_KEEP
#define RWM_KEEP 0
#endif
#define WEIGHT_DECL DIST_PARAMS, __global const int *restrict cand, \
                    __global const float *restrict lw, __global const float *restrict w, \
                    const float beta, const float fallback_tau
#define WEIGHT_ARGS DIST_ARGS, cand, lw, w, beta, fallback_tau

inline float full_weight(WEIGHT_DECL, const uint cur, const uint v)
{
#if WEIGHTS == W_CANDIDATES
    const float x = fallback_tau * pow(1.0f / max((float)DIST((int)cur, (int)v), 0.5f), beta);
#if SELECT == SELECT_WRS
    return x > 0.0f ? 1.0f / x : INFINITY;
#else
    return x;
#endif
#else
    return w[(ulong)cur * (uint)n + v];
#endif
}

/* ---- the slots of the full phase -------------------------------------------------------
 * LC and CT: slot i < free holds an unvisited node (free: the unvisited count, which the
 * kernel knows from the step instead of reading it from local memory at the head of
 * every step, -1 to -2 % for WRS without lists, H100).  BT: slot i is node i, free when
 * its bit is clear. */
#if TABU == TABU_BT
#define FULL_SLOTS(n, free) (n)
#define FULL_NODE(i) (tabu_visited(TABU_ARGS, un, i) ? NONE : (i))
#else
#define FULL_SLOTS(n, free) (free)
#define FULL_NODE(i) tabu_candidate(TABU_ARGS, un, i)
#endif

/* Four consecutive full-phase slots: their nodes (NONE past the slots or visited) and
 * weights (reciprocals for WRS).  Every weight is loaded (for NONE: LC and CT the
 * diagonal's, BT the slot's own, or node n - 1's past n), so that no load waits behind
 * a branch: a work-item's loads for a quad (WRS's full phase: two quads and their
 * draws) overlap. */
typedef struct {
    uint v[4];
    float w[4];
} slot_quad_t;

inline slot_quad_t full_quad(TABU_DECL, WEIGHT_DECL, const uint cur, const uint i,
                             const uint slots)
{
    const uint un = (uint)n;
    slot_quad_t q;
#if TABU == TABU_BT
    /* i is a multiple of 4: the quad's four bits lie in one word, read once (four reads
     * of it made fl3795 wrs-bt cl 32's used-up lists 5 % slower, H100) */
    const uint visited = (bits[i >> 5] >> (i & 31)) & 0xFu;
    for (uint k = 0; k < 4; k++) {
        q.v[k] = i + k < slots && !((visited >> k) & 1u) ? i + k : NONE;
        q.w[k] = full_weight(WEIGHT_ARGS, cur, min(i + k, un - 1));
    }
#else
    for (uint k = 0; k < 4; k++) {
        q.v[k] = i + k < slots ? FULL_NODE(i + k) : NONE;
        q.w[k] = full_weight(WEIGHT_ARGS, cur, q.v[k] == NONE ? cur : q.v[k]);
    }
#endif
    return q;
}

#if SELECT == SELECT_WRS
/* A slot's key log2(u) / w: never positive, the largest wins; -INFINITY for a zero
 * weight (infinite reciprocal), which is never drawn. */
inline float wrs_key(const uint draw, const float inv_weight)
{
    return native_log2(unit_open0(draw)) * inv_weight;
}

#if CL > 0
/* A list slot's word (ants.h list_slot_word) for |key|: the largest key wins. */
inline uint wrs_list_word(const uint draw, const float inv_weight, const uint slot)
{
    const float key = wrs_key(draw, inv_weight);
    return key > -INFINITY ? list_slot_word(fabs(key), slot) : ~0u;
}
#endif

/* A work-item's best full-phase slot so far: the least |key| (the largest key; INFINITY
 * for none with weight), its node and its slot. */
typedef struct {
    float least;
    uint node, slot;
} wrs_best_t;

/* best with the quad of slots i.. folded in, each slot drawing the stream's next number.
 * A float compare, not a (key, node) pair's: on equal keys the slot met first stays
 * (fl3795 wrs-ct 49.4 -> 47.9 ms with the pair compare gone, H100).  Every slot's key is
 * computed and one test keeps it, no branch around the log: the quad's four draws first
 * and the key under a free-slot test made wrs-ct 25 % slower on d198 and pcb442, 4 % on
 * pr1002 (H100, docs/notebook/mmas.md). */
inline void wrs_fold_quad(wrs_best_t *best, const slot_quad_t q, const uint i, rng_stream_t *stream)
{
    for (uint k = 0; k < 4; k++) {
        const float key_abs = -wrs_key(stream_next(stream), q.w[k]);
        if (q.v[k] != NONE && key_abs < best->least) {
            best->least = key_abs;
            best->node = q.v[k];
            best->slot = i + k;
        }
    }
}

/* Weighted reservoir sampling, A-Res with one item (section 4.2.2, Fig. 7): every free
 * slot's key is log2(u) / w with the reciprocal weight precomputed, the largest key wins.
 * The list phase draws among the unvisited candidates of cur, u from the slot's own
 * Philox word, one atomic min over wrs_list_word()s: the same node for any work-group
 * size.  The full phase draws among every unvisited node, four consecutive slots at a
 * time per work-item, u from the work-item's stream (st->stream, common.h: Philox per
 * slot made this phase issue-bound, 1.10-1.35x the paper's times); each work-item keeps
 * its best slot and group_least_node() picks the winner in one barrier.  With CT the
 * winning work-item marks its node in the tabu, knowing the slot (*marked; H100: -2 to
 * -4 % below 800 cities, +1 to +2 % above; LC and BT find a node's place in one read,
 * and work-item 0 marks after the selection as before).  NONE when no slot with weight
 * is free. */
inline uint select_next(TABU_DECL, WEIGHT_DECL, const uint cur, const int from_list,
                        const rng_key_t key, const uint ant, const uint iteration,
                        const uint step, const uint free, select_state_t *st, int *marked)
{
    const uint lid = get_local_id(0), p = get_local_size(0), un = (uint)n;
#if CL > 0
    if (from_list) {
        uint least = ~0u;
        for (uint i = lid; i < CL; i += p) {
            const uint draw = list_draw(st, key, ant, iteration, step, i);
            const uint v = (uint)cand[cur * CL + i];
            const float inv_weight = lw[cur * CL + i];
            /* the weight used whatever the check says: under the check, its load waited
             * for the list's, one more L2 latency in every step */
            const uint word = wrs_list_word(draw, inv_weight, i);
            least = tabu_visited(TABU_ARGS, un, v) ? least : min(least, word);
            list_offer(st, i, v);
        }
        *marked = 0;
        return list_winner(st, least);
    }
#endif
    wrs_best_t best = {INFINITY, NONE, 0u};
    const uint slots = FULL_SLOTS(un, free);
    /* two quads per pass, 4p slots apart, so that eight loads are in flight */
    for (uint i = 4 * lid; i < slots; i += 8 * p) {
        const uint j = i + 4 * p;
#if TABU == TABU_BT
        if (((bits[i >> 5] >> (i & 31)) & 0xFu) == 0xFu
            && (j >= slots || ((bits[j >> 5] >> (j & 31)) & 0xFu) == 0xFu))
            continue;  /* eight visited nodes: no draw */
#endif
        const slot_quad_t a = full_quad(TABU_ARGS, WEIGHT_ARGS, cur, i, slots);
        if (j < slots) {
            const slot_quad_t b = full_quad(TABU_ARGS, WEIGHT_ARGS, cur, j, slots);
            wrs_fold_quad(&best, a, i, &st->stream);
            wrs_fold_quad(&best, b, j, &st->stream);
        } else {
            wrs_fold_quad(&best, a, i, &st->stream);
        }
    }
    const uint2 won = group_least_node(st, best.least, best.node);
#if TABU == TABU_CT
    if (won.y == lid)
        tabu_mark_at(TABU_ARGS, un, won.x, best.slot, slots);
#endif
    *marked = TABU == TABU_CT && won.x != NONE;
    return won.x;
}
#else
/* The weight of slot i, 0 when it is not free.  The weight is loaded whatever the
 * check says (the diagonal's for a visited node), so that the loads of several slots
 * overlap instead of each waiting behind its check. */
inline float rwm_slot_weight(TABU_DECL, WEIGHT_DECL, const uint cur, const int from_list,
                             const uint i)
{
    const uint un = (uint)n;
#if CL > 0
    if (from_list) {
        const float weight = lw[cur * CL + i];
        return tabu_visited(TABU_ARGS, un, (uint)cand[cur * CL + i]) ? 0.0f : weight;
    }
#endif
    const uint v = FULL_NODE(i);
    const float weight = full_weight(WEIGHT_ARGS, cur, v == NONE ? cur : v);
    return v == NONE ? 0.0f : weight;
}

/* A work-item's share of the wheel: the sum of its slots' weights (slots k, k + p, ...
 * from k = its id), added in that order.  Four slots are loaded before any is added, a
 * slot past the count adding nothing (x + 0 == x): the same sum as one slot at a time,
 * with four loads in flight instead of one.  RWM_KEEP: each weight also goes to
 * kept[slot], for the owner's walk. */
inline float rwm_share(TABU_DECL, WEIGHT_DECL, const uint cur, const int from_list,
                       const uint count, __local float *kept)
{
    const uint p = get_local_size(0), last = count - 1;
    float s = 0.0f;
    for (uint k = get_local_id(0); k < count; k += 4 * p) {
        const float q0 = rwm_slot_weight(TABU_ARGS, WEIGHT_ARGS, cur, from_list, k);
        const float q1 = rwm_slot_weight(TABU_ARGS, WEIGHT_ARGS, cur, from_list, min(k + p, last));
        const float q2 = rwm_slot_weight(TABU_ARGS, WEIGHT_ARGS, cur, from_list, min(k + 2 * p, last));
        const float q3 = rwm_slot_weight(TABU_ARGS, WEIGHT_ARGS, cur, from_list, min(k + 3 * p, last));
        s += q0;
        s = k + p <= last ? s + q1 : s;
        s = k + 2 * p <= last ? s + q2 : s;
        s = k + 3 * p <= last ? s + q3 : s;
#if RWM_KEEP
        kept[k] = q0;
        if (k + p <= last)
            kept[k + p] = q1;
        if (k + 2 * p <= last)
            kept[k + 2 * p] = q2;
        if (k + 3 * p <= last)
            kept[k + 3 * p] = q3;
#endif
    }
    return s;
}

/* Parallel roulette wheel (section 4.2.1, Fig. 5): the slots are dealt to the
 * work-items (work-item j takes every p-th slot from the j-th), the work-items' weight
 * sums are prefix-summed, r = u * total picks the first work-item whose running sum
 * exceeds r (every work-item finds it by binary search), and that work-item walks its
 * own slots in order until their running sum exceeds r less the sums before its share.
 * This is the sequential roulette wheel over the slots in dealt order, so every slot is
 * drawn with probability weight / total (float rounding aside, which sends an r at the
 * very top to the last slot with weight).  The paper deals the chosen share out again
 * for a second parallel round; here its owner walks it (at most n/p slots, 16 for pr1002
 * without candidate lists), which saves a scan and its barriers, and with RWM_KEEP
 * reads the weights the share loaded back from local memory instead of reloading them
 * from global memory (pr1002 without lists 2.09 -> 1.91 ms, H100).  The owner also
 * marks the node in the tabu, which saves aco_construct a barrier.  NONE when no slot
 * has weight.  scratch: 3p floats (the scan's two buffers, the shares' own sums), the
 * chosen node, which the next selection writes only after a barrier, and with RWM_KEEP
 * the slots' weights (mmas.py rwm_kept_slots). */
inline uint select_next(TABU_DECL, WEIGHT_DECL, const uint cur, const int from_list,
                        const rng_key_t key, const uint ant, const uint iteration,
                        const uint step, const uint free, select_state_t *st, int *marked)
{
    const uint lid = get_local_id(0), p = get_local_size(0), un = (uint)n;
    __local float *sums = (__local float *)st->scratch;
    const uint count = from_list ? CL : FULL_SLOTS(un, free);
    __local float *kept = sums + 3 * p + 1;  /* after the chosen node */
    const float s = rwm_share(TABU_ARGS, WEIGHT_ARGS, cur, from_list, count, kept);
    /* inclusive prefix sum, Hillis and Steele over two buffers, over the first `active`
     * work-items (a power of two): the others hold no slot */
    const uint active = count > 1 ? min(p, 1u << (32 - clz(count - 1))) : 1u;
    __local float *in = sums, *out = sums + p, *own = sums + 2 * p;
    in[lid] = s;
    own[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = 1; off < active; off <<= 1) {
        out[lid] = lid >= off ? in[lid] + in[lid - off] : in[lid];
        barrier(CLK_LOCAL_MEM_FENCE);
        __local float *t = in;
        in = out;
        out = t;
    }
    __local uint *chosen = (__local uint *)(sums + 3 * p);
    const float total = in[active - 1];
    /* the rest is not under one `if (weighed)`: PoCL 5 failed to build the selection so
     * (an assertion in createParallelRegionBefore).  The draw is a select and each if
     * below tests `weighed`; the walk and its result are in two ifs, the form timed. */
    const int weighed = total > 0.0f;  /* else NONE: no slot has weight */
    /* the same number on every work-item, from the stream they hold alike: Philox's
     * 10 rounds here, on every work-item in every step, made pr1002 without lists 6 %
     * slower (1.915 -> 1.804 ms, H100) */
    const uint draw = weighed ? stream_next(&st->stream) : 0u;
    const float r = (float)(draw >> 8) * (1.0f / 16777216.0f) * total;  /* u in [0, 1) */
    /* the first share whose running sum exceeds r, else (rounding) the first that
     * reaches the total, i.e. the last share with weight */
    const float bar = r < total ? r : nextafter(total, 0.0f);
    uint t = 0;
    for (uint span = active / 2; span > 0; span >>= 1)
        if (in[t + span - 1] <= bar)
            t += span;
    /* the scan sums each prefix in its own order, so a share without weight can still
     * show a rise of one rounding: take the next share with weight instead (or the last
     * one before) */
    if (!(own[t] > 0.0f)) {
        uint u = t + 1;
        while (u < active && !(own[u] > 0.0f))
            u++;
        if (u == active)
            for (u = t; u > 0 && !(own[u] > 0.0f); u--)
                ;
        t = u;
    }
    /* the owner's walk: the first slot whose running sum (summed as s was) exceeds the
     * offset, else the last slot with weight */
    const float offset = r - (t ? in[t - 1] : 0.0f);
    float run = 0.0f;
    uint slot = NONE;
    if (lid == t && weighed) {
        for (uint k = t; k < count; k += p) {
#if RWM_KEEP
            const float weight = kept[k];  /* the same bits the share added */
#else
            const float weight = rwm_slot_weight(TABU_ARGS, WEIGHT_ARGS, cur, from_list, k);
#endif
            run += weight;
            if (weight > 0.0f) {
                slot = k;
                if (run > offset)
                    break;
            }
        }
    }
    if (lid == t && weighed) {
        const uint node = from_list ? (uint)cand[cur * CL + slot]
                                    : TABU == TABU_BT ? slot : FULL_NODE(slot);
        *chosen = node;
        /* a node this returns is the ant's next city (next_city): the owner marks it
         * here, and the barrier below puts the mark before the next step's reads */
        tabu_mark(TABU_ARGS, un, node);
    }
    if (!weighed && lid == 0)
        *chosen = NONE;  /* no slot with weight */
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint node = *chosen;
    *marked = node != NONE;
    return node;
}
#endif

#if CL > 0
/* The unvisited city with the largest weight, ties to the lower city, NONE when no free
 * city has weight: an ant's next city when its candidate list is used up (ACOTSP's
 * choose_best_next, the authors' build_ant_solution_using_cand_lists).  On a clustered
 * instance an ant leaves most clusters this way, and a draw there jumped far: fl1577
 * with 2-opt ended 1.81 % above the optimum with the draw, 0.56 % with the best city
 * (PoCL, 4 seeds, docs/notebook/mmas.md). */
inline uint best_next(TABU_DECL, WEIGHT_DECL, const uint cur, const uint free, select_state_t *st)
{
    const uint lid = get_local_id(0), p = get_local_size(0), un = (uint)n;
#if SELECT == SELECT_RWM
    /* RWM's scan wrote over group_min_entry's accumulators (its last reads were before
     * its final barrier): set them again */
    if (lid < 4)
        ((__local uint *)st->scratch)[lid] = ~0u;
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    ulong best = ULONG_MAX;
    const uint slots = FULL_SLOTS(un, free);
    /* a quad of slots per pass, its four weights loaded before any test, as in WRS's
     * full phase, so that no load waits behind a free check */
    for (uint i = 4 * lid; i < slots; i += 4 * p) {
#if TABU == TABU_BT
        if (((bits[i >> 5] >> (i & 31)) & 0xFu) == 0xFu)
            continue;  /* four visited cities */
#endif
        const slot_quad_t q = full_quad(TABU_ARGS, WEIGHT_ARGS, cur, i, slots);
        for (uint k = 0; k < 4; k++) {
            if (q.v[k] == NONE)
                continue;
#if SELECT == SELECT_WRS
            /* a reciprocal weight: the least wins, an infinite one (weight 0) never */
            if (q.w[k] < INFINITY)
                best = min(best, ((ulong)as_uint(q.w[k]) << 32) | q.v[k]);
#else
            /* the complement of a non-negative float's bits orders it downwards */
            if (q.w[k] > 0.0f)
                best = min(best, ((ulong)~as_uint(q.w[k]) << 32) | q.v[k]);
#endif
        }
    }
    const ulong won = group_min_entry(st, best);
    return won == ULONG_MAX ? NONE : (uint)won;
}
#endif

/* The next city of an ant at cur, `free` cities unvisited: a draw among the unvisited
 * cities of cur's candidate list, then, when it has none, the best unvisited city
 * (FALLBACK_BEST) or a draw among them all; without lists a draw among every unvisited
 * city.  NONE only when no free city has weight.  *marked: whether the city is marked in
 * the tabu already (RWM's draws mark it before their last barrier, WRS's full-phase draw
 * with CT after it; the best city and WRS's other draws are not marked). */
inline uint next_city(TABU_DECL, WEIGHT_DECL, const uint cur, const rng_key_t key,
                      const uint ant, const uint iteration, const uint step, const uint free,
                      select_state_t *st, int *marked)
{
#if CL > 0
    const uint next = select_next(TABU_ARGS, WEIGHT_ARGS, cur, 1, key, ant, iteration, step,
                                  free, st, marked);
    if (next != NONE)
        return next;
#if FALLBACK_BEST
    *marked = 0;
    return best_next(TABU_ARGS, WEIGHT_ARGS, cur, free, st);
#endif
#endif
    return select_next(TABU_ARGS, WEIGHT_ARGS, cur, 0, key, ant, iteration, step, free, st, marked);
}

/* The work-item's stream for an ant's selections: its own for WRS (stream lid), one that
 * every work-item of the ant holds alike for RWM (stream 0). */
inline rng_stream_t selection_stream(const rng_key_t key, const uint ant, const uint iteration)
{
    return ant_stream(key, ant, iteration, SELECT == SELECT_RWM ? 0u : get_local_id(0));
}

/* One ant per work-group: a start drawn uniformly, then n-1 steps of next_city(); writes
 * the tour (0-based cities) and its length.  Every work-item learns each chosen node from the
 * selection; work-item 0 marks it, unless the selection did, and writes it out. */
__kernel void aco_construct(DIST_PARAMS, __global const int *restrict cand,
                            __global const float *restrict lw, __global const float *restrict w,
                            const float beta, const float alpha,
                            __global const double *restrict limits, const uint seed_lo,
                            const uint seed_hi, const uint iteration,
                            __global int *restrict tours, __global long *restrict lengths,
                            TABU_DECL, __local long *scratch)
{
    const float fallback_tau = pow((float)limits[0], alpha);
    const uint ant = group_index(), lid = get_local_id(0), un = (uint)n;
    const rng_key_t key = {seed_lo, seed_hi};
    __global int *tour = tours + (ulong)ant * un;
    tabu_init(TABU_ARGS, un);
    select_state_t st = select_init(scratch);
    st.stream = selection_stream(key, ant, iteration);
    uint cur = rng_below(ant_draws(key, ant, iteration, 0u, 0xFFFFFFFFu).x, un);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        tour[0] = (int)cur;
        tabu_mark(TABU_ARGS, un, cur);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint step = 1; step < un; step++) {
        int marked;  /* the same for the whole work-group */
        uint next = next_city(TABU_ARGS, WEIGHT_ARGS, cur, key, ant, iteration, step, un - step,
                              &st, &marked);
#if SELECT == SELECT_RWM  /* by the preprocessor: `marked && SELECT == SELECT_RWM` drew a
                          * warning (a constant operand of &&) from PoCL's and NVIDIA's
                          * compilers, on the user's stderr */
        if (marked) {  /* the selection's barrier already put the mark before the next
                        * step's reads */
            if (lid == 0)
                tour[step] = (int)next;
            cur = next;
            continue;
        }
#endif
        for (uint i = 0; next == NONE; i++)  /* every weight underflowed: the first free */
            next = tabu_candidate(TABU_ARGS, un, i);
        if (lid == 0) {
            if (!marked)
                tabu_mark(TABU_ARGS, un, next);
            tour[step] = (int)next;
        }
        cur = next;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    const long length = group_tour_length(DIST_ARGS, tour, scratch);
    if (lid == 0)
        lengths[ant] = length;
}
