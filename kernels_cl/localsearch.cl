/* Local search over candidate lists on the device, many non-conflicting improving moves
 * per pass, with an active-city queue (don't-look bits), and iterated local search.
 *
 * Fosin et al. 2013 (section 4.1, Figure 3): work-items per (city, candidate) pair,
 * gains computed on the fly.  Beyond the paper (issue 3, item 3):
 *  - only the cities in the active queue are evaluated; a city leaves the queue when it
 *    has no improving move and re-enters when a tour edge of it or of one of its
 *    candidates changes (don't-look bits, Bentley; the paper, section 2, found them
 *    useless with one move per pass);
 *  - each queued city finds its best move; the moves are then claimed on blocks of
 *    CLAIM_BLOCK tour positions (largest gain, then smallest city wins a block), and
 *    every move that wins all the blocks it touches is applied in the same pass: the
 *    moves touch disjoint position ranges, so their gains add up exactly;
 *  - the reduction, the selection and the moves all run on the device.
 * The tour is an array plus a position array; every move is at most REVERSALS
 * reversals of position intervals inside its own range.
 *
 * One step = ls_eval -> ls_control -> ls_claim -> ls_resolve -> ls_apply.
 *
 * Build defines: METRIC (distance.h), M (candidates per city), USE_2OPT, USE_OROPT,
 * USE_3OPT, USE_LK, LK_DEPTH (most 2-opt steps of a chain), LK_BREADTH (alternatives
 * tried for a chain's second step), LK_STEP_M (candidates a chain's later steps scan,
 * at most M), APPLY_GROUP (ls_apply's work-group size).
 * Move `sub`s evaluated by work-item (a, slot) with c = cand[a][slot]:
 *   0      2-opt: remove (a, succ a), (c, succ c); add (a, c), (succ a, succ c)
 *   1      2-opt: remove (pred a, a), (pred c, c); add (a, c), (pred a, pred c)
 *   2..13  Or-opt: the segment of L = 1..3 cities that starts (F) or ends (B) at a is
 *          moved next to c, between c and succ c or pred c and c, turned so that a
 *          touches c (2 + 4 * (L - 1) + option).
 *   16+    3-opt (section 4.2, Figure 4): the triple a, c, f with f a candidate of
 *          p = pred c, read in direction dir (+1: a b .. p c .. e f; -1: the same
 *          with pred and succ swapped); edges (a,b), (p,c), (e,f) are removed and the
 *          ends joined in one of the paper's four ways (three_opt_added).  Partial
 *          gains must stay positive, the usual neighbour-list rule: d(a,c) < d(a,b) and
 *          d(p,f) < d(a,b) - d(a,c) + d(p,c).  sub = 16 + (slot * 2 + (dir < 0)) * 4 + way.
 *   448+   Lin-Kernighan chain (lk_chain): 2-opt steps from t1 = the neighbour of a
 *          against dir, t2 = a, t3 = c, closed after `depth` = 2 .. LK_DEPTH steps, its
 *          second step through the branch-th best candidate (branch < LK_BREADTH);
 *          sub = 448 + (branch * 2 + (dir < 0)) * 32 + depth.
 * A move is identified by code = (a * M + slot) * CODE_STRIDE + sub.
 */
#include "distance.h"
#include "reduce.h"

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
#ifndef USE_LK
#define USE_LK 0
#endif
#ifndef LK_DEPTH
#define LK_DEPTH 6
#endif
#ifndef LK_BREADTH
#define LK_BREADTH 1
#endif
#ifndef LK_STEP_M
#define LK_STEP_M 10
#endif
#ifndef APPLY_GROUP
#define APPLY_GROUP 256
#endif

#define NO_GAIN (-(1L << 62))
#define CODE_STRIDE 1024
#define SUB_3OPT 16
#define SUB_LK 448
#define CLAIM_BLOCK 64          /* tour positions per claim block */
#define MAX_CLAIM_BLOCKS 32     /* longer moves take part only when they are the best */

/* state[]: the search's bookkeeping, read by the host a few words at a time. */
#define S_CUR_LEN 0   /* long: length of the current tour (see S_PENDING) */
#define S_BEST_LEN 1  /* long: length of best_tour (LONG_MAX before the first optimum) */
#define S_KICKS 2     /* kicks done */
#define S_BUDGET 3    /* kicks allowed (0: plain local search) */
#define S_DONE 4      /* 1 when finished */
#define S_MOVES 5     /* improving moves applied (see S_PENDING) */
#define S_SAVE 6      /* this step: copy tour -> best_tour */
#define S_RESTORE 7   /* this step: copy best_tour -> tour */
#define S_ACCEPT 8    /* -1: always continue from the new local optimum; s >= 0: only if it
                         is at most s parts per million longer than the best */
#define S_KICK_WINDOW 9 /* 0: double-bridge cut points anywhere; w > 0: within w positions */
#define S_SEED_LO 10
#define S_SEED_HI 11
#define S_STEPS 12    /* passes (ls_control launches that did something) */
#define S_MODE 13     /* this step: MODE_* */
#define S_BEST_CODE 14 /* this step: code of the best move */
#define S_FLAGS 15    /* bit 0: queue parity; bit 1: this step's queue holds every city;
                         bit 2: one move per pass (the paper's best improvement) */
#define S_PENDING 16  /* per ls_apply group g: gain at 16 + 2g, moves at 17 + 2g, not
                         yet in S_CUR_LEN / S_MOVES (ls_control folds them in) */

#define MODE_NONE 0
#define MODE_IMPROVE 1
#define MODE_KICK 2

#define KICK_REVERSALS 4      /* a double bridge; also the most any other move needs */
#define REVERSALS (USE_LK && LK_DEPTH > KICK_REVERSALS ? LK_DEPTH : KICK_REVERSALS)
#define MOVE_WORDS (2 * REVERSALS) /* a move stored for ls_apply: start, length of each */

/* A move: up to REVERSALS reversals (start position, length; length < 2 does nothing),
 * applied in order, and the range [lo, lo + span) of positions whose cities it may move. */
typedef struct {
    int start[REVERSALS];
    int len[REVERSALS];
    int lo, span;
} move_t;

inline int wrap(const int p, const int n_) { return p >= n_ ? p - n_ : (p < 0 ? p + n_ : p); }

inline move_t no_move(void)
{
    move_t mv;
    for (int r = 0; r < REVERSALS; r++) {
        mv.start[r] = 0;
        mv.len[r] = 0;
    }
    mv.lo = 0;
    mv.span = 0;
    return mv;
}

inline void set_rev(move_t *mv, const int r, const int start, const int len, const int n_)
{
    mv->start[r] = wrap(start, n_);
    mv->len[r] = len;
}

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

/* Offset of position q from position p in direction dir (0 .. n-1). */
inline int offset(const int p, const int q, const int dir, const int n_)
{
    return wrap(dir > 0 ? q - p : p - q, n_);
}

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

inline int edge_in(const int x, const int y, const int *ex, const int *ey, const int count)
{
    for (int i = 0; i < count; i++)
        if ((ex[i] == x && ey[i] == y) || (ex[i] == y && ey[i] == x))
            return 1;
    return 0;
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

/* Gain of move `sub` from city a toward candidate c, or NO_GAIN when invalid;
 * when mv != 0 also describe it (reversals and range). */
inline long move_gain(DIST_PARAMS, __global const int *restrict tour,
                      __global const int *restrict pos, __global const int *restrict cand,
                      const int sub, const int a, const int c, move_t *mv)
{
    const int pa = pos[a], pc = pos[c];
    if (a == c)
        return NO_GAIN;
#if USE_LK
    if (sub >= SUB_LK) {
        int depth;
        const int t = sub - SUB_LK, dir = (t / 32) % 2 ? -1 : 1;
        return lk_chain(DIST_ARGS, tour, pos, cand, a, c, dir, t / 64, t % 32, &depth, mv);
    }
#endif
    if (sub >= SUB_3OPT) {
        const int t = sub - SUB_3OPT, way = t % 4, dir = ((t / 4) % 2) ? -1 : 1, slot = t / 8;
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
    if (sub <= 1) {
        int b, d, start, len;
        if (sub == 0) {
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
    const int o = sub - 2, L = 1 + o / 4, opt = o % 4;
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

/* Better of two (gain, code) pairs: larger gain, then smaller code (deterministic). */
inline int better(const long g1, const long c1, const long g2, const long c2)
{
    return g1 > g2 || (g1 == g2 && c1 < c2);
}

/* Keeps (g, code) in (bg, bc) when it is better. */
inline void keep_better(const long g, const long code, long *bg, long *bc)
{
    if (better(g, code, *bg, *bc)) {
        *bg = g;
        *bc = code;
    }
}

/* Best move of work-item (a, slot, side) over every enabled kind, into (bg, bc).  The
 * 2-opt and Or-opt gains are those of move_gain (subs 0..13), computed together from one
 * read of the tour around a and c: every one of them adds the edge (a, c).  With
 * sides = 2, side 0 takes them and the 3-opt / chain moves of direction +1, side 1
 * those of direction -1 (sides = 1: side 0 takes all). */
inline void best_of_pair(DIST_PARAMS, __global const int *restrict tour,
                         __global const int *restrict pos, __global const int *restrict cand,
                         const int a, const int slot, const int sides, const int side,
                         long *bg, long *bc)
{
    const int c = cand[a * M + slot];
    const long item = (long)a * M + slot;
    if (a == c)
        return;
    const int pa = pos[a], pc = pos[c];
    int w[7];                                   /* tour[pa - 3 .. pa + 3] */
    for (int t = 0; t < 7; t++)
        w[t] = tour[wrap(pa - 3 + t, n)];
    const int pred_c = tour[wrap(pc - 1, n)], succ_c = tour[wrap(pc + 1, n)];
    const int dac = DIST(a, c);
#if USE_2OPT
    if (side == 0 && w[4] != c && succ_c != a)  /* sub 0: (a, succ a), (c, succ c) */
        keep_better((long)DIST(a, w[4]) + DIST(c, succ_c) - dac - DIST(w[4], succ_c),
                    item * CODE_STRIDE + 0, bg, bc);
    if (side == 0 && w[2] != c && pred_c != a)  /* sub 1: (pred a, a), (pred c, c) */
        keep_better((long)DIST(a, w[2]) + DIST(c, pred_c) - dac - DIST(w[2], pred_c),
                    item * CODE_STRIDE + 1, bg, bc);
#endif
#if USE_OROPT
    const long gap_after = DIST(c, succ_c), gap_before = DIST(pred_c, c);
    for (int L = 1; L <= 3 && n >= L + 5 && side == 0; L++)
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
                const int sub = 2 + 4 * (L - 1) + 2 * backward + (after_c ? 0 : 1);
                keep_better(gain, item * CODE_STRIDE + sub, bg, bc);
            }
        }
#endif
#if USE_3OPT
    /* Section 4.2: the pair (a, c) extended by the candidates f of p (Figure 4, right),
     * in both directions; the four ways share the distances of each triple. */
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
#endif
#if USE_LK
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
#endif
}

/* Evaluation pass over the active queue: work-group = C = wg / (M * sides) cities,
 * work-item = (city, side, slot); each city's best move goes to ent_gain/ent_code[queue
 * index] and the city leaves the queue (ls_apply puts it back if it keeps an improving
 * move).  Each work-group leaves its best (gain, code) in group_gain/group_code.  Also
 * resets the claim blocks for this step. */
__kernel void ls_eval(DIST_PARAMS, __global const int *restrict cand,
                      __global const int *restrict tour, __global const int *restrict pos,
                      __global const long *restrict state, __global const int *restrict queue,
                      __global const int *restrict qcount, __global int *restrict active,
                      __global long *restrict ent_gain, __global long *restrict ent_code,
                      __global long *restrict group_gain, __global long *restrict group_code,
                      __global int *restrict block_gain, __global int *restrict block_id,
                      const int nblocks, const int sides, __local long *lg,
                      __local long *lc)
{
    const int city_items = M * sides, lid = get_local_id(0), C = get_local_size(0) / city_items;
    for (int b = get_global_id(0); b < nblocks; b += get_global_size(0)) {
        block_gain[b] = 0;
        block_id[b] = INT_MAX;
    }
    if (state[S_DONE])
        return;
    const int parity = (int)(state[S_FLAGS] & 1), qlen = qcount[parity];
    __global const int *q = queue + (long)parity * n;
    const int local_city = lid / city_items, item = lid % city_items;
    const int slot = item % M, side = item / M;
    long gbest = NO_GAIN, gcode = LONG_MAX;
    for (int base = get_group_id(0) * C; base < qlen; base += get_num_groups(0) * C) {
        const int idx = base + local_city;
        long bg = NO_GAIN, bc = LONG_MAX;
        if (local_city < C && idx < qlen)
            best_of_pair(DIST_ARGS, tour, pos, cand, q[idx], slot, sides, side, &bg, &bc);
        lg[lid] = bg;
        lc[lid] = bc;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (local_city < C && idx < qlen && item == 0) {
            for (int s = 1; s < city_items; s++)
                if (better(lg[lid + s], lc[lid + s], bg, bc)) {
                    bg = lg[lid + s];
                    bc = lc[lid + s];
                }
            ent_gain[idx] = bg;
            ent_code[idx] = bc;
            active[q[idx]] = 0;
            if (better(bg, bc, gbest, gcode)) {
                gbest = bg;
                gcode = bc;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    group_best_gain_long(lg, lc, &gbest, &gcode);
    if (lid == 0) {
        group_gain[get_group_id(0)] = gbest;
        group_code[get_group_id(0)] = gcode;
    }
}

/* Double-bridge kick (Fosin et al. 2013, Algorithm 1 line 5: four edges deleted, the
 * parts reconnected).  From a random start o, cut offsets 0 < p1 < p2 < p3 <= span give
 * B = [o, o+p1), C = [o+p1, o+p2), D = [o+p2, o+p3) and A = the rest; A B C D becomes
 * A D C B (all four joins change; the 3-change A C B D would be undone by one 3-opt
 * segment exchange).  Applied as four reversals, all inside [o, o+p3). */
inline long double_bridge(DIST_PARAMS, __global const int *restrict tour,
                          __global const long *restrict state, move_t *mv)
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

inline int entry_city(const long code) { return (int)(code / CODE_STRIDE / M); }

/* Gain and description of the move with code `code` (see the header). */
inline long move_of_code(DIST_PARAMS, __global const int *restrict tour,
                         __global const int *restrict pos, __global const int *restrict cand,
                         const long code, move_t *mv)
{
    const int item = (int)(code / CODE_STRIDE);
    return move_gain(DIST_ARGS, tour, pos, cand, (int)(code % CODE_STRIDE), item / M, cand[item], mv);
}

/* A move stored as (start, length) of its first `count` reversals: the kick in move[],
 * a claimed move in ent_move[]. */
inline move_t stored_move(__global const int *restrict words, const int count)
{
    move_t mv = no_move();
    for (int r = 0; r < count; r++) {
        mv.start[r] = words[2 * r];
        mv.len[r] = words[2 * r + 1];
    }
    return mv;
}

/* City c's tour edges changed (or it keeps an improving move): queue it for the next
 * pass unless it is queued already. */
inline void activate(const int c, __global int *restrict active, __global int *restrict next,
                     __global int *restrict next_count)
{
    if (atomic_xchg(&active[c], 1) == 0)
        next[atomic_inc(next_count)] = c;
}

/* Applies a move with the whole work-group: the reversals in order.  Then the cities
 * at each reversal's ends just before it (the only ones whose tour edges it changes)
 * are activated, and with them their candidates: those are (nearly: the lists are not
 * symmetric) the cities whose moves read the changed edges.
 * shorter: a reversal longer than n/2 reverses the other side instead (the same cyclic
 * tour, mirrored): the later reversals' slots then go through the mirror tau, p ->
 * c0 + p or c0 - p.  Only where nothing else touches the tour (one move per step). */
inline void apply_move(const int n_, const move_t *mv, const int shorter,
                       __global const int *restrict cand, __global int *restrict tour,
                       __global int *restrict pos, __global int *restrict active,
                       __global int *restrict next, __global int *restrict next_count,
                       __local int *ends)
{
    const int lid = get_local_id(0), wg = get_local_size(0);
    int mirrored = 0, c0 = 0;
    for (int r = 0; r < REVERSALS; r++) {
        int len = mv->len[r];
        int start = mirrored ? wrap(c0 - wrap(mv->start[r] + len - 1, n_), n_)
                             : wrap(c0 + mv->start[r], n_);
        if (shorter && 2 * len > n_) {   /* tau := (p -> s + e - p) o tau */
            c0 = ((2 * start + len - 1 - c0) % n_ + n_) % n_;
            mirrored ^= 1;
            start = wrap(start + len, n_);
            len = n_ - len;
        }
        if (lid < 4) {
            const int p = lid < 2 ? start - 1 + lid : start + len - 3 + lid;
            ends[4 * r + lid] = len > 1 ? tour[wrap(p, n_)] : -1;
        }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        for (int t = lid; t < len / 2; t += wg) {
            const int p1 = wrap(start + t, n_), p2 = wrap(start + len - 1 - t, n_);
            const int c1 = tour[p1], c2 = tour[p2];
            tour[p1] = c2;
            pos[c2] = p1;
            tour[p2] = c1;
            pos[c1] = p2;
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
    for (int t = lid; t < 4 * REVERSALS * (M + 1); t += wg) {
        const int e = ends[t / (M + 1)], j = t % (M + 1);
        if (e >= 0)
            activate(j == 0 ? e : cand[e * M + j - 1], active, next, next_count);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* One work-group: fold in the last step's applied moves, reduce the group bests, then
 * decide this step.  With an improving move somewhere the step claims and applies
 * moves; at a local optimum the best tour is saved (or, with acceptance "better", the
 * walk returns to it), then a kick follows while the budget lasts (Fosin et al. 2013,
 * Algorithm 1, lines 4-10).  A plain local search (no kick budget) that reached its
 * optimum on a partial queue re-checks every city once before it stops, so that its
 * result is a local optimum of the whole neighbourhood. */
__kernel void ls_control(DIST_PARAMS, __global const int *restrict cand,
                         __global int *restrict tour, __global int *restrict pos,
                         __global int *restrict best_tour,
                         __global const long *restrict group_gain,
                         __global const long *restrict group_code, const int groups,
                         const int apply_groups, __global long *restrict state,
                         __global int *restrict move, __global int *restrict queue,
                         __global int *restrict qcount, __global int *restrict active,
                         __global const long *restrict ent_gain,
                         __global const long *restrict ent_code, const int single,
                         __local long *lg, __local long *lc)
{
    const int lid = get_local_id(0), wg = get_local_size(0);
    long bg = NO_GAIN, bc = LONG_MAX;
    for (int g = lid; g < groups; g += wg)
        if (better(group_gain[g], group_code[g], bg, bc)) {
            bg = group_gain[g];
            bc = group_code[g];
        }
    group_best_gain_long(lg, lc, &bg, &bc);
    /* lid 0 decides; the rest of the group learns the decision through local memory */
    __local int recheck_all, l_parity, l_mode, l_save, l_restore;
    if (lid == 0) {
        recheck_all = 0;
        for (int g = 0; g < apply_groups; g++) {
            state[S_CUR_LEN] -= state[S_PENDING + 2 * g];
            state[S_MOVES] += state[S_PENDING + 2 * g + 1];
            state[S_PENDING + 2 * g] = 0;
            state[S_PENDING + 2 * g + 1] = 0;
        }
        state[S_SAVE] = 0;
        state[S_RESTORE] = 0;
        state[S_MODE] = MODE_NONE;
    }
    if (state[S_DONE])
        return;
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        const long flags = state[S_FLAGS];
        const int parity = (int)((flags & 1) ^ 1), full = (int)((flags >> 1) & 1);
        state[S_FLAGS] = parity | (flags & 4);
        qcount[parity] = 0;
        state[S_STEPS] += 1;
        if (bg > 0) {
            state[S_MODE] = MODE_IMPROVE;
            state[S_BEST_CODE] = bc;
        } else if (state[S_BUDGET] == 0 && !full) {
            recheck_all = 1;
            state[S_FLAGS] = parity | 2 | (flags & 4);
            qcount[parity] = n;
        } else {
            const long cur = state[S_CUR_LEN], best = state[S_BEST_LEN];
            if (cur < best) {
                state[S_BEST_LEN] = cur;
                state[S_SAVE] = 1;
            } else if (state[S_ACCEPT] >= 0 && cur > best + best * state[S_ACCEPT] / 1000000) {
                state[S_RESTORE] = 1;            /* kick from the best next step */
                state[S_CUR_LEN] = best;
            }
            if (state[S_RESTORE]) {
                /* the queue stays empty: the best tour is a local optimum */
            } else if (state[S_KICKS] >= state[S_BUDGET] || n < 8) {
                state[S_DONE] = 1;
            } else {
                move_t mv = no_move();
                state[S_CUR_LEN] += double_bridge(DIST_ARGS, tour, state, &mv);
                state[S_KICKS] += 1;
                state[S_MODE] = MODE_KICK;
                for (int r = 0; r < KICK_REVERSALS; r++) {
                    move[2 * r] = mv.start[r];
                    move[2 * r + 1] = mv.len[r];
                }
            }
        }
        l_parity = parity;
        l_mode = (int)state[S_MODE];
        l_save = (int)state[S_SAVE];
        l_restore = (int)state[S_RESTORE];
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    const int parity = l_parity, mode = l_mode;
    if (recheck_all)
        for (int c = lid; c < n; c += wg) {
            active[c] = 1;
            queue[(long)parity * n + c] = c;
        }
    if (!single)
        return;
    /* single: this work-group also does the step's copies and applies its one move or
     * kick (ILS after the first kick: two launches per step instead of five). */
    __local int ends[4 * REVERSALS];
    __local move_t lmv;
    __global int *next = queue + (long)parity * n, *next_count = qcount + parity;
    if (l_save)
        for (int p = lid; p < n; p += wg)
            best_tour[p] = tour[p];
    if (l_restore)
        for (int p = lid; p < n; p += wg) {
            const int c = best_tour[p];
            tour[p] = c;
            pos[c] = p;
        }
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (mode == MODE_IMPROVE) {
        const int qlen = qcount[parity ^ 1];
        for (int idx = lid; idx < qlen; idx += wg)      /* improving cities stay queued */
            if (ent_gain[idx] > 0)
                activate(entry_city(ent_code[idx]), active, next, next_count);
    }
    if (lid == 0) {
        move_t mv = no_move();
        if (mode == MODE_IMPROVE) {
            state[S_CUR_LEN] -= move_of_code(DIST_ARGS, tour, pos, cand, state[S_BEST_CODE], &mv);
            state[S_MOVES] += 1;
        } else if (mode == MODE_KICK)
            mv = stored_move(move, KICK_REVERSALS);
        lmv = mv;
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (mode != MODE_NONE) {
        const move_t mv = lmv;
        apply_move(n, &mv, 1, cand, tour, pos, active, next, next_count, ends);
    }
}

/* Runs `op` on the claim blocks covering positions [first, first + count) (cyclic):
 * 0 raise block_gain to g32; 1 check block_gain == g32; 2 lower block_id to id;
 * 3 check block_id == id.  Returns 0 when a check fails. */
inline int claim_blocks(const int op, int first, int count, const int n_,
                        __global int *restrict block_gain, __global int *restrict block_id,
                        const int g32, const int id)
{
    int p = first;
    count = min(count, n_);
    while (count > 0) {
        const int b = p / CLAIM_BLOCK;
        if (op == 0) atomic_max(&block_gain[b], g32);
        else if (op == 1) { if (block_gain[b] != g32) return 0; }
        else if (op == 2) atomic_min(&block_id[b], id);
        else if (block_id[b] != id) return 0;
        const int step = min(min(count, CLAIM_BLOCK - p % CLAIM_BLOCK), n_ - p);
        count -= step;
        p = wrap(p + step, n_);
    }
    return 1;
}

/* The copies asked by ls_control (save / restore), then: every improving queued move
 * that is short enough (or the step's best) raises the gain on the blocks it touches.
 * claim_first/claim_count[idx] get its touched positions (count 0: not taking part) and
 * ent_move[idx] its reversals: decoded here, while the tour is the one it was found on
 * (a Lin-Kernighan chain reads cities outside its own range). */
__kernel void ls_claim(DIST_PARAMS, __global const int *restrict cand,
                       __global int *restrict tour, __global int *restrict pos,
                       __global int *restrict best_tour, __global const long *restrict state,
                       __global const int *restrict qcount, __global const long *restrict ent_gain,
                       __global const long *restrict ent_code, __global int *restrict claim_first,
                       __global int *restrict claim_count, __global int *restrict ent_move,
                       __global int *restrict block_gain, __global int *restrict block_id)
{
    const int gid = get_global_id(0), gsize = get_global_size(0);
    if (state[S_SAVE])
        for (int p = gid; p < n; p += gsize)
            best_tour[p] = tour[p];
    if (state[S_RESTORE])
        for (int p = gid; p < n; p += gsize) {
            const int c = best_tour[p];
            tour[p] = c;
            pos[c] = p;
        }
    if (state[S_MODE] != MODE_IMPROVE)
        return;
    const int qlen = qcount[(state[S_FLAGS] & 1) ^ 1];
    for (int idx = gid; idx < qlen; idx += gsize) {
        claim_count[idx] = 0;
        const long g = ent_gain[idx], code = ent_code[idx];
        if (g <= 0 || ((state[S_FLAGS] & 4) && code != state[S_BEST_CODE]))
            continue;
        move_t mv = no_move();
        move_of_code(DIST_ARGS, tour, pos, cand, code, &mv);
        const int first = wrap(mv.lo - 1, n), count = min(mv.span + 2, n);
        if (count > MAX_CLAIM_BLOCKS * CLAIM_BLOCK && code != state[S_BEST_CODE])
            continue;
        claim_first[idx] = first;
        claim_count[idx] = count;
        for (int r = 0; r < REVERSALS; r++) {
            ent_move[(long)idx * MOVE_WORDS + 2 * r] = mv.start[r];
            ent_move[(long)idx * MOVE_WORDS + 2 * r + 1] = mv.len[r];
        }
        claim_blocks(0, first, count, n, block_gain, block_id, (int)min(g, (long)INT_MAX), 0);
    }
}

/* Moves that hold the top gain on all their blocks bid their city for them. */
__kernel void ls_resolve(const int n, __global const long *restrict state,
                         __global const int *restrict qcount, __global const long *restrict ent_gain,
                         __global const long *restrict ent_code, __global int *restrict claim_first,
                         __global int *restrict claim_count, __global int *restrict block_gain,
                         __global int *restrict block_id)
{
    if (state[S_DONE] || state[S_MODE] != MODE_IMPROVE)
        return;
    const int qlen = qcount[(state[S_FLAGS] & 1) ^ 1];
    for (int idx = get_global_id(0); idx < qlen; idx += get_global_size(0)) {
        const int count = claim_count[idx];
        if (count == 0)
            continue;
        const int g32 = (int)min(ent_gain[idx], (long)INT_MAX), a = entry_city(ent_code[idx]);
        if (claim_blocks(1, claim_first[idx], count, n, block_gain, block_id, g32, a))
            claim_blocks(2, claim_first[idx], count, n, block_gain, block_id, g32, a);
        else
            claim_count[idx] = 0;
    }
}

/* One work-group per move: the winners of every block they touch are applied (from
 * ent_move, inside their claimed range); improving moves that lost stay queued.  Group 0
 * applies this step's kick.  Each group leaves its applied gain and move count in
 * state[S_PENDING + 2 * group ...]. */
__kernel void ls_apply(const int n, __global const int *restrict cand,
                       __global int *restrict tour, __global int *restrict pos,
                       __global long *restrict state, __global const int *restrict move,
                       __global const int *restrict queue, __global int *restrict qcount,
                       __global int *restrict active, __global const long *restrict ent_gain,
                       __global const long *restrict ent_code,
                       __global const int *restrict claim_first,
                       __global const int *restrict claim_count,
                       __global const int *restrict ent_move,
                       __global const int *restrict block_id)
{
    __local int winners[APPLY_GROUP];
    __local int nwin;
    __local int ends[4 * REVERSALS];
    __local move_t lmv;
    const int lid = get_local_id(0), wg = get_local_size(0), group = get_group_id(0);
    const long mode = state[S_MODE];
    if (state[S_DONE] || mode == MODE_NONE)
        return;
    const int parity = (int)(state[S_FLAGS] & 1);
    __global int *next = (__global int *)queue + (long)parity * n;
    __global int *next_count = qcount + parity;
    if (mode == MODE_KICK) {
        if (group == 0) {
            const move_t mv = stored_move(move, KICK_REVERSALS);
            apply_move(n, &mv, 1, cand, tour, pos, active, next, next_count, ends);
        }
        return;
    }
    const int qlen = qcount[parity ^ 1];
    long applied = 0, moves = 0;
    for (int base = group * wg; base < qlen; base += get_num_groups(0) * wg) {
        if (lid == 0)
            nwin = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        const int idx = base + lid;
        if (idx < qlen && ent_gain[idx] > 0) {
            const int a = entry_city(ent_code[idx]);
            if (claim_count[idx] > 0 &&
                claim_blocks(3, claim_first[idx], claim_count[idx], n, 0, (__global int *)block_id, 0, a))
                winners[atomic_inc(&nwin)] = idx;
            else
                activate(a, active, next, next_count);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int w = 0; w < nwin; w++) {
            if (lid == 0) {
                lmv = stored_move(ent_move + (long)winners[w] * MOVE_WORDS, REVERSALS);
                applied += ent_gain[winners[w]];
                moves += 1;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            const move_t mv = lmv;
            apply_move(n, &mv, 0, cand, tour, pos, active, next, next_count, ends);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        state[S_PENDING + 2 * group] = applied;
        state[S_PENDING + 2 * group + 1] = moves;
    }
}
