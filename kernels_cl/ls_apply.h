/* Claiming and applying moves in the local search (localsearch.cl's ls_claim,
 * ls_resolve, ls_apply and ls_control): moves claim blocks of CLAIM_BLOCK tour positions
 * (largest gain, then smallest city wins a block); a move applied reverses its intervals
 * with a whole work-group and queues the cities whose tour edges changed. */
#ifndef TSPCL_LS_APPLY_H
#define TSPCL_LS_APPLY_H

#include "ls_move.h"
#include "tour.h"

/* CLAIM_BLOCK, the tour positions per claim block, comes from the host
 * (tspcl/solvers/localsearch.py, which sizes the blocks' buffers by it). */
#define MAX_CLAIM_BLOCKS 32     /* longer moves take part only when they are the best */

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
        group_reverse(tour, pos, n_, start, len);
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
    for (int t = lid; t < 4 * REVERSALS * (M + 1); t += wg) {
        const int e = ends[t / (M + 1)], j = t % (M + 1);
        if (e >= 0)
            activate(j == 0 ? e : cand[e * M + j - 1], active, next, next_count);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
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

#endif
