/* Ant Colony System on the device (Skinderowicz 2016,
 * ../shared/papers/skinderowicz2016-gpu-acs.txt).
 *
 * One work-group per ant (section 3.1): its tabu is a bitmask in local memory (ants.h,
 * TABU_BT), one work-item per candidate of the current city.  The next city follows the
 * pseudo-random proportional rule (eq. 1-2, Fig. 3): among the unvisited of the CL
 * nearest neighbours, with probability q0 the one with the largest tau * eta^beta (over
 * the selective memory, cur's stored edges count too, as in the authors' code: below),
 * otherwise one drawn with probability proportional to it (drawn here by reservoir
 * keys -log2(u) / w, the same distribution as the paper's roulette, so that greedy and
 * roulette are both one work-group minimum, step_least() below); with no unvisited
 * candidate, the unvisited city with the largest tau * eta^beta (section 3.1.1).  After
 * every k-th edge the ant lowers its pheromone, tau = (1 - rho) tau + rho tau0 (eq. 3,
 * section 4.2), both ways round.
 *   -D CL=<cl>                          candidate set size (the paper: 32)
 *   -D STORE=<STORE_MATRIX|STORE_SPM>   the n x n pheromone matrix, or the selective
 *                                       pheromone memory of section 3.2 (below)
 *   -D SPM_S=<s>                        the memory's edges per city (the paper: 8)
 *   -D ATOMIC_UPDATE=<0|1>              local updates by compare-and-swap (acs-gpu), so
 *                                       that none is lost; 0: plain read and write
 *                                       (acs-gpu-alt, acs-gpu-spm: racy by design)
 *   -D BETA_WHOLE=<b>                   beta, when it is a whole number (heuristic())
 *   -D COUNT_UPDATES=1                  tests only: an update adds 1 instead
 * Kernels (Table 1): acs_construct builds whole tours in one launch (acs-gpu-alt,
 * acs-gpu-spm); acs_first, then acs_step once per step, then acs_close build them step
 * by step (acs-gpu); acs_global lays the global best's pheromone (eq. 4).
 */
#include "ants.h"
#if TABU != TABU_BT
#error "acs.cl keeps its ants' tabu as a bitmask (TABU_BT)"
#endif

/* The host passes the stores' codes STORE_MATRIX, STORE_SPM, the store STORE, the empty
 * slot's node EMPTY_NODE (tspcl/solvers/acs.py STORES, EMPTY_NODE) and the status words
 * B_* that acs_global reads (tspcl/solvers/best.py BestWord). */
#if !defined(STORE_MATRIX) || !defined(STORE_SPM)
#error "the host passes the stores' codes STORE_MATRIX, STORE_SPM"
#endif
#ifndef SPM_S
#define SPM_S 8
#endif
#ifndef ATOMIC_UPDATE
#define ATOMIC_UPDATE 0
#endif
#ifndef COUNT_UPDATES
#define COUNT_UPDATES 0
#endif
/* -D UNROLL_HINTS=1 (acs.py, on GPUs): fallback_entry's scan of every city carries an
 * unroll hint, measured on NVIDIA's compiler; a CPU's (PoCL's) cannot take it and printed
 * "1 warning generated." on the user's stderr at every fresh build. */
#ifndef UNROLL_HINTS
#define UNROLL_HINTS 0
#endif

/* ---- the pheromone ----------------------------------------------------------------------
 * STORE_MATRIX: tau[u * n + v].  STORE_SPM (section 3.2, Fig. 5): city u keeps SPM_S
 * edges, each one aligned 16-byte word, spm[u * SPM_S + i] = (v, bits of tau(u, v), bits
 * of eta^beta(u, v), 0) (node EMPTY_NODE: an empty slot), and spm_tail[u], a count of the
 * edges ever added to u, so that the edge added last is in slot spm_tail[u] % SPM_S; any
 * other edge of u is at tau_min.  An update of an absent edge starts from tau_min and
 * takes the slot after the tail, the edge added longest ago (a ring).
 *   Whole edges, not the paper's two vectors: the ants read a city's edges while
 * other ants rewrite them, and the H100 keeps global loads in a work-group's L1, which
 * other SMs' stores do not update.  A node from one copy of a line and a trail from
 * another gave trails to the wrong edges (a global best's trail on an edge just added),
 * and spm ended 8-20 % above the optimum on Table 9 where alt reached 2-9 %
 * (docs/notebook/acs.md).  An edge is read and written whole, so a stale read is at worst an
 * older trail of the right edge, as with the matrix.  Its eta^beta is computed once, when the edge is added, so
 * that the greedy step weighs stored edges without distances (stored_word()).  The tail
 * advances by atomic_inc, as in the paper's code, so that ants adding edges to one city
 * at once take different slots. */
/* -D FRESH_READS=1 (acs.py's default): the trails are read through volatile pointers,
 * so from L2, where every ant's update lands, as the global loads of the paper's Kepler
 * GPU did (they were not cached in L1).  With 0 a line of trails may stay in an SM's L1,
 * which other SMs' updates do not reach, for as long as the SM keeps using it: the ants
 * then miss each other's local updates (eq. 3), which are there to steer them apart, and
 * on the H100 Table 9's errors came out up to 1.8x larger (pr1002 spm 6.9 % against 3.9 %
 * fresh, 5 seeds; docs/notebook/acs.md), in the same number of iterations. */
#ifndef FRESH_READS
#define FRESH_READS 0
#endif
#if FRESH_READS
#define TRAIL_GLOBAL volatile __global
#else
#define TRAIL_GLOBAL __global
#endif
#if STORE == STORE_SPM
#define PHER_DECL __global uint4 *restrict spm, __global uint *restrict spm_tail, const float tau_min
#define PHER_ARGS spm, spm_tail, tau_min
#else
#define PHER_DECL __global float *restrict tau, __global uint *restrict spm_tail, const float tau_min
#define PHER_ARGS tau, spm_tail, tau_min
#endif

/* eta^beta = (1 / d)^beta, d = 0 counted as 0.5 (as kernels_cl/mmas.cl).  -D BETA_WHOLE=<b>
 * (acs.py, when beta is a whole number b, the paper's 3): b multiplications, where pown()
 * of a run-time exponent is a long chain of dependent instructions (while the greedy step
 * still computed its stored edges' eta^beta, pr1002 at 256 ants took 1.28 ms an iteration
 * with pown(), 1.19 with the multiplications; docs/notebook/acs.md).  Now used by the fallback,
 * the global update and an edge added after a fallback or, for ATSP, the way back. */
#ifndef BETA_WHOLE
#define BETA_WHOLE -1
#endif
inline float heuristic(DIST_PARAMS, const uint u, const uint v, const float beta)
{
    const float eta = 1.0f / max((float)DIST((int)u, (int)v), 0.5f);
#if BETA_WHOLE >= 0
    float power = 1.0f;
    for (int i = 0; i < BETA_WHOLE; i++)
        power *= eta;
    return power;
#else
    return pow(eta, beta);
#endif
}

/* An update in two halves, so that local_update() issues both edges' loads before
 * either store (one L2 round trip on an ant's step instead of two): pher_load() reads
 * what the update needs (the cell, or u's SPM_S edges), pher_store() writes tau(u, v) =
 * a * tau(u, v) + b from it. */
typedef struct {
#if STORE == STORE_SPM
    uint2 row[SPM_S];   /* (node, bits of tau): the search needs no eta^beta.  With
                         * whole edges here and the candidate loads before the barrier
                         * (acs_next) the kernel took 120 registers and pr2392 at
                         * ants = n 6.9 ms; with pairs 88 and 4.0 ms (docs/notebook/acs.md) */
#else
    uint cell;
#endif
} trail_t;

inline trail_t pher_load(PHER_DECL, DIST_PARAMS, const uint u, const uint v)
{
    trail_t t;
#if STORE == STORE_SPM
    for (uint i = 0; i < SPM_S; i++)   /* every load issued before any search */
        t.row[i] = ((TRAIL_GLOBAL uint2 *)spm)[2 * (u * SPM_S + i)];
#else
    t.cell = as_uint(((TRAIL_GLOBAL float *)tau)[(ulong)u * (uint)n + v]);
#endif
    return t;
}

#if STORE == STORE_SPM
/* tau(u, v) from a copy of u's stored (node, bits of tau) pairs in local memory: the
 * first slot that holds v, or tau_min. */
inline float ring_trail(__local const uint2 *ring, const float tau_min, const uint v)
{
    float found = tau_min;
    for (uint i = SPM_S; i-- > 0;)
        found = ring[i].x == v ? as_float(ring[i].y) : found;
    return found;
}

/* Where acs_next() copies the current city's stored edges: their (node, bits of tau)
 * pairs after the scratch's first get_local_size(0) longs, then their eta^beta (local
 * memory here is only 8-byte aligned: 16-byte edges faulted on the H100).  acs.py's
 * scratch_bytes follows this layout. */
inline __local uint2 *step_ring(const select_state_t *st)
{
    return (__local uint2 *)st->scratch + get_local_size(0);
}

inline __local float *step_ring_heur(const select_state_t *st)
{
    return (__local float *)(step_ring(st) + SPM_S);
}
#define STEP_RING_WORDS (3 * SPM_S)
#else
#define STEP_RING_WORDS 0
inline float pher_read(PHER_DECL, DIST_PARAMS, const uint u, const uint v)
{
    return ((TRAIL_GLOBAL float *)tau)[(ulong)u * (uint)n + v];
}
#endif

/* *cell = a * *cell + b by compare-and-swap, trying from `seen` (a value read before, or
 * what a failed attempt returned) until no other update came in between. */
inline void cas_update(volatile __global uint *cell, uint seen, const float a, const float b)
{
    uint old;
    do {
        old = seen;
        seen = atomic_cmpxchg(cell, old, as_uint(a * as_float(old) + b));
    } while (seen != old);
}

inline void pher_store(PHER_DECL, DIST_PARAMS, const uint u, const uint v, const trail_t *t,
                       const float a, const float b, const float eta_beta)
{
#if STORE == STORE_SPM
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
#elif ATOMIC_UPDATE
    cas_update((volatile __global uint *)(tau + (ulong)u * (uint)n + v), t->cell, a, b);
#else
    tau[(ulong)u * (uint)n + v] = a * as_float(t->cell) + b;
#endif
}

/* tau(u, v) = a * tau(u, v) + b. */
inline void pher_update(PHER_DECL, DIST_PARAMS, const float beta, const uint u, const uint v,
                        const float a, const float b)
{
    const trail_t t = pher_load(PHER_ARGS, DIST_ARGS, u, v);
    pher_store(PHER_ARGS, DIST_ARGS, u, v, &t, a, b, STORE == STORE_SPM ? heuristic(DIST_ARGS, u, v, beta) : 0.0f);
}

/* The local update (eq. 3) as tau -> a tau + b: (a, b) = (1 - rho, rho tau0), or (1, 1)
 * with COUNT_UPDATES. */
inline float2 local_rule(const float rho, const float tau0)
{
#if COUNT_UPDATES
    return (float2)(1.0f, 1.0f);
#else
    return (float2)(1.0f - rho, rho * tau0);
#endif
}

/* The local update of edge (u, v) both ways round (eq. 3); eta_beta: eta^beta of (u, v),
 * which the selective memory keeps when it adds the edge (the ant's step knows it, so
 * no distance is computed on the step's path; -D SYMMETRIC=0: (v, u)'s is computed). */
#ifndef SYMMETRIC
#define SYMMETRIC 1
#endif
inline void local_update(PHER_DECL, DIST_PARAMS, const float beta, const uint u, const uint v,
                         const float eta_beta, const float rho, const float tau0)
{
    const float2 rule = local_rule(rho, tau0);
    const float a = rule.x, b = rule.y;
    const trail_t there = pher_load(PHER_ARGS, DIST_ARGS, u, v), back = pher_load(PHER_ARGS, DIST_ARGS, v, u);
    pher_store(PHER_ARGS, DIST_ARGS, u, v, &there, a, b, eta_beta);
    /* chosen by the preprocessor: a constant operand of || drew a compiler warning, which
     * PoCL prints to the user's stderr */
#if SYMMETRIC || STORE != STORE_SPM
    const float back_eta_beta = eta_beta;
#else
    const float back_eta_beta = heuristic(DIST_ARGS, v, u, beta);
#endif
    pher_store(PHER_ARGS, DIST_ARGS, v, u, &back, a, b, back_eta_beta);
}

#define ACS_DECL DIST_PARAMS, __global const int *restrict cand, \
                 __global const float *restrict cand_heur, PHER_DECL, const float q0, const float beta
#define ACS_ARGS DIST_ARGS, cand, cand_heur, PHER_ARGS, q0, beta

/* The draw of q (eq. 1) for the steps 4 (step / 4) to 4 (step / 4) + 3, a word each: the
 * same in the whole work-group. */
#define Q_SLOT 0x7FFFFFFFu
inline uint4 q_draws(const rng_key_t key, const uint ant, const uint iteration, const uint step)
{
    return ant_draws(key, ant, iteration, step >> 2, Q_SLOT);
}

/* A work-item's share of the fallback (section 3.1.1): its entry (bits of 1 / w, city)
 * for the least 1 / w, w = tau * eta^beta, over the unvisited cities.  Over the
 * selective memory every edge but cur's SPM_S stored ones has tau_min, so among those
 * the nearest unvisited city (ties to the lower) has the largest w: the scan compares
 * distances alone and weighs one city, and the stored edges are weighed by their trails
 * (pow() and a memory scan for every unvisited city made this step most of a step's
 * time from n = 10,000 up: rl11849 at 256 ants, about 150 ms an iteration before, 43
 * ms after, docs/notebook/acs.md).  The stored edges are the step's copy in local memory
 * (step_ring()), one snapshot for the whole work-group: other ants rewrite them
 * meanwhile, and a city the scan leaves out as stored must be one that is weighed as
 * stored (with a snapshot per work-item a city could be left out by both, and the last
 * one missed: the ant then took no city). */
inline ulong fallback_entry(TABU_DECL, DIST_PARAMS, PHER_DECL, const uint cur, const float beta,
                            select_state_t *st)
{
    const uint lid = get_local_id(0), p = get_local_size(0), un = (uint)n;
    ulong best = ULONG_MAX;
#if STORE == STORE_SPM
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
#else
    for (uint v = lid; v < un; v += p)
        if (!tabu_visited(TABU_ARGS, un, v)) {
            const float w = pher_read(PHER_ARGS, DIST_ARGS, cur, v) * heuristic(DIST_ARGS, cur, v, beta);
            best = min(best, ((ulong)as_uint(1.0f / w) << 32) | v);
        }
#endif
    return best;
}

/* step_least()'s words, pairs of uints: CL candidates' words (an even count), then over
 * the selective memory SPM_S stored edges' (an even count), after step_ring()'s; then
 * step_offer()'s candidates and their eta^beta (an even count each). */
#define EVEN(x) (((x) + 1) & ~1)
#if STORE == STORE_SPM
#define STEP_STORED_WORDS EVEN(SPM_S)
#else
#define STEP_STORED_WORDS 0
#endif
inline __local uint *step_words(const select_state_t *st)
{
    return (__local uint *)st->scratch + 2 * get_local_size(0) + EVEN(STEP_RING_WORDS);
}

/* Work-item i's candidate v and its eta^beta, for step_candidate() after step_least()'s
 * barrier: read from local memory there, where the winner's reload from the list waited
 * for L1 (256 ants, k 4: spm 3-7 % slower, docs/notebook/acs.md). */
inline __local uint *step_candidates(const select_state_t *st)
{
    return step_words(st) + EVEN(CL) + STEP_STORED_WORDS;
}

inline void step_offer(const select_state_t *st, const uint v, const float eta_beta)
{
    const uint i = get_local_id(0);
    if (i < CL) {
        step_candidates(st)[i] = v;
        if (STORE == STORE_SPM)   /* over the matrix no local update needs it */
            step_candidates(st)[EVEN(CL) + i] = as_uint(eta_beta);
    }
}

/* Candidate `slot`'s (city, eta^beta), as step_offer() gave them (.y over the selective
 * memory only). */
inline uint2 step_candidate(const select_state_t *st, const uint slot)
{
    return (uint2)(step_candidates(st)[slot], step_candidates(st)[EVEN(CL) + slot]);
}

/* The least of the candidates' words (.x) and of the stored edges' (.y) of a step, ~0u
 * where none was offered: each work-item writes its words, and after one barrier every
 * work-item reads them all.  ants.h list_least() took a local atomic min for each, 32
 * work-items on one word: a step of spm at 256 ants took about 100 cycles longer of
 * about 1,700, an iteration 3-8 % longer (clock64 marks, H100, docs/notebook/acs.md).  The next
 * call's writes follow the step's last barrier. */
inline uint2 step_least(const select_state_t *st, const uint candidate_word, const uint stored_word)
{
    __local uint *words = step_words(st);
    const uint lid = get_local_id(0);
    if (lid < EVEN(CL))   /* work-items from CL on offer ~0u */
        words[lid] = candidate_word;
    if (lid < STEP_STORED_WORDS)   /* from SPM_S on ~0u */
        words[EVEN(CL) + lid] = stored_word;
    barrier(CLK_LOCAL_MEM_FENCE);
    __local const uint2 *pairs = (__local const uint2 *)words;
    uint least_a = ~0u, least_b = ~0u, least_stored = ~0u;   /* two chains of mins */
#pragma unroll
    for (uint i = 0; i < EVEN(CL) / 2; i++) {
        const uint2 w = pairs[i];
        if (i & 1)
            least_b = min(least_b, min(w.x, w.y));
        else
            least_a = min(least_a, min(w.x, w.y));
    }
#pragma unroll
    for (uint i = 0; i < STEP_STORED_WORDS / 2; i++) {
        const uint2 w = pairs[EVEN(CL) / 2 + i];
        least_stored = min(least_stored, min(w.x, w.y));
    }
    return (uint2)(min(least_a, least_b), least_stored);
}

/* A greedy step's word for a weight w > 0 in the work-group minimum (step_least): the
 * bits of w inverted, so that the least word is the largest w (positive floats order as
 * their bits), with their low bits (`mask`) replaced by `slot`, as list_slot_word() does:
 * weights within 2^(bits of mask - 23) of each other (relative) tie, and the lower slot
 * takes them.  No division on the step's path: with the least 1 / w, the form before,
 * an iteration of spm at 256 ants took 3-4 % longer (docs/notebook/acs.md). */
inline uint greedy_word(const float w, const uint slot, const uint mask)
{
    return (~as_uint(w) & ~mask) | slot;
}

#if STORE == STORE_SPM
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
inline uint stored_word(TABU_DECL, const uint n, const uint4 mine)
{
    const uint i = get_local_id(0);
    /* selects, not branches: with the early returns an iteration of spm at 256 ants took
     * 7-8 % longer (clock64 marks: about 230 cycles here, against 120, docs/notebook/acs.md); an empty slot reads the tabu of city
     * n - 1 and is dropped */
    const float w = as_float(mine.y) * as_float(mine.z);
    const int live = (i < SPM_S) & (mine.x != EMPTY_NODE) & !tabu_visited(TABU_ARGS, n, min(mine.x, n - 1u)) &
                     (w > 0.0f);
    return live ? greedy_word(w, i, STORED_SLOT_MASK) : ~0u;
}
#endif

/* A work-item's share of what a step at city u reads from global memory: candidate i =
 * lid of u (cl <= the work-group size, AcsParams checks it) and its eta^beta, and over
 * the selective memory u's stored edge lid (work-items < SPM_S; each loading the whole
 * row was 5 % slower).  The candidate's and the stored edge's loads are issued together,
 * one L2 round trip.  acs_construct() loads the next step's while lid 0 records the step
 * and makes its local update, so that the round trip overlaps that work instead of
 * starting the next step (clock64 marks on the H100: about 360 of a step's 1,630 cycles
 * waited for these loads, and about 410 followed the next city's choice, docs/notebook/acs.md). */
typedef struct {
    uint v;
    float heur;
#if STORE == STORE_SPM
    uint4 mine;
#endif
} step_rows_t;

inline step_rows_t step_rows(__global const int *restrict cand, __global const float *restrict cand_heur,
                             PHER_DECL, const uint u)
{
    const uint lid = get_local_id(0);
    step_rows_t rows;
    rows.v = lid < CL ? (uint)cand[u * CL + lid] : NONE;
    rows.heur = lid < CL ? cand_heur[u * CL + lid] : 0.0f;
#if STORE == STORE_SPM
    rows.mine = lid < SPM_S ? ((TRAIL_GLOBAL uint4 *)spm)[u * SPM_S + lid] : (uint4)(EMPTY_NODE, 0u, 0u, 0u);
#endif
    return rows;
}

/* The next city of an ant at cur (Fig. 3), the same in every work-item; NONE only when
 * every city is visited.  rows: step_rows() of cur.  q_words: q_draws() of the step.
 * *eta_beta: eta^beta of (cur, next) over the selective memory, for local_update() (0
 * over the matrix). */
inline uint acs_next(TABU_DECL, ACS_DECL, const uint cur, const step_rows_t rows, const rng_key_t key,
                     const uint ant, const uint iteration, const uint step, const uint4 q_words,
                     select_state_t *st, float *eta_beta)
{
    const uint lid = get_local_id(0), un = (uint)n;
    const int greedy = unit_open0(word_of(q_words, step & 3)) <= q0;
    /* work-item i weighs candidate i */
    const int has_candidate = lid < CL;
    const uint v = rows.v;
    const float heur = rows.heur;
#if STORE == STORE_SPM
    /* cur's stored edges, copied to local memory for every work-item */
    __local uint2 *ring = step_ring(st);
    __local float *ring_heur = step_ring_heur(st);
    const uint4 mine = rows.mine;
    if (lid < SPM_S) {
        ring[lid] = mine.xy;
        ring_heur[lid] = as_float(mine.z);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    uint least = ~0u;
    if (has_candidate) {
#if STORE == STORE_SPM
        const float w = ring_trail(ring, tau_min, v) * heur;
#else
        const float w = pher_read(PHER_ARGS, DIST_ARGS, cur, v) * heur;
#endif
        /* the largest w is the greedy choice, the least of -log2(u) / w a draw with
         * probability w / (sum of w) (eq. 2); a greedy step (most steps: q0 = (n - 20) / n)
         * draws nothing */
        const uint word = greedy ? greedy_word(w, lid, LIST_SLOT_MASK)
                                 : list_slot_word(-native_log2(unit_open0(list_draw(st, key, ant, iteration, step, lid))) / w, lid);
        /* a select, not a branch: under the tabu check the compiler sank MMAS's weight
         * load and its L2 latency came after the check's (docs/notebook/mmas.md, `24222fd`) */
        least = !tabu_visited(TABU_ARGS, un, v) && w > 0.0f ? min(least, word) : least;
    }
#if STORE == STORE_SPM
    const uint stored = greedy ? stored_word(TABU_ARGS, un, mine) : ~0u;
#else
    const uint stored = ~0u;
#endif
    /* .x: the candidates' least, .y: the stored edges', which count only while a
     * candidate is left (as in the authors' code; with none the fallback weighs them) */
    step_offer(st, v, heur);
    const uint2 won = step_least(st, least, stored);
    uint next = NONE;
    *eta_beta = 0.0f;
    if (won.x != ~0u) {
        const uint2 candidate = step_candidate(st, won.x & LIST_SLOT_MASK);
        next = candidate.x;
        if (STORE == STORE_SPM)
            *eta_beta = as_float(candidate.y);
    }
#if STORE == STORE_SPM
    if (won.x != ~0u && won.y < won.x) {
        next = ring[won.y & STORED_SLOT_MASK].x;
        *eta_beta = ring_heur[won.y & STORED_SLOT_MASK];
    }
#endif
    if (next == NONE) {
        /* no unvisited candidate: the unvisited city with the largest tau * eta^beta (the
         * least 1 / w, ties to the lower city) */
        const ulong won = group_min_entry(st, fallback_entry(TABU_ARGS, DIST_ARGS, PHER_ARGS, cur, beta, st));
        next = won == ULONG_MAX ? NONE : (uint)won;
        if (STORE == STORE_SPM && next != NONE)
            *eta_beta = heuristic(DIST_ARGS, cur, next, beta);
    }
    return next;
}

/* The start of every ant: a city drawn uniformly (Fig. 2, line 3). */
inline uint acs_start(const rng_key_t key, const uint ant, const uint iteration, const uint n)
{
    return rng_below(ant_draws(key, ant, iteration, 0u, 0xFFFFFFFFu).x, n);
}

/* Whole tours in one launch (acs-gpu-alt, acs-gpu-spm; Table 1 build_ants_solutions_alt
 * and _spm): an ant per work-group; the local updates of different ants race. */
__kernel void acs_construct(ACS_DECL, const float rho, const float tau0, const uint k,
                            const uint seed_lo, const uint seed_hi, const uint iteration,
                            __global int *restrict tours, __global long *restrict lengths,
                            TABU_DECL, __local long *scratch)
{
    const uint ant = get_group_id(0), lid = get_local_id(0), un = (uint)n;
    const rng_key_t key = {seed_lo, seed_hi};
    __global int *tour = tours + (ulong)ant * un;
    tabu_init(TABU_ARGS, un);
    select_state_t st = select_init(scratch);
    const uint start = acs_start(key, ant, iteration, un);
    uint cur = start;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        tour[0] = (int)cur;
        tabu_mark(TABU_ARGS, un, cur);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint4 q_words = q_draws(key, ant, iteration, 1u);
    /* steps until the next local update: a countdown, as step % k (a run-time k) was a
     * division on lid 0's path every step, 3-6 % of an iteration of alt and spm at 256
     * ants, k 4 (docs/notebook/acs.md) */
    uint until_update = k;
    step_rows_t rows = step_rows(cand, cand_heur, PHER_ARGS, cur);
    for (uint step = 1; step < un; step++) {
        if ((step & 3) == 0)
            q_words = q_draws(key, ant, iteration, step);
        float eta_beta;
        const uint next = acs_next(TABU_ARGS, ACS_ARGS, cur, rows, key, ant, iteration, step, q_words, &st,
                                   &eta_beta);
        if (step + 1 < un)   /* the next step's loads, in flight during lid 0's work below */
            rows = step_rows(cand, cand_heur, PHER_ARGS, next);
        until_update = until_update == 1u ? k : until_update - 1u;
        if (lid == 0) {
            tabu_mark(TABU_ARGS, un, next);
            tour[step] = (int)next;
            if (until_update == k)   /* step % k == 0 */
                local_update(PHER_ARGS, DIST_ARGS, beta, cur, next, eta_beta, rho, tau0);
        }
        cur = next;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0 && un % k == 0)  /* the closing edge, the n-th (Fig. 2, line 14) */
        local_update(PHER_ARGS, DIST_ARGS, beta, cur, start, heuristic(DIST_ARGS, cur, start, beta), rho, tau0);
    barrier(CLK_GLOBAL_MEM_FENCE);
    const long length = group_tour_length(DIST_ARGS, tour, scratch);
    if (lid == 0)
        lengths[ant] = length;
}

/* ---- step by step (acs-gpu): Table 1's select_first_nodes, select_next_node and
 * eval_ants_solutions, one launch a step.  Between launches an ant's tabu waits in
 * `visited` (its (n + 31) / 32 words; a step copies it to local memory) and its state in
 * ant_state (step, current city, previous city: one load), so that every step's launch
 * has the same arguments.
 *   The matrix is kept twice, tau[0, n^2) and tau[n^2, 2 n^2).  Step s reads copy s % 2,
 * which holds every local update of steps 1 to s - 1, and adds the updates of the ants'
 * edges s - 1 and s (by compare-and-swap) to the other copy, which then holds those of
 * steps 1 to s and is the one step s + 1 reads.  No ant reads a trail that a launch
 * writes, and every update is the same map tau -> (1 - rho) tau + rho tau0, so that
 * their order does not matter: the tours do not depend on the order in which the ants
 * run (the paper's ACS-GPU updates within the step, so its ants may see each other's
 * updates or not), and both copies end an iteration with the same trails.  Over the
 * matrix only. */
#if STORE == STORE_MATRIX

/* The start of every ant (one work-item per ant). */
__kernel void acs_first(const int n, const int ants, const uint seed_lo, const uint seed_hi,
                        const uint iteration, __global int *restrict tours,
                        __global uint *restrict visited, __global uint4 *restrict ant_state)
{
    const uint ant = get_global_id(0), words = ((uint)n + 31) / 32;
    if (ant >= (uint)ants)
        return;
    const rng_key_t key = {seed_lo, seed_hi};
    const uint start = acs_start(key, ant, iteration, (uint)n);
    for (uint w = 0; w < words; w++)
        visited[ant * words + w] = 0u;
    visited[ant * words + (start >> 5)] = 1u << (start & 31);
    tours[(ulong)ant * n] = (int)start;
    ant_state[ant] = (uint4)(1u, start, NONE, 0u);
}

/* A step's local updates, edge (prev, cur) when `older` and edge (cur, next) when
 * `newer`, both ways round, by compare-and-swap (eq. 3): the four cells' loads issued
 * together, then their first attempts together, then the retries of the attempts another
 * ant's update beat (one L2 round trip each for loads and attempts when nothing races,
 * where an edge at a time took four). */
inline void step_updates(__global float *restrict copy, const uint n, const uint prev,
                         const uint cur, const uint next, const int older, const int newer,
                         const float rho, const float tau0)
{
    const float2 rule = local_rule(rho, tau0);
    const float a = rule.x, b = rule.y;
    const int live[4] = {older, older, newer, newer};
    const ulong at[4] = {(ulong)prev * n + cur, (ulong)cur * n + prev, (ulong)cur * n + next,
                         (ulong)next * n + cur};
    uint seen[4], old[4];
#pragma unroll
    for (int i = 0; i < 4; i++)
        seen[i] = live[i] ? as_uint(copy[at[i]]) : 0u;
#pragma unroll
    for (int i = 0; i < 4; i++) {
        old[i] = seen[i];
        if (live[i])
            seen[i] = atomic_cmpxchg((volatile __global uint *)(copy + at[i]), old[i],
                                     as_uint(a * as_float(old[i]) + b));
    }
#pragma unroll
    for (int i = 0; i < 4; i++)
        if (seen[i] != old[i])
            cas_update((volatile __global uint *)(copy + at[i]), seen[i], a, b);
}

/* The next step of every ant: its next city, then its local updates. */
__kernel void acs_step(ACS_DECL, const float rho, const float tau0, const uint k, const uint seed_lo,
                       const uint seed_hi, const uint iteration, __global int *restrict tours,
                       __global uint *restrict visited, __global uint4 *restrict ant_state,
                       TABU_DECL, __local long *scratch)
{
    const uint ant = get_group_id(0), lid = get_local_id(0), un = (uint)n, words = (un + 31) / 32;
    const rng_key_t key = {seed_lo, seed_hi};
    const uint4 state = ant_state[ant];
    const uint step = state.x, cur = state.y, prev = state.z;
    __global float *read = tau + (ulong)(step & 1) * un * un;
    __global float *write = tau + (ulong)((step + 1) & 1) * un * un;
    for (uint w = lid; w < words; w += get_local_size(0))
        bits[w] = visited[ant * words + w];
    select_state_t st = select_init(scratch);
    barrier(CLK_LOCAL_MEM_FENCE);
    float eta_beta;   /* the selective memory's: not used over the matrix */
    const uint next = acs_next(TABU_ARGS, DIST_ARGS, cand, cand_heur, read, spm_tail, tau_min, q0,
                               beta, cur, step_rows(cand, cand_heur, read, spm_tail, tau_min, cur),
                               key, ant, iteration, step, q_draws(key, ant, iteration, step), &st,
                               &eta_beta);
    /* acs_next's last barrier follows every work-item's last tabu read */
    if (lid == 0) {
        tabu_mark(TABU_ARGS, un, next);
        visited[ant * words + (next >> 5)] = bits[next >> 5];
        tours[(ulong)ant * un + step] = (int)next;
        ant_state[ant] = (uint4)(step + 1, next, cur, 0u);
        step_updates(write, un, prev, cur, next, step > 1 && (step - 1) % k == 0, step % k == 0,
                     rho, tau0);
    }
}

/* After step n - 1: the local updates left (edges n - 1 and n to copy (n - 1) % 2, edge
 * n, the closing one (Fig. 2, line 14), to copy n % 2), then every ant's length. */
__kernel void acs_close(DIST_PARAMS, __global float *restrict tau, const float rho, const float tau0,
                        const uint k, __global const int *restrict tours, __global long *restrict lengths,
                        __local long *scratch)
{
    const uint ant = get_group_id(0), un = (uint)n;
    __global const int *tour = tours + (ulong)ant * un;
    if (get_local_id(0) == 0) {
        const uint prev = (uint)tour[un - 2], last = (uint)tour[un - 1], start = (uint)tour[0];
        step_updates(tau + (ulong)((un - 1) & 1) * un * un, un, prev, last, start,
                     (un - 1) % k == 0, un % k == 0, rho, tau0);
        step_updates(tau + (ulong)(un & 1) * un * un, un, prev, last, start, 0, un % k == 0, rho, tau0);
    }
    const long length = group_tour_length(DIST_ARGS, tour, scratch);
    if (get_local_id(0) == 0)
        lengths[ant] = length;
}

#endif

/* The global update along the global best tour (eq. 4): tau = (1 - alpha) tau +
 * alpha / L_gb on its edges, both ways round, in each of `copies` matrices (acs-gpu keeps
 * two).  A work-item per city of the tour updates that city's two edges, so no two
 * work-items write the same cell (or SPM ring). */
__kernel void acs_global(DIST_PARAMS, __global const int *restrict best_tour,
                         __global const long *restrict status, PHER_DECL, const float alpha,
                         const uint copies, const float beta)
{
    const uint i = get_global_id(0), un = (uint)n;
    if (i >= un)
        return;
    const float deposit = alpha / (float)status[B_BEST];  /* best.h, from the host */
    const uint a = (uint)best_tour[i];
    for (uint c = 0; c < copies; c++) {
#if STORE == STORE_SPM
        __global uint4 *store = spm;
#else
        __global float *store = tau + (ulong)c * un * un;
#endif
        pher_update(store, spm_tail, tau_min, DIST_ARGS, beta, a, (uint)best_tour[(i + 1) % un], 1.0f - alpha,
                    deposit);
        pher_update(store, spm_tail, tau_min, DIST_ARGS, beta, a, (uint)best_tour[(i + un - 1) % un],
                    1.0f - alpha, deposit);
    }
}
