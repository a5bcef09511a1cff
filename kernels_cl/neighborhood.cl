/* Neighbourhoods generated and evaluated on the device: hill climbing and tabu search
 * (Luong, Melab, Talbi, "GPU computing for parallel local search metaheuristic
 * algorithms", ../shared/papers/luong-gpu-local-search-metaheuristics.txt).
 *
 * Section 3.1: only the current tour lives on the device; every work-item maps move
 * ids to moves (section 4.6 and Appendix A index mappings) and evaluates each in O(1).
 * Section 6.7: the best move is found by a reduction on the device (nb_eval: per
 * work-group, nb_apply: over the work-groups), and nb_apply applies it, so an iteration
 * is two launches and the host reads nothing per iteration.  Work-items loop over the
 * ids with the global size as stride, so the global size and the work-group size are
 * free (thread control, section 4.1, tunes them: tspcl/thread_control.py).  The chosen
 * move is the admissible one of least delta, ties to the lowest id: the same move for
 * every launch geometry.
 *
 * Build with -D NB=<NB_SWAP|NB_2OPT|NB_3EXCHANGE> and -D CAND_M=<m> (0: the full
 * neighbourhood; m: moves restricted to the m candidates of each city).
 *
 * Move ids (positions i < j < k of the tour array):
 *   full swap, 2-opt: id = pair_index(i, j) over the n(n-1)/2 pairs (Propositions 1-2);
 *   full 3-exchange: id = 2 * triple_index(i, j, k) + r over 2 C(n,3) ids (r: rotation);
 *   candidates: swap id = a*m + s swaps city a with its s-th candidate c; 2-opt
 *   id = 2(a*m + s) + r adds the edge (a, c) (r = 0) or (pred a, pred c) and (a, c)
 *   (r = 1); 3-exchange id = 2((a*m + s)*m + u) + r rotates a, its s-th candidate b and
 *   b's u-th candidate.
 * Moves:  swap exchanges the cities at i and j; 2-opt reverses positions i+1..j (it
 * removes (t_i, t_i+1), (t_j, t_j+1) and adds (t_i, t_j), (t_i+1, t_j+1)); 3-exchange
 * rotates the cities at i, j, k: r = 0 puts t_k at i, t_i at j, t_j at k; r = 1 puts t_j
 * at i, t_k at j, t_i at k.  Swap and 3-exchange are exact for asymmetric distances too.
 *
 * Tabu attribute: the cities a move touches (swap 2, 3-exchange 3, 2-opt the 4 ends of
 * its removed edges).  Taking a move at iteration t makes them tabu up to iteration
 * t + tenure; a move touching a tabu city is admissible only when it leads below the best
 * length found (aspiration).
 */
#include "tour.h"
#include "reduce.h"

/* The host passes the neighbourhoods' codes NB_SWAP, NB_2OPT, NB_3EXCHANGE and the state
 * words S_* (long; tspcl/solvers/neighborhood.py NEIGHBORHOODS and StateWord). */
#if !defined(NB) || !defined(NB_SWAP) || !defined(NB_2OPT) || !defined(NB_3EXCHANGE)
#error "the host passes NB and the neighbourhoods' codes NB_SWAP, NB_2OPT, NB_3EXCHANGE"
#endif
#ifndef CAND_M
#define CAND_M 0
#endif

#define NO_MOVE LONG_MAX

typedef struct {
    int p[3];      /* positions, increasing */
    int np;        /* 2 or 3 */
    int r;         /* 3-exchange rotation */
    int city[4];   /* the tabu attribute: cities the move touches */
    int ncity;
} move_t;

/* ---- index mappings (section 4.6, Appendix A) -------------------------------------- */

/* floor(sqrt(x)) exactly: the double estimate is off by at most one, then corrected. */
inline ulong isqrt64(const ulong x)
{
    ulong r = (ulong)sqrt((double)x);
    while (r > 0 && r * r > x)
        r--;
    while ((r + 1) * (r + 1) <= x)
        r++;
    return r;
}

/* Proposition 1 (two-to-one): f(i, j) = i(n-1) + (j-1) - i(i+1)/2, 0 <= i < j < n. */
inline ulong pair_index(const ulong i, const ulong j, const ulong n)
{
    return i * (n - 1) + (j - 1) - i * (i + 1) / 2;
}

/* Proposition 2 (one-to-two): i = n - 2 - floor((sqrt(8(M - f - 1) + 1) - 1) / 2),
 * j = f - i(n-1) + i(i+1)/2 + 1 with M = n(n-1)/2; an integer square root keeps it exact
 * for ids above 2^31 (floor((sqrt(v) - 1)/2) = floor((isqrt(v) - 1)/2)). */
inline void pair_from_index(const ulong f, const ulong n, ulong *i, ulong *j)
{
    const ulong m = n * (n - 1) / 2;
    const ulong r = isqrt64(8 * (m - f - 1) + 1);
    *i = n - 2 - (r - 1) / 2;
    *j = f - *i * (n - 1) + *i * (*i + 1) / 2 + 1;
}

inline ulong choose2(const ulong x) { return x * (x - 1) / 2; }
inline ulong choose3(const ulong x) { return x < 3 ? 0 : x * (x - 1) / 2 * (x - 2) / 3; }

/* The three-index mapping: t = C(k,3) + C(j,2) + i for 0 <= i < j < k (the
 * combinatorial number system); inverted with a cube-root estimate, corrected. */
inline ulong triple_index(const ulong i, const ulong j, const ulong k)
{
    return choose3(k) + choose2(j) + i;
}

inline void triple_from_index(const ulong t, ulong *i, ulong *j, ulong *k)
{
    ulong kk = (ulong)cbrt(6.0 * (double)t) + 1;
    while (kk > 2 && choose3(kk) > t)
        kk--;
    while (choose3(kk + 1) <= t)
        kk++;
    const ulong rem = t - choose3(kk);
    ulong jj = (1 + isqrt64(8 * rem + 1)) / 2;
    while (jj > 1 && choose2(jj) > rem)
        jj--;
    while (choose2(jj + 1) <= rem)
        jj++;
    *k = kk;
    *j = jj;
    *i = rem - choose2(jj);
}

/* ---- moves ------------------------------------------------------------------------ */

#define AT(p) tour[(p) >= n ? (p) - n : ((p) < 0 ? (p) + n : (p))]

inline void sort_positions(move_t *mv)
{
    for (int a = 1; a < mv->np; a++)
        for (int b = a; b > 0 && mv->p[b - 1] > mv->p[b]; b--) {
            const int t = mv->p[b];
            mv->p[b] = mv->p[b - 1];
            mv->p[b - 1] = t;
        }
}

/* The move of id `id`; 0 when the id names no move (a city paired with itself,
 * a 2-opt that changes nothing).  Fills the touched cities too. */
inline int decode_move(const ulong id, __global const int *restrict tour,
                       __global const int *restrict pos, __global const int *restrict cand,
                       const int n, move_t *mv)
{
    mv->r = 0;
#if CAND_M == 0
#if NB == NB_3EXCHANGE
    ulong i, j, k;
    triple_from_index(id >> 1, &i, &j, &k);
    mv->r = (int)(id & 1);
    mv->np = 3;
    mv->p[0] = (int)i; mv->p[1] = (int)j; mv->p[2] = (int)k;
#else
    ulong i, j;
    pair_from_index(id, (ulong)n, &i, &j);
    mv->np = 2;
    mv->p[0] = (int)i; mv->p[1] = (int)j;
#endif
#else /* candidate lists */
#if NB == NB_SWAP
    const int a = (int)(id / CAND_M), c = cand[id];
    mv->np = 2;
    mv->p[0] = pos[a]; mv->p[1] = pos[c];
#elif NB == NB_2OPT
    const ulong e = id >> 1;
    const int a = (int)(e / CAND_M), c = cand[e];
    const int back = (int)(id & 1);
    mv->np = 2;
    mv->p[0] = pos[a] - back; mv->p[1] = pos[c] - back;
    if (mv->p[0] < 0) mv->p[0] += n;
    if (mv->p[1] < 0) mv->p[1] += n;
#else
    const ulong e = id >> 1;
    const int a = (int)(e / (CAND_M * CAND_M));
    const int b = cand[(long)a * CAND_M + (int)(e / CAND_M % CAND_M)];
    const int c = cand[(long)b * CAND_M + (int)(e % CAND_M)];
    mv->r = (int)(id & 1);
    mv->np = 3;
    mv->p[0] = pos[a]; mv->p[1] = pos[b]; mv->p[2] = pos[c];
#endif
    sort_positions(mv);
    for (int q = 1; q < mv->np; q++)
        if (mv->p[q] == mv->p[q - 1])
            return 0;
#endif
#if NB == NB_2OPT
    if (mv->p[1] == mv->p[0] + 1 || (mv->p[0] == 0 && mv->p[1] == n - 1))
        return 0;
    mv->ncity = 4;
    mv->city[0] = AT(mv->p[0]); mv->city[1] = AT(mv->p[0] + 1);
    mv->city[2] = AT(mv->p[1]); mv->city[3] = AT(mv->p[1] + 1);
#else
    mv->ncity = mv->np;
    for (int q = 0; q < mv->np; q++)
        mv->city[q] = tour[mv->p[q]];
#endif
    return 1;
}

#if NB != NB_2OPT
/* The city at position p once the swap / rotation is made. */
inline int moved_city(__global const int *restrict tour, const int n, const move_t *mv, int p)
{
    p = p >= n ? p - n : (p < 0 ? p + n : p);
#if NB == NB_SWAP
    if (p == mv->p[0]) return tour[mv->p[1]];
    if (p == mv->p[1]) return tour[mv->p[0]];
#else
    const int from0 = mv->r ? mv->p[1] : mv->p[2];
    const int from1 = mv->r ? mv->p[2] : mv->p[0];
    const int from2 = mv->r ? mv->p[0] : mv->p[1];
    if (p == mv->p[0]) return tour[from0];
    if (p == mv->p[1]) return tour[from1];
    if (p == mv->p[2]) return tour[from2];
#endif
    return tour[p];
}
#endif

/* Length change of the move, from the edges it changes alone (O(1)). */
inline long move_delta(DIST_PARAMS, __global const int *restrict tour, const move_t *mv)
{
#if NB == NB_2OPT
    const int a = mv->city[0], b = mv->city[1], c = mv->city[2], d = mv->city[3];
    return (long)DIST(a, c) + DIST(b, d) - DIST(a, b) - DIST(c, d);
#else
    /* the edges (p, p+1) leaving and entering the moved positions, each once */
    int edge[6], ne = 0;
    for (int q = 0; q < mv->np; q++)
        for (int s = -1; s <= 0; s++) {
            int e = mv->p[q] + s;
            e = e < 0 ? e + n : e;
            int dup = 0;
            for (int t = 0; t < ne; t++)
                dup |= edge[t] == e;
            if (!dup)
                edge[ne++] = e;
        }
    long delta = 0;
    for (int t = 0; t < ne; t++) {
        const int e = edge[t];
        delta += (long)DIST(moved_city(tour, n, mv, e), moved_city(tour, n, mv, e + 1))
                 - DIST(tour[e], AT(e + 1));
    }
    return delta;
#endif
}

inline int move_is_tabu(const move_t *mv, __global const int *restrict tabu_until, const long iter)
{
    int tabu = 0;
    for (int q = 0; q < mv->ncity; q++)
        tabu |= tabu_until[mv->city[q]] > iter;
    return tabu;
}

inline int better(const long d1, const ulong i1, const long d2, const ulong i2)
{
    return d1 < d2 || (d1 == d2 && i1 < i2);
}

/* ---- kernels ---------------------------------------------------------------------- */

/* Evaluate moves id = first + global id, + global size, ... < end; each work-group
 * writes its admissible move of least (delta, id) (NO_MOVE when it has none), or with
 * `merge` keeps the lesser of it and the one already written.  The host enqueues an
 * iteration's ids in one launch (first 0, end the neighbourhood's size) or in slices
 * whose `first` is a multiple of the global size, merged after the first: every
 * work-item then sees the ids it sees in one launch, and every group's move is the same. */
__kernel void nb_eval(DIST_PARAMS, __global const int *restrict tour,
                      __global const int *restrict pos, __global const int *restrict cand,
                      __global const int *restrict tabu_until, __global const long *restrict state,
                      const ulong first, const ulong end, const int merge,
                      __global long *restrict group_delta,
                      __global ulong *restrict group_id, __local long *l_delta, __local ulong *l_id)
{
    if (state[S_DONE])
        return;
    const long cur = state[S_CUR], best = state[S_BEST], iter = state[S_ITER];
    const int climb = state[S_TENURE] < 0;
    long bd = NO_MOVE;
    ulong bi = ULONG_MAX;
    for (ulong id = first + get_global_id(0); id < end; id += get_global_size(0)) {
        move_t mv;
        if (!decode_move(id, tour, pos, cand, n, &mv))
            continue;
        const long delta = move_delta(DIST_ARGS, tour, &mv);
        const int ok = climb ? delta < 0
                             : !move_is_tabu(&mv, tabu_until, iter) || cur + delta < best;
        if (ok && better(delta, id, bd, bi)) {
            bd = delta;
            bi = id;
        }
    }
    group_least_long_ulong(l_delta, l_id, &bd, &bi);
    if (get_local_id(0) == 0) {
        const size_t g = get_group_id(0);
        if (merge && better(group_delta[g], group_id[g], bd, bi)) {
            bd = group_delta[g];
            bi = group_id[g];
        }
        group_delta[g] = bd;
        group_id[g] = bi;
    }
}

/* One work-group: the best of the `groups` results, then the move applied (a 2-opt
 * reverses the shorter side), the tabu list, lengths and the best tour updated. */
__kernel void nb_apply(DIST_PARAMS, __global int *restrict tour, __global int *restrict pos,
                       __global int *restrict best_tour, __global const int *restrict cand,
                       __global int *restrict tabu_until, __global long *restrict state,
                       __global const long *restrict group_delta,
                       __global const ulong *restrict group_id, const int groups,
                       __local long *l_delta, __local ulong *l_id)
{
    __local int l_take, l_improved, l_from, l_len;
    __local move_t l_move;
    if (state[S_DONE])
        return;
    const int lid = get_local_id(0), wg = get_local_size(0);
    long bd = NO_MOVE;
    ulong bi = ULONG_MAX;
    for (int g = lid; g < groups; g += wg)
        if (better(group_delta[g], group_id[g], bd, bi)) {
            bd = group_delta[g];
            bi = group_id[g];
        }
    group_least_long_ulong(l_delta, l_id, &bd, &bi);
    if (lid == 0) {
        const long delta = bd;
        l_take = delta != NO_MOVE;
        if (!l_take) {
            state[S_DONE] = 1;
        } else {
            move_t mv;
            decode_move(bi, tour, pos, cand, n, &mv);
            l_move = mv;
            state[S_LAST_ID] = (long)bi;
            state[S_LAST_DELTA] = delta;
            state[S_LAST_TABU] = move_is_tabu(&mv, tabu_until, state[S_ITER]);
#if NB == NB_2OPT
            /* reverse positions p0+1..p1 or the other side, whichever is shorter */
            const int inner = mv.p[1] - mv.p[0];
            l_from = inner <= n - inner ? mv.p[0] + 1 : mv.p[1] + 1;
            l_len = inner <= n - inner ? inner : n - inner;
#else
            int city[3];
            for (int q = 0; q < mv.np; q++)
                city[q] = moved_city(tour, n, &mv, mv.p[q]);
            for (int q = 0; q < mv.np; q++) {
                tour[mv.p[q]] = city[q];
                pos[city[q]] = mv.p[q];
            }
#endif
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!l_take)
        return;
#if NB == NB_2OPT
    group_reverse(tour, pos, n, l_from, l_len);
#endif
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        const long iter = state[S_ITER];
        const long tenure = state[S_TENURE];
        if (tenure > 0)
            for (int q = 0; q < l_move.ncity; q++)
                tabu_until[l_move.city[q]] = (int)min(iter + 1 + tenure, (long)INT_MAX);
        const long cur = state[S_CUR] + bd;
        state[S_CUR] = cur;
        state[S_ITER] = iter + 1;
        l_improved = cur < state[S_BEST];
        if (l_improved)
            state[S_BEST] = cur;
        if (iter + 1 >= state[S_BUDGET])
            state[S_DONE] = 1;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l_improved)
        for (int p = lid; p < n; p += wg)
            best_tour[p] = tour[p];
}
