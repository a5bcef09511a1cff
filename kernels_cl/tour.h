/* Tour pieces that a whole work-group does together: reversing a cyclic path of a tour
 * with its position array (global int arrays, or any kind a kernel defines), a 64-bit
 * sum, and the length of a tour.  Power-of-two work-groups. */
#ifndef TSPCL_TOUR_H
#define TSPCL_TOUR_H

#include "distance.h"

/* The work-group's share of reversing the cyclic path of `len` positions from position
 * `from` in `tour` (element type T, n positions): the pairs of positions x, y swapped,
 * their cities cx (was at x) and cy (was at y), then SET_POS for the position array
 * (empty for none). */
#define GROUP_REVERSE_PAIRS(T, tour, n, from, len, SET_POS)                               \
    for (int s = get_local_id(0); s < (len) / 2; s += get_local_size(0)) {                \
        int x = (from) + s, y = (from) + (len) - 1 - s;                                  \
        x = x >= (n) ? x - (n) : x;                                                      \
        y = y >= (n) ? y - (n) : y;                                                      \
        const T cx = tour[x], cy = tour[y];                                              \
        tour[x] = cy;                                                                    \
        tour[y] = cx;                                                                    \
        SET_POS                                                                          \
    }

/* Reverse the cyclic path of `len` positions from position `from` (pos follows); NAME
 * works on tour and pos arrays of element type T in address space SPACE. */
#define DEFINE_GROUP_REVERSE(NAME, SPACE, T)                                               \
    inline void NAME(SPACE T *restrict tour, SPACE T *restrict pos, const int n,          \
                     const int from, const int len)                                      \
    {                                                                                    \
        GROUP_REVERSE_PAIRS(T, tour, n, from, len, pos[cy] = (T)x; pos[cx] = (T)y;)      \
    }

/* The same without a position array (a GA gene, say). */
#define DEFINE_GROUP_REVERSE_PATH(NAME, SPACE, T)                                          \
    inline void NAME(SPACE T *restrict tour, const int n, const int from, const int len) \
    {                                                                                    \
        GROUP_REVERSE_PAIRS(T, tour, n, from, len, )                                     \
    }

DEFINE_GROUP_REVERSE(group_reverse, __global, int)
DEFINE_GROUP_REVERSE_PATH(group_reverse_path, __global, int)

/* The sum of every work-item's value, in `scratch` (one long per work-item, p a power of
 * two); every work-item gets it. */
inline long group_sum_long(__local long *scratch, const long value)
{
    const int lid = get_local_id(0), p = get_local_size(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    scratch[lid] = value;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = p / 2; h > 0; h >>= 1) {
        if (lid < h)
            scratch[lid] += scratch[lid + h];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const long sum = scratch[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return sum;
}

/* A work-item's share of the closed tour's length: the edges leaving positions first,
 * first + stride, ... (< n), summed in 64 bits. */
inline long tour_length_share(DIST_PARAMS, __global const int *restrict tour, const int first,
                              const int stride)
{
    long s = 0;
    for (int k = first; k < n; k += stride)
        s += DIST(tour[k], tour[k + 1 == n ? 0 : k + 1]);
    return s;
}

/* The closed tour's length, summed in 64 bits in `scratch` (one long per work-item);
 * every work-item gets it. */
inline long group_tour_length(DIST_PARAMS, __global const int *restrict tour,
                              __local long *scratch)
{
    return group_sum_long(scratch, tour_length_share(DIST_ARGS, tour, get_local_id(0),
                                                     get_local_size(0)));
}

#endif
