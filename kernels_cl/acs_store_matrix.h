/* acs.cl's pheromone store STORE_MATRIX: the standard n x n pheromone matrix
 * (Skinderowicz 2016, sections 3.1 and 3.1.2; acs-gpu and acs-gpu-alt), a float per
 * ordered pair of cities, tau(u, v) = tau[u * n + v], every trail stored.  acs-gpu keeps
 * it twice, tau[0, n^2) and tau[n^2, 2 n^2) (acs.cl, acs_step); spm_tail is unused.
 *   The store's interface, the same in acs_store_spm.h, is listed in acs.cl ("the
 * pheromone store"); acs.cl includes this header after what it uses (TRAIL_GLOBAL,
 * heuristic(), cas_update()). */
#ifndef TSPCL_ACS_STORE_MATRIX_H
#define TSPCL_ACS_STORE_MATRIX_H

#define PHER_DECL __global float *restrict tau, __global uint *restrict spm_tail, const float tau_min
#define PHER_ARGS tau, spm_tail, tau_min
/* PHER_ARGS for copy c of the trails (acs_global; acs-gpu keeps two) */
#define PHER_ARGS_COPY(c) tau + (ulong)(c) * (uint)n * (uint)n, spm_tail, tau_min
/* the store keeps no eta^beta: the ants' steps need not pass it on (0 given) */
#define STORE_KEEPS_ETA_BETA 0

/* What an update reads: the cell, as bits (the compare-and-swap's first guess). */
typedef struct {
    uint cell;
} trail_t;

inline trail_t pher_load(PHER_DECL, DIST_PARAMS, const uint u, const uint v)
{
    trail_t t;
    t.cell = as_uint(((TRAIL_GLOBAL float *)tau)[(ulong)u * (uint)n + v]);
    return t;
}

inline void pher_store(PHER_DECL, DIST_PARAMS, const uint u, const uint v, const trail_t *t,
                       const float a, const float b, const float eta_beta)
{
#if ATOMIC_UPDATE
    cas_update((volatile __global uint *)(tau + (ulong)u * (uint)n + v), t->cell, a, b);
#else
    tau[(ulong)u * (uint)n + v] = a * as_float(t->cell) + b;
#endif
}

/* tau(u, v). */
inline float pher_read(PHER_DECL, DIST_PARAMS, const uint u, const uint v)
{
    return ((TRAIL_GLOBAL float *)tau)[(ulong)u * (uint)n + v];
}

/* A step takes no local words of its own and offers no stored edges to step_least(). */
#define STEP_RING_WORDS 0
#define STEP_STORED_WORDS 0

/* What work-item lid reads for a step at city u (acs.cl, "a step's reads"): candidate
 * lid of u and its eta^beta; nothing from the store, as the candidates' trails are read in
 * the step (step_trail()). */
typedef struct {
    uint v;
    float heur;
} step_rows_t;

inline step_rows_t step_rows(__global const int *restrict cand, __global const float *restrict cand_heur,
                             PHER_DECL, const uint u)
{
    const uint lid = get_local_id(0);
    step_rows_t rows;
    rows.v = lid < CL ? (uint)cand[u * CL + lid] : NONE;
    rows.heur = lid < CL ? cand_heur[u * CL + lid] : 0.0f;
    return rows;
}

/* A step's share: nothing to share before the candidates are weighed (and no barrier);
 * step_share_t is a placeholder, never read. */
typedef uchar step_share_t;

inline step_share_t store_step_share(const select_state_t *st, const step_rows_t rows, const uint lid)
{
    return 0;
}

/* tau(cur, v) of a candidate v in a step. */
inline float step_trail(PHER_DECL, DIST_PARAMS, const step_share_t shared, const uint cur, const uint v)
{
    return pher_read(PHER_ARGS, DIST_ARGS, cur, v);
}

/* No stored edges: nothing is offered beside the candidates, and none wins. */
inline uint stored_word(TABU_DECL, const uint n, const step_rows_t rows)
{
    return ~0u;
}

inline uint stored_pick(const step_share_t shared, const uint2 won, const uint next, float *eta_beta)
{
    return next;
}

/* The fallback's share of a work-item (acs.cl acs_next()): every unvisited city of its
 * share weighed, w = tau(cur, v) * eta^beta. */
inline ulong fallback_entry(TABU_DECL, DIST_PARAMS, PHER_DECL, const uint cur, const float beta,
                            select_state_t *st)
{
    const uint lid = get_local_id(0), p = get_local_size(0), un = (uint)n;
    ulong best = ULONG_MAX;
    for (uint v = lid; v < un; v += p)
        if (!tabu_visited(TABU_ARGS, un, v)) {
            const float w = pher_read(PHER_ARGS, DIST_ARGS, cur, v) * heuristic(DIST_ARGS, cur, v, beta);
            best = min(best, ((ulong)as_uint(1.0f / w) << 32) | v);
        }
    return best;
}

#endif
