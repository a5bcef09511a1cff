/* Or-opt moves of the local search (subs 2 .. 13 of localsearch.cl): the segment of
 * L = 1..3 cities that starts (F) or ends (B) at city a is moved next to its candidate c,
 * between c and succ c or pred c and c, turned so that a touches c;
 * sub = 2 + 4 * (L - 1) + option, option 0 F after c, 1 F before c, 2 B after c,
 * 3 B before c. */
#ifndef TSPCL_LS_OROPT_H
#define TSPCL_LS_OROPT_H

#include "ls_move.h"

/* Gain of Or-opt move t = sub - 2 from a toward c, or NO_GAIN when invalid; with
 * mv != 0 also its reversals and range (the segment travels the shorter way round). */
inline long or_opt_move(DIST_PARAMS, __global const int *restrict tour,
                        __global const int *restrict pos, const int t, const int a,
                        const int c, move_t *mv)
{
    const int pa = pos[a], pc = pos[c];
    const int L = 1 + t / 4, opt = t % 4;
    const int backward = opt >= 2;          /* segment ends at a (else starts at a) */
    const int s = backward ? wrap(pa - L + 1, n) : pa;   /* first position of segment */
    if (n < L + 5 || (L == 1 && backward))
        return NO_GAIN;
    /* insertion gap after position g: (u, w) = (c, succ c) or (pred c, c) */
    const int after_c = (opt % 2) == 0;
    const int g = after_c ? pc : wrap(pc - 1, n);
    if (wrap(g - (s - 1), n) <= L)          /* g in [s-1, s+L-1]: not outside the segment */
        return NO_GAIN;
    const int x1 = tour[s], xL = tour[wrap(s + L - 1, n)];
    const int prev = tour[wrap(s - 1, n)], next = tour[wrap(s + L, n)];
    const int u = tour[g], w = tour[wrap(g + 1, n)];
    /* orientation that makes a touch c: F1 (c,x1) keep; F2 (x1,c) reversed;
     * B1 (c,xL) reversed; B2 (xL,c) keep */
    const int keep = (opt == 0) || (opt == 3);
    const long added = keep ? (long)DIST(u, x1) + DIST(xL, w) : (long)DIST(u, xL) + DIST(x1, w);
    const long gain = (long)DIST(prev, x1) + DIST(xL, next) + DIST(u, w) - DIST(prev, next) - added;
    if (mv) {
        const int d1 = wrap(g - (s + L - 1), n);    /* cities between segment end and g */
        const int d2 = n - L - d1;                  /* cities between g+1 and segment start */
        if (d1 <= d2) {   /* [s .. g] -> [s+L .. g][segment] */
            set_rev(mv, 0, s, L + d1, n);
            set_rev(mv, 1, s, d1, n);
            set_rev(mv, 2, s + d1, keep ? L : 0, n);
            mv->lo = s;
            mv->span = L + d1;
        } else {          /* [g+1 .. s+L-1] -> [segment][g+1 .. s-1] */
            set_rev(mv, 0, g + 1, L + d2, n);
            set_rev(mv, 1, g + 1 + L, d2, n);
            set_rev(mv, 2, g + 1, keep ? L : 0, n);
            mv->lo = wrap(g + 1, n);
            mv->span = L + d2;
        }
    }
    return gain;
}

/* The Or-opt moves of pair pr, kept in (bg, bc) when better (the gains of or_opt_move,
 * from the tour read into pr). */
inline void or_opt_best(DIST_PARAMS, const pair_t *pr, long *bg, long *bc)
{
    const int pa = pr->pa, pc = pr->pc, c = pr->c, pred_c = pr->pred_c, succ_c = pr->succ_c;
    const int dac = pr->dac, *w = pr->w;
    const long item = pr->item;
    const long gap_after = DIST(c, succ_c), gap_before = DIST(pred_c, c);
    for (int L = 1; L <= 3 && n >= L + 5; L++)
        for (int backward = 0; backward <= (L > 1); backward++) {
            const int s = backward ? L - 1 : 0;           /* a's offset in the segment */
            const int x1 = w[3 - s], xL = w[3 - s + L - 1];
            const int prev = w[2 - s], next = w[3 - s + L];
            const int other = backward ? x1 : xL;         /* the end that is not a */
            const long removal = (long)DIST(prev, x1) + DIST(xL, next) - DIST(prev, next) - dac;
            const int first = wrap(pa - s, n);
            for (int after_c = 0; after_c <= 1; after_c++) {
                const int g = after_c ? pc : wrap(pc - 1, n);
                if (wrap(g - (first - 1), n) <= L)        /* gap inside the segment */
                    continue;
                const long gain = removal + (after_c ? gap_after - DIST(other, succ_c)
                                                     : gap_before - DIST(other, pred_c));
                const int sub = SUB_OROPT + 4 * (L - 1) + 2 * backward + (after_c ? 0 : 1);
                keep_better(gain, item * CODE_STRIDE + sub, bg, bc);
            }
        }
}

#endif
