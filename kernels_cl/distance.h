/* TSPLIB95 integer distances, identical to tspcl/instance.py (coord_distance).
 *
 * Build with -D METRIC=<code> (codes as in tspcl.instance.METRIC_CODES).  Every kernel
 * that needs distances takes DIST_PARAMS and calls DIST(i, j).  Coordinate metrics read
 * COORD_DIM doubles per city (GEO: latitude/longitude already in radians, converted on
 * the host); EXPLICIT reads the full n x n int matrix (row = from, column = to).
 */
#ifndef TSPCL_DISTANCE_H
#define TSPCL_DISTANCE_H

#include "common.h"

#define METRIC_EUC_2D 0
#define METRIC_CEIL_2D 1
#define METRIC_MAN_2D 2
#define METRIC_MAX_2D 3
#define METRIC_ATT 4
#define METRIC_GEO 5
#define METRIC_EUC_3D 6
#define METRIC_MAN_3D 7
#define METRIC_MAX_3D 8
#define METRIC_EXPLICIT 9

#ifndef METRIC
#error "build with -D METRIC=<code>"
#endif

#if METRIC == METRIC_EUC_3D || METRIC == METRIC_MAN_3D || METRIC == METRIC_MAX_3D
#define COORD_DIM 3
#else
#define COORD_DIM 2
#endif

#define DIST_PARAMS __global const double *restrict g_coords, \
                    __global const int *restrict g_dmat, const int n
#define DIST_ARGS g_coords, g_dmat, n
#define DIST(i, j) tsp_dist(DIST_ARGS, (i), (j))

inline int tsp_nint(const double x) { return (int)(x + 0.5); }

/* Distance for absolute coordinate differences (dx, dy, dz); every coordinate metric
 * except GEO is a function of these alone, non-decreasing in each. */
inline int dist_from_deltas(const double dx, const double dy, const double dz)
{
#if METRIC == METRIC_EUC_2D
    return tsp_nint(sqrt(dx * dx + dy * dy));
#elif METRIC == METRIC_EUC_3D
    return tsp_nint(sqrt(dx * dx + dy * dy + dz * dz));
#elif METRIC == METRIC_CEIL_2D
    return (int)ceil(sqrt(dx * dx + dy * dy));
#elif METRIC == METRIC_MAN_2D
    return tsp_nint(dx + dy);
#elif METRIC == METRIC_MAN_3D
    return tsp_nint(dx + dy + dz);
#elif METRIC == METRIC_MAX_2D
    return max(tsp_nint(dx), tsp_nint(dy));
#elif METRIC == METRIC_MAX_3D
    return max(max(tsp_nint(dx), tsp_nint(dy)), tsp_nint(dz));
#elif METRIC == METRIC_ATT
    const double r = sqrt((dx * dx + dy * dy) / 10.0);
    const int t = tsp_nint(r);
    return ((double)t < r) ? t + 1 : t;
#else
    return 0; /* GEO and EXPLICIT are not functions of the deltas */
#endif
}

inline int tsp_dist(DIST_PARAMS, const int i, const int j)
{
#if METRIC == METRIC_EXPLICIT
    return g_dmat[(long)i * n + j];
#elif METRIC == METRIC_GEO
    const double lat_i = g_coords[2 * i], lon_i = g_coords[2 * i + 1];
    const double lat_j = g_coords[2 * j], lon_j = g_coords[2 * j + 1];
    const double q1 = cos(lon_i - lon_j);
    const double q2 = cos(lat_i - lat_j);
    const double q3 = cos(lat_i + lat_j);
    const double a = clamp(0.5 * ((1.0 + q1) * q2 - (1.0 - q1) * q3), -1.0, 1.0);
    return (int)(6378.388 * acos(a) + 1.0);
#else
    const double dx = fabs(g_coords[COORD_DIM * i] - g_coords[COORD_DIM * j]);
    const double dy = fabs(g_coords[COORD_DIM * i + 1] - g_coords[COORD_DIM * j + 1]);
#if COORD_DIM == 3
    const double dz = fabs(g_coords[3 * i + 2] - g_coords[3 * j + 2]);
#else
    const double dz = 0.0;
#endif
    return dist_from_deltas(dx, dy, dz);
#endif
}

#endif
