/* Check kernels of acs.cl, for the tests only (tests/test_acs.py): built as the
 * production program with these kernels added, so they call the very functions the
 * solver's kernels call, under the same build defines. */
#include "acs.cl"

/* Apply `count` pheromone updates in order, update t setting tau(u[t], v[t]) =
 * a[t] * tau + b[t], then read tau(u, v) for every pair of `reads` (one work-item). */
__kernel void acs_pher_sequence(DIST_PARAMS, PHER_DECL, const float beta, __global const int *restrict u,
                                __global const int *restrict v, __global const float *restrict a,
                                __global const float *restrict b, const int count,
                                __global const int *restrict reads, const int nreads,
                                __global float *restrict read_out)
{
#if STORE == STORE_SPM
    __local uint2 ring[SPM_S];
#endif
    if (get_global_id(0) != 0)
        return;
    for (int t = 0; t < count; t++)
        pher_update(PHER_ARGS, DIST_ARGS, beta, (uint)u[t], (uint)v[t], a[t], b[t]);
    for (int r = 0; r < nreads; r++) {
#if STORE == STORE_SPM
        for (uint i = 0; i < SPM_S; i++)
            ring[i] = spm[(uint)reads[2 * r] * SPM_S + i].xy;
        read_out[r] = ring_trail(ring, tau_min, (uint)reads[2 * r + 1]);
#else
        read_out[r] = pher_read(PHER_ARGS, DIST_ARGS, (uint)reads[2 * r], (uint)reads[2 * r + 1]);
#endif
    }
}

/* The greedy choice (acs_next with q0 = 1) of one work-group from city cur with
 * the visited cities of bitmask `visited`, written to out[0] (NONE: every city visited),
 * and the bits of its eta^beta for the local update to out[1]. */
__kernel void acs_greedy_choice(ACS_DECL, const uint cur, __global const uint *restrict visited,
                                __global uint *restrict out, TABU_DECL, __local long *scratch)
{
    const uint un = (uint)n;
    for (uint w = get_local_id(0); w < (un + 31) / 32; w += get_local_size(0))
        bits[w] = visited[w];
    select_state_t st = select_init(scratch);
    barrier(CLK_LOCAL_MEM_FENCE);
    const rng_key_t key = {0u, 0u};
    float eta_beta;
    const uint next = acs_next(TABU_ARGS, ACS_ARGS, cur, step_rows(cand, cand_heur, PHER_ARGS, cur), key, 0u,
                               0u, 1u, q_draws(key, 0u, 0u, 1u), &st, &eta_beta);
    if (get_local_id(0) == 0) {
        out[0] = next;
        out[1] = as_uint(eta_beta);
    }
}
