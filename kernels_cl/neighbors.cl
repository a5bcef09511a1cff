/* Candidate lists: k nearest neighbours, or k nearest per quadrant (Fosin et al. 2013,
 * section 3: "quadrant-nearest neighbour" list, equal numbers from every quadrant
 * centred on the city, m = 40 in the paper).
 *
 * Build defines:  METRIC (distance.h), NQ = 1 (plain k-nearest) or 4 (quadrants),
 *                 KQ = entries kept per quadrant.
 * One work-item per city.  Lists are ordered by (distance, city index): ties break by
 * index, so every device produces the same lists.
 *
 * grid_* kernels search a uniform grid of cells ring by ring (Chebyshev rings around the
 * city's cell) and stop once no unsearched cell can hold a better candidate for any
 * quadrant still open; scan_* kernels scan all cities (EXPLICIT and GEO instances, whose
 * distances are not bounded by a planar grid).
 */
#include "distance.h"

#ifndef NQ
#define NQ 1
#endif
#ifndef KQ
#define KQ 16
#endif

/* Quadrant of city j seen from city i: a partition of the plane (coincident -> 0). */
inline int quadrant_of(const double dx, const double dy)
{
#if NQ == 1
    return 0;
#else
    if (dx > 0.0 && dy >= 0.0) return 0;
    if (dx <= 0.0 && dy > 0.0) return 1;
    if (dx < 0.0 && dy <= 0.0) return 2;
    if (dx >= 0.0 && dy < 0.0) return 3;
    return 0;
#endif
}

/* Ordered insertion of (d, j) into quadrant q's list if it beats the list's worst. */
inline void offer(int *bd, int *bj, int *cnt, const int q, const int d, const int j)
{
    int *qd = bd + q * KQ, *qj = bj + q * KQ;
    int c = cnt[q];
    if (c == KQ && (d > qd[KQ - 1] || (d == qd[KQ - 1] && j > qj[KQ - 1])))
        return;
    int p = (c == KQ) ? KQ - 1 : c;
    while (p > 0 && (qd[p - 1] > d || (qd[p - 1] == d && qj[p - 1] > j))) {
        qd[p] = qd[p - 1];
        qj[p] = qj[p - 1];
        p--;
    }
    qd[p] = d;
    qj[p] = j;
    if (c < KQ)
        cnt[q] = c + 1;
}

/* Lists of city i out to `out` (NQ*KQ slots, quadrant-major, -1 where a quadrant has
 * fewer than KQ cities). */
inline void store(__global int *restrict out, __global int *restrict out_d, const int i,
                  const int *bd, const int *bj, const int *cnt)
{
    for (int q = 0; q < NQ; q++)
        for (int s = 0; s < KQ; s++) {
            const long o = (long)i * (NQ * KQ) + q * KQ + s;
            out[o] = s < cnt[q] ? bj[q * KQ + s] : -1;
            out_d[o] = s < cnt[q] ? bd[q * KQ + s] : -1;
        }
}

__kernel void scan_candidates(DIST_PARAMS, __global const double *restrict plane,
                              __global int *restrict out, __global int *restrict out_d)
{
    const int i = get_global_id(0);
    if (i >= n)
        return;
    int bd[NQ * KQ], bj[NQ * KQ], cnt[NQ];
    for (int q = 0; q < NQ; q++)
        cnt[q] = 0;
    for (int j = 0; j < n; j++) {
        if (j == i)
            continue;
        const int q = quadrant_of(plane[2 * j] - plane[2 * i], plane[2 * j + 1] - plane[2 * i + 1]);
        offer(bd, bj, cnt, q, DIST(i, j), j);
    }
    store(out, out_d, i, bd, bj, cnt);
}

#if METRIC != METRIC_EXPLICIT && METRIC != METRIC_GEO
/* The grid: gx * gy square cells of side `cell`; cell_start[c]..cell_start[c+1] index
 * cell_cities (cities sorted by cell); city_cell[i] = cx + cy * gx.  Work-item t takes
 * city cell_cities[t], so neighbouring work-items search neighbouring cells. */
__kernel void grid_candidates(DIST_PARAMS, __global const int *restrict cell_start,
                              __global const int *restrict cell_cities,
                              __global const int *restrict city_cell,
                              const int gx, const int gy, const double cell,
                              __global int *restrict out, __global int *restrict out_d)
{
    const int t = get_global_id(0);
    if (t >= n)
        return;
    const int i = cell_cities[t];
    const int cx = city_cell[i] % gx, cy = city_cell[i] / gx;
    const double xi = g_coords[COORD_DIM * i], yi = g_coords[COORD_DIM * i + 1];
    int bd[NQ * KQ], bj[NQ * KQ], cnt[NQ], open[NQ];
    /* How far (in rings) each quadrant's cells reach inside the grid. */
    int reach[NQ];
#if NQ == 1
    reach[0] = max(max(cx, gx - 1 - cx), max(cy, gy - 1 - cy));
#else
    reach[0] = max(gx - 1 - cx, gy - 1 - cy); /* dx > 0, dy >= 0 */
    reach[1] = max(cx, gy - 1 - cy);          /* dx <= 0, dy > 0 */
    reach[2] = max(cx, cy);                   /* dx < 0, dy <= 0 */
    reach[3] = max(gx - 1 - cx, cy);          /* dx >= 0, dy < 0 */
#endif
    for (int q = 0; q < NQ; q++) {
        cnt[q] = 0;
        open[q] = 1;
    }
    for (int r = 0;; r++) {
        /* Cells of ring r that may hold a city of an open quadrant. */
#if NQ == 1
        const int xlo = cx - r, xhi = cx + r, ylo = cy - r, yhi = cy + r;
#else
        const int xlo = (open[1] || open[2]) ? cx - r : cx;
        const int xhi = (open[0] || open[3]) ? cx + r : cx;
        const int ylo = (open[2] || open[3]) ? cy - r : cy;
        const int yhi = (open[0] || open[1]) ? cy + r : cy;
#endif
        for (int y = max(ylo, 0); y <= min(yhi, gy - 1); y++) {
            const int edge_row = (y == cy - r || y == cy + r);
            for (int x = max(xlo, 0); x <= min(xhi, gx - 1); x++) {
                if (!edge_row && x != cx - r && x != cx + r)
                    x = cx + r; /* skip the ring's interior to its right column */
                if (x > min(xhi, gx - 1))
                    break;
                const int c = x + y * gx;
                for (int p = cell_start[c]; p < cell_start[c + 1]; p++) {
                    const int j = cell_cities[p];
                    if (j == i)
                        continue;
                    const double xj = g_coords[COORD_DIM * j], yj = g_coords[COORD_DIM * j + 1];
                    const int q = quadrant_of(xj - xi, yj - yi);
                    if (open[q])
                        offer(bd, bj, cnt, q, DIST(i, j), j);
                }
            }
        }
        /* Every unsearched city differs from city i by more than r cells in x or y, so
         * by more than `bound` in that coordinate (shrunk a hair against rounding);
         * each metric is non-decreasing in |dx| and |dy|. */
        const double lower = r * cell * (1.0 - 1e-12);
        const int bound = dist_from_deltas(lower, 0.0, 0.0);
        int any_open = 0;
        for (int q = 0; q < NQ; q++) {
            if (open[q] && (r >= reach[q] || (cnt[q] == KQ && bound > bd[q * KQ + KQ - 1])))
                open[q] = 0;
            any_open |= open[q];
        }
        if (!any_open)
            break;
    }
    store(out, out_d, i, bd, bj, cnt);
}
#endif

/* Quadrant lists (NQ*KQ slots with -1 holes) completed to M = NQ*KQ entries from the
 * plain M-nearest list (the way quadrant lists are usually filled when a quadrant is
 * short, e.g. for cities on the hull), then ordered by (distance, index). */
__kernel void fill_candidates(const int n, __global const int *restrict quad,
                              __global const int *restrict quad_d,
                              __global const int *restrict knn, __global const int *restrict knn_d,
                              __global int *restrict out, __global int *restrict out_d)
{
    const int i = get_global_id(0);
    if (i >= n)
        return;
    const int M = NQ * KQ;
    int bd[NQ * KQ], bj[NQ * KQ], c = 0;
    for (int s = 0; s < M; s++) {
        const int j = quad[(long)i * M + s];
        if (j >= 0) {
            bj[c] = j;
            bd[c++] = quad_d[(long)i * M + s];
        }
    }
    for (int s = 0; s < M && c < M; s++) {
        const int j = knn[(long)i * M + s];
        if (j < 0)
            break;
        int dup = 0;
        for (int u = 0; u < c; u++)
            dup |= (bj[u] == j);
        if (!dup) {
            bj[c] = j;
            bd[c++] = knn_d[(long)i * M + s];
        }
    }
    for (int a = 1; a < c; a++) { /* insertion sort by (d, j) */
        const int d = bd[a], j = bj[a];
        int p = a;
        while (p > 0 && (bd[p - 1] > d || (bd[p - 1] == d && bj[p - 1] > j))) {
            bd[p] = bd[p - 1];
            bj[p] = bj[p - 1];
            p--;
        }
        bd[p] = d;
        bj[p] = j;
    }
    for (int s = 0; s < M; s++) {
        out[(long)i * M + s] = s < c ? bj[s] : -1;
        out_d[(long)i * M + s] = s < c ? bd[s] : -1;
    }
}
