/* Distances of given city pairs (the tests prove device == host on every instance with
 * them) and the length of a tour. */
#include "tour.h"

__kernel void pair_distances(DIST_PARAMS, __global const int *restrict a,
                             __global const int *restrict b, __global int *restrict out,
                             const int count)
{
    const int t = get_global_id(0);
    if (t < count)
        out[t] = DIST(a[t], b[t]);
}

/* Length of a closed tour, summed in 64 bits, reduced in local memory (no sub-groups):
 * one partial sum per work-group. */
__kernel void tour_length(DIST_PARAMS, __global const int *restrict tour,
                          __global long *restrict partial, __local long *scratch)
{
    const long sum = group_sum_long(scratch, tour_length_share(DIST_ARGS, tour, get_global_id(0),
                                                               get_global_size(0)));
    if (get_local_id(0) == 0)
        partial[get_group_id(0)] = sum;
}
