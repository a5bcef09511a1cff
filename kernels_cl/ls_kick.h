/* The double-bridge kick of the iterated local search (localsearch.cl). */
#ifndef TSPCL_LS_KICK_H
#define TSPCL_LS_KICK_H

#include "ls_move.h"

/* Double-bridge kick (Fosin et al. 2013, Algorithm 1 line 5: four edges deleted, the
 * parts reconnected).  From a random start o, cut offsets 0 < p1 < p2 < p3 <= span give
 * B = [o, o+p1), C = [o+p1, o+p2), D = [o+p2, o+p3) and A = the rest; A B C D becomes
 * A D C B (all four joins change; the 3-change A C B D would be undone by one 3-opt
 * segment exchange).  Applied as four reversals, all inside [o, o+p3).
 * Kick number `kick` draws from Philox block (1, kick, sub) of `key`; window > 0 keeps
 * the cut points within `window` positions of o. */
inline long double_bridge(DIST_PARAMS, __global const int *restrict tour, const rng_key_t key,
                          const uint kick, const int window, move_t *mv)
{
    const int span = (window > 0 && window < n - 1) ? window : n - 1;
    int cut[3];
    uint sub = 0;
    for (;;) {
        const uint4 r = rng_block(key, 1u, kick, sub++);
        cut[0] = 1 + (int)rng_below(r.y, (uint)span);
        cut[1] = 1 + (int)rng_below(r.z, (uint)span);
        cut[2] = 1 + (int)rng_below(r.w, (uint)span);
        if (cut[0] != cut[1] && cut[1] != cut[2] && cut[0] != cut[2]) {
            const int o = (int)rng_below(r.x, (uint)n);
            /* sort the three cuts */
            int p1 = min(cut[0], min(cut[1], cut[2])), p3 = max(cut[0], max(cut[1], cut[2]));
            int p2 = cut[0] + cut[1] + cut[2] - p1 - p3;
            const int a_end = tour[wrap(o - 1, n)], b1 = tour[o];
            const int b_end = tour[wrap(o + p1 - 1, n)], c1 = tour[wrap(o + p1, n)];
            const int c_end = tour[wrap(o + p2 - 1, n)], d1 = tour[wrap(o + p2, n)];
            const int d_end = tour[wrap(o + p3 - 1, n)], a1 = tour[wrap(o + p3, n)];
            const int lb = p1, lc = p2 - p1, ld = p3 - p2;
            set_rev(mv, 0, o, p3, n);                   /* A (B C D)' = A D' C' B' */
            set_rev(mv, 1, o, ld, n);                   /* -> A D C' B' */
            set_rev(mv, 2, o + ld, lc, n);              /* -> A D C B' */
            set_rev(mv, 3, o + ld + lc, lb, n);         /* -> A D C B */
            mv->lo = o;
            mv->span = p3;
            return (long)DIST(a_end, d1) + DIST(d_end, c1) + DIST(c_end, b1) + DIST(b_end, a1)
                 - DIST(a_end, b1) - DIST(b_end, c1) - DIST(c_end, d1) - DIST(d_end, a1);
        }
    }
}

#endif
