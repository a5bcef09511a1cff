/* The best tour of a batch of tours (ants' tours, a pool's genes), kept across the run:
 * the batch's shortest (ties to the lowest index), the global best and the best since
 * the last restart, each with its tour.  The status words (long) sit where the host
 * says: -D B_ITER_BEST=... etc., from tspcl/solvers/best.py BestWord. */
#ifndef TSPCL_BEST_H
#define TSPCL_BEST_H

#include "reduce.h"

/* Every work-item of one work-group calls it; returns whether the global best improved.
 * restart_tour may be NULL (the status words are kept all the same). */
inline int keep_best(const int n, const int count, __global const long *restrict lengths,
                     __global const int *restrict tours, __global int *restrict best_tour,
                     __global int *restrict restart_tour, __global long *restrict status,
                     const int iteration, __local long *r_len, __local int *r_index)
{
    const int lid = get_local_id(0), p = get_local_size(0);
    long bl = LONG_MAX;
    int bi = 0;
    for (int a = lid; a < count; a += p)
        if (lengths[a] < bl) {
            bl = lengths[a];
            bi = a;
        }
    group_least_long(r_len, r_index, &bl, &bi);
    const long ib = bl;
    const int index = bi;
    const int improved = ib < status[B_BEST], restart_improved = ib < status[B_RESTART_BEST];
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (improved || (restart_improved && restart_tour))  /* most batches copy nothing */
        for (int k = lid; k < n; k += p) {
            const int city = tours[(long)index * n + k];
            if (improved)
                best_tour[k] = city;
            if (restart_improved && restart_tour)
                restart_tour[k] = city;
        }
    if (lid == 0) {
        status[B_ITER_BEST] = ib;
        status[B_ITER_INDEX] = index;
        if (restart_improved) {
            status[B_RESTART_BEST] = ib;
            status[B_RESTART_ITER] = iteration;
        }
        if (improved) {
            status[B_BEST] = ib;
            status[B_BEST_ITER] = iteration;
        }
    }
    return improved;
}

#endif
