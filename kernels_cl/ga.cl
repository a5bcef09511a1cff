/* Genetic algorithm on the device (Kang et al. 2016, ../shared/papers/kang2016-gpu-genetic-tsp.txt).
 *
 * Genes are tours of n cities that all start at city 0 (section 2.3).  ga_crossover builds
 * offspring by the constructive crossovers of sections 2.1-2.4, a work-group per offspring
 * (the issue's "where it is faster": it sets up the parents' records and rotates the
 * child together) whose first work-item advances the position k as in Algorithm 1:
 *   SCX    (Ahmed): from the current city, each parent's first unvisited city after it
 *          in the parent's sequence (none past the end: the first unvisited city of the
 *          template 0, 1, ..., n-1); the nearer one, the second parent's on a tie;
 *   BCSCX  (bidirectional circular SCX, section 2.2): each parent's nearest unvisited
 *          city after and before the current one, the sequence read as a circle; the
 *          nearest of the four, the first in the order (first parent after, before,
 *          second parent after, before) on a tie;
 *   ARX    (alternating recommendation, section 2.4): as BCSCX but only the privileged
 *          parent recommends: the first parent before position A, the second from A to
 *          B - 1, the first again from B (and the other way round for the second child).
 * The unvisited cities before and after a position are found in O(1) by the forward and
 * backward jump indices of section 2.3 (Table 1, eq. 1): the offsets to the nearest
 * unvisited position either way, kept up to date as a doubly linked list over each
 * parent's sequence, so an offspring costs O(n).  A construction may start from any
 * city (the paper always starts from city 0; tspcl/solvers/ga.py says why BCSCX and ARX
 * do not by default: from city 0 the construction is deterministic, so alike parents give
 * the same child and an ARX pool collapses); the offspring is stored rotated to start at
 * city 0.
 *
 * A generation (tspcl/solvers/ga.py) is: the competition (ga_compete: the paper's rivals
 * j and j + size / 2, section 3.2; or ga_compete_pairs and ga_compete_store: adjacent
 * rivals 2j and 2j + 1, the default), ga_task_draws and ga_crossover (fixed partners, the
 * offspring in fixed slots, section 3.3), ga_mutate (a random 2-opt move, section 4),
 * ga_lengths (a work-group per gene, section 3.1), and every few generations ga_extremes,
 * ga_migrate_out and ga_migrate_in (section 3.4).
 * Random numbers: Philox keyed by the seed, counter (purpose, generation, gene or task).
 */
#include "tour.h"
#include "reduce.h"

/* The host passes the crossovers' codes SCX, BCSCX, ARX (tspcl/solvers/ga.py). */
#if !defined(SCX) || !defined(BCSCX) || !defined(ARX)
#error "the host passes the crossovers' codes SCX, BCSCX, ARX (ga.py PROGRAM_DEFINES)"
#endif

/* An offspring's working memory (global, per task), for each parent one record per
 * position (Table 1 packed with what a step needs next): (city, forward jump index,
 * backward jump index, the city's position in the other parent), then the first
 * parent's positions by city and the visited bits (SCX's template only).  A step's
 * dependent global loads are then the candidates' records and, beside their distances,
 * the other parent's records of the same cities: two levels where separate position,
 * jump-index and gene arrays needed five or six (a step waits on the one before, so the
 * construction is latency-bound).  A task's `words` ints (tspcl/solvers/ga.py
 * task_words) hold them. */

inline int wrap(const int i, const int n) { return i >= n ? i - n : i < 0 ? i + n : i; }

/* A city with its position and record in both parents. */
typedef struct {
    int city, ia, ib;
    int4 ra, rb;
} cand_t;

/* The unvisited positions after and before a visited one, with their records as the
 * visit leaves them. */
typedef struct {
    int after, before;
    int4 after_rec, before_rec;
} around_t;

/* The city at position i (record r) of one parent is visited: its unvisited neighbours'
 * records with the position unlinked (eq. 1), in registers; unlink_store writes them. */
inline around_t unlinked_neighbours(__global const int4 *rec, const int i, const int4 r, const int n)
{
    around_t s = {wrap(i + r.y, n), wrap(i - r.z, n)};
    s.after_rec = rec[s.after];
    s.before_rec = rec[s.before];
    s.before_rec.y += r.y;
    s.after_rec.z += r.z;
    if (s.after == s.before) {  /* the last unvisited position: both changes are its */
        s.after_rec.y = s.before_rec.y;
        s.before_rec = s.after_rec;
    }
    return s;
}

inline void unlink_store(__global int4 *rec, const around_t s)
{
    rec[s.before].y = s.before_rec.y;
    rec[s.after].z = s.after_rec.z;
}

/* A candidate whose record r at position i of one parent (the first when own_is_a) is in
 * hand, with its place and record in the other parent, whose records are `other` and
 * whose unlinked neighbours o are not stored yet. */
inline cand_t candidate_with(const int4 r, const int i, __global const int4 *other, const around_t o,
                             const int own_is_a)
{
    const int4 loaded = other[r.w];
    const int4 s = r.w == o.after ? o.after_rec : r.w == o.before ? o.before_rec : loaded;
    cand_t c = {r.x, own_is_a ? i : r.w, own_is_a ? r.w : i, own_is_a ? r : s, own_is_a ? s : r};
    return c;
}

/* The city at position i of the first parent, the records as stored. */
inline cand_t city_at(__global const int4 *rec_a, __global const int4 *rec_b, const int i)
{
    const int4 r = rec_a[i], s = rec_b[r.w];
    cand_t c = {r.x, i, r.w, r, s};
    return c;
}

inline int visited(__global const uint *bits, const int c) { return (bits[c >> 5] >> (c & 31)) & 1u; }

/* One offspring per task t, a work-group per task: parents genes[task_a[t]] and
 * genes[task_b[t]], crossover task_kind[t] (SCX, BCSCX, ARX with switch points task_A[t]
 * <= task_B[t], the first parent privileged outside them), built from city task_S[t] (0
 * for SCX, whose template needs it) and stored rotated to start at city 0 in
 * offspring[task_out[t]]; working memory: `words` ints per task, tasks_per_part
 * tasks in each of mem0..mem3 (one buffer can exceed a device's largest allocation at a
 * million cities: 1024 tasks take 34 GiB).  The work-group sets up the
 * records and rotates the child; its first work-item walks Algorithm 1's positions k
 * (a step depends on the one before).  offspring may be genes itself when no task writes
 * a parent's slot (the child's row serves as scratch while the records are set up). */
__kernel void ga_crossover(DIST_PARAMS, __global const int *genes, __global int *offspring, const int tasks,
                           __global const int *restrict task_a, __global const int *restrict task_b,
                           __global const int *restrict task_kind, __global const int *restrict task_A,
                           __global const int *restrict task_B, __global const int *restrict task_S,
                           __global const int *restrict task_out, __global int *mem0, __global int *mem1,
                           __global int *mem2, __global int *mem3, const int tasks_per_part,
                           const int words)
{
    const int t = (int)group_index(), lid = get_local_id(0), group = get_local_size(0);
    __local int zero_at;  /* where the child has city 0 */
    if (t >= tasks)
        return;
    const int part = t / tasks_per_part;
    __global int *mem = part == 0 ? mem0 : part == 1 ? mem1 : part == 2 ? mem2 : mem3;
    __global int *m = mem + (long)(t - part * tasks_per_part) * words;
    __global int4 *rec_a = (__global int4 *)m, *rec_b = rec_a + n;
    __global int *pos_a = m + 8 * n;
    __global uint *bits = (__global uint *)(pos_a + n);
    __global const int *ga = genes + (long)task_a[t] * n, *gb = genes + (long)task_b[t] * n;
    __global int *child = offspring + (long)task_out[t] * n, *pos_b = child;
    const int kind = task_kind[t], A = task_A[t], B = task_B[t];
    const int start = kind == SCX ? 0 : task_S[t];
    /* Jump indices 1 everywhere: no city visited yet (Table 1 once the start is unlinked).
     * The loops' trip counts are the same for every work-item: with the plain strided form
     * PoCL's build of this kernel crashed whenever n was below the group's size. */
    for (int i0 = 0; i0 < n; i0 += group) {
        const int i = i0 + lid;
        if (i >= n)
            break;
        pos_a[ga[i]] = i;
        pos_b[gb[i]] = i;
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    for (int i0 = 0; i0 < n; i0 += group) {
        const int i = i0 + lid;
        if (i >= n)
            break;
        const int x = ga[i], y = gb[i];
        rec_a[i] = (int4)(x, 1, 1, pos_b[x]);
        rec_b[i] = (int4)(y, 1, 1, pos_a[y]);
    }
    if (kind == SCX)
        for (int w = lid; w < (n + 31) / 32; w += group)
            bits[w] = w == 0 ? 1u : 0u;  /* SCX starts at city 0 */
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (lid == 0) {
        cand_t cur = city_at(rec_a, rec_b, pos_a[start]);
        child[0] = start;
        int template_next = 1, zero = 0;  /* SCX: the template's first city not yet known visited */
        for (int k = 1; k < n; k++) {
            /* All of a step's loads before its stores, so that they overlap. */
            const around_t na = unlinked_neighbours(rec_a, cur.ia, cur.ra, n);
            const around_t nb = unlinked_neighbours(rec_b, cur.ib, cur.rb, n);
            const int c = cur.city;
            cand_t next;
            if (kind == SCX) {
                /* each parent's first unvisited city after c, not past the sequence's end
                 * (the jump would wrap: then the template's), the second parent's on a tie */
                const int a_on = cur.ia + cur.ra.y < n, b_on = cur.ib + cur.rb.y < n;
                const cand_t a = candidate_with(na.after_rec, na.after, rec_b, nb, 1);
                const cand_t b = candidate_with(nb.after_rec, nb.after, rec_a, na, 0);
                unlink_store(rec_a, na);
                unlink_store(rec_b, nb);
                cand_t t0 = cur;
                if (!a_on || !b_on) {
                    while (visited(bits, template_next))
                        template_next++;
                    t0 = city_at(rec_a, rec_b, pos_a[template_next]);
                }
                const cand_t x = a_on ? a : t0, y = b_on ? b : t0;
                next = DIST(c, x.city) < DIST(c, y.city) ? x : y;
                bits[next.city >> 5] |= 1u << (next.city & 31);
            } else {
                /* BCSCX (section 2.2): the nearest of each parent's unvisited neighbours
                 * after and before c, the first in the order (a after, a before, b after,
                 * b before) on a tie; ARX (section 2.4) the same over the privileged
                 * parent's two.  One path for both, so that a hybrid pool's work-groups
                 * run alike. */
                const int a_speaks = kind == BCSCX || k < A || k >= B, b_speaks = kind == BCSCX || !a_speaks;
                const cand_t a1 = candidate_with(na.after_rec, na.after, rec_b, nb, 1);
                const cand_t a2 = candidate_with(na.before_rec, na.before, rec_b, nb, 1);
                const cand_t b1 = candidate_with(nb.after_rec, nb.after, rec_a, na, 0);
                const cand_t b2 = candidate_with(nb.before_rec, nb.before, rec_a, na, 0);
                const long far = LONG_MAX;
                const long da1 = a_speaks ? DIST(c, a1.city) : far, da2 = a_speaks ? DIST(c, a2.city) : far;
                const long db1 = b_speaks ? DIST(c, b1.city) : far, db2 = b_speaks ? DIST(c, b2.city) : far;
                next = a1;
                long best = da1;
                if (da2 < best) { next = a2; best = da2; }
                if (db1 < best) { next = b1; best = db1; }
                if (db2 < best) { next = b2; }
                unlink_store(rec_a, na);
                unlink_store(rec_b, nb);
            }
            child[k] = next.city;
            if (next.city == 0)
                zero = k;
            cur = next;
        }
        zero_at = zero;
    }
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    if (start != 0) {  /* rotate to start at city 0 (the records are free now) */
        __global int *row = m;
        for (int k = lid; k < n; k += group)
            row[k] = child[k];
        barrier(CLK_GLOBAL_MEM_FENCE);
        for (int k = lid; k < n; k += group)
            child[k] = row[wrap(zero_at + k, n)];
    }
}

/* ---- the pool ------------------------------------------------------------------------
 * genes[g * n + k], the gene pool of m genes in `groups` groups of size = m / groups
 * consecutive genes; lengths[g] their tour lengths. */

#define PURPOSE_INIT 1u
#define PURPOSE_SWITCH 2u
#define PURPOSE_MUTATE 3u
#define PURPOSE_START 4u

/* Random genes from city 0 (a work-item per gene, Fisher-Yates over positions 1..n-1). */
__kernel void ga_random_genes(const int n, const int m, const uint seed_lo, const uint seed_hi,
                              __global int *restrict genes)
{
    const int g = get_global_id(0);
    if (g >= m)
        return;
    const rng_key_t key = {seed_lo, seed_hi};
    __global int *gene = genes + (long)g * n;
    for (int k = 0; k < n; k++)
        gene[k] = k;
    for (int k = n - 1; k > 1; k--) {
        const int j = 1 + (int)rng_below(rng_block(key, PURPOSE_INIT, (uint)g, (uint)k).x, (uint)k);
        const int t = gene[k];
        gene[k] = gene[j];
        gene[j] = t;
    }
}

/* Every gene rotated to start at city 0 (after a local search that moved it); a
 * work-group per gene, `rows` one scratch row of n ints per gene. */
__kernel void ga_rotate_to_zero(const int n, __global int *restrict genes, __global int *restrict rows)
{
    const int g = get_group_id(0), lid = get_local_id(0), p = get_local_size(0);
    __global int *gene = genes + (long)g * n, *row = rows + (long)g * n;
    for (int k = lid; k < n; k += p)
        row[k] = gene[k];
    barrier(CLK_GLOBAL_MEM_FENCE);
    int start = 0;
    for (int k = 0; k < n; k++)  /* every work-item finds it: n reads, once per run */
        if (row[k] == 0)
            start = k;
    for (int k = lid; k < n; k += p)
        gene[k] = row[wrap(start + k, n)];
}

/* The genes' lengths (section 3.1, eq. 2's denominator): a work-group per gene. */
__kernel void ga_lengths(DIST_PARAMS, __global const int *restrict genes, __global long *restrict lengths,
                         __local long *scratch)
{
    const int g = get_group_id(0);
    const long length = group_tour_length(DIST_ARGS, genes + (long)g * n, scratch);
    if (get_local_id(0) == 0)
        lengths[g] = length;
}

/* Fixed rivals (section 3.2): in each group, gene j < size / 2 meets gene
 * j + ceil(size / 2) and the shorter one is kept at j (a work-group per pair, groups
 * times size / 2 of them). */
__kernel void ga_compete(const int n, const int size, __global int *restrict genes,
                         __global long *restrict lengths)
{
    const int per_group = size / 2, group = get_group_id(0) / per_group, j = get_group_id(0) % per_group;
    const int winner_slot = group * size + j, rival = winner_slot + (size + 1) / 2;
    const int rival_wins = lengths[rival] < lengths[winner_slot];
    barrier(CLK_GLOBAL_MEM_FENCE);  /* every work-item has compared before the length changes */
    if (rival_wins) {
        for (int k = get_local_id(0); k < n; k += get_local_size(0))
            genes[(long)winner_slot * n + k] = genes[(long)rival * n + k];
        if (get_local_id(0) == 0)
            lengths[winner_slot] = lengths[rival];
    }
}

/* Adjacent rivals (what the authors' published code is reported to do; the default, see
 * tspcl/solvers/ga.py): in each group, genes 2j and 2j + 1 meet and the shorter goes to
 * slot j (the first on a tie).  Two launches, since slot j may be read by
 * another pair: ga_compete_pairs copies each winner to rows[pair] (and its length),
 * ga_compete_store copies the rows back to the slots.  A work-group per pair. */
__kernel void ga_compete_pairs(const int n, const int size, __global const int *restrict genes,
                               __global const long *restrict lengths, __global int *restrict rows,
                               __global long *restrict row_lengths)
{
    const int per_group = size / 2, group = get_group_id(0) / per_group, j = get_group_id(0) % per_group;
    const int a = group * size + 2 * j, winner = lengths[a + 1] < lengths[a] ? a + 1 : a;
    for (int k = get_local_id(0); k < n; k += get_local_size(0))
        rows[(long)get_group_id(0) * n + k] = genes[(long)winner * n + k];
    if (get_local_id(0) == 0)
        row_lengths[get_group_id(0)] = lengths[winner];
}

__kernel void ga_compete_store(const int n, const int size, __global const int *restrict rows,
                               __global const long *restrict row_lengths, __global int *restrict genes,
                               __global long *restrict lengths)
{
    const int per_group = size / 2, group = get_group_id(0) / per_group, j = get_group_id(0) % per_group;
    const int slot = group * size + j;
    for (int k = get_local_id(0); k < n; k += get_local_size(0))
        genes[(long)slot * n + k] = rows[(long)get_group_id(0) * n + k];
    if (get_local_id(0) == 0)
        lengths[slot] = row_lengths[get_group_id(0)];
}

/* Every task's draws for this generation: ARX's switch points 1 <= A <= B < n, and the
 * city its construction starts from, uniform over the cities when bit `kind` of
 * random_start is set, else city 0. */
__kernel void ga_task_draws(const int n, const int tasks, const uint seed_lo, const uint seed_hi,
                            const uint generation, const int random_start,
                            __global const int *restrict task_pair, __global const int *restrict task_kind,
                            __global int *restrict task_A, __global int *restrict task_B,
                            __global int *restrict task_S)
{
    const int t = get_global_id(0);
    if (t >= tasks)
        return;
    const rng_key_t key = {seed_lo, seed_hi};
    const uint4 r = rng_block(key, PURPOSE_SWITCH, generation, (uint)task_pair[t]);
    const int x = 1 + (int)rng_below(r.x, (uint)(n - 1)), y = 1 + (int)rng_below(r.y, (uint)(n - 1));
    task_A[t] = min(x, y);
    task_B[t] = max(x, y);
    const uint4 s = rng_block(key, PURPOSE_START, generation, (uint)t);
    task_S[t] = (random_start >> task_kind[t]) & 1 ? (int)rng_below(s.x, (uint)n) : 0;
}

/* The mutation of section 4: with probability `rate` a gene whose place in its group is
 * `first` or more gets a random 2-opt move, positions i < j in 1..n-1 and the cities
 * between them reversed (a work-group per gene). */
__kernel void ga_mutate(const int n, const int size, const int first, const float rate, const uint seed_lo,
                        const uint seed_hi, const uint generation, __global int *restrict genes)
{
    const int g = get_group_id(0);
    const rng_key_t key = {seed_lo, seed_hi};
    const uint4 r = rng_block(key, PURPOSE_MUTATE, generation, (uint)g);
    if (g % size < first || (float)(r.x >> 8) * (1.0f / 16777216.0f) >= rate || n < 4)
        return;
    const int x = 1 + (int)rng_below(r.y, (uint)(n - 1)), y = 1 + (int)rng_below(r.z, (uint)(n - 1));
    const int i = min(x, y), j = max(x, y);
    group_reverse_path(genes + (long)g * n, n, i, j - i + 1);  /* j < n: no wrap */
}

/* Each group's best and worst gene (a work-group per group; ties to the lower index). */
__kernel void ga_extremes(const int size, __global const long *restrict lengths,
                          __global int *restrict best, __global int *restrict worst,
                          __local long *s_len, __local int *s_idx)
{
    const int group = get_group_id(0), lid = get_local_id(0), p = get_local_size(0);
    for (int pass = 0; pass < 2; pass++) {
        /* pass 0: the least length, pass 1: the greatest (negated) */
        long bl = LONG_MAX;
        int bi = size;
        for (int j = lid; j < size; j += p) {
            const long v = pass ? -lengths[group * size + j] : lengths[group * size + j];
            if (v < bl) {
                bl = v;
                bi = j;
            }
        }
        group_least_long(s_len, s_idx, &bl, &bi);
        if (lid == 0)
            (pass ? worst : best)[group] = group * size + bi;
    }
}

/* Migration (section 3.4), in two launches so that no migrant is overwritten before it
 * is copied out: ga_migrate_out copies group g's best gene and length aside, ga_migrate_in
 * writes it over the worst gene of group dest[g] (the destinations a permutation
 * without fixed points: every group sends one migrant and receives one).  A work-group
 * per group. */
__kernel void ga_migrate_out(const int n, __global const int *restrict best,
                             __global const int *restrict genes, __global const long *restrict lengths,
                             __global int *restrict rows, __global long *restrict row_lengths)
{
    const int g = get_group_id(0);
    for (int k = get_local_id(0); k < n; k += get_local_size(0))
        rows[(long)g * n + k] = genes[(long)best[g] * n + k];
    if (get_local_id(0) == 0)
        row_lengths[g] = lengths[best[g]];
}

__kernel void ga_migrate_in(const int n, __global const int *restrict dest, __global const int *restrict worst,
                            __global const int *restrict rows, __global const long *restrict row_lengths,
                            __global int *restrict genes, __global long *restrict lengths)
{
    const int g = get_group_id(0), to = worst[dest[g]];
    for (int k = get_local_id(0); k < n; k += get_local_size(0))
        genes[(long)to * n + k] = rows[(long)g * n + k];
    if (get_local_id(0) == 0)
        lengths[to] = row_lengths[g];
}
