/* 3-opt moves of the local search (Fosin et al. 2013, section 4.2, Figure 4; subs 16+ of
 * localsearch.cl): the triple a, c, f with c a candidate of city a and f a candidate of
 * p = pred c, read in direction dir (+1: a b .. p c .. e f; -1: the same with pred and
 * succ swapped); edges (a,b), (p,c), (e,f) are removed and the ends joined in one of the
 * paper's four ways (three_opt_added).  Partial gains must stay positive, the usual
 * neighbour-list rule: d(a,c) < d(a,b) and d(p,f) < d(a,b) - d(a,c) + d(p,c).
 * sub = 16 + (slot * 2 + (dir < 0)) * 4 + way, slot f's place in p's list. */
#ifndef TSPCL_LS_THREEOPT_H
#define TSPCL_LS_THREEOPT_H

#include "ls_move.h"

/* Added length of the four reconnections of a b .. p c .. e f (Fosin et al. 2013,
 * Figure 4, "four ways"), removed edges (a,b), (p,c), (e,f):
 *   0: a c..e b..p f   segments swapped           adds (a,c) (e,b) (p,f)
 *   1: a c..e p..b f   swapped, [b..p] reversed   adds (a,c) (e,p) (b,f)
 *   2: a e..c b..p f   swapped, [c..e] reversed   adds (a,e) (c,b) (p,f)
 *   3: a p..b e..c f   both reversed in place     adds (a,p) (b,e) (c,f) */
inline long three_opt_added(DIST_PARAMS, const int a, const int b, const int p, const int c,
                            const int e, const int f, const int way)
{
    switch (way) {
    case 0: return (long)DIST(a, c) + DIST(e, b) + DIST(p, f);
    case 1: return (long)DIST(a, c) + DIST(e, p) + DIST(b, f);
    case 2: return (long)DIST(a, e) + DIST(c, b) + DIST(p, f);
    default: return (long)DIST(a, p) + DIST(b, e) + DIST(c, f);
    }
}

/* Gain of 3-opt move t = sub - 16 from a toward c, or NO_GAIN when invalid; with mv != 0
 * also its reversals and range. */
inline long three_opt_move(DIST_PARAMS, __global const int *restrict tour,
                           __global const int *restrict pos, __global const int *restrict cand,
                           const int t, const int a, const int c, move_t *mv)
{
    const int pa = pos[a], pc = pos[c];
    const int way = t % 4, dir = ((t / 4) % 2) ? -1 : 1, slot = t / 8;
    const int oc = offset(pa, pc, dir, n);
    if (oc < 2)
        return NO_GAIN;
    const int b = tour[wrap(pa + dir, n)], p = tour[wrap(pc - dir, n)];
    if (DIST(a, c) >= DIST(a, b))
        return NO_GAIN;
    const int f = cand[p * M + slot];
    if (DIST(p, f) >= (long)DIST(a, b) - DIST(a, c) + DIST(p, c))
        return NO_GAIN;
    const int of = offset(pa, pos[f], dir, n);
    if (of <= oc)                                     /* f must lie after c, not be a */
        return NO_GAIN;
    const int e = tour[wrap(pos[f] - dir, n)];
    const long gain = (long)DIST(a, b) + DIST(p, c) + DIST(e, f)
                    - three_opt_added(DIST_ARGS, a, b, p, c, e, f, way);
    if (mv) {
        /* The range between a and f in ascending positions is [P][Q]: P = [b..p],
         * Q = [c..e] for dir +1, P = [e..c], Q = [p..b] for dir -1. */
        const int l1 = oc - 1, l2 = of - oc;
        const int lo = dir > 0 ? pa + 1 : pa - of + 1;
        const int x = dir > 0 ? l1 : l2, y = dir > 0 ? l2 : l1;
        const int rev1 = way == 1 || way == 3, rev2 = way == 2 || way == 3;
        const int revP = dir > 0 ? rev1 : rev2, revQ = dir > 0 ? rev2 : rev1;
        mv->lo = wrap(lo, n);
        mv->span = x + y;
        if (way < 3) {                                /* [P][Q] -> [Q'][P'] -> ... */
            set_rev(mv, 0, lo, x + y, n);
            set_rev(mv, 1, lo, revQ ? 0 : y, n);
            set_rev(mv, 2, lo + y, revP ? 0 : x, n);
        } else {
            set_rev(mv, 0, lo, x, n);
            set_rev(mv, 1, lo + x, y, n);
        }
    }
    return gain;
}

/* The 3-opt moves of pair pr, kept in (bg, bc) when better: the pair (a, c) extended by
 * the candidates f of p (Figure 4, right), in both directions (sides = 2: only the
 * direction of `side`, 0 for +1, 1 for -1); the four ways share the distances of each
 * triple. */
inline void three_opt_best(DIST_PARAMS, __global const int *restrict tour,
                           __global const int *restrict pos, __global const int *restrict cand,
                           const pair_t *pr, const int sides, const int side, long *bg,
                           long *bc)
{
    const int a = pr->a, c = pr->c, pa = pr->pa, pc = pr->pc, dac = pr->dac;
    const int pred_c = pr->pred_c, succ_c = pr->succ_c, *w = pr->w;
    const long item = pr->item;
    for (int dir = 1; dir >= -1; dir -= 2) {
        if (sides == 2 && (dir < 0) != side)
            continue;
        const int oc = offset(pa, pc, dir, n);
        const int b = dir > 0 ? w[4] : w[2], p = dir > 0 ? pred_c : succ_c;
        const int dab = DIST(a, b);
        if (oc < 2 || dac >= dab)
            continue;
        const int dpc = DIST(p, c);
        const long removed_ab_pc = (long)dab + dpc, reach = (long)dab - dac + dpc;
        for (int fslot = 0; fslot < M; fslot++) {
            const int f = cand[p * M + fslot];
            if (DIST(p, f) >= reach)   /* lists are sorted by distance: no closer f follows */
                break;
            const int pf = pos[f];
            if (offset(pa, pf, dir, n) <= oc)
                continue;
            const int e = tour[wrap(pf - dir, n)];
            const long removed = removed_ab_pc + DIST(e, f);
            const long base = item * CODE_STRIDE + SUB_3OPT + (fslot * 2 + (dir < 0)) * 4;
            for (int way = 0; way < 4; way++)
                keep_better(removed - three_opt_added(DIST_ARGS, a, b, p, c, e, f, way),
                            base + way, bg, bc);
        }
    }
}

#endif
