/* Local search over candidate lists, best improvement per pass, on the device
 * (Fosin et al. 2013, section 4.1: one work-item per (city, candidate) pair, Figure 3;
 * unlike the paper, the reduction to the best move AND the move itself run on the
 * device).  The tour is an array plus a position array; every move is applied as up
 * to four reversals of position intervals (apply_reversal, one launch each).
 *
 * Build defines: METRIC (distance.h), M (candidates per city), USE_2OPT, USE_OROPT.
 * Move kinds evaluated by work-item (a, slot) with c = cand[a][slot], all of which
 * create the edge (a, c):
 *   0      2-opt: remove (a, succ a), (c, succ c); add (a, c), (succ a, succ c)
 *   1      2-opt: remove (pred a, a), (pred c, c); add (a, c), (pred a, pred c)
 *   2..13  Or-opt: the segment of L = 1..3 cities that starts (F) or ends (B) at a is
 *          moved next to c, between c and succ c or pred c and c, turned so that a
 *          touches c (2 + 4 * (L - 1) + option).
 *   14     3-opt segment exchange (section 4.2: the pair (a, c) extended by the
 *          candidates f of pred c, Figure 4): a->b .. p->c .. e->f becomes
 *          a->c .. e->b .. p->f, i.e. the segments [b..p] and [c..e] swap places.
 * A move is identified by code = item * 64 + sub, sub = kind (0..13) or 14 + slot of f.
 */
#include "distance.h"

#ifndef M
#define M 10
#endif
#ifndef USE_2OPT
#define USE_2OPT 1
#endif
#ifndef USE_OROPT
#define USE_OROPT 0
#endif
#ifndef USE_3OPT
#define USE_3OPT 0
#endif

#define NO_GAIN (-(1L << 62))
#define KIND_NONE (-1)

/* state[]: the search's whole bookkeeping, read by the host a few bytes at a time. */
#define S_CUR_LEN 0   /* long: length of the current tour */
#define S_BEST_LEN 1  /* long: length of best_tour (LONG_MAX before the first optimum) */
#define S_KICKS 2     /* kicks done */
#define S_BUDGET 3    /* kicks allowed (0: plain local search) */
#define S_DONE 4      /* 1 when finished */
#define S_MOVES 5     /* improving moves applied */
#define S_SAVE 6      /* this step: copy tour -> best_tour */
#define S_RESTORE 7   /* this step: copy best_tour -> tour */
#define S_ACCEPT 8    /* 0: always continue from the new local optimum; 1: only if better */
#define S_KICK_WINDOW 9 /* 0: double-bridge cut points anywhere; w > 0: within w positions */
#define S_SEED_LO 10
#define S_SEED_HI 11
#define S_STEPS 12
#define S_WORDS 16

/* move[]: kind, then four reversals (start position, length); length 0 = none. */
#define REVERSALS 4

inline int at(__global const int *tour, const int p) { return tour[p]; }
inline int wrap(const int p, const int n_) { return p >= n_ ? p - n_ : (p < 0 ? p + n_ : p); }

/* Gain of move `kind` from city a toward candidate c, or NO_GAIN when invalid;
 * when rev != 0 also write its reversals (start, len); rev arrives zeroed. */
inline long move_gain(DIST_PARAMS, __global const int *restrict tour,
                      __global const int *restrict pos, __global const int *restrict cand,
                      const int sub, const int a, const int c, int *rev)
{
    const int kind = min(sub, 14);
    const int pa = pos[a], pc = pos[c];
    if (a == c)
        return NO_GAIN;
    if (kind == 14) {
        const int oc = wrap(pc - pa, n);                  /* offset of c after a */
        if (oc < 2)
            return NO_GAIN;
        const int b = at(tour, wrap(pa + 1, n)), p = at(tour, wrap(pc - 1, n));
        const int f = cand[p * M + (sub - 14)];
        const int of = wrap(pos[f] - pa, n);
        if (of <= oc)                                     /* f must lie after c, not be a */
            return NO_GAIN;
        const int e = at(tour, wrap(pos[f] - 1, n));
        const long gain = (long)DIST(a, b) + DIST(p, c) + DIST(e, f)
                        - DIST(a, c) - DIST(e, b) - DIST(p, f);
        if (rev) {
            const int l1 = oc - 1, l2 = of - oc;          /* [b..p] and [c..e] */
            rev[0] = wrap(pa + 1, n); rev[1] = l1 + l2;   /* a (S1 S2)' f = a S2' S1' f */
            rev[2] = wrap(pa + 1, n); rev[3] = l2;        /* -> a S2 S1' f */
            rev[4] = wrap(pa + 1 + l2, n); rev[5] = l1;   /* -> a S2 S1 f */
        }
        return gain;
    }
    if (kind <= 1) {
        int b, d, start, len;
        if (kind == 0) {
            b = at(tour, wrap(pa + 1, n));
            d = at(tour, wrap(pc + 1, n));
            start = wrap(pa + 1, n);                /* reverse succ a .. c */
            len = wrap(pc - pa - 1, n) + 1;
        } else {
            b = at(tour, wrap(pa - 1, n));
            d = at(tour, wrap(pc - 1, n));
            start = pa;                             /* reverse a .. pred c */
            len = wrap(pc - 1 - pa, n) + 1;
        }
        if (b == c || d == a)
            return NO_GAIN;
        const long gain = (long)DIST(a, b) + DIST(c, d) - DIST(a, c) - DIST(b, d);
        if (rev) {
            if (2 * len > n) {  /* the other side is shorter: same cyclic tour */
                start = wrap(start + len, n);
                len = n - len;
            }
            rev[0] = start; rev[1] = len;
        }
        return gain;
    }
    const int o = kind - 2, L = 1 + o / 4, opt = o % 4;
    const int backward = opt >= 2;          /* segment ends at a (else starts at a) */
    const int s = backward ? wrap(pa - L + 1, n) : pa;   /* first position of segment */
    if (n < L + 5 || (L == 1 && backward))
        return NO_GAIN;
    /* insertion gap after position g: (u, w) = (c, succ c) or (pred c, c) */
    const int after_c = (opt % 2) == 0;
    const int g = after_c ? pc : wrap(pc - 1, n);
    if (wrap(g - (s - 1), n) <= L)          /* g in [s-1, s+L-1]: not outside the segment */
        return NO_GAIN;
    const int x1 = at(tour, s), xL = at(tour, wrap(s + L - 1, n));
    const int prev = at(tour, wrap(s - 1, n)), next = at(tour, wrap(s + L, n));
    const int u = at(tour, g), w = at(tour, wrap(g + 1, n));
    /* orientation that makes a touch c: F1 (c,x1) keep; F2 (x1,c) reversed;
     * B1 (c,xL) reversed; B2 (xL,c) keep */
    const int keep = (opt == 0) || (opt == 3);
    const long added = keep ? (long)DIST(u, x1) + DIST(xL, w) : (long)DIST(u, xL) + DIST(x1, w);
    const long gain = (long)DIST(prev, x1) + DIST(xL, next) + DIST(u, w) - DIST(prev, next) - added;
    if (rev) {
        const int d1 = wrap(g - (s + L - 1), n);    /* cities between segment end and g */
        const int d2 = n - L - d1;                  /* cities between g+1 and segment start */
        if (d1 <= d2) {   /* [s .. g] -> [s+L .. g][segment] */
            rev[0] = s; rev[1] = L + d1;
            rev[2] = s; rev[3] = d1;
            rev[4] = wrap(s + d1, n); rev[5] = keep ? L : 0;
        } else {          /* [g+1 .. s+L-1] -> [segment][g+1 .. s-1] */
            rev[0] = wrap(g + 1, n); rev[1] = L + d2;
            rev[2] = wrap(g + 1 + L, n); rev[3] = d2;
            rev[4] = wrap(g + 1, n); rev[5] = keep ? L : 0;
        }
    }
    return gain;
}

inline int first_kind(void) { return USE_2OPT ? 0 : (USE_OROPT ? 2 : 14); }
inline int last_kind(void) { return USE_OROPT ? 13 : (USE_2OPT ? 1 : -1); }

/* Better of two (gain, code) pairs: larger gain, then smaller code (deterministic). */
inline int better(const long g1, const long c1, const long g2, const long c2)
{
    return g1 > g2 || (g1 == g2 && c1 < c2);
}

/* Work-group reduction of (gain, code) pairs in local memory (no sub-group functions
 * on NVIDIA's OpenCL); the winner ends in lg[0], lc[0].  Every work-item must call it. */
inline void group_best(__local long *lg, __local long *lc, const long bg, const long bc)
{
    const int lid = get_local_id(0), wg = get_local_size(0);
    lg[lid] = bg;
    lc[lid] = bc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = wg / 2; h > 0; h >>= 1) {
        if (lid < h && better(lg[lid + h], lc[lid + h], lg[lid], lc[lid])) {
            lg[lid] = lg[lid + h];
            lc[lid] = lc[lid + h];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* One work-item per (city a, candidate slot); each work-group leaves its best
 * (gain, code) in group_gain/group_code. */
__kernel void ls_eval(DIST_PARAMS, __global const int *restrict cand,
                      __global const int *restrict tour, __global const int *restrict pos,
                      __global const long *restrict state, __global long *restrict group_gain,
                      __global long *restrict group_code, __local long *lg, __local long *lc)
{
    const int item = get_global_id(0), lid = get_local_id(0);
    long bg = NO_GAIN, bc = LONG_MAX;
    if (!state[S_DONE] && item < n * M && n >= 8) {
        const int a = item / M, c = cand[item];
        for (int sub = first_kind(); sub <= last_kind(); sub++) {
            const long g = move_gain(DIST_ARGS, tour, pos, cand, sub, a, c, 0);
            if (better(g, (long)item * 64 + sub, bg, bc)) {
                bg = g;
                bc = (long)item * 64 + sub;
            }
        }
#if USE_3OPT
        for (int slot = 0; slot < M; slot++) {
            const long g = move_gain(DIST_ARGS, tour, pos, cand, 14 + slot, a, c, 0);
            if (better(g, (long)item * 64 + 14 + slot, bg, bc)) {
                bg = g;
                bc = (long)item * 64 + 14 + slot;
            }
        }
#endif
    }
    group_best(lg, lc, bg, bc);
    if (lid == 0) {
        group_gain[get_group_id(0)] = lg[0];
        group_code[get_group_id(0)] = lc[0];
    }
}

/* Double-bridge kick (Fosin et al. 2013, Algorithm 1 line 5: four edges deleted, the
 * parts reconnected).  From a random start o, cut offsets 0 < p1 < p2 < p3 <= span give
 * B = [o, o+p1), C = [o+p1, o+p2), D = [o+p2, o+p3) and A = the rest; A B C D becomes
 * A D C B (all four joins change; the 3-change A C B D would be undone by one 3-opt
 * segment exchange).  Applied as four reversals, all inside [o, o+p3). */
inline long double_bridge(DIST_PARAMS, __global const int *restrict tour,
                          __global long *restrict state, int *rev)
{
    const rng_key_t key = {(uint)state[S_SEED_LO], (uint)state[S_SEED_HI]};
    const int window = (int)state[S_KICK_WINDOW];
    const int span = (window > 0 && window < n - 1) ? window : n - 1;
    int cut[3];
    uint sub = 0;
    for (;;) {
        const uint4 r = rng_block(key, 1u, (uint)state[S_KICKS], sub++);
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
            rev[0] = o; rev[1] = p3;                        /* A (B C D)' = A D' C' B' */
            rev[2] = o; rev[3] = ld;                        /* -> A D C' B' */
            rev[4] = wrap(o + ld, n); rev[5] = lc;          /* -> A D C B' */
            rev[6] = wrap(o + ld + lc, n); rev[7] = lb;     /* -> A D C B */
            return (long)DIST(a_end, d1) + DIST(d_end, c1) + DIST(c_end, b1) + DIST(b_end, a1)
                 - DIST(a_end, b1) - DIST(b_end, c1) - DIST(c_end, d1) - DIST(d_end, a1);
        }
    }
}

/* One work-group: reduce the group bests, then decide this step's move.  An improving
 * move is applied; at a local optimum the best tour is saved (or, with acceptance
 * "better", the walk returns to it), then a kick follows while the budget lasts
 * (Fosin et al. 2013, Algorithm 1, lines 4-10). */
__kernel void ls_control(DIST_PARAMS, __global const int *restrict tour,
                         __global const int *restrict pos, __global const int *restrict cand,
                         __global const long *restrict group_gain,
                         __global const long *restrict group_code, const int groups,
                         __global long *restrict state, __global int *restrict move,
                         __local long *lg, __local long *lc)
{
    const int lid = get_local_id(0), wg = get_local_size(0);
    long bg = NO_GAIN, bc = LONG_MAX;
    for (int g = lid; g < groups; g += wg)
        if (better(group_gain[g], group_code[g], bg, bc)) {
            bg = group_gain[g];
            bc = group_code[g];
        }
    group_best(lg, lc, bg, bc);
    if (lid != 0)
        return;
    int rev[2 * REVERSALS] = {0, 0, 0, 0, 0, 0, 0, 0};
    move[0] = KIND_NONE;
    state[S_SAVE] = 0;
    state[S_RESTORE] = 0;
    if (state[S_DONE])
        return;
    state[S_STEPS] += 1;
    if (lg[0] > 0) {
        const int item = (int)(lc[0] / 64), sub = (int)(lc[0] % 64);
        const long gain = move_gain(DIST_ARGS, tour, pos, cand, sub, item / M, cand[item], rev);
        state[S_CUR_LEN] -= gain;
        state[S_MOVES] += 1;
        move[0] = min(sub, 14);
    } else {
        const long cur = state[S_CUR_LEN], best = state[S_BEST_LEN];
        if (cur < best) {
            state[S_BEST_LEN] = cur;
            state[S_SAVE] = 1;
        } else if (state[S_ACCEPT] == 1 && cur > best) {
            state[S_RESTORE] = 1;            /* kick from the best next step */
            state[S_CUR_LEN] = best;
            return;
        }
        if (state[S_KICKS] >= state[S_BUDGET] || n < 8) {
            state[S_DONE] = 1;
            return;
        }
        state[S_CUR_LEN] += double_bridge(DIST_ARGS, tour, state, rev);
        state[S_KICKS] += 1;
        move[0] = 100;
    }
    for (int r = 0; r < 2 * REVERSALS; r++)
        move[1 + r] = rev[r];
}

/* Copies between the current and the best tour, as ls_control asked this step. */
__kernel void ls_copy(const int n, __global const long *restrict state,
                      __global int *restrict tour, __global int *restrict pos,
                      __global int *restrict best_tour)
{
    const int p = get_global_id(0);
    if (p >= n)
        return;
    if (state[S_SAVE])
        best_tour[p] = tour[p];
    else if (state[S_RESTORE]) {
        const int c = best_tour[p];
        tour[p] = c;
        pos[c] = p;
    }
}

/* Reversal r of this step's move: positions start .. start+len-1 (cyclic). Work-items
 * swap pairs, grid-stride, so any launch size covers any length. */
__kernel void apply_reversal(const int n, __global const int *restrict move, const int r,
                             __global int *restrict tour, __global int *restrict pos)
{
    if (move[0] == KIND_NONE)
        return;
    const int start = move[1 + 2 * r], len = move[2 + 2 * r];
    for (int t = get_global_id(0); t < len / 2; t += get_global_size(0)) {
        const int p1 = wrap(start + t, n), p2 = wrap(start + len - 1 - t, n);
        const int c1 = tour[p1], c2 = tour[p2];
        tour[p1] = c2;
        pos[c2] = p1;
        tour[p2] = c1;
        pos[c1] = p2;
    }
}
