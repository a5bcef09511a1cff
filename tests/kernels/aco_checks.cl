/* Check kernels of aco.cl, for the tests only (tests/test_mmas.py): built as the
 * production program with these kernels added, so they call the very functions the
 * solver's kernels call, under the same build defines. */
#include "aco.cl"

/* One selection step per work-group (trial t draws as ant t would at `step`): the
 * nodes in visited[0..nvisited) are marked, the ant stands at `cur`, and the node chosen
 * exactly as aco_construct chooses it goes to chosen[t] (-1: none with weight). */
__kernel void aco_select_sample(WEIGHT_DECL, const uint seed_lo, const uint seed_hi,
                                const uint step, const uint cur,
                                __global const int *restrict visited, const int nvisited,
                                __global int *restrict chosen, TABU_DECL, __local long *scratch)
{
    const uint trial = get_group_id(0), lid = get_local_id(0), un = (uint)n;
    const rng_key_t key = {seed_lo, seed_hi};
    tabu_init(TABU_ARGS, un);
    select_state_t st = select_init(scratch);
    st.stream = selection_stream(key, trial, 0u);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0)
        for (int i = 0; i < nvisited; i++)
            tabu_mark(TABU_ARGS, un, (uint)visited[i]);
    barrier(CLK_LOCAL_MEM_FENCE);
    int marked;
    const uint next = next_city(TABU_ARGS, WEIGHT_ARGS, cur, key, trial, 0u, step,
                                un - (uint)nvisited, &st, &marked);
    if (lid == 0)
        chosen[trial] = next == NONE ? -1 : (int)next;
}
