/* Many small instances at once (issue 42): a work-group per instance, the whole tour in
 * its local memory, many instances per launch.
 *
 * The instances are packed one after the other: instance i's cities are the global
 * numbers first[i] .. first[i + 1] - 1 (coordinates 2 doubles each in g_coords, the
 * tour's entries in tours, each holding the instance's own city numbers 0..len-1, and
 * M candidates each in cand).  A launch runs the instances which[0 .. groups), one
 * work-group each (group_index(): the same unit whatever slices the host enqueues).
 *
 * batch_start builds an instance's candidate lists (its M nearest cities, ties to the
 * smaller number, by brute force: len^2 / WG distances a work-item) and a nearest
 * neighbour tour from city 0 (one work-item: the nearest unvisited candidate, else a
 * scan of every unvisited city, ties to the smaller number).
 *
 * batch_search loads the tour into local memory as one path of one piece, turned round
 * by an offset drawn per launch (the path's end edge, which no move changes, moves from
 * launch to launch), runs pils_search.h's iterated local search on it (with `descend`,
 * first to a local optimum from every city; then kicks[g] kicks) and stores the tour
 * back (with slack, the best tour of the launch: a launch goes on from a kicked tour up
 * to slack_milli / 1000 mean edges longer than the best, and the next launch starts from
 * the best).  The draws are Philox(seed; launch, 0, kick), the same for every instance: an
 * instance's tour is a function of the instance, the seed and its launches' kicks, so it
 * is the same alone as among others.
 *
 * Build defines: as pils_search.h's, with LOCAL_XY 1 (2-D coordinate metrics other than
 * GEO) and L_MAX the most cities an instance has.
 */
#include "pils_search.h"

#if !LOCAL_XY
#error "batch.cl keeps coordinates in local memory: build with LOCAL_XY=1"
#endif

#define ROTATE_DRAW 0x726F74u   /* "rot": the counter word of the offset's draw */

/* What the search functions take as the instance (DIST_PARAMS, SEG_ARGS): with LOCAL_XY
 * they read only xy, so the global arguments are placeholders. */
#define BATCH_INSTANCE(len)                                                                \
    __global const int *const g_dmat = 0;                                                  \
    const int n = (len);                                                                   \
    __local const int *const city = 0

/* The instance's coordinates into xy (local index = the instance's city number). */
inline void load_xy(__global const double *restrict coords, const int base, const int len,
                    __local double2 *xy)
{
    for (int i = get_local_id(0); i < len; i += WG)
        xy[i] = (double2)(coords[2 * (base + i)], coords[2 * (base + i) + 1]);
}

__kernel void batch_start(__global const double *restrict g_coords,
                          __global const int *restrict first,
                          __global const int *restrict which,
                          __global ushort *restrict cand, __global int *restrict tours)
{
    __local double2 xy[L_MAX];
    __local ushort lcand[L_MAX * M];
    __local uchar visited[L_MAX];
    const int lid = get_local_id(0), inst = which[group_index()];
    const int base = first[inst], len = first[inst + 1] - base;
    BATCH_INSTANCE(len);

    load_xy(g_coords, base, len, xy);
    for (int i = lid; i < len; i += WG)
        visited[i] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    /* the M nearest of city i: insertion into a sorted list, (distance, number) order */
    for (int i = lid; i < len; i += WG) {
        long d[M];
        int c[M], count = 0;
        for (int j = 0; j < len; j++) {
            if (j == i)
                continue;
            const long dj = SD(i, j);
            if (count == M && dj >= d[M - 1])
                continue;
            int k = count < M ? count++ : M - 1;
            for (; k > 0 && d[k - 1] > dj; k--) {
                d[k] = d[k - 1];
                c[k] = c[k - 1];
            }
            d[k] = dj;
            c[k] = j;
        }
        for (int k = 0; k < M; k++) {
            const ushort x = k < count ? (ushort)c[k] : (ushort)NONE;
            lcand[i * M + k] = x;
            cand[(long)(base + i) * M + k] = x;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        int at = 0;
        visited[0] = 1;
        tours[base] = 0;
        for (int p = 1; p < len; p++) {
            int next = -1;
            long best = 0;
            for (int k = 0; k < M; k++) {
                const int x = lcand[at * M + k];
                if (x != NONE && !visited[x]) {
                    next = x;           /* the lists are nearest first */
                    break;
                }
            }
            if (next < 0)               /* no unvisited candidate: every city */
                for (int x = 0; x < len; x++) {
                    const long dx = SD(at, x);
                    if (!visited[x] && (next < 0 || dx < best)) {
                        next = x;
                        best = dx;
                    }
                }
            visited[next] = 1;
            tours[base + p] = next;
            at = next;
        }
    }
}

__kernel void batch_search(__global const double *restrict g_coords,
                           __global const int *restrict first,
                           __global const int *restrict which,
                           __global const int *restrict kicks,
                           __global const ushort *restrict cand, __global int *restrict tours,
                           const uint seed_lo, const uint seed_hi, const uint launch,
                           const int descend, const int window, const int walk,
                           const uint bridge_cut, const uint slack_milli)
{
    __local double2 xy[L_MAX];
    __local ushort path[L_MAX], at[L_MAX], saved[L_MAX], piece[L_MAX], saved_piece[L_MAX],
        best[L_MAX], lcand[L_MAX * M], queue[QCAP];
    __local long tour_length;
    __local uchar queued[L_MAX], joint[L_MAX];
    __local int keep[QCAP], shared[SHARED_INTS];
    __local long gains[WG];
    __local uint codes[WG];
    const int lid = get_local_id(0), g = (int)group_index(), inst = which[g];
    const int base = first[inst], len = first[inst + 1] - base;
    BATCH_INSTANCE(len);
    const rng_key_t rkey = {seed_lo, seed_hi};
    const int offset = (int)rng_below(rng_philox(rkey, launch, 0, 0, ROTATE_DRAW).x, (uint)len);

    load_xy(g_coords, base, len, xy);
    for (int p = lid; p < len; p += WG) {
        const int q = p + offset, c = tours[base + (q >= len ? q - len : q)];
        path[p] = (ushort)c;
        at[c] = (ushort)p;
        piece[p] = 0;
        queued[p] = 0;
        joint[p] = 0;                   /* one piece: no span */
    }
    for (int t = lid; t < len * M; t += WG)
        lcand[t] = cand[(long)base * M + t];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        shared[0] = 0;
        long sum = 0;                   /* the tour's length, for the slack only */
        for (int p = 0; slack_milli > 0 && p < len; p++)
            sum += SD(path[p], path[p + 1 < len ? p + 1 : 0]);
        tour_length = sum;
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    /* slack: slack_milli / 1000 of the tour's mean edge at the launch's start */
    int done[2];
    path_ils(DIST_ARGS, SEG_PASS, path, at, piece, joint, 0, 0, NONE, saved, saved_piece, best, len,
             lcand, queue, queued, keep, shared, gains, codes, rkey, launch, 0u, descend, kicks[g],
             window, walk, bridge_cut, tour_length * slack_milli / (1000L * len), 0, done);

    for (int p = lid; p < len; p += WG)
        tours[base + p] = path[p];
}
