/* acs.cl's pheromone store STORE_SPM: the selective pheromone memory (Skinderowicz 2016,
 * section 3.2, Fig. 5; acs-gpu-spm).  City u keeps SPM_S edges, each one aligned 16-byte
 * word, spm[u * SPM_S + i] = (v, bits of tau(u, v), bits of eta^beta(u, v), 0) (node
 * EMPTY_NODE: an empty slot), and spm_tail[u], a count of the edges ever added to u, so
 * that the edge added last is in slot spm_tail[u] % SPM_S; any other edge of u is at
 * tau_min.  An update of an absent edge starts from tau_min and takes the slot after the
 * tail, the edge added longest ago (a ring).
 *   Whole edges, not the paper's two vectors: the ants read a city's edges while
 * other ants rewrite them, and the H100 keeps global loads in a work-group's L1, which
 * other SMs' stores do not update.  A node from one copy of a line and a trail from
 * another gave trails to the wrong edges (a global best's trail on an edge just added),
 * and spm ended 8-20 % above the optimum on Table 9 where alt reached 2-9 %
 * (docs/notebook/acs.md).  An edge is read and written whole, so a stale read is at worst an
 * older trail of the right edge, as with the matrix.  Its eta^beta is computed once, when the edge is added, so
 * that the greedy step weighs stored edges without distances (stored_word()).  The tail
 * advances by atomic_inc, as in the paper's code, so that ants adding edges to one city
 * at once take different slots.
 *   The store's interface, the same in acs_store_matrix.h, is listed in acs.cl ("the
 * pheromone store"); acs.cl includes this header after what it uses (TRAIL_GLOBAL,
 * heuristic(), greedy_word(), EVEN()). */
#ifndef TSPCL_ACS_STORE_SPM_H
#define TSPCL_ACS_STORE_SPM_H

#define PHER_DECL __global uint4 *restrict spm, __global uint *restrict spm_tail, const float tau_min
#define PHER_ARGS spm, spm_tail, tau_min
/* PHER_ARGS for copy c of the trails (acs_global): the memory is kept once */
#define PHER_ARGS_COPY(c) PHER_ARGS
/* the store keeps every edge's eta^beta beside its trail */
#define STORE_KEEPS_ETA_BETA 1

/* What an update reads: u's stored edges, (node, bits of tau) pairs, as the search needs
 * no eta^beta.  With whole edges here and the candidate loads before the barrier
 * (acs_next) the kernel took 120 registers and pr2392 at ants = n 6.9 ms; with pairs 88
 * and 4.0 ms (docs/notebook/acs.md) */
typedef struct {
    uint2 row[SPM_S];
} trail_t;

inline trail_t pher_load(PHER_DECL, DIST_PARAMS, const uint u, const uint v)
{
    trail_t t;
    for (uint i = 0; i < SPM_S; i++)   /* every load issued before any search */
        t.row[i] = ((TRAIL_GLOBAL uint2 *)spm)[2 * (u * SPM_S + i)];
    return t;
}

inline void pher_store(PHER_DECL, DIST_PARAMS, const uint u, const uint v, const trail_t *t,
                       const float a, const float b, const float eta_beta)
{
    /* a whole edge is written, hit or not, so that a racing ant's rewrite of the slot
     * never leaves a trail beside another node's eta^beta; on a hit the eta^beta given
     * is the stored one's value, from the same edge */
    for (uint i = 0; i < SPM_S; i++)
        if (t->row[i].x == v) {
            spm[u * SPM_S + i] = (uint4)(v, as_uint(a * as_float(t->row[i].y) + b), as_uint(eta_beta), 0u);
            return;
        }
    const uint slot = (atomic_inc(spm_tail + u) + 1u) % SPM_S;
    spm[u * SPM_S + slot] = (uint4)(v, as_uint(a * tau_min + b), as_uint(eta_beta), 0u);
}

/* tau(u, v) from a copy of u's stored (node, bits of tau) pairs in local memory: the
 * first slot that holds v, or tau_min. */
inline float ring_trail(__local const uint2 *ring, const float tau_min, const uint v)
{
    float found = tau_min;
    for (uint i = SPM_S; i-- > 0;)
        found = ring[i].x == v ? as_float(ring[i].y) : found;
    return found;
}

/* Where store_step_share() copies the current city's stored edges: their (node, bits of
 * tau) pairs after the scratch's first get_local_size(0) longs, then their eta^beta
 * (local memory here is only 8-byte aligned: 16-byte edges faulted on the H100).
 * acs.py's scratch_bytes follows this layout. */
inline __local uint2 *step_ring(const select_state_t *st)
{
    return (__local uint2 *)st->scratch + get_local_size(0);
}

inline __local float *step_ring_heur(const select_state_t *st)
{
    return (__local float *)(step_ring(st) + SPM_S);
}
#define STEP_RING_WORDS (3 * SPM_S)
/* the stored edges' words in step_least() */
#define STEP_STORED_WORDS EVEN(SPM_S)

/* What work-item lid reads for a step at city u (acs.cl, "a step's reads"): candidate
 * lid of u and its eta^beta, and u's stored edge lid, `mine` (work-items < SPM_S; each
 * loading the whole row was 5 % slower). */
typedef struct {
    uint v;
    float heur;
    uint4 mine;
} step_rows_t;

inline step_rows_t step_rows(__global const int *restrict cand, __global const float *restrict cand_heur,
                             PHER_DECL, const uint u)
{
    const uint lid = get_local_id(0);
    step_rows_t rows;
    rows.v = lid < CL ? (uint)cand[u * CL + lid] : NONE;
    rows.heur = lid < CL ? cand_heur[u * CL + lid] : 0.0f;
    rows.mine = lid < SPM_S ? ((TRAIL_GLOBAL uint4 *)spm)[u * SPM_S + lid] : (uint4)(EMPTY_NODE, 0u, 0u, 0u);
    return rows;
}

/* A step's share: cur's stored edges, `mine` of every work-item, copied to local memory
 * (step_ring()) for every work-item, one snapshot for the whole work-group, which the
 * candidates' trails (step_trail()), a stored edge's win (stored_pick()) and the fallback
 * read. */
typedef struct {
    __local uint2 *ring;
    __local float *ring_heur;
} step_share_t;

inline step_share_t store_step_share(const select_state_t *st, const step_rows_t rows, const uint lid)
{
    step_share_t shared;
    shared.ring = step_ring(st);
    shared.ring_heur = step_ring_heur(st);
    const uint4 mine = rows.mine;
    if (lid < SPM_S) {
        shared.ring[lid] = mine.xy;
        shared.ring_heur[lid] = as_float(mine.z);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return shared;
}

/* tau(cur, v) of a candidate v in a step, from the step's copy. */
inline float step_trail(PHER_DECL, DIST_PARAMS, const step_share_t shared, const uint cur, const uint v)
{
    return ring_trail(shared.ring, tau_min, v);
}

/* A stored edge's word in the greedy step's minimum: greedy_word() with the slot of the
 * edge in cur's selective memory in the low bits. */
#define STORED_SLOT_BITS (SPM_S > 1 ? 32 - clz(SPM_S - 1) : 0)
#define STORED_SLOT_MASK ((1u << STORED_SLOT_BITS) - 1u)

/* A work-item's share of the greedy step over the selective memory, as the authors'
 * code (github.com/RSkinderowicz/GPUBasedACS, acs_spm_calc_solution) takes it: the
 * stored edges of cur to unvisited cities, candidates or not, weighed by their trails
 * and stored eta^beta.  With the candidates weighed as usual (an unstored one at
 * tau_min) that is the largest tau * eta^beta over every unvisited city: an unstored
 * city outside the list is farther than every candidate, at the same tau_min.  Without
 * it a global best's edge to a city outside cur's list was never a greedy choice, and 3
 * of 10 pr1002 runs of Table 9 stalled at 8-12 % (docs/notebook/acs.md).  Work-item i < SPM_S
 * weighs slot i, `mine`, with the eta^beta stored beside the trail (a distance and a
 * power here made an iteration 1.3x slower, pr1002 at 256 ants). */
inline uint stored_word(TABU_DECL, const uint n, const step_rows_t rows)
{
    const uint i = get_local_id(0);
    const uint4 mine = rows.mine;
    /* selects, not branches: with the early returns an iteration of spm at 256 ants took
     * 7-8 % longer (clock64 marks: about 230 cycles here, against 120, docs/notebook/acs.md); an empty slot reads the tabu of city
     * n - 1 and is dropped */
    const float w = as_float(mine.y) * as_float(mine.z);
    const int live = (i < SPM_S) & (mine.x != EMPTY_NODE) & !tabu_visited(TABU_ARGS, n, min(mine.x, n - 1u)) &
                     (w > 0.0f);
    return live ? greedy_word(w, i, STORED_SLOT_MASK) : ~0u;
}

/* The step's city: the stored edge that won, when it beat the candidates (step_least()'s
 * .y below its .x, counted only while a candidate is left), with its stored eta^beta, or
 * else `next`, the candidates' choice. */
inline uint stored_pick(const step_share_t shared, const uint2 won, const uint next, float *eta_beta)
{
    if (won.x != ~0u && won.y < won.x) {
        const uint stored = shared.ring[won.y & STORED_SLOT_MASK].x;
        *eta_beta = shared.ring_heur[won.y & STORED_SLOT_MASK];
        return stored;
    }
    return next;
}

/* The fallback's share of a work-item (acs.cl acs_next()).  Every edge but cur's SPM_S
 * stored ones has tau_min, so among those the nearest unvisited city (ties to the lower)
 * has the largest w: the scan compares distances alone and weighs one city, and the
 * stored edges are weighed by their trails (pow() and a memory scan for every unvisited
 * city made this step most of a step's time from n = 10,000 up: rl11849 at 256 ants,
 * about 150 ms an iteration before, 43 ms after, docs/notebook/acs.md).  The stored edges
 * are the step's copy in local memory (step_ring()), one snapshot for the whole
 * work-group: other ants rewrite them meanwhile, and a city the scan leaves out as stored
 * must be one that is weighed as stored (with a snapshot per work-item a city could be
 * left out by both, and the last one missed: the ant then took no city). */
inline ulong fallback_entry(TABU_DECL, DIST_PARAMS, PHER_DECL, const uint cur, const float beta,
                            select_state_t *st)
{
    const uint lid = get_local_id(0), p = get_local_size(0), un = (uint)n;
    ulong best = ULONG_MAX;
    __local const uint2 *row = step_ring(st);
    __local const float *row_heur = step_ring_heur(st);
    ulong nearest = ULONG_MAX;
    /* every city's distance, visited or not, and a select: with the distance under the
     * tabu test its coordinate loads waited one city at a time (256 ants, k 4: spm 3-6 %
     * slower, docs/notebook/acs.md) */
#if UNROLL_HINTS
#pragma unroll 4
#endif
    for (uint v = lid; v < un; v += p) {
        int stored = 0;
        for (uint i = 0; i < SPM_S; i++)
            stored |= row[i].x == v;
        const ulong entry = ((ulong)DIST((int)cur, (int)v) << 32) | v;
        nearest = !stored && !tabu_visited(TABU_ARGS, un, v) ? min(nearest, entry) : nearest;
    }
    if (nearest != ULONG_MAX) {
        const uint v = (uint)nearest;
        best = ((ulong)as_uint(1.0f / (tau_min * heuristic(DIST_ARGS, cur, v, beta))) << 32) | v;
    }
    for (uint i = lid; i < SPM_S; i += p) {
        const uint v = row[i].x;
        if (v != EMPTY_NODE && !tabu_visited(TABU_ARGS, un, v)) {
            const float w = as_float(row[i].y) * row_heur[i];
            best = min(best, ((ulong)as_uint(1.0f / w) << 32) | v);
        }
    }
    return best;
}

#endif
