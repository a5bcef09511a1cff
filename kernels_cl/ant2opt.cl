/* 2-opt local search on every ant's tour, one work-group per ant (Skinderowicz 2020,
 * section 5.7: Bentley's 2-opt over the nearest neighbours (32) with don't-look bits,
 * the group searching in parallel and reversing the chosen segment together).
 *
 * The group sweeps the cities in chunks of one city per work-item; a work-item whose
 * city's don't-look bit is clear evaluates both 2-opt moves that join the city to each
 * of its M candidates (as tspcl's local search does: the successor and the predecessor
 * variants), the chunk's best improving move is applied (the shorter side of the cyclic
 * tour reversed), the bits of its four ends cleared, the bits of the chunk's cities that
 * found nothing set.  When a sweep over every city finds no move, every bit is cleared
 * once more and the search goes on; it stops when such a fresh sweep finds nothing, so
 * the tour is 2-opt optimal within the candidate lists (Bentley's bits alone would miss
 * the moves that a neighbour's change opened).  Build with -D M=<candidates>.
 */
#include "tour.h"

#ifndef M
#error "build with -D M=<candidates per city>"
#endif

#define AT(p) tour[(p) >= n ? (p) - n : (p)]

__kernel void ant_two_opt(DIST_PARAMS, __global const int *restrict cand,
                          __global int *restrict tours, __global int *restrict positions,
                          __global long *restrict lengths, __local uint *dont_look,
                          __local long *r_gain, __local int *r_move)
{
    const int lid = get_local_id(0), p = get_local_size(0);
    const long base_off = (long)get_group_id(0) * n;
    __global int *tour = tours + base_off;
    __global int *pos = positions + base_off;
    __local int l_quiet, l_done, l_fresh;
    for (int k = lid; k < n; k += p)
        pos[tour[k]] = k;
    for (int w = lid; w < (n + 31) / 32; w += p)
        dont_look[w] = 0u;
    if (lid == 0) {
        l_quiet = 0;  /* chunks in a row without a move */
        l_done = n < 5;
        l_fresh = 1;  /* every bit was clear when the quiet run began */
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    const int chunks = (n + p - 1) / p;
    for (int chunk = 0; !l_done; chunk = chunk + 1 == chunks ? 0 : chunk + 1) {
        const int a = chunk * p + lid;
        long best = 0;
        int move = -1;  /* x1 * 2 + variant; the move removes (x1, succ x1), (y1, succ y1) */
        int y_best = 0;
        if (a < n && !((dont_look[a >> 5] >> (a & 31)) & 1u)) {
            const int pa = pos[a];
            const int succ_a = AT(pa + 1), pred_a = AT(pa + n - 1);
            const int d_succ = DIST(a, succ_a), d_pred = DIST(pred_a, a);
            for (int s = 0; s < M; s++) {
                const int c = cand[(long)a * M + s];
                if (c == a)
                    continue;
                const int pc = pos[c];
                const int d_ac = DIST(a, c);
                /* successor variant: remove (a, succ a), (c, succ c); add (a, c), (succ a, succ c) */
                const int succ_c = AT(pc + 1);
                if (succ_a != c && succ_c != a) {
                    const long g = (long)d_succ + DIST(c, succ_c) - d_ac - DIST(succ_a, succ_c);
                    if (g > best) {
                        best = g;
                        move = 2 * a;
                        y_best = c;
                    }
                }
                /* predecessor variant: remove (pred a, a), (pred c, c); add (a, c), (pred a, pred c) */
                const int pred_c = AT(pc + n - 1);
                if (pred_a != c && pred_c != a) {
                    const long g = (long)d_pred + DIST(pred_c, c) - d_ac - DIST(pred_a, pred_c);
                    if (g > best) {
                        best = g;
                        move = 2 * a + 1;
                        y_best = c;
                    }
                }
            }
        }
        r_gain[lid] = best;
        r_move[lid] = move;
        r_move[p + lid] = y_best;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int h = p / 2; h > 0; h >>= 1) {  /* the largest gain, ties to the lower city */
            if (lid < h && (r_gain[lid + h] > r_gain[lid] ||
                            (r_gain[lid + h] == r_gain[lid] && r_gain[lid] > 0 && r_move[lid + h] < r_move[lid]))) {
                r_gain[lid] = r_gain[lid + h];
                r_move[lid] = r_move[lid + h];
                r_move[p + lid] = r_move[p + lid + h];
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        const long gain = r_gain[0];
        const int win = r_move[0], c = r_move[p];
        /* cities that found nothing may rest; the others keep looking */
        if (a < n && move < 0)
            atomic_or(&dont_look[a >> 5], 1u << (a & 31));
        barrier(CLK_LOCAL_MEM_FENCE);
        if (gain > 0) {
            const int x = win >> 1;
            /* as (x1, x2 = succ x1) and (y1, y2 = succ y1) with x1 -> y1 and x2 -> y2 joined */
            int x1, y1;
            if (win & 1) {  /* predecessor variant: x1 = pred a, y1 = pred c */
                x1 = AT(pos[x] + n - 1);
                y1 = AT(pos[c] + n - 1);
            } else {
                x1 = x;
                y1 = c;
            }
            const int px2 = pos[x1] + 1 == n ? 0 : pos[x1] + 1, py1 = pos[y1];
            const int inner = (py1 - px2 + n) % n + 1;  /* x2 .. y1 */
            const int x2 = AT(pos[x1] + 1), y2 = AT(py1 + 1);
            barrier(CLK_GLOBAL_MEM_FENCE);
            if (inner <= n - inner)
                group_reverse(tour, pos, n, px2, inner);
            else
                group_reverse(tour, pos, n, py1 + 1 == n ? 0 : py1 + 1, n - inner);  /* y2 .. x1 */
            barrier(CLK_GLOBAL_MEM_FENCE);
            if (lid == 0) {
                const int ends[4] = {x1, x2, y1, y2};
                for (int e = 0; e < 4; e++)
                    dont_look[ends[e] >> 5] &= ~(1u << (ends[e] & 31));
                l_quiet = 0;
                l_fresh = 0;
            }
        } else if (lid == 0) {
            l_quiet += 1;
            l_done = l_quiet >= chunks && l_fresh;
        }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        if (l_quiet >= chunks && !l_done) {  /* a quiet sweep with bits set: confirm afresh */
            for (int w = lid; w < (n + 31) / 32; w += p)
                dont_look[w] = 0u;
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid == 0) {
                l_quiet = 0;
                l_fresh = 1;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
    const long length = group_tour_length(DIST_ARGS, tour, r_gain);
    if (lid == 0)
        lengths[get_group_id(0)] = length;
}
