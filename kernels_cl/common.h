/* Shared by every tspcl kernel: double precision, no contraction, counter-based RNG.
 *
 * FP_CONTRACT is off so that a*b+c is never fused into an fma: the integer TSPLIB
 * distances must come out bit-identical to the host's numpy computation.
 */
#ifndef TSPCL_COMMON_H
#define TSPCL_COMMON_H

#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF

#include <pyopencl-random123/philox.cl>

/* Random numbers are a pure function of (seed, counter): Philox4x32-10 with the 64-bit
 * seed as key.  Same seed, same device, same draws, in whatever order the work-items
 * run.  rng_philox() is the one wrapper of Philox; rng_block() fills the counter with
 * (stream, step, lane-group, "ts"), the ants (ants.h ant_draws()) with (ant, iteration,
 * step, slot). */
typedef struct { uint seed_lo, seed_hi; } rng_key_t;

inline uint4 rng_philox(const rng_key_t key, const uint c0, const uint c1, const uint c2,
                        const uint c3)
{
    philox4x32_key_t k = {{key.seed_lo, key.seed_hi}};
    philox4x32_ctr_t c = {{c0, c1, c2, c3}};
    philox4x32_ctr_t r = philox4x32(c, k);
    return (uint4)(r.v[0], r.v[1], r.v[2], r.v[3]);
}

inline uint4 rng_block(const rng_key_t key, const uint stream, const uint step, const uint sub)
{
    return rng_philox(key, stream, step, sub, 0x7473u /* "ts" */);
}

/* A work-item's own stream, for a kernel that draws many numbers in an order fixed by the
 * work-item's id and the data: SFC32 (Doty-Humphrey's small fast chaotic generator:
 * state a, b, c and a counter d) started from a Philox block, so the numbers are still a
 * pure function of the seed and the counters that keyed the block.  About 7 instructions
 * a number against Philox4x32-10's 17 (a quarter of a 10-round block) or 70 (a block
 * for one number): what MMAS's reservoir sampling over every unvisited city and its
 * roulette wheel's one draw a step needed (aco.cl).
 * The paper's CUDA code draws there from curand's XORWOW per thread; SFC32 is as cheap
 * and passes TestU01's BigCrush and PractRand, far beyond the numbers one work-item
 * draws here (about n^2 / 2p an ant: 2^20 for 18,512 cities at 128 work-items). */
typedef uint4 rng_stream_t;

inline uint stream_next(rng_stream_t *s)
{
    const uint t = s->x + s->y + s->w;
    s->w += 1u;
    s->x = s->y ^ (s->y >> 9);
    s->y = s->z + (s->z << 3);
    s->z = rotate(s->z, 21u) + t;
    return t;
}

/* The work-group's index in its whole launch, for kernels whose work-groups are
 * independent units (an ant, a gene's crossover, a tour's 2-opt) that the host may
 * enqueue in slices of whole work-groups, each slice at a global offset
 * (tspcl/solvers/device_loop.py Launch): the same unit, and so the same draws and
 * output, whatever the split. */
inline uint group_index(void)
{
    return (uint)(get_global_offset(0) / get_local_size(0) + get_group_id(0));
}

/* Uniform integer in [0, bound) from a 32-bit draw (multiply-shift, bias < bound/2^32). */
inline uint rng_below(const uint draw, const uint bound)
{
    return (uint)(((ulong)draw * (ulong)bound) >> 32);
}

#endif
