/* Segment-parallel iterated local search (tspcl's own design, issue 39).
 *
 * The tour is cut into `segments` contiguous segments of nearly equal length, starting at
 * position `offset`.
 * One work-group owns one segment: a path whose two end cities stay where they are, so
 * whatever it does inside, the tour outside is untouched and every segment's
 * improvement is kept.  In local memory it holds the path as local indices (0..len-1,
 * the cities' order when the round began), each index's position, the candidate lists
 * restricted to the segment, and for 2-D coordinate metrics the coordinates.
 *
 * The search on a path (both ends fixed) uses two moves over the candidate lists:
 *   2-opt: for city a and candidate c, the edges after (or before) both are replaced by
 *          (a, c) and the edge between their old neighbours: one reversal;
 *   Or-opt: a chain of 1-3 cities that starts or ends at a is moved next to c, in the
 *          orientation that makes (a, c) an edge (Or 1976): two or three reversals.
 * A queue of cities (don't-look bits, Bentley 1992) drives it: every step the work-items
 * evaluate every (queued city, candidate, side, move) at once, the best improving move
 * of the whole group is applied (ties to the smallest move code: reproducible), cities
 * without an improving move leave the queue and the ends of the changed edges join it.
 *
 * A kick is a segment swap inside a window of positions: path pieces B C become C B, the
 * three-edge move that 2-opt and Or-opt cannot undo in one step (on a cycle, the double
 * bridge of Martin, Otto and Felten 1991; on a path with fixed ends, three edges suffice).
 * The local search then starts from the kick's six end cities; the kicked path is kept
 * when it is no longer than before, else the saved path comes back (linkern's chained
 * Lin-Kernighan keeps a kick on the same rule; Applegate et al. 2003, section 3).
 *
 * The ends of a segment are fixed, so moves that cross segments wait for a round with
 * other boundaries (the host draws each round's offset) or for the whole-tour local
 * search the host runs between rounds (kernels_cl/localsearch.cl).
 *
 * Build defines: METRIC (distance.h); M, candidates per city used; L_MAX, the most cities
 * a segment holds; WG, the work-group size (a power of two); QCAP, queue slots; LOCAL_XY,
 * 1 to keep 2-D coordinates in local memory (coordinate metrics other than GEO);
 * MAX_MOVES, moves one local search applies at most.
 */
#include "tour.h"
#include "reduce.h"

#define NONE 0xFFFF            /* a candidate outside the segment */
#ifndef LK_DEPTH
#define LK_DEPTH 0             /* 0: no Lin-Kernighan chains */
#endif
#define LK_VARIANT 7
/* per (city, candidate, side): 2-opt, Or-opt chains of 1-3 cities that start (1-3) or
 * end (4-6) at the city, and with LK_DEPTH a Lin-Kernighan chain (7) */
#define VARIANTS (LK_DEPTH ? 8 : 7)
#define MAX_REV (LK_DEPTH > 3 ? LK_DEPTH : 3)   /* reversals of one move at most */
#define NO_CODE 0xFFFFFFFFu

/* The path a work-group owns, all in local memory. */
#if LOCAL_XY
#define SEG_ARGS __local const int *restrict city, __local const double2 *restrict xy
#define SEG_PASS city, xy
#else
#define SEG_ARGS __local const int *restrict city
#define SEG_PASS city
#endif

/* Distance between two local indices: the same integer as DIST of their cities. */
inline long seg_dist(DIST_PARAMS, SEG_ARGS, const int a, const int b)
{
#if LOCAL_XY
    return dist_from_deltas(fabs(xy[a].x - xy[b].x), fabs(xy[a].y - xy[b].y), 0.0);
#else
    return DIST(city[a], city[b]);
#endif
}
#define SD(a, b) seg_dist(DIST_ARGS, SEG_PASS, (a), (b))

#if LK_DEPTH
/* Position p through the reversal of [lo, hi] (an involution). */
inline int through(const int p, const int lo, const int hi)
{
    return p >= lo && p <= hi ? lo + hi - p : p;
}

inline int edge_in(const int x, const int y, const int *ex, const int *ey, const int count)
{
    for (int i = 0; i < count; i++)
        if ((ex[i] == x && ey[i] == y) || (ex[i] == y && ey[i] == x))
            return 1;
    return 0;
}

/* Lin-Kernighan chain on the path (Lin & Kernighan 1973, its standard step, as
 * localsearch.cl's lk_chain on the whole tour): 2-opt steps sharing t1, the neighbour of
 * t2 = a on a's `side`.  Step i adds (t2, t3), removes (t3, t4) with t4 the neighbour of
 * t3 on the side where t1 lies beside t2 (so the closing edge (t4, t1) makes a path
 * again), and reverses the positions between the two removed edges; t4 is the next t2.
 * The first t3 is c; later ones the candidate among the first M of t2 with a positive
 * partial gain and the best look-ahead -d(t2, t3) + d(t3, t4) (ties to list order); a
 * removed edge is never added back nor an added one removed.  The steps are not applied
 * while searching: positions are mapped through the reversals so far.  Returns the
 * best closing gain (0: none) and, in count/lo/hi, the reversals of that chain. */
inline long path_chain(DIST_PARAMS, SEG_ARGS, __local const ushort *restrict path,
                       __local const ushort *restrict at, __local const ushort *restrict lcand,
                       const int len, const int a, const int c, const int side, int *count,
                       int *lo, int *hi)
{
    int rx[LK_DEPTH + 1], ry[LK_DEPTH + 1], ax[LK_DEPTH], ay[LK_DEPTH];
    const int i = at[a];
    if ((side == 0 ? i + 1 : i - 1) < 0 || (side == 0 ? i + 1 : i - 1) > len - 1)
        return 0;
    const int t1 = path[side == 0 ? i + 1 : i - 1];
    int t2 = a, t3 = c, k = 0;
    long G = SD(t1, a), best = 0;
    *count = 0;
    rx[0] = t1; ry[0] = a;
    int p1 = at[t1], p2 = i;                      /* positions after the k reversals */
    for (;;) {
        int p3 = at[t3];
        for (int r = 0; r < k; r++)
            p3 = through(p3, lo[r], hi[r]);
        const int p4 = p3 + (p1 - p2);            /* t4 beside t3 as t1 is beside t2 */
        if (p4 < 0 || p4 > len - 1 || p3 == p1 || p3 == p2 || p4 == p2
            || G - SD(t2, t3) <= 0)
            return best;
        int q = p4;
        for (int r = k - 1; r >= 0; r--)
            q = through(q, lo[r], hi[r]);
        const int t4 = path[q];
        if (edge_in(t2, t3, rx, ry, k + 1) || edge_in(t3, t4, ax, ay, k))
            return best;
        G += SD(t3, t4) - SD(t2, t3);
        ax[k] = t2; ay[k] = t3;
        rx[k + 1] = t3; ry[k + 1] = t4;
        const int e = min(p1, p2), f = min(p3, p4);   /* the removed edges (e, e + 1), (f, f + 1) */
        lo[k] = min(e, f) + 1;
        hi[k] = max(e, f);
        k++;
        p1 = through(p1, lo[k - 1], hi[k - 1]);
        p2 = through(p4, lo[k - 1], hi[k - 1]);   /* t4's, the next t2's */
        const long close = G - SD(t4, t1);
        if (close > best) {
            best = close;
            *count = k;
        }
        if (k == LK_DEPTH)
            return best;
        /* the next step from t2 = t4: the best look-ahead among its candidates */
        t2 = t4;
        long top = 0;
        int t5 = -1;
        for (int s = 0; s < M; s++) {
            const int x = lcand[t2 * M + s];
            if (x == NONE || x == t1)
                continue;
            const long g = G - SD(t2, x);
            if (g <= 0)
                continue;
            int px = at[x];
            for (int r = 0; r < k; r++)
                px = through(px, lo[r], hi[r]);
            const int py = px + (p1 - p2);
            if (py < 0 || py > len - 1 || px == p1 || px == p2 || py == p2)
                continue;
            int qy = py;
            for (int r = k - 1; r >= 0; r--)
                qy = through(qy, lo[r], hi[r]);
            const long val = g + SD(x, path[qy]);
            if (t5 < 0 || val > top) {
                top = val;
                t5 = x;
            }
        }
        if (t5 < 0)
            return best;
        t3 = t5;
    }
}
#endif

/* The move `variant` that makes candidate c a neighbour of a, c on a's `side` (0: after
 * a, 1: before a) for 2-opt, or the chain next to c on c's side `side` (0: after c,
 * 1: before c) for Or-opt, on the path of `len` positions: its gain (old length minus
 * new) and the reversals [lo[r], hi[r]] that apply it, in order.  Returns how many
 * reversals (0: no such move).  Positions 0 and len - 1 are never inside a reversal. */
inline int path_move(DIST_PARAMS, SEG_ARGS, __local const ushort *restrict path,
                     __local const ushort *restrict at, __local const ushort *restrict lcand,
                     const int len, const int a,
                     const int c, const int side, const int variant, long *gain, int *lo,
                     int *hi)
{
    const int i = at[a], j = at[c];
    if (a == c)
        return 0;
#if LK_DEPTH
    if (variant == LK_VARIANT) {
        int count;
        *gain = path_chain(DIST_ARGS, SEG_PASS, path, at, lcand, len, a, c, side, &count, lo, hi);
        return *gain > 0 ? count : 0;
    }
#endif
    if (variant == 0) {                       /* 2-opt */
        if (side == 0 ? (i > len - 2 || j > len - 2) : (i < 1 || j < 1))
            return 0;
        const int step = side == 0 ? 1 : -1;
        const int a1 = path[i + step], c1 = path[j + step];
        if (a1 == c || c1 == a)
            return 0;
        *gain = SD(a, a1) + SD(c, c1) - SD(a, c) - SD(a1, c1);
        lo[0] = min(i, j) + (side == 0);
        hi[0] = max(i, j) - (side == 1);
        return 1;
    }
    const int s = 1 + (variant - 1) % 3, ends_at_a = (variant - 1) / 3;
    const int u = ends_at_a ? i - s + 1 : i, v = u + s - 1;   /* the chain [u, v] */
    const int x = side == 0 ? j : j - 1;                      /* insert between x, x + 1 */
    if (u < 1 || v > len - 2 || x < 0 || x > len - 2 || (x >= u - 1 && x <= v))
        return 0;
    const int cu = path[u], cv = path[v], p = path[u - 1], q = path[v + 1];
    const int px = path[x], py = path[x + 1];
    /* e1 goes next to px, e2 next to py; a is the one next to c */
    const int other = a == cu ? cv : cu;
    const int e1 = side == 0 ? a : other, e2 = side == 0 ? other : a;
    *gain = SD(p, cu) + SD(cv, q) + SD(px, py) - SD(p, q) - SD(px, e1) - SD(e2, py);
    const int reversed = s > 1 && e1 == cv;
    if (x > v) {        /* C B -> B C, B = [v + 1, x]: reverse all, then B, then C */
        const int nb = x - v;
        lo[0] = u; hi[0] = x;
        lo[1] = u; hi[1] = u + nb - 1;
        lo[2] = u + nb; hi[2] = x;
    } else {            /* B C -> C B, B = [x + 1, u - 1]: reverse all, then B, then C */
        lo[0] = x + 1; hi[0] = v;
        lo[1] = x + 1 + s; hi[1] = v;
        lo[2] = x + 1; hi[2] = x + s;
    }
    return reversed ? 2 : 3;
}

inline uint move_code(const int a, const int k, const int side, const int variant)
{
    return (((uint)a * M + k) * 2 + side) * 8 + variant;
}

/* Reverse path positions [lo, hi] (at follows); the whole group, no barrier inside. */
inline void path_reverse(__local ushort *restrict path, __local ushort *restrict at,
                         const int lo, const int hi)
{
    for (int s = get_local_id(0); s < (hi - lo + 1) / 2; s += get_local_size(0)) {
        const int x = lo + s, y = hi - s;
        const ushort cx = path[x], cy = path[y];
        path[x] = cy;
        path[y] = cx;
        at[cy] = (ushort)x;
        at[cx] = (ushort)y;
    }
}

/* Reversals in order, with a barrier after each. */
inline void path_apply(__local ushort *restrict path, __local ushort *restrict at,
                       const int count, const int *lo, const int *hi)
{
    for (int r = 0; r < count; r++) {
        path_reverse(path, at, lo[r], hi[r]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* Queue local index x unless it is queued or the queue is full (one work-item). */
inline void queue_push(__local ushort *queue, __local uchar *queued, __local int *qn,
                       const int x)
{
    if (!queued[x] && *qn < QCAP) {
        queue[(*qn)++] = (ushort)x;
        queued[x] = 1;
    }
}

/* The ends of the edges that reversals [lo, hi] changed join the queue (one work-item). */
inline void queue_ends(__local const ushort *path, const int len, __local ushort *queue,
                       __local uchar *queued, __local int *qn, const int count,
                       const int *lo, const int *hi)
{
    for (int r = 0; r < count; r++)
        for (int e = 0; e < 4; e++) {
            const int p = e == 0 ? lo[r] - 1 : e == 1 ? lo[r] : e == 2 ? hi[r] : hi[r] + 1;
            if (p >= 0 && p < len)
                queue_push(queue, queued, qn, path[p]);
        }
}

/* Local search from the queued cities until the queue is empty (or MAX_MOVES moves);
 * returns the total gain, the same in every work-item.  `shared` holds the queue length
 * at [0] and the step's reversals: [1] their count, [2 ..] lo, [2 + MAX_REV ..] hi. */
inline long path_search(DIST_PARAMS, SEG_ARGS, __local ushort *restrict path,
                        __local ushort *restrict at, const int len,
                        __local const ushort *restrict lcand, __local ushort *queue,
                        __local uchar *queued, __local int *keep, __local int *shared,
                        __local long *gains, __local uint *codes)
{
    const int lid = get_local_id(0);
    long total = 0;
    for (int moves = 0; moves < MAX_MOVES; moves++) {
        barrier(CLK_LOCAL_MEM_FENCE);
        const int qn = shared[0];
        if (qn == 0)
            break;
        for (int t = lid; t < qn; t += WG)
            keep[t] = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        long best = 0;
        uint code = NO_CODE;
        for (int t = lid; t < qn * M * 2; t += WG) {
            const int slot = t / (2 * M), k = (t >> 1) % M, side = t & 1;
            const int a = queue[slot], c = lcand[a * M + k];
            if (c == NONE)
                continue;
            int found = 0;
            for (int variant = 0; variant < VARIANTS; variant++) {
                long g;
                int lo[MAX_REV], hi[MAX_REV];
                if (path_move(DIST_ARGS, SEG_PASS, path, at, lcand, len, a, c, side, variant, &g, lo,
                              hi) && g > 0) {
                    found = 1;
                    const uint mc = move_code(a, k, side, variant);
                    if (g > best || (g == best && mc < code)) {
                        best = g;
                        code = mc;
                    }
                }
            }
            if (found)
                atomic_or((volatile __local int *)&keep[slot], 1);
        }
        group_best_gain(gains, codes, &best, &code);
        if (lid == 0) {
            int kept = 0;
            for (int t = 0; t < qn; t++) {
                if (keep[t])
                    queue[kept++] = queue[t];
                else
                    queued[queue[t]] = 0;
            }
            shared[0] = kept;
            shared[1] = 0;
            if (best > 0) {
                const int variant = code % 8, side = (code / 8) % 2, k = (code / 16) % M;
                const int a = code / 16 / M;
                long g;
                int lo[MAX_REV], hi[MAX_REV];
                shared[1] = path_move(DIST_ARGS, SEG_PASS, path, at, lcand, len, a, lcand[a * M + k],
                                      side, variant, &g, lo, hi);
                for (int r = 0; r < shared[1]; r++) {
                    shared[2 + r] = lo[r];
                    shared[2 + MAX_REV + r] = hi[r];
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (best == 0)
            continue;          /* the queue emptied: the loop's test ends it */
        total += best;
        int lo[MAX_REV], hi[MAX_REV];
        const int count = shared[1];
        for (int r = 0; r < count; r++) {
            lo[r] = shared[2 + r];
            hi[r] = shared[2 + MAX_REV + r];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        path_apply(path, at, count, lo, hi);
        if (lid == 0)
            queue_ends(path, len, queue, queued, &shared[0], count, lo, hi);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {        /* stopped by MAX_MOVES: forget the rest of the queue */
        for (int t = 0; t < shared[0]; t++)
            queued[queue[t]] = 0;
        shared[0] = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return total;
}

/* Positions of the cities: pos[tour[p]] = p. */
__kernel void pils_positions(__global const int *restrict tour, __global int *restrict pos,
                             const int n)
{
    for (int p = get_global_id(0); p < n; p += get_global_size(0))
        pos[tour[p]] = p;
}

/* One round: every work-group runs the search on its segment of tour_in and writes the
 * segment to the same positions of tour_out; gain[g] is how much shorter segment g got.
 *   offset/segments: segment g holds positions offset + [g n / segments, (g + 1) n /
 *                segments) (mod n): lengths differ by one at most
 *   replicas:    1: every work-group (segments of them) holds the whole tour, cut at
 *                offset + g n / segments, and writes its own tour at tour_out + g n
 *                (small instances: independent searches, the host keeps the best)
 *   cand/cand_m: the candidate lists (the first M of cand_m per city are used)
 *   pos_in:      positions in tour_in, which place each candidate in a segment or not
 *   descend:     1: first a local search from every city of the segment, to a local
 *                optimum of the segment's moves (verified: a pass that finds nothing)
 *   kicks/window: segment swaps per work-group (one more in the first `extra`
 *                groups), spanning at most `window` positions
 *   seed, round: the draws are Philox(seed; round, segment, kick). */
__kernel void pils_round(DIST_PARAMS, __global const int *restrict cand, const int cand_m,
                         __global const int *restrict tour_in, __global const int *restrict pos_in,
                         __global int *restrict tour_out, __global long *restrict gain,
                         const uint seed_lo, const uint seed_hi, const uint round,
                         const int offset, const int segments, const int replicas,
                         const int descend, const int kicks, const int extra,
                         const int window)
{
    __local int city[L_MAX];
#if LOCAL_XY
    __local double2 xy[L_MAX];
#endif
    __local ushort path[L_MAX], at[L_MAX], saved[L_MAX], lcand[L_MAX * M], queue[QCAP];
    __local uchar queued[L_MAX];
    __local int keep[QCAP], shared[2 + 2 * MAX_REV];
    __local long gains[WG];
    __local uint codes[WG];

    const int lid = get_local_id(0), g = get_group_id(0);
    const int first = (int)((long)g * n / segments);
    const int len = replicas ? n : (int)((long)(g + 1) * n / segments) - first;
    __global int *restrict out = tour_out + (replicas ? (long)g * n : 0);
    const int my_kicks = kicks + (g < extra);
    int start = offset + first;
    start = start >= n ? start - n : start;
    for (int i = lid; i < len; i += WG) {
        const int p = start + i, c = tour_in[p >= n ? p - n : p];
        city[i] = c;
#if LOCAL_XY
        xy[i] = (double2)(g_coords[2 * c], g_coords[2 * c + 1]);
#endif
        path[i] = (ushort)i;
        at[i] = (ushort)i;
        queued[i] = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int t = lid; t < len * M; t += WG) {
        const int d = cand[(long)city[t / M] * cand_m + t % M];
        int rel = pos_in[d] - start;
        rel = rel < 0 ? rel + n : rel;
        lcand[t] = rel < len ? (ushort)rel : (ushort)NONE;
    }
    if (lid == 0)
        shared[0] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);

    /* One loop, one call of path_search, and no barrier under a condition (PoCL builds
     * every call site's barriers separately and wants them unconditional): first, with
     * `descend`, passes over the segment in chunks of QCAP cities until a whole pass
     * finds nothing; then `kicks` kicks.  span >= 3 as len >= 8 and window >= 3. */
    const rng_key_t key = {seed_lo, seed_hi};
    const int span = min(window, len - 2);
    long total = 0, pass = 0;
    int from = descend ? 0 : len, kick = 0;
    while (len >= 8) {
        if (from >= len && pass > 0) {        /* a pass found moves: another pass */
            from = 0;
            pass = 0;
        }
        const int kicking = from >= len;
        if (kicking && kick == my_kicks)
            break;
        if (!kicking && lid == 0)
            for (int x = from; x < min(len, from + QCAP); x++)
                queue_push(queue, queued, &shared[0], x);
        from += kicking ? 0 : QCAP;
        for (int i = lid; i < (kicking ? len : 0); i += WG)
            saved[i] = path[i];
        /* the kick: B = [b, c - 1], C = [c, d - 1], 1 <= b < c < d <= len - 1, B C -> C B;
         * the same draws in every work-item */
        const uint4 r = rng_block(key, round, (uint)g, (uint)kick);
        const int s = 2 + (int)rng_below(r.x, (uint)(span - 1));
        const int b = 1 + (int)rng_below(r.y, (uint)(len - 1 - s));
        const int c = b + 1 + (int)rng_below(r.z, (uint)(s - 1)), d = b + s;
        const long cost = SD(path[b - 1], path[c]) + SD(path[d - 1], path[b])
            + SD(path[c - 1], path[d]) - SD(path[b - 1], path[b])
            - SD(path[c - 1], path[c]) - SD(path[d - 1], path[d]);
        barrier(CLK_LOCAL_MEM_FENCE);
        const int lo[3] = {b, b, b + d - c}, hi[3] = {d - 1, b + d - c - 1, d - 1};
        path_apply(path, at, kicking ? 3 : 0, lo, hi);
        if (kicking && lid == 0)
            queue_ends(path, len, queue, queued, &shared[0], 3, lo, hi);
        const long found = path_search(DIST_ARGS, SEG_PASS, path, at, len, lcand, queue,
                                       queued, keep, shared, gains, codes);
        const int undo = kicking && found < cost;    /* the kick made it longer */
        for (int i = lid; i < (undo ? len : 0); i += WG) {
            path[i] = saved[i];
            at[saved[i]] = (ushort)i;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        pass += kicking ? 0 : found;
        total += !kicking ? found : undo ? 0 : found - cost;
        kick += kicking;
    }
    for (int i = lid; i < len; i += WG) {
        const int p = start + i;
        out[p >= n ? p - n : p] = city[path[i]];
    }
    if (lid == 0)
        gain[g] = total;
}

/* The round's result (one work-group): total[0] = the gain of the round.  Segments:
 * the sum of gain[0 .. count); replicas: the largest gain[g] (ties to the smallest g),
 * whose tour (at tours + g n) the group copies to `tour`. */
__kernel void pils_round_gain(__global const long *restrict gain, const int count,
                              const int replicas, __global const int *restrict tours,
                              __global int *restrict tour, const int n,
                              __global long *restrict total, __local long *gains,
                              __local uint *codes)
{
    const int lid = get_local_id(0);
    long sum = 0, best = -1;
    uint code = NO_CODE;
    for (int g = lid; g < count; g += get_local_size(0)) {
        sum += gain[g];
        if (gain[g] > best) {       /* g rising: the first of equal gains stays */
            best = gain[g];
            code = (uint)g;
        }
    }
    sum = group_sum_long(gains, sum);
    group_best_gain(gains, codes, &best, &code);
    for (int p = lid; p < (replicas ? n : 0); p += get_local_size(0))
        tour[p] = tours[(long)code * n + p];
    if (lid == 0)
        total[0] = replicas ? best : sum;
}
