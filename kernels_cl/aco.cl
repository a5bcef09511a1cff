/* Ant colony solution construction and the MAX-MIN Ant System's pheromone kernels
 * (Skinderowicz 2020, ../shared/papers/skinderowicz2020-gpu-mmas.txt).
 *
 * aco_construct: one work-group per ant (section 4.4, the data-parallel scheme); the
 * ant's tabu lives in local memory (section 4.1) and the next node is drawn by the whole
 * group (section 4.2), first among the unvisited cities of the current city's candidate
 * list (section 4.3), over every unvisited city when none is left.  Build with
 *   -D TABU=<TABU_LC|TABU_CT|TABU_BT>   list compression, compact tabu, bitmask (Table 1)
 *   -D SELECT=<SELECT_RWM|SELECT_WRS>   parallel roulette wheel (4.2.1), reservoir (4.2.2)
 *   -D CL=<cl>                          candidate list length (0: none)
 *   -D WEIGHTS=<W_MATRIX|W_CANDIDATES>  n x n weights, or candidate edges only (below)
 * Weights are choice_info = tau^alpha * eta^beta (computed once per iteration by
 * mmas_trails); WRS reads their reciprocals instead.  Random numbers are Philox draws keyed by
 * the seed with counter (ant, iteration, step, slot): the same tours on a device for any
 * work-group size when SELECT_WRS; RWM's float sums follow the work-group's chunking.
 */
#include "tour.h"

#define TABU_LC 0
#define TABU_CT 1
#define TABU_BT 2
#define SELECT_RWM 0
#define SELECT_WRS 1

#ifndef CL
#define CL 0
#endif

#define NONE 0xffffffffu  /* sentinel: no node */

inline uint4 ant_draws(const rng_key_t key, const uint ant, const uint iteration,
                       const uint step, const uint slot)
{
    philox4x32_key_t k = {{key.seed_lo, key.seed_hi}};
    philox4x32_ctr_t c = {{ant, iteration, step, slot}};
    philox4x32_ctr_t r = philox4x32(c, k);
    return (uint4)(r.v[0], r.v[1], r.v[2], r.v[3]);
}

/* A uniform float in (0, 1]: never 0, so log() is finite. */
inline float unit_open0(const uint draw) { return ((float)(draw >> 8) + 1.0f) * (1.0f / 16777216.0f); }

/* ---- tabu structures (section 4.1, Table 1) --------------------------------------------
 * tabu_length(): entries to scan; tabu_candidate(i): an unvisited node or NONE;
 * tabu_visited(v); tabu_mark(v) by one work-item. */
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
inline uint tabu_length(TABU_DECL, const uint n) { return *l_count; }
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
inline uint tabu_length(TABU_DECL, const uint n) { return *l_count; }
inline uint tabu_candidate(TABU_DECL, const uint n, const uint i) { return entries[i]; }
inline int tabu_visited(TABU_DECL, const uint n, const uint v) { return entries[v] > v; }
inline void tabu_mark(TABU_DECL, const uint n, const uint v)
{
    const uint L = *l_count;
    const uint i = (v < L && entries[v] == v) ? v : entries[v];  /* where v sits */
    const uint t = entries[L - 1];                                  /* the list's last node */
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
#else
/* Bitmask: bit v set when v is visited; every node is a candidate slot. */
#define TABU_DECL __local uint *bits
#define TABU_ARGS bits
inline void tabu_init(TABU_DECL, const uint n)
{
    for (uint i = get_local_id(0); i < (n + 31) / 32; i += get_local_size(0))
        bits[i] = 0u;
}
inline uint tabu_length(TABU_DECL, const uint n) { return n; }
inline int tabu_visited(TABU_DECL, const uint n, const uint v) { return (bits[v >> 5] >> (v & 31)) & 1u; }
inline uint tabu_candidate(TABU_DECL, const uint n, const uint i)
{
    return tabu_visited(TABU_ARGS, n, i) ? NONE : i;
}
inline void tabu_mark(TABU_DECL, const uint n, const uint v) { bits[v >> 5] |= 1u << (v & 31); }
#endif

/* ---- the slots a selection draws from ---------------------------------------------------
 * from_list: slot i is the i-th candidate of `cur` (NONE when visited); otherwise slot i
 * is tabu_candidate(i). */
inline uint slot_node(TABU_DECL, const uint n, __global const int *restrict cand,
                      const uint cur, const int from_list, const uint i)
{
#if CL > 0
    if (from_list) {
        const uint c = (uint)cand[cur * CL + i];
        return tabu_visited(TABU_ARGS, n, c) ? NONE : c;
    }
#endif
    return tabu_candidate(TABU_ARGS, n, i);
}

/* ---- the weights a selection reads ------------------------------------------------------
 * WEIGHTS = W_MATRIX: w[cur * n + v] for every edge (choice_info, section 2.1).
 * WEIGHTS = W_CANDIDATES (beyond the paper: pheromone on candidate edges only, O(n cl)
 * memory): w[cur * CL + slot] for the candidate slots, and an unlisted edge weighs
 * tau_min^alpha * eta^beta (fallback_tau = tau_min^alpha), computed when needed.
 * WRS reads reciprocals. */
#define W_MATRIX 0
#define W_CANDIDATES 1
#ifndef WEIGHTS
#define WEIGHTS W_MATRIX
#endif
#define WEIGHT_DECL DIST_PARAMS, __global const float *restrict w, const float beta, \
                    const float fallback_tau
#define WEIGHT_ARGS DIST_ARGS, w, beta, fallback_tau

inline float slot_weight(WEIGHT_DECL, const uint cur, const int from_list, const uint i,
                         const uint v)
{
#if WEIGHTS == W_CANDIDATES
    if (from_list)
        return w[(ulong)cur * CL + i];
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

#if SELECT == SELECT_WRS
/* Weighted reservoir sampling, A-Res with one item (Fig. 7): every slot's key is
 * log(u) / w (the log of u^(1/w), with the reciprocal weight precomputed), the node of
 * the largest key wins (ties to the lower slot).  Returns NONE when no slot is free. */
inline uint select_next(TABU_DECL, WEIGHT_DECL, __global const int *restrict cand,
                        const uint cur, const int from_list, const uint slots,
                        const rng_key_t key, const uint ant, const uint iteration,
                        const uint step, __local float *r_key, __local uint *r_slot,
                        __local uint *r_node)
{
    const uint lid = get_local_id(0), p = get_local_size(0), un = (uint)n;
    float best = -INFINITY;
    uint best_slot = NONE, best_node = NONE;
    for (uint i = lid; i < slots; i += p) {
        const uint v = slot_node(TABU_ARGS, un, cand, cur, from_list, i);
        if (v == NONE)
            continue;
        const uint4 d = ant_draws(key, ant, iteration, step, (from_list ? 0x80000000u : 0u) | i);
        const float k = log(unit_open0(d.x)) * slot_weight(WEIGHT_ARGS, cur, from_list, i, v);
        if (k > best || best_node == NONE) {
            best = k;
            best_slot = i;
            best_node = v;
        }
    }
    r_key[lid] = best;
    r_slot[lid] = best_slot;
    r_node[lid] = best_node;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint h = p / 2; h > 0; h >>= 1) {
        if (lid < h) {
            const float k = r_key[lid + h];
            const uint s = r_slot[lid + h];
            if (r_node[lid + h] != NONE &&
                (r_node[lid] == NONE || k > r_key[lid] || (k == r_key[lid] && s < r_slot[lid]))) {
                r_key[lid] = k;
                r_slot[lid] = s;
                r_node[lid] = r_node[lid + h];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const uint winner = r_node[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return winner;
}
#else
/* Least value over the work-group (p a power of two); every work-item gets it. */
inline uint group_min(__local uint *r, const uint value)
{
    const uint lid = get_local_id(0), p = get_local_size(0);
    r[lid] = value;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint h = p / 2; h > 0; h >>= 1) {
        if (lid < h)
            r[lid] = min(r[lid], r[lid + h]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const uint out = r[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return out;
}

/* Parallel roulette wheel (section 4.2.1, Fig. 5): the slots [lo, hi) are cut into one
 * chunk per work-item, the chunks' weight sums are prefix-summed, r = u * total picks
 * the first chunk whose running sum exceeds r, and that chunk is cut again until one
 * slot is left; r keeps its offset inside the chosen chunk, so the choice is the
 * sequential roulette wheel's for that u (up to float rounding, which sends an r at the
 * very top to the last chunk with weight).  Returns NONE when no slot has weight.
 * (r_node is unused: the signature is the WRS one.) */
inline uint select_next(TABU_DECL, WEIGHT_DECL, __global const int *restrict cand,
                        const uint cur, const int from_list, const uint slots,
                        const rng_key_t key, const uint ant, const uint iteration,
                        const uint step, __local float *r_sum, __local uint *r_slot,
                        __local uint *r_node)
{
    const uint lid = get_local_id(0), p = get_local_size(0), un = (uint)n;
    uint lo = 0, hi = slots;
    float r = -1.0f;  /* drawn once the first total is known */
    for (;;) {
        const uint chunk = (hi - lo + p - 1) / p;
        const uint a = min(hi, lo + lid * chunk), b = min(hi, a + chunk);
        float s = 0.0f;
        for (uint i = a; i < b; i++) {
            const uint v = slot_node(TABU_ARGS, un, cand, cur, from_list, i);
            if (v != NONE)
                s += slot_weight(WEIGHT_ARGS, cur, from_list, i, v);
        }
        r_sum[lid] = s;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint off = 1; off < p; off <<= 1) {  /* inclusive prefix sum */
            const float add = lid >= off ? r_sum[lid - off] : 0.0f;
            barrier(CLK_LOCAL_MEM_FENCE);
            r_sum[lid] += add;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        const float total = r_sum[p - 1];
        if (r < 0.0f) {
            const uint4 d = ant_draws(key, ant, iteration, step, from_list ? 0xC0000000u : 0x40000000u);
            r = (float)(d.x >> 8) * (1.0f / 16777216.0f) * total;  /* u in [0, 1) */
        }
        const float before = lid ? r_sum[lid - 1] : 0.0f;
        /* key: the first chunk with weight whose running sum exceeds r, else (rounding)
         * the last chunk with weight */
        const uint k = r_sum[lid] > before ? (r < r_sum[lid] ? lid : 2 * p - 1 - lid) : NONE;
        const uint best = group_min(r_slot, k);
        if (best == NONE)
            return NONE;
        const uint t = best < p ? best : 2 * p - 1 - best;
        const uint ta = min(hi, lo + t * chunk), tb = min(hi, ta + chunk);
        if (tb - ta == 1)
            return slot_node(TABU_ARGS, un, cand, cur, from_list, ta);
        r -= t ? r_sum[t - 1] : 0.0f;
        r = min(max(r, 0.0f), r_sum[t] - (t ? r_sum[t - 1] : 0.0f));
        lo = ta;
        hi = tb;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}
#endif

/* One ant per work-group: a start drawn uniformly, then n-1 selections; writes the tour
 * (0-based cities) and its length. */
__kernel void aco_construct(DIST_PARAMS, __global const float *restrict w,
                            __global const int *restrict cand, const float alpha,
                            const float beta, __global const double *restrict limits,
                            const uint seed_lo,
                            const uint seed_hi, const uint iteration,
                            __global int *restrict tours, __global long *restrict lengths,
                            TABU_DECL, __local long *r_wide, __local uint *r_slot,
                            __local uint *r_node)
{
    /* r_wide: p longs for the length, its first p floats the selections' scratch (declared
     * long so that the driver aligns it for longs) */
    __local float *r_val = (__local float *)r_wide;
    const float fallback_tau = pow((float)limits[0], alpha);
    const uint ant = get_group_id(0), lid = get_local_id(0), p = get_local_size(0);
    const uint un = (uint)n;
    const rng_key_t key = {seed_lo, seed_hi};
    __global int *tour = tours + (ulong)ant * un;
    __local uint l_cur;
    tabu_init(TABU_ARGS, un);
    if (lid == 0) {
        const uint start = rng_below(ant_draws(key, ant, iteration, 0u, 0xFFFFFFFFu).x, un);
        tour[0] = (int)start;
        l_cur = start;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0)
        tabu_mark(TABU_ARGS, un, l_cur);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint step = 1; step < un; step++) {
        const uint cur = l_cur;
        uint next = NONE;
#if CL > 0
        next = select_next(TABU_ARGS, WEIGHT_ARGS, cand, cur, 1, CL, key, ant, iteration, step,
                           r_val, r_slot, r_node);
#endif
        if (next == NONE)
            next = select_next(TABU_ARGS, WEIGHT_ARGS, cand, cur, 0, tabu_length(TABU_ARGS, un),
                               key, ant, iteration, step, r_val, r_slot, r_node);
        if (lid == 0) {
            for (uint i = 0; next == NONE; i++)  /* every weight underflowed: first free */
                next = tabu_candidate(TABU_ARGS, un, i);
            tabu_mark(TABU_ARGS, un, next);
            tour[step] = (int)next;
            l_cur = next;
        }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    }
    const long length = group_tour_length(DIST_ARGS, tour, r_wide);
    if (lid == 0)
        lengths[ant] = length;
}

/* Tests: one selection step per work-group (trial t draws as ant t would at `step`):
 * the nodes in visited[0..nvisited) are marked, the ant stands at `cur`, and the node
 * chosen exactly as aco_construct chooses it goes to chosen[t]. */
__kernel void aco_select_sample(DIST_PARAMS, __global const float *restrict w,
                                __global const int *restrict cand, const float beta,
                                const float fallback_tau, const uint seed_lo,
                                const uint seed_hi, const uint step, const uint cur,
                                __global const int *restrict visited, const int nvisited,
                                __global int *restrict chosen, TABU_DECL,
                                __local float *r_val, __local uint *r_slot, __local uint *r_node)
{
    const uint trial = get_group_id(0), lid = get_local_id(0), un = (uint)n;
    const rng_key_t key = {seed_lo, seed_hi};
    tabu_init(TABU_ARGS, un);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0)
        for (int i = 0; i < nvisited; i++)
            tabu_mark(TABU_ARGS, un, (uint)visited[i]);
    barrier(CLK_LOCAL_MEM_FENCE);
    uint next = NONE;
#if CL > 0
    next = select_next(TABU_ARGS, WEIGHT_ARGS, cand, cur, 1, CL, key, trial, 0u, step,
                       r_val, r_slot, r_node);
#endif
    if (next == NONE)
        next = select_next(TABU_ARGS, WEIGHT_ARGS, cand, cur, 0, tabu_length(TABU_ARGS, un),
                           key, trial, 0u, step, r_val, r_slot, r_node);
    if (lid == 0)
        chosen[trial] = next == NONE ? -1 : (int)next;
}
