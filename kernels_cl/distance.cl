/* Distances of given city pairs: lets the tests prove device == host on every instance. */
#include "distance.h"

__kernel void pair_distances(DIST_PARAMS, __global const int *restrict a,
                             __global const int *restrict b, __global int *restrict out,
                             const int count)
{
    const int t = get_global_id(0);
    if (t < count)
        out[t] = DIST(a[t], b[t]);
}

/* Length of a closed tour, summed in 64 bits, reduced in local memory (no sub-groups). */
__kernel void tour_length(DIST_PARAMS, __global const int *restrict tour,
                          __global long *restrict partial, __local long *scratch)
{
    const int lid = get_local_id(0), wg = get_local_size(0);
    long s = 0;
    for (int p = get_global_id(0); p < n; p += get_global_size(0))
        s += DIST(tour[p], tour[p + 1 == n ? 0 : p + 1]);
    scratch[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = wg / 2; h > 0; h >>= 1) {
        if (lid < h)
            scratch[lid] += scratch[lid + h];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        partial[get_group_id(0)] = scratch[0];
}
