/* Work-group reductions in local memory (NVIDIA's OpenCL has no sub-group functions).
 * Power-of-two work-groups; every work-item calls them. */
#ifndef TSPCL_REDUCE_H
#define TSPCL_REDUCE_H

/* The best (gain, code) of the work-group: the largest gain, ties to the smallest code,
 * so the winner does not depend on which work-item found it.  `gains` and `codes` hold
 * one entry per work-item; every work-item gets the winner. */
inline void group_best_gain(__local long *gains, __local uint *codes, long *gain, uint *code)
{
    const int lid = get_local_id(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    gains[lid] = *gain;
    codes[lid] = *code;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = get_local_size(0) / 2; h > 0; h >>= 1) {
        if (lid < h) {
            const long g = gains[lid + h];
            const uint c = codes[lid + h];
            if (g > gains[lid] || (g == gains[lid] && c < codes[lid])) {
                gains[lid] = g;
                codes[lid] = c;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    *gain = gains[0];
    *code = codes[0];
    barrier(CLK_LOCAL_MEM_FENCE);
}

#endif
