/* Check kernels of neighborhood.cl, for the tests only (tests/test_neighborhood.py):
 * built as the production program with these kernels added, so they call the very
 * functions the solver's kernels call, under the same build defines. */
#include "neighborhood.cl"

/* The move of each given id (positions, -1 when none) and its delta by the incremental
 * evaluation (NO_MOVE when the id names no move). */
__kernel void nb_moves(DIST_PARAMS, __global const int *restrict tour,
                       __global const int *restrict pos, __global const int *restrict cand,
                       __global const ulong *restrict ids, const int count,
                       __global int *restrict out_pos, __global long *restrict out_delta)
{
    const int t = get_global_id(0);
    if (t >= count)
        return;
    move_t mv;
    const int ok = decode_move(ids[t], tour, pos, cand, n, &mv);
    for (int q = 0; q < 4; q++)
        out_pos[4 * t + q] = ok && q < mv.np ? mv.p[q] : -1;
    if (ok)
        out_pos[4 * t + 3] = mv.r;
    out_delta[t] = ok ? move_delta(DIST_ARGS, tour, &mv) : NO_MOVE;
}
