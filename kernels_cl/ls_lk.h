/* Lin-Kernighan chains of the local search (subs 448+ of localsearch.cl): 2-opt steps
 * from t1 = the neighbour of city a against dir, t2 = a, t3 = its candidate c, closed
 * after `depth` = 2 .. LK_DEPTH steps, its second step through the branch-th best
 * candidate (branch < LK_BREADTH); sub = 448 + (branch * 2 + (dir < 0)) * 32 + depth.
 * Needs LK_DEPTH, LK_BREADTH and LK_STEP_M defined. */
#ifndef TSPCL_LS_LK_H
#define TSPCL_LS_LK_H

#include "chain.h"
#include "ls_move.h"

/* Slot p through the reversal (start s, length l): the involution of the reversal. */
inline int through(const int p, const int s, const int l, const int n_)
{
    const int off = wrap(p - s, n_);
    return off < l ? wrap(s + l - 1 - off, n_) : p;
}

/* The tour as a chain's first k reversals (rs, rl) left it, without applying them:
 * the slot of the city at tour slot p, and the city at slot q. */
inline int chain_slot(int p, const int *rs, const int *rl, const int k, const int n_)
{
    for (int r = 0; r < k; r++)
        p = through(p, rs[r], rl[r], n_);
    return p;
}

inline int chain_city(__global const int *restrict tour, int q, const int *rs, const int *rl,
                      const int k, const int n_)
{
    for (int r = k - 1; r >= 0; r--)
        q = through(q, rs[r], rl[r], n_);
    return tour[q];
}


/* Lin-Kernighan chain (Lin & Kernighan 1973, its standard step; beyond Fosin et al.,
 * whose deepest move is 3-opt): a sequence of 2-opt moves sharing t1.  With t1 the
 * neighbour of a against dir, t2 = a and t3 = c, step i removes (t(2i+1), t(2i+2)), t(2i+2)
 * the neighbour of t(2i+1) against dir in the tour the earlier steps left, which the edge
 * (t(2i+2), t1) closes: the step is the reversal of the path t2 .. t(2i+2), and t(2i+2)
 * becomes the new t2 beside t1.  From the second step on, t(2i+1) is one of the first
 * LK_STEP_M candidates of t(2i) with positive partial gain (candidate lists are sorted:
 * the scan stops at the first that fails), ranked by -d(t2i, t2i+1) + d(t2i+1, t2i+2),
 * LK's look-ahead: the
 * second step takes the branch-th best (LK's breadth at its second level: the chains of
 * branches 0 .. LK_BREADTH - 1 are tried), later steps the best; a removed edge is never
 * added back nor an added one removed.  The steps are never applied while searching: a
 * slot or city of the chain's tour is mapped through the reversals so far (k reversals,
 * O(k) each).
 * Returns the best closing gain over depths 2 .. LK_DEPTH (depth 1 is the 2-opt move,
 * sub 0 / 1) and sets *depth; with mv != 0, follows the chain to exactly `stop` steps and
 * returns that move's gain and reversals. */
inline long lk_chain(DIST_PARAMS, __global const int *restrict tour,
                     __global const int *restrict pos, __global const int *restrict cand,
                     const int a, const int c, const int dir, const int branch,
                     const int stop, int *depth, move_t *mv)
{
    const int pa = pos[a], t1 = tour[wrap(pa - dir, n)];
    long G = (long)DIST(t1, a) - DIST(a, c);   /* removed - added, closing edge aside */
    if (G <= 0 || c == t1 || c == tour[wrap(pa + dir, n)])
        return NO_GAIN;
    int rs[LK_DEPTH], rl[LK_DEPTH];                   /* the reversals so far */
    int rx[LK_DEPTH + 1], ry[LK_DEPTH + 1], ax[LK_DEPTH], ay[LK_DEPTH]; /* removed, added */
    rx[0] = t1; ry[0] = a; ax[0] = a; ay[0] = c;
    long best = NO_GAIN;
    int k = 0, t3 = c, maxlen = 0;
    int q4 = wrap(pos[c] - dir, n), t4 = tour[q4];    /* t3's neighbour against dir, its slot */
    for (;;) {
        /* remove (t3, t4): reverse the path t2 (at pa, beside t1) .. t4 */
        G += DIST(t3, t4);
        const int len = offset(pa, q4, dir, n) + 1;
        rs[k] = dir > 0 ? pa : q4;
        rl[k] = len;
        maxlen = max(maxlen, len);
        rx[k + 1] = t3; ry[k + 1] = t4;
        k++;
        const long close = G - DIST(t4, t1);
        if (mv == 0 && k >= 2 && close > best) {
            best = close;
            *depth = k;
        }
        if (k == stop) {
            if (mv) {
                for (int r = 0; r < k; r++)
                    set_rev(mv, r, rs[r], rl[r], n);
                mv->lo = dir > 0 ? pa : wrap(pa - maxlen + 1, n);
                mv->span = maxlen;
                return close;
            }
            return best;
        }
        /* next t3: a candidate t5 of t4 (now at pa; its other neighbour at pa + dir), the
         * rank-th best by look-ahead (ties in list order), kept in top[0 .. rank] */
        const int beside = chain_city(tour, wrap(pa + dir, n), rs, rl, k, n);
        const int rank = k == 1 ? branch : 0;
        long top_val[LK_BREADTH];
        int top_t5[LK_BREADTH], top_q6[LK_BREADTH], top_t6[LK_BREADTH], found = 0;
        for (int s = 0; s < LK_STEP_M; s++) {
            const int t5 = cand[t4 * M + s];
            const long g = G - DIST(t4, t5);
            if (g <= 0)
                break;
            if (t5 == t1 || t5 == beside || edge_in(t4, t5, rx, ry, k + 1))
                continue;
            const int q6 = wrap(chain_slot(pos[t5], rs, rl, k, n) - dir, n);
            const int t6 = chain_city(tour, q6, rs, rl, k, n);
            if (edge_in(t5, t6, ax, ay, k))
                continue;
            const long val = g + DIST(t5, t6);
            int j = found <= rank ? found++ : rank + 1;
            while (j > 0 && top_val[j - 1] < val) {
                if (j <= rank) {
                    top_val[j] = top_val[j - 1];
                    top_t5[j] = top_t5[j - 1];
                    top_q6[j] = top_q6[j - 1];
                    top_t6[j] = top_t6[j - 1];
                }
                j--;
            }
            if (j <= rank) {
                top_val[j] = val;
                top_t5[j] = t5;
                top_q6[j] = q6;
                top_t6[j] = t6;
            }
        }
        if (found <= rank)
            return mv ? NO_GAIN : best;
        G -= DIST(t4, top_t5[rank]);
        ax[k] = t4; ay[k] = top_t5[rank];
        t3 = top_t5[rank];
        q4 = top_q6[rank];
        t4 = top_t6[rank];
    }
}

/* Gain of chain t = sub - 448 from a toward c, or NO_GAIN when invalid; with mv != 0
 * also its reversals and range. */
inline long lk_move(DIST_PARAMS, __global const int *restrict tour,
                    __global const int *restrict pos, __global const int *restrict cand,
                    const int t, const int a, const int c, move_t *mv)
{
    int depth;
    const int dir = (t / 32) % 2 ? -1 : 1;
    return lk_chain(DIST_ARGS, tour, pos, cand, a, c, dir, t / 64, t % 32, &depth, mv);
}

/* The best chain of each direction and branch of pair pr, kept in (bg, bc) when better
 * and improving (sides = 2: only the direction of `side`, 0 for +1, 1 for -1). */
inline void lk_best(DIST_PARAMS, __global const int *restrict tour,
                    __global const int *restrict pos, __global const int *restrict cand,
                    const pair_t *pr, const int sides, const int side, long *bg, long *bc)
{
    const int a = pr->a, c = pr->c;
    const long item = pr->item;
    for (int dir = 1; dir >= -1; dir -= 2) {
        if (sides == 2 && (dir < 0) != side)
            continue;
        for (int branch = 0; branch < LK_BREADTH; branch++) {
            int depth = 0;
            const long gain = lk_chain(DIST_ARGS, tour, pos, cand, a, c, dir, branch, LK_DEPTH,
                                       &depth, 0);
            if (gain > 0)
                keep_better(gain, item * CODE_STRIDE + SUB_LK + (branch * 2 + (dir < 0)) * 32
                                  + depth, bg, bc);
        }
    }
}

#endif
