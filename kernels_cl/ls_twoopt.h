/* 2-opt moves of the local search (subs 0 and 1 of localsearch.cl), from city a toward
 * its candidate c:
 *   0  remove (a, succ a), (c, succ c); add (a, c), (succ a, succ c)
 *   1  remove (pred a, a), (pred c, c); add (a, c), (pred a, pred c) */
#ifndef TSPCL_LS_TWOOPT_H
#define TSPCL_LS_TWOOPT_H

#include "ls_move.h"

/* Gain of 2-opt move t (0 or 1) from a toward c, or NO_GAIN when invalid; with mv != 0
 * also its reversal (the shorter side of the cyclic tour) and range. */
inline long two_opt_move(DIST_PARAMS, __global const int *restrict tour,
                         __global const int *restrict pos, const int t, const int a,
                         const int c, move_t *mv)
{
    const int pa = pos[a], pc = pos[c];
    int b, d, start, len;
    if (t == 0) {
        b = tour[wrap(pa + 1, n)];
        d = tour[wrap(pc + 1, n)];
        start = wrap(pa + 1, n);                /* reverse succ a .. c */
        len = wrap(pc - pa - 1, n) + 1;
    } else {
        b = tour[wrap(pa - 1, n)];
        d = tour[wrap(pc - 1, n)];
        start = pa;                             /* reverse a .. pred c */
        len = wrap(pc - 1 - pa, n) + 1;
    }
    if (b == c || d == a)
        return NO_GAIN;
    const long gain = (long)DIST(a, b) + DIST(c, d) - DIST(a, c) - DIST(b, d);
    if (mv) {
        if (2 * len > n) {  /* the other side is shorter: same cyclic tour */
            start = wrap(start + len, n);
            len = n - len;
        }
        set_rev(mv, 0, start, len, n);
        mv->lo = start;
        mv->span = len;
    }
    return gain;
}

/* The two 2-opt moves of pair pr, kept in (bg, bc) when better (the gains of
 * two_opt_move, from the tour read into pr). */
inline void two_opt_best(DIST_PARAMS, const pair_t *pr, long *bg, long *bc)
{
    const int a = pr->a, c = pr->c, succ_a = pr->w[4], pred_a = pr->w[2];
    if (succ_a != c && pr->succ_c != a)        /* t 0: (a, succ a), (c, succ c) */
        keep_better((long)DIST(a, succ_a) + DIST(c, pr->succ_c) - pr->dac
                    - DIST(succ_a, pr->succ_c), pr->item * CODE_STRIDE + 0, bg, bc);
    if (pred_a != c && pr->pred_c != a)        /* t 1: (pred a, a), (pred c, c) */
        keep_better((long)DIST(a, pred_a) + DIST(c, pr->pred_c) - pr->dac
                    - DIST(pred_a, pr->pred_c), pr->item * CODE_STRIDE + 1, bg, bc);
}

#endif
