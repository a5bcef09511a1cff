/* Ant Colony System on the device (Skinderowicz 2016,
 * ../shared/papers/skinderowicz2016-gpu-acs.txt).
 *
 * One work-group per ant (section 3.1): its tabu is a bitmask in local memory (ants.h,
 * TABU_BT), one work-item per candidate of the current city.  The next city follows the
 * pseudo-random proportional rule (eq. 1-2, Fig. 3): among the unvisited of the CL
 * nearest neighbours, with probability q0 the one with the largest tau * eta^beta (over
 * the selective memory, cur's stored edges count too, as in the authors' code:
 * acs_store_spm.h, stored_word()), otherwise one drawn with probability proportional to
 * it (drawn here by reservoir keys -log2(u) / w, the same distribution as the paper's
 * roulette, so that greedy and roulette are both one work-group minimum, step_least()
 * below); with no unvisited
 * candidate, the unvisited city with the largest tau * eta^beta (section 3.1.1).  After
 * every k-th edge the ant lowers its pheromone, tau = (1 - rho) tau + rho tau0 (eq. 3,
 * section 4.2), both ways round.
 *   -D CL=<cl>                          candidate set size (the paper: 32)
 *   -D STORE=<STORE_MATRIX|STORE_SPM>   the n x n pheromone matrix (acs_store_matrix.h),
 *                                       or the selective pheromone memory of section 3.2
 *                                       (acs_store_spm.h)
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
/* -D UNROLL_HINTS=1 (acs.py, on GPUs): fallback_entry's scan of every city (over the
 * selective memory, acs_store_spm.h) carries an unroll hint, measured on NVIDIA's
 * compiler; a CPU's (PoCL's) cannot take it and printed "1 warning generated." on the
 * user's stderr at every fresh build. */
#ifndef UNROLL_HINTS
#define UNROLL_HINTS 0
#endif

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

/* x rounded up to an even count: a step's scratch words go in pairs (step_words()) */
#define EVEN(x) (((x) + 1) & ~1)

/* ---- the pheromone store ----------------------------------------------------------------
 * STORE picks the header that keeps the trails: acs_store_matrix.h (STORE_MATRIX, the n x n
 * matrix) or acs_store_spm.h (STORE_SPM, the selective pheromone memory of section 3.2).
 * Each gives the ants' code below the same interface:
 *   PHER_DECL, PHER_ARGS        the store's kernel parameters (trails, spm_tail, tau_min)
 *                               and a call's arguments; PHER_ARGS_COPY(c) the arguments
 *                               for copy c of the trails (acs_global)
 *   STORE_KEEPS_ETA_BETA        1 where the store keeps every edge's eta^beta beside its
 *                               trail, so that the ants pass it to the updates
 *   trail_t, pher_load(), pher_store()
 *                               an update in two halves, so that local_update() issues both
 *                               edges' loads before either store (one L2 round trip on an
 *                               ant's step instead of two): pher_load() reads what the
 *                               update needs (the cell, or u's SPM_S edges), pher_store()
 *                               writes tau(u, v) = a * tau(u, v) + b from it
 *   step_rows_t, step_rows()    what a work-item reads for a step at u: its candidate
 *                               (.v), the candidate's eta^beta (.heur) and the store's
 *                               share (below, "a step's reads")
 *   step_share_t, store_step_share()
 *                               makes the step's reads the whole work-group's (over the
 *                               selective memory a copy in local memory, then a barrier;
 *                               every work-item calls it), and says where they are
 *   step_trail()                tau(cur, v) of a step's candidate v
 *   stored_word(), stored_pick()
 *                               the store's own offers to a greedy step beside the
 *                               candidates (the selective memory's stored edges; none over
 *                               the matrix), and the step's city: the stored edge that won,
 *                               or the candidates' choice
 *   fallback_entry()            a work-item's share of the fallback (section 3.1.1): its
 *                               entry (bits of 1 / w, city) for the least 1 / w, w = tau *
 *                               eta^beta, over the unvisited cities
 *   STEP_RING_WORDS, STEP_STORED_WORDS
 *                               the store's words in a step's scratch (step_words())
 * and for the tests' checks, tau(u, v): pher_read() over the matrix, ring_trail() over
 * the selective memory's copy of u's edges. */
#if STORE == STORE_SPM
#include "acs_store_spm.h"
#else
#include "acs_store_matrix.h"
#endif

/* tau(u, v) = a * tau(u, v) + b. */
inline void pher_update(PHER_DECL, DIST_PARAMS, const float beta, const uint u, const uint v,
                        const float a, const float b)
{
    const trail_t t = pher_load(PHER_ARGS, DIST_ARGS, u, v);
    pher_store(PHER_ARGS, DIST_ARGS, u, v, &t, a, b, STORE_KEEPS_ETA_BETA ? heuristic(DIST_ARGS, u, v, beta) : 0.0f);
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
#if SYMMETRIC || !STORE_KEEPS_ETA_BETA
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

/* step_least()'s words, pairs of uints: CL candidates' words (an even count), then the
 * store's STEP_STORED_WORDS (the selective memory's SPM_S stored edges', an even count),
 * after the store's STEP_RING_WORDS (step_ring()); then step_offer()'s candidates and
 * their eta^beta (an even count each). */
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
        if (STORE_KEEPS_ETA_BETA)   /* over the matrix no local update needs it */
            step_candidates(st)[EVEN(CL) + i] = as_uint(eta_beta);
    }
}

/* Candidate `slot`'s (city, eta^beta), as step_offer() gave them (.y over the selective
 * memory only, STORE_KEEPS_ETA_BETA). */
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

/* A step's reads: step_rows(cand, cand_heur, PHER_ARGS, u), the store header's, is a
 * work-item's share of what a step at city u reads from global memory: candidate i = lid
 * of u (cl <= the work-group size, AcsParams checks it) and its eta^beta (step_rows_t's
 * .v and .heur), and the store's share (over the selective memory u's stored edge lid,
 * .mine).  The candidate's and the stored edge's loads are issued together, one L2 round
 * trip.  acs_construct() loads the next step's while lid 0 records the step and makes its
 * local update, so that the round trip overlaps that work instead of starting the next
 * step (clock64 marks on the H100: about 360 of a step's 1,630 cycles waited for these
 * loads, and about 410 followed the next city's choice, docs/notebook/acs.md). */

/* The next city of an ant at cur (Fig. 3), the same in every work-item; NONE only when
 * every city is visited.  rows: step_rows() of cur.  q_words: q_draws() of the step.
 * *eta_beta: eta^beta of (cur, next) over the selective memory, for local_update() (0
 * over the matrix: STORE_KEEPS_ETA_BETA). */
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
    /* the store's share of the step for every work-item (over the selective memory cur's
     * stored edges, copied to local memory) */
    const step_share_t shared = store_step_share(st, rows, lid);
    uint least = ~0u;
    if (has_candidate) {
        const float w = step_trail(PHER_ARGS, DIST_ARGS, shared, cur, v) * heur;
        /* the largest w is the greedy choice, the least of -log2(u) / w a draw with
         * probability w / (sum of w) (eq. 2); a greedy step (most steps: q0 = (n - 20) / n)
         * draws nothing */
        const uint word = greedy ? greedy_word(w, lid, LIST_SLOT_MASK)
                                 : list_slot_word(-native_log2(unit_open0(list_draw(st, key, ant, iteration, step, lid))) / w, lid);
        /* a select, not a branch: under the tabu check the compiler sank MMAS's weight
         * load and its L2 latency came after the check's (docs/notebook/mmas.md, `24222fd`) */
        least = !tabu_visited(TABU_ARGS, un, v) && w > 0.0f ? min(least, word) : least;
    }
    /* the stored edges' share of a greedy step (over the matrix none) */
    const uint stored = greedy ? stored_word(TABU_ARGS, un, rows) : ~0u;
    /* .x: the candidates' least, .y: the stored edges', which count only while a
     * candidate is left (as in the authors' code; with none the fallback weighs them) */
    step_offer(st, v, heur);
    const uint2 won = step_least(st, least, stored);
    uint next = NONE;
    *eta_beta = 0.0f;
    if (won.x != ~0u) {
        const uint2 candidate = step_candidate(st, won.x & LIST_SLOT_MASK);
        next = candidate.x;
        if (STORE_KEEPS_ETA_BETA)
            *eta_beta = as_float(candidate.y);
    }
    next = stored_pick(shared, won, next, eta_beta);
    if (next == NONE) {
        /* no unvisited candidate: the unvisited city with the largest tau * eta^beta (the
         * least 1 / w, ties to the lower city; fallback_entry(): section 3.1.1) */
        const ulong won = group_min_entry(st, fallback_entry(TABU_ARGS, DIST_ARGS, PHER_ARGS, cur, beta, st));
        next = won == ULONG_MAX ? NONE : (uint)won;
        if (STORE_KEEPS_ETA_BETA && next != NONE)
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
    const uint ant = group_index(), lid = get_local_id(0), un = (uint)n;
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
        pher_update(PHER_ARGS_COPY(c), DIST_ARGS, beta, a, (uint)best_tour[(i + 1) % un], 1.0f - alpha,
                    deposit);
        pher_update(PHER_ARGS_COPY(c), DIST_ARGS, beta, a, (uint)best_tour[(i + un - 1) % un],
                    1.0f - alpha, deposit);
    }
}
