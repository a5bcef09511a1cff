/* The search of a path in local memory, shared by pils.cl (the pieces of a cell) and
 * batch.cl (a whole small instance): moves, the queue-driven local search, kicks and
 * the iterated local search of one work-group (path_ils).
 *
 * The path is `len` local indices (path[p] the index at position p, at[] its position)
 * split into pieces (piece[] of each index); every move keeps the two end cities of
 * every piece and which end joins which, except inside a span: pieces that share one
 * piece number, `span`, with a joint (joint[x] nonzero: local indices x and x + 1)
 * between each two, which stands for the tour outside the cell between them.  No move
 * removes a joint, so inside a span any move of the path is a move of the whole tour
 * (the outside paths turn round or change places with the joints: pils.cl lays them
 * out), and no chain or double bridge with a joint inside leaves the span.
 *
 * The search on the pieces uses three moves over the candidate lists:
 *   2-opt: for city a and candidate c, the edges after (or before) both are replaced by
 *          (a, c) and the edge between their old neighbours: one reversal, inside a piece;
 *   Or-opt: a chain of 1-3 cities that starts or ends at a is moved next to c, in the
 *          orientation that makes (a, c) an edge (Or 1976), from any piece into any piece
 *          of the cell (never a piece's end city, never into an edge between pieces);
 *   with LK_DEPTH, Lin-Kernighan chains of 2-opt steps inside a piece.
 * A queue of cities (don't-look bits, Bentley 1992) drives it: every step the work-items
 * evaluate every (queued city, candidate, side, move) at once, the best improving move
 * of the whole group is applied (ties to the smallest move code: reproducible; with
 * STEP_MOVES > 1 also the next best ones clear of it, path_search), cities without an
 * improving move leave the queue and the ends of the changed edges join it.
 *
 * A kick is a double bridge, its four cut edges near each other, or a chain moved next
 * to a city near it, found by random walks over the candidate lists as linkern's kicks
 * are (Applegate, Cook and Rohe 2003, section 3).  The local search then starts from the
 * kick's end cities; the kicked path is kept when it
 * is no longer than before, else the saved path comes back (linkern keeps a kick on the
 * same rule).
 *
 * Build defines: METRIC (distance.h); M, candidates per city used; L_MAX, the most cities
 * a cell holds; WG, the work-group size (a power of two); QCAP, queue slots; LOCAL_XY,
 * 1 to keep 2-D coordinates in local memory (coordinate metrics other than GEO);
 * MAX_MOVES, steps one local search takes at most; STEP_MOVES, moves a step applies at
 * most (1: only the group's best); LK_DEPTH.
 */
#ifndef TSPCL_PILS_SEARCH_H
#define TSPCL_PILS_SEARCH_H

#include "chain.h"
#include "tour.h"
#include "reduce.h"

#define NONE 0xFFFF            /* a candidate outside the cell */
#ifndef LK_DEPTH
#define LK_DEPTH 0             /* 0: no Lin-Kernighan chains */
#endif
#ifndef STEP_MOVES
#define STEP_MOVES 1           /* moves a step of the local search applies at most */
#endif
#define LK_VARIANT 7
/* per (city, candidate, side): 2-opt, Or-opt chains of 1-3 cities that start (1-3) or
 * end (4-6) at the city, and with LK_DEPTH a Lin-Kernighan chain (7) */
#define VARIANTS (LK_DEPTH ? 8 : 7)
#define MAX_REV (LK_DEPTH > 4 ? LK_DEPTH : 4)   /* reversals of one move (or kick) at most */
#define NO_CODE 0xFFFFFFFFu
#define WHERE_INTS 6           /* two position ranges and the pieces they join */
#define KICK_TRIES 4           /* draws a kick may take to find its four edges */

/* The path's cities (the cell a work-group owns), all in local memory; without LOCAL_XY
 * also the candidate lists' distances (cdist, cand_m a city, by the instance's city
 * numbers: the Lin-Kernighan look-ahead reads a candidate's distance instead of
 * computing it from coordinates in global memory). */
#if LOCAL_XY
#define SEG_ARGS __local const int *restrict city, __local const double2 *restrict xy
#define SEG_PASS city, xy
#else
#define SEG_ARGS __local const int *restrict city, __global const int *restrict cdist, \
    const int cand_m
#define SEG_PASS city, cdist, cand_m
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
/* The distance from local index a to x, its candidate number s (lcand[a * M + s] == x). */
#if LOCAL_XY
#define CAND_DIST(a, s, x) SD(a, x)
#else
#define CAND_DIST(a, s, x) ((long)cdist[(long)city[a] * cand_m + (s)])
#endif
/* Positions p and q are in one piece (pieces are runs of positions, and no move takes a
 * city across a reversal's ends, so a position's piece stays while a chain is built). */
#define SAME_PIECE(p, q) (piece[path[p]] == piece[path[q]])
/* The edge between local indices u and v is a joint (never removed). */
#define JOINT(u, v) ((u) - (v) == 1 ? joint[v] : (v) - (u) == 1 ? joint[u] : 0)
/* The edge between positions p and p + 1 is a joint. */
#define JOINT_AT(p) JOINT(path[p], path[(p) + 1])
/* A chain of pieces p and q may not change pieces (p != q) when one is the span. */
#define SPAN_BOUND(p, q) ((p) != (q) && ((p) == span || (q) == span))
#if LK_DEPTH
/* Position p through the reversal of [lo, hi] (an involution). */
inline int through(const int p, const int lo, const int hi)
{
    return p >= lo && p <= hi ? lo + hi - p : p;
}


/* Lin-Kernighan chain inside one piece (Lin & Kernighan 1973, its standard step, as
 * localsearch.cl's lk_chain on the whole tour): 2-opt steps sharing t1, the neighbour of
 * t2 = a on a's `side`.  Step i adds (t2, t3), removes (t3, t4) with t4 the neighbour of
 * t3 on the side where t1 lies beside t2 (so the closing edge (t4, t1) makes a path
 * again), and reverses the positions between the two removed edges; t4 is the next t2.
 * The first t3 is c; later ones the candidate among the first M of t2 with a positive
 * partial gain and the best look-ahead -d(t2, t3) + d(t3, t4) (ties to list order); a
 * removed edge is never added back nor an added one removed, and every step's reversal
 * lies inside one piece; no removed edge is a joint.  The steps are not applied
 * while searching: positions are mapped through the reversals so far.  Returns the
 * best closing gain (0: none) and, in count/lo/hi, the reversals of that chain. */
inline long path_chain(DIST_PARAMS, SEG_ARGS, __local const ushort *restrict path,
                       __local const ushort *restrict at, __local const ushort *restrict piece,
                       __local const uchar *restrict joint, __local const ushort *restrict lcand,
                       const int len, const int a, const int c, const int side, int *count,
                       int *lo, int *hi)
{
    int rx[LK_DEPTH + 1], ry[LK_DEPTH + 1], ax[LK_DEPTH], ay[LK_DEPTH];
    const int i = at[a];
    if ((side == 0 ? i + 1 : i - 1) < 0 || (side == 0 ? i + 1 : i - 1) > len - 1)
        return 0;
    const int t1 = path[side == 0 ? i + 1 : i - 1];
    if (JOINT(t1, a))
        return 0;
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
        if (edge_in(t2, t3, rx, ry, k + 1) || edge_in(t3, t4, ax, ay, k) || JOINT(t3, t4))
            return best;
        G += SD(t3, t4) - SD(t2, t3);
        ax[k] = t2; ay[k] = t3;
        rx[k + 1] = t3; ry[k + 1] = t4;
        const int e = min(p1, p2), f = min(p3, p4);   /* the removed edges (e, e + 1), (f, f + 1) */
        if (!SAME_PIECE(min(e, f), max(e, f) + 1))
            return best;
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
        /* the next step from t2 = t4: the best look-ahead among its candidates.  Every
         * candidate is evaluated to the end, its indices kept inside the path, and only
         * then judged: no early exit, so the M candidates' memory reads overlap instead
         * of waiting for each other (this loop is most of a kick's time on a GPU) */
        t2 = t4;
        long top = 0;
        int t5 = -1;
        const int removed = min(p1, p2);     /* the edge (removed, removed + 1) goes */
#pragma unroll
        for (int s = 0; s < M; s++) {
            const int x = lcand[t2 * M + s];
            const int xi = x == NONE ? t2 : x;
            int px = at[xi];
            for (int r = 0; r < k; r++)
                px = through(px, lo[r], hi[r]);
            const int py = px + (p1 - p2);
            const int f = min(px, py);
            const int inside = py >= 0 && py <= len - 1;
            const int first = inside ? min(removed, f) : 0;
            const int last = inside ? max(removed, f) + 1 : 0;
            int qy = inside ? py : 0;
            for (int r = k - 1; r >= 0; r--)
                qy = through(qy, lo[r], hi[r]);
            const long g = G - CAND_DIST(t2, s, xi);
            const long val = g + SD(xi, path[qy]);
            if (x != NONE && x != t1 && g > 0 && inside && px != p1 && px != p2 && py != p2
                && SAME_PIECE(first, last) && !JOINT(xi, path[qy]) && (t5 < 0 || val > top)) {
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

/* Moving the chain of positions [u, v] between positions x and x + 1 (x < u - 1 or
 * x > v), with chain end e1 (u's city, or v's when `flip`) next to x's city: its gain
 * (old length minus new) and the reversals that apply it (returns their count, 2 when
 * the chain turns round, else 3).  where[0..1] gets the chain's positions after the move
 * and where[2] the piece it joins (x's); where[3..5] is left alone.  Keeps every piece's ends and their pairing when
 * u - 1 and v + 1 are in one piece and x and x + 1 in one. */
inline int chain_move(DIST_PARAMS, SEG_ARGS, __local const ushort *restrict path,
                      __local const ushort *restrict piece, const int u, const int v,
                      const int x, const int flip, long *gain, int *lo, int *hi, int *where)
{
    const int cu = path[u], cv = path[v], p = path[u - 1], q = path[v + 1];
    const int px = path[x], py = path[x + 1], s = v - u + 1;
    const int e1 = flip ? cv : cu, e2 = flip ? cu : cv;
    *gain = SD(p, cu) + SD(cv, q) + SD(px, py) - SD(p, q) - SD(px, e1) - SD(e2, py);
    if (x > v) {        /* C B -> B C, B = [v + 1, x]: reverse all, then B, then C */
        const int nb = x - v;
        lo[0] = u; hi[0] = x;
        lo[1] = u; hi[1] = u + nb - 1;
        lo[2] = u + nb; hi[2] = x;
        where[0] = x - s + 1;
        where[1] = x;
    } else {            /* B C -> C B, B = [x + 1, u - 1]: reverse all, then B, then C */
        lo[0] = x + 1; hi[0] = v;
        lo[1] = x + 1 + s; hi[1] = v;
        lo[2] = x + 1; hi[2] = x + s;
        where[0] = x + 1;
        where[1] = x + s;
    }
    where[2] = piece[px];
    return flip && s > 1 ? 2 : 3;
}

/* The move `variant` that makes candidate c a neighbour of a, c on a's `side` (0: after
 * a, 1: before a) for 2-opt, or the chain next to c on c's side `side` (0: after c,
 * 1: before c) for Or-opt, on the path of `len` positions: its gain (old length minus
 * new), the reversals [lo[r], hi[r]] that apply it, in order, and for Or-opt the chain's
 * new place (chain_move's where; where[2] = NONE otherwise; where[5] = NONE).  Returns how many reversals
 * (0: no such move).  Positions 0 and len - 1 are never inside a reversal, no joint is
 * removed, and no chain with a joint inside leaves the span or enters it. */
inline int path_move(DIST_PARAMS, SEG_ARGS, __local const ushort *restrict path,
                     __local const ushort *restrict at, __local const ushort *restrict piece,
                     __local const uchar *restrict joint, const int span,
                     __local const ushort *restrict lcand, const int len, const int a,
                     const int c, const int side, const int variant, long *gain, int *lo,
                     int *hi, int *where)
{
    const int i = at[a], j = at[c];
    where[2] = where[5] = NONE;
    if (a == c)
        return 0;
#if LK_DEPTH
    if (variant == LK_VARIANT) {
        int count;
        *gain = path_chain(DIST_ARGS, SEG_PASS, path, at, piece, joint, lcand, len, a, c,
                           side, &count, lo, hi);
        return *gain > 0 ? count : 0;
    }
#endif
    if (variant == 0) {                       /* 2-opt */
        if (side == 0 ? (i > len - 2 || j > len - 2) : (i < 1 || j < 1))
            return 0;
        const int step = side == 0 ? 1 : -1;
        const int a1 = path[i + step], c1 = path[j + step];
        if (a1 == c || c1 == a || JOINT(a, a1) || JOINT(c, c1))
            return 0;
        lo[0] = min(i, j) + (side == 0);
        hi[0] = max(i, j) - (side == 1);
        if (!SAME_PIECE(lo[0] - 1, hi[0] + 1))
            return 0;
        *gain = SD(a, a1) + SD(c, c1) - SD(a, c) - SD(a1, c1);
        return 1;
    }
    const int s = 1 + (variant - 1) % 3, ends_at_a = (variant - 1) / 3;
    const int u = ends_at_a ? i - s + 1 : i, v = u + s - 1;   /* the chain [u, v] */
    const int x = side == 0 ? j : j - 1;                      /* insert between x, x + 1 */
    if (u < 1 || v > len - 2 || x < 0 || x > len - 2 || (x >= u - 1 && x <= v)
        || !SAME_PIECE(u - 1, v + 1) || !SAME_PIECE(x, x + 1) || JOINT_AT(u - 1)
        || JOINT_AT(v) || JOINT_AT(x))
        return 0;
    if (SPAN_BOUND(piece[path[u]], piece[path[x]])
        && ((s > 1 && JOINT_AT(u)) || (s > 2 && JOINT_AT(u + 1))))
        return 0;
    /* a goes next to c: on c's side 0 that is next to x's city (chain end e1) */
    const int flip = (side == 0) != (a == path[u]);
    return chain_move(DIST_ARGS, SEG_PASS, path, piece, u, v, x, flip, gain, lo, hi, where);
}

inline uint move_code(const int a, const int k, const int side, const int variant)
{
    return (((uint)a * M + k) * 2 + side) * 8 + variant;
}

/* Reverse path positions (at follows); the whole group, no barrier inside. */
DEFINE_GROUP_REVERSE(path_reverse, __local, ushort)

/* A move's reversals in order, with a barrier after each; then the cities at positions
 * where[0..1] join piece where[2] and those at where[3..4] piece where[5] (each unless
 * NONE). */
inline void path_apply(__local ushort *restrict path, __local ushort *restrict at,
                       __local ushort *restrict piece, const int count, const int *lo,
                       const int *hi, const int *where)
{
    for (int r = 0; r < count; r++) {
        path_reverse(path, at, L_MAX, lo[r], hi[r] - lo[r] + 1);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int w = 0; w < WHERE_INTS; w += 3)
        for (int p = where[w] + get_local_id(0); p <= where[w + 1] && where[w + 2] != NONE;
             p += WG)
            piece[path[p]] = (ushort)where[w + 2];
    barrier(CLK_LOCAL_MEM_FENCE);
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

/* shared[]: [0] the queue length, [1] a move's reversal count, then lo, hi and where */
#define SH_LO 2
#define SH_HI (2 + MAX_REV)
#define SH_WHERE (2 + 2 * MAX_REV)
#define SHARED_INTS (2 + 2 * MAX_REV + WHERE_INTS)

/* The reach of a move's `count` reversals: the positions it reads and changes, from the
 * reversals' lowest start - 1 to their highest end + 1 (reversals leave every other
 * position as it was). */
inline void move_reach(const int count, const int *lo, const int *hi, int *from, int *to)
{
    *from = INT_MAX;
    *to = -1;
    for (int r = 0; r < count; r++) {
        *from = min(*from, lo[r] - 1);
        *to = max(*to, hi[r] + 1);
    }
}

/* A move left in shared[] for every work-item to read (by one work-item). */
inline void share_move(__local int *shared, const int count, const int *lo, const int *hi,
                       const int *where)
{
    shared[1] = count;
    for (int r = 0; r < count; r++) {
        shared[SH_LO + r] = lo[r];
        shared[SH_HI + r] = hi[r];
    }
    for (int w = 0; w < WHERE_INTS; w++)
        shared[SH_WHERE + w] = where[w];
}

/* Every work-item reads the move work-item 0 shared; returns its reversal count. */
inline int shared_move(__local const int *shared, int *lo, int *hi, int *where)
{
    const int count = shared[1];
    for (int r = 0; r < count; r++) {
        lo[r] = shared[SH_LO + r];
        hi[r] = shared[SH_HI + r];
    }
    for (int w = 0; w < WHERE_INTS; w++)
        where[w] = shared[SH_WHERE + w];
    return count;
}

/* Local search from the queued cities until the queue is empty (or MAX_MOVES moves);
 * returns the total gain, the same in every work-item, and adds its steps to *steps. */
inline long path_search(DIST_PARAMS, SEG_ARGS, __local ushort *restrict path,
                        __local ushort *restrict at, __local ushort *restrict piece,
                        __local const uchar *restrict joint, const int span, const int len,
                        __local const ushort *restrict lcand,
                        __local ushort *queue, __local uchar *queued, __local int *keep,
                        __local int *shared, __local long *gains, __local uint *codes,
                        int *steps)
{
    const int lid = get_local_id(0);
    long total = 0;
    for (int moves = 0; moves < MAX_MOVES; moves++) {
        barrier(CLK_LOCAL_MEM_FENCE);
        const int qn = shared[0];
        if (qn == 0)
            break;
        (*steps)++;
        for (int t = lid; t < qn; t += WG)
            keep[t] = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        long best = 0;
        uint code = NO_CODE;
        /* this work-item's best move, kept whole: the group's best is shared by the
         * work-item that found it, not evaluated again */
        int my_count = 0, my_lo[MAX_REV], my_hi[MAX_REV], my_where[WHERE_INTS];
        for (int t = lid; t < qn * M * 2; t += WG) {
            const int slot = t / (2 * M), k = (t >> 1) % M, side = t & 1;
            const int a = queue[slot], c = lcand[a * M + k];
            if (c == NONE)
                continue;
            int found = 0;
            for (int variant = 0; variant < VARIANTS; variant++) {
                long g;
                int lo[MAX_REV], hi[MAX_REV], where[WHERE_INTS];
                const int count = path_move(DIST_ARGS, SEG_PASS, path, at, piece, joint, span,
                                            lcand, len, a, c, side, variant, &g, lo, hi, where);
                if (count && g > 0) {
                    found = 1;
                    const uint mc = move_code(a, k, side, variant);
                    if (g > best || (g == best && mc < code)) {
                        best = g;
                        code = mc;
                        my_count = count;
                        for (int r = 0; r < count; r++) {
                            my_lo[r] = lo[r];
                            my_hi[r] = hi[r];
                        }
                        for (int w = 0; w < WHERE_INTS; w++)
                            my_where[w] = where[w];
                    }
                }
            }
            if (found)
                atomic_or((volatile __local int *)&keep[slot], 1);
        }
        /* up to STEP_MOVES moves a step: the group's best, then each time the best of
         * those clear of every move applied this step.  A move reads and changes only
         * its reach (move_reach), so moves whose reaches do not meet are all valid
         * together, their gains add up, and none needs evaluating again */
        const uint mine = code;
        const long mine_gain = best;
        int my_from, my_to, clear = best > 0;
        move_reach(my_count, my_lo, my_hi, &my_from, &my_to);
        for (int pick = 0; pick < STEP_MOVES; pick++) {
            long g = clear ? mine_gain : 0;
            uint gc = clear ? mine : NO_CODE;
            group_best_gain(gains, codes, &g, &gc);
            if (g > 0 && gc == mine)
                share_move(shared, my_count, my_lo, my_hi, my_where);
            if (lid == 0 && pick == 0) {
                int kept = 0;
                for (int t = 0; t < qn; t++) {
                    if (keep[t])
                        queue[kept++] = queue[t];
                    else
                        queued[queue[t]] = 0;
                }
                shared[0] = kept;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            if (g == 0)
                break;         /* none left (on the first pick: the queue emptied) */
            total += g;
            int lo[MAX_REV], hi[MAX_REV], where[WHERE_INTS];
            const int count = shared_move(shared, lo, hi, where);
            barrier(CLK_LOCAL_MEM_FENCE);
            path_apply(path, at, piece, count, lo, hi, where);
            if (lid == 0)
                queue_ends(path, len, queue, queued, &shared[0], count, lo, hi);
            int from, to;
            move_reach(count, lo, hi, &from, &to);
            clear = clear && gc != mine && (my_to < from || my_from > to);
        }
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

/* The local index a random walk of `walk` steps over the candidate lists reaches from y
 * (a step to a candidate outside the cell stays); walk 0: any of the path's len cities,
 * uniformly (what a long walk tends to on a small path, in one draw). */
inline int walk_from(__local const ushort *restrict path, __local const ushort *restrict lcand,
                     int y, const int walk, const int len, rng_stream_t *st)
{
    if (walk == 0)
        return path[rng_below(stream_next(st), (uint)len)];
    for (int step = 0; step < walk; step++) {
        const int z = lcand[y * M + (int)rng_below(stream_next(st), (uint)M)];
        y = z == NONE ? y : z;
    }
    return y;
}

/* Kick number `kick` (the same draws in every work-item), from a random city and random
 * walks of `walk` steps from it over the candidate lists, as linkern's kicks are
 * (Applegate, Cook and Rohe 2003, section 3), or with walk 0 anywhere on the path.  A
 * share bridge_cut / 65536 of the draws
 * are double bridges, the others chain moves:
 *   double bridge (Martin, Otto and Felten 1991): the edges after (or before) the city
 *     and the ends of three walks, (q, q + 1) with q0 < q1 < q2 < q3, are cut and the
 *     paths between them, B C D, become D C B: all four joins change, a non-sequential
 *     move no 2-opt, Or-opt or LK step undoes in one move.  B and D each lie inside one
 *     piece, not always the same, and C may hold piece ends: B and D swap places (and
 *     pieces), C keeps its order, so every piece keeps its ends.  Applied as ls_kick.h's
 *     double_bridge: B C D turned round as a whole, then each;
 *   chain move: a chain of at most `window` cities from the city, inside its piece, goes
 *     (turned round or not) next to the end of one walk, on either side of it, where the
 *     edge is inside a piece: a 3-change (chain_move), which one Or-opt or LK move may
 *     undo, so a finer kick.
 * Neither removes a joint, nor moves cities between the span and another piece.  With a
 * span (span_len > 0), a double bridge's first city is one of the span's (local indices
 * span_from .. span_from + span_len - 1 when it was laid out): its joints let it change
 * the whole tour's structure there.
 * Returns the reversal count (0: no kick found in KICK_TRIES draws), the cost (new length
 * minus old), the reversals, and in where[] the cities that change pieces (path_apply). */
inline int kick_move(DIST_PARAMS, SEG_ARGS, const rng_key_t key, const uint round,
                     const uint g, const uint kick, __local const ushort *restrict path,
                     __local const ushort *restrict at, __local const ushort *restrict piece,
                     __local const uchar *restrict joint, const int span_from,
                     const int span_len, const int span, __local const ushort *restrict lcand,
                     const int len, const int window, const int walk, const uint bridge_cut,
                     long *cost, int *lo, int *hi,
                     int *where)
{
    for (int t = 0; t < KICK_TRIES; t++) {
        const uint4 r = rng_block(key, round, g, kick * KICK_TRIES + t);
        rng_stream_t st = rng_block(key, round | 0x80000000u, g, kick * KICK_TRIES + t);
        if ((r.z >> 16) >= bridge_cut) {                        /* a chain move */
            const int u = 1 + (int)rng_below(r.x, (uint)(len - 2));
            int v = min(u + (int)rng_below(r.y, (uint)window), len - 2);
            while (v >= u && !SAME_PIECE(u - 1, v + 1))
                v--;
            const int x = at[walk_from(path, lcand, path[u], walk, len, &st)] - (int)(r.w & 1);
            if (v < u || x < 0 || x > len - 2 || (x >= u - 1 && x <= v)
                || !SAME_PIECE(x, x + 1) || JOINT_AT(u - 1) || JOINT_AT(v) || JOINT_AT(x)
                || SPAN_BOUND(piece[path[u]], piece[path[x]]))
                continue;
            long gain;
            where[5] = NONE;
            const int count = chain_move(DIST_ARGS, SEG_PASS, path, piece, u, v, x,
                                         (int)((r.w >> 1) & 1), &gain, lo, hi, where);
            *cost = -gain;
            return count;
        }
        int q[4];                                                /* a double bridge */
        q[0] = span_len ? at[span_from + (int)rng_below(r.x, (uint)span_len)]
                        : (int)rng_below(r.x, (uint)(len - 1));
        for (int e = 1; e < 4; e++)
            q[e] = at[walk_from(path, lcand, path[q[0]], walk, len, &st)] - (int)(stream_next(&st) & 1);
        for (int i = 1; i < 4; i++)          /* sort the four */
            for (int j = i; j > 0 && q[j - 1] > q[j]; j--) {
                const int x = q[j];
                q[j] = q[j - 1];
                q[j - 1] = x;
            }
        if (q[0] < 0 || q[3] > len - 2 || q[0] == q[1] || q[1] == q[2] || q[2] == q[3]
            || !SAME_PIECE(q[0], q[1] + 1) || !SAME_PIECE(q[2], q[3] + 1) || JOINT_AT(q[0])
            || JOINT_AT(q[1]) || JOINT_AT(q[2]) || JOINT_AT(q[3])
            || SPAN_BOUND(piece[path[q[0]]], piece[path[q[3]]]))
            continue;
        const int a_end = path[q[0]], b1 = path[q[0] + 1], b_end = path[q[1]];
        const int c1 = path[q[1] + 1], c_end = path[q[2]], d1 = path[q[2] + 1];
        const int d_end = path[q[3]], a1 = path[q[3] + 1];
        const int o = q[0] + 1, lb = q[1] - q[0], lc = q[2] - q[1], ld = q[3] - q[2];
        lo[0] = o;           hi[0] = q[3];              /* A (B C D)' = A D' C' B' */
        lo[1] = o;           hi[1] = o + ld - 1;        /* -> A D C' B' */
        lo[2] = o + ld;      hi[2] = o + ld + lc - 1;   /* -> A D C B' */
        lo[3] = o + ld + lc; hi[3] = q[3];              /* -> A D C B */
        const int from = piece[a_end], to = piece[a1];  /* B's piece, D's */
        where[0] = o;                                   /* D, into B's piece */
        where[1] = o + ld - 1;
        where[2] = from == to ? NONE : from;
        where[3] = q[3] - lb + 1;                       /* B, into D's */
        where[4] = q[3];
        where[5] = from == to ? NONE : to;
        *cost = SD(a_end, d1) + SD(d_end, c1) + SD(c_end, b1) + SD(b_end, a1)
              - SD(a_end, b1) - SD(b_end, c1) - SD(c_end, d1) - SD(d_end, a1);
        return 4;
    }
    return 0;
}

/* Iterated local search of the path by the whole work-group (one call site per kernel:
 * PoCL builds every call site's barriers separately and wants them unconditional, so it
 * is one loop with one call of path_search and no barrier under a condition): first,
 * with `descend`, passes over the path in chunks of QCAP cities until a whole pass finds
 * nothing; then `kicks` kicks (fewer with step_budget > 0: none begins once the local
 * searches have taken step_budget steps), kick k drawn as kick_move(key, round, g, k), each undone
 * when the path after its local search is longer than the best path so far by more than
 * `slack` (0: longer than before the kick; linkern's rule); with slack, the search goes on
 * from a kept path that is longer than the best (as the whole-tour ILS's accept=better
 * slack does), the best is kept in `best` (len entries, untouched at slack 0) and comes
 * back at the end: for a path of one piece only (pieces are not kept with it).  saved and
 * saved_piece are scratch (len entries).  Paths under 8 cities are left as they are.
 * Returns how much shorter the path is, the same in every work-item; done[0] gets the
 * kicks taken and done[1] the local searches' steps. */
inline long path_ils(DIST_PARAMS, SEG_ARGS, __local ushort *restrict path,
                     __local ushort *restrict at, __local ushort *restrict piece,
                     __local const uchar *restrict joint, const int span_from,
                     const int span_len, const int span,
                     __local ushort *restrict saved, __local ushort *restrict saved_piece,
                     __local ushort *restrict best, const int len,
                     __local const ushort *restrict lcand,
                     __local ushort *queue, __local uchar *queued, __local int *keep,
                     __local int *shared, __local long *gains, __local uint *codes,
                     const rng_key_t rkey, const uint round, const uint g, const int descend,
                     const int kicks, const int window, const int walk, const uint bridge_cut,
                     const long slack, const int step_budget, int *done)
{
    const int lid = get_local_id(0);
    long total = 0, pass = 0, best_total = 0;   /* how much shorter the path is, and the best */
    int from = descend ? 0 : len, kick = 0, steps = 0;
    for (int i = lid; i < (slack > 0 ? len : 0); i += WG)
        best[i] = path[i];
    while (len >= 8) {
        if (from >= len && pass > 0) {        /* a pass found moves: another pass */
            from = 0;
            pass = 0;
        }
        const int kicking = from >= len;
        if (kicking && (kick == kicks || (step_budget > 0 && steps >= step_budget)))
            break;
        if (!kicking && lid == 0)
            for (int x = from; x < min(len, from + QCAP); x++)
                queue_push(queue, queued, &shared[0], x);
        from += kicking ? 0 : QCAP;
        for (int i = lid; i < (kicking ? len : 0); i += WG) {
            saved[i] = path[i];
            saved_piece[i] = piece[i];
        }
        long cost = 0;
        int lo[MAX_REV], hi[MAX_REV], where[WHERE_INTS] = {0, -1, NONE, 0, -1, NONE};
        const int count = kicking ? kick_move(DIST_ARGS, SEG_PASS, rkey, round, g,
                                              (uint)kick, path, at, piece, joint, span_from,
                                              span_len, span, lcand,
                                              len, window, walk, bridge_cut, &cost, lo, hi,
                                              where) : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        path_apply(path, at, piece, count, lo, hi, where);
        if (lid == 0)
            queue_ends(path, len, queue, queued, &shared[0], count, lo, hi);
        const long found = path_search(DIST_ARGS, SEG_PASS, path, at, piece, joint, span, len,
                                       lcand, queue, queued, keep, shared, gains, codes, &steps);
        const long after = total + found - cost;     /* with the kick kept */
        const int undo = kicking && best_total - after > slack;
        for (int i = lid; i < (undo ? len : 0); i += WG) {
            path[i] = saved[i];
            at[saved[i]] = (ushort)i;
            piece[i] = saved_piece[i];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        pass += kicking ? 0 : found;
        total = undo ? total : after;
        for (int i = lid; i < (slack > 0 && total > best_total ? len : 0); i += WG)
            best[i] = path[i];
        best_total = max(best_total, total);
        kick += kicking;
    }
    for (int i = lid; i < (best_total > total ? len : 0); i += WG) {   /* the best back */
        path[i] = best[i];
        at[best[i]] = (ushort)i;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    done[0] = kick;
    done[1] = steps;
    return best_total;
}

#endif
