/* Moves of the candidate-list local search (localsearch.cl): a move as reversals of tour
 * position intervals, the view of a (city, candidate) pair that every move kind reads,
 * and the order of moves by (gain, code).  Needs M, USE_LK, LK_DEPTH and KICK_REVERSALS
 * defined. */
#ifndef TSPCL_LS_MOVE_H
#define TSPCL_LS_MOVE_H

#include "distance.h"

#define NO_GAIN (-(1L << 62))
#define CODE_STRIDE 1024        /* code = (a * M + slot) * CODE_STRIDE + sub */
#define SUB_OROPT 2             /* first sub of each move kind (see localsearch.cl) */
#define SUB_3OPT 16
#define SUB_LK 448

/* KICK_REVERSALS, a double bridge's reversals and the most any move but an LK chain
 * needs, comes from the host (tspcl/solvers/localsearch.py, which sizes the moves'
 * buffers by it). */
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

/* Offset of position q from position p in direction dir (0 .. n-1). */
inline int offset(const int p, const int q, const int dir, const int n_)
{
    return wrap(dir > 0 ? q - p : p - q, n_);
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

/* What the moves of work-item (a, slot) read around a and its candidate c: positions,
 * the tour next to a and c, and d(a, c), an edge that every 2-opt and Or-opt move adds. */
typedef struct {
    int a, c, pa, pc;
    int w[7];                   /* tour[pa - 3 .. pa + 3] */
    int pred_c, succ_c, dac;
    long item;                  /* a * M + slot: the move's code without its sub */
} pair_t;

inline pair_t pair_view(DIST_PARAMS, __global const int *restrict tour,
                        __global const int *restrict pos, const int a, const int c,
                        const long item)
{
    pair_t pr;
    pr.a = a;
    pr.c = c;
    pr.pa = pos[a];
    pr.pc = pos[c];
    for (int t = 0; t < 7; t++)
        pr.w[t] = tour[wrap(pr.pa - 3 + t, n)];
    pr.pred_c = tour[wrap(pr.pc - 1, n)];
    pr.succ_c = tour[wrap(pr.pc + 1, n)];
    pr.dac = DIST(a, c);
    pr.item = item;
    return pr;
}

#endif
