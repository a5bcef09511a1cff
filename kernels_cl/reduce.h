/* Work-group reductions in local memory (NVIDIA's OpenCL has no sub-group functions).
 * Every work-item calls them. */
#ifndef TSPCL_REDUCE_H
#define TSPCL_REDUCE_H

/* The best (key, id) of the work-group: the key that comes first by KEY_BEFORE (`>` for
 * the largest, `<` for the least), ties to the smallest id, so the winner does not depend
 * on which work-item found it.  `keys` and `ids` hold one entry per work-item; every
 * work-item passes its own pair in *key, *id and gets the winner there.  Any work-group
 * size (the tree starts at the largest power of two below it).  NAME works on keys of
 * type K and ids of type I. */
#define DEFINE_GROUP_BEST(NAME, K, I, KEY_BEFORE)                                          \
    inline void NAME(__local K *keys, __local I *ids, K *key, I *id)                        \
    {                                                                                       \
        const int lid = get_local_id(0), wg = get_local_size(0);                            \
        barrier(CLK_LOCAL_MEM_FENCE);                                                       \
        keys[lid] = *key;                                                                   \
        ids[lid] = *id;                                                                     \
        barrier(CLK_LOCAL_MEM_FENCE);                                                       \
        int h = 1;                                                                          \
        while (2 * h < wg)                                                                  \
            h *= 2;                                                                         \
        for (; h > 0; h >>= 1) {                                                            \
            if (lid < h && lid + h < wg) {                                                  \
                const K k = keys[lid + h];                                                  \
                const I i = ids[lid + h];                                                   \
                if (k KEY_BEFORE keys[lid] || (k == keys[lid] && i < ids[lid])) {           \
                    keys[lid] = k;                                                          \
                    ids[lid] = i;                                                           \
                }                                                                           \
            }                                                                               \
            barrier(CLK_LOCAL_MEM_FENCE);                                                   \
        }                                                                                   \
        *key = keys[0];                                                                     \
        *id = ids[0];                                                                       \
        barrier(CLK_LOCAL_MEM_FENCE);                                                       \
    }

/* The largest gain, ties to the smallest code: moves (pils.cl: uint codes; localsearch.cl:
 * long codes). */
DEFINE_GROUP_BEST(group_best_gain, long, uint, >)
DEFINE_GROUP_BEST(group_best_gain_long, long, long, >)

/* The least key, ties to the smallest index: the nearest city (construct.cl), the
 * shortest tour (mmas.cl, ga.cl), the least move delta (neighborhood.cl). */
DEFINE_GROUP_BEST(group_least_int, int, int, <)
DEFINE_GROUP_BEST(group_least_long, long, int, <)
DEFINE_GROUP_BEST(group_least_long_ulong, long, ulong, <)

#endif
