/* 2-opt local search on every ant's tour, one work-group per ant (Skinderowicz 2020,
 * section 5.7: Bentley's 2-opt over the nearest neighbours (32) with don't-look bits,
 * groups of work-items searching in parallel, the whole work-group reversing the
 * chosen segment).
 *
 * The group sweeps the cities in chunks of C = p / SPLIT cities: SPLIT neighbouring
 * work-items share a city, each evaluating every SPLIT-th of its M candidates (the
 * paper gives a warp to a city), and a city whose don't-look bit is clear tries both
 * 2-opt moves that join it to each candidate (the successor and the predecessor
 * variants, as tspcl's local search does) whose new edge (a, c) is shorter than the
 * tour edge of a that the move removes: Bentley's neighbour-list rule, which every
 * improving move meets at one of its ends at least, so the lists are read only up to
 * the first candidate as far as a's farther tour neighbour (they are sorted by
 * distance).  Each city of the chunk keeps its best move;
 * the moves are then applied one after another in city order, each one whose two
 * removed edges are still in the tour the earlier ones left, both the same way round
 * (its gain is then the same; any other is skipped), so one evaluation of the chunk pays
 * for several moves.  A move reverses the
 * shorter side of the cyclic tour and clears the bits of its four ends; a city that
 * found nothing sets its bit.  When a sweep over every city applies no move, every bit
 * is cleared once more and the search goes on; it stops when such a fresh sweep applies
 * nothing, so the tour is 2-opt optimal within the candidate lists (Bentley's bits
 * alone would miss the moves that a neighbour's change opened).
 *
 * Build with -D M=<candidates> -D SPLIT=<work-items per city, a power of two dividing
 * the work-group size> -D LOCAL_TOUR=<1: the tour and its positions live in local
 * memory as 16-bit cities (n < 65536 and 4n bytes to spare), 0: in global memory>.
 */
#include "tour.h"

#if !defined(M) || !defined(SPLIT) || !defined(LOCAL_TOUR)
#error "build with -D M=<candidates per city> -D SPLIT=<work-items per city> -D LOCAL_TOUR=<0|1>"
#endif

#if LOCAL_TOUR
#define TOUR_SPACE __local
typedef ushort city_t;
#else
#define TOUR_SPACE __global
typedef int city_t;
#endif

DEFINE_GROUP_REVERSE(reverse_path, TOUR_SPACE, city_t)

#define AT(p) ((int)tour[(p) >= n ? (p) - n : (p)])
#define BIT_SET(bits, c) (((bits)[(c) >> 5] >> ((c) & 31)) & 1u)

__kernel void ant_two_opt(DIST_PARAMS, __global const int *restrict cand,
                          __global const int *restrict cand_dist,
                          __global int *restrict tours, __global int *restrict positions,
                          __global long *restrict lengths, __local city_t *l_tour_pos,
                          __local uint *dont_look, __local long *r_gain, __local int *r_key,
                          __local int4 *r_ends, __local uint *found)
{
    const int lid = get_local_id(0), p = get_local_size(0);
    const int per_chunk = p / SPLIT, slot = lid / SPLIT, lane = lid % SPLIT;
    const int words = (per_chunk + 31) / 32;
    __global int *g_tour = tours + (long)get_group_id(0) * n;
    __local int l_quiet, l_done, l_fresh, l_applied, l_move[3];
#if LOCAL_TOUR
    __local city_t *tour = l_tour_pos, *pos = l_tour_pos + n;
    for (int k = lid; k < n; k += p)
        tour[k] = (city_t)g_tour[k];
    barrier(CLK_LOCAL_MEM_FENCE);
#else
    __global int *tour = g_tour, *pos = positions + (long)get_group_id(0) * n;
#endif
    for (int k = lid; k < n; k += p)
        pos[tour[k]] = (city_t)k;
    for (int w = lid; w < (n + 31) / 32; w += p)
        dont_look[w] = 0u;
    for (int w = lid; w < words; w += p)
        found[w] = 0u;
    if (lid == 0) {
        l_quiet = 0;  /* chunks in a row without a move */
        l_done = n < 5;
        l_fresh = 1;  /* every bit was clear when the quiet run began */
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    const int chunks = (n + per_chunk - 1) / per_chunk;
    for (int chunk = 0; !l_done; chunk = chunk + 1 == chunks ? 0 : chunk + 1) {
        const int a = chunk * per_chunk + slot;
        long best = 0;
        int key = INT_MAX;
        int4 ends = (int4)(0);  /* (x1, x2, y1, y2): remove (x1, x2), (y1, y2); join x1-y1, x2-y2 */
        if (a < n && !BIT_SET(dont_look, a)) {
            const int pa = pos[a];
            const int succ_a = AT(pa + 1), pred_a = AT(pa + n - 1);
            const int d_succ = DIST(a, succ_a), d_pred = DIST(pred_a, a);
            const int reach = max(d_succ, d_pred);
            for (int s = lane; s < M; s += SPLIT) {
                const int d_ac = cand_dist[(long)a * M + s];
                if (d_ac >= reach)  /* the lists are sorted: no closer candidate follows */
                    break;
                const int c = cand[(long)a * M + s];
                if (c == a)
                    continue;
                const int pc = pos[c];
                /* successor variant: remove (a, succ a), (c, succ c); add (a, c), (succ a, succ c) */
                const int succ_c = AT(pc + 1);
                if (d_ac < d_succ && succ_a != c && succ_c != a) {
                    const long g = (long)d_succ + DIST(c, succ_c) - d_ac - DIST(succ_a, succ_c);
                    if (g > best) {
                        best = g;
                        key = (a * M + s) * 2;
                        ends = (int4)(a, succ_a, c, succ_c);
                    }
                }
                /* predecessor variant: remove (pred a, a), (pred c, c); add (a, c), (pred a, pred c) */
                const int pred_c = AT(pc + n - 1);
                if (d_ac < d_pred && pred_a != c && pred_c != a) {
                    const long g = (long)d_pred + DIST(pred_c, c) - d_ac - DIST(pred_a, pred_c);
                    if (g > best) {
                        best = g;
                        key = (a * M + s) * 2 + 1;
                        ends = (int4)(pred_a, a, pred_c, c);
                    }
                }
            }
        }
        r_gain[lid] = best;
        r_key[lid] = key;
        r_ends[lid] = ends;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int h = 1; h < SPLIT; h <<= 1) {  /* each city's best move, ties to the lower key */
            if ((lid & (2 * h - 1)) == 0 && (r_gain[lid + h] > r_gain[lid] ||
                                              (r_gain[lid + h] == r_gain[lid] && r_key[lid + h] < r_key[lid]))) {
                r_gain[lid] = r_gain[lid + h];
                r_key[lid] = r_key[lid + h];
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (lane == 0 && a < n) {  /* cities that found nothing may rest */
            if (r_gain[lid] > 0)
                atomic_or(&found[slot >> 5], 1u << (slot & 31));
            else
                atomic_or(&dont_look[a >> 5], 1u << (a & 31));
        }
        if (lid == 0)
            l_applied = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int w = 0; w < words; w++) {
            for (uint bits = found[w]; bits; bits &= bits - 1) {
                const int s = w * 32 + 31 - clz(bits & (0u - bits));
                if (lid == 0) {  /* l_move: still valid, then the path to reverse from .. to */
                    const int won = s * SPLIT + ((r_key[s * SPLIT] >> 1) % M) % SPLIT;  /* its lane */
                    const int4 e = r_ends[won];
                    const int p1 = pos[e.x], p2 = pos[e.y], q1 = pos[e.z], q2 = pos[e.w];
                    const int ahead = p2 == (p1 + 1) % n && q2 == (q1 + 1) % n;  /* x2 .. y1 */
                    const int behind = p1 == (p2 + 1) % n && q1 == (q2 + 1) % n;  /* x1 .. y2 */
                    l_move[0] = ahead || behind;
                    l_move[1] = ahead ? p2 : p1;
                    l_move[2] = ahead ? q1 : q2;
                    if (ahead || behind) {
                        dont_look[e.x >> 5] &= ~(1u << (e.x & 31));
                        dont_look[e.y >> 5] &= ~(1u << (e.y & 31));
                        dont_look[e.z >> 5] &= ~(1u << (e.z & 31));
                        dont_look[e.w >> 5] &= ~(1u << (e.w & 31));
                        l_applied += 1;
                    }
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                if (l_move[0]) {  /* the path or the rest of the tour, whichever is shorter */
                    const int from = l_move[1], to = l_move[2];
                    const int inner = (to - from + n) % n + 1;
                    if (inner <= n - inner)
                        reverse_path(tour, pos, n, from, inner);
                    else
                        reverse_path(tour, pos, n, to + 1 == n ? 0 : to + 1, n - inner);
                }
                barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        for (int w = lid; w < words; w += p)
            found[w] = 0u;
        if (lid == 0) {
            if (l_applied) {
                l_quiet = 0;
                l_fresh = 0;
            } else {
                l_quiet += 1;
                l_done = l_quiet >= chunks && l_fresh;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
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
#if LOCAL_TOUR
    for (int k = lid; k < n; k += p)
        g_tour[k] = tour[k];
    barrier(CLK_GLOBAL_MEM_FENCE);
#endif
    const long length = group_tour_length(DIST_ARGS, g_tour, r_gain);
    if (lid == 0)
        lengths[get_group_id(0)] = length;
}
