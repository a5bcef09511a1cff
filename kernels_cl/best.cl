/* The best tour of a batch (best.h) as a kernel of its own, for the solvers that keep
 * nothing else with it (acs, ga; mmas keeps its trail limits in mmas.cl mmas_best). */
#include "best.h"

__kernel void best_of_batch(const int n, const int count, __global const long *restrict lengths,
                            __global const int *restrict tours, __global int *restrict best_tour,
                            __global int *restrict restart_tour, __global long *restrict status,
                            const int iteration, __local long *r_len, __local int *r_index)
{
    keep_best(n, count, lengths, tours, best_tour, restart_tour, status, iteration, r_len, r_index);
}
