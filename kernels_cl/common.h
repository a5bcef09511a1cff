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

/* Random numbers are a pure function of (seed, stream, step): Philox4x32-10 with the
 * 64-bit seed as key and (stream, step, lane-group) as counter.  Same seed, same
 * device, same draws, in whatever order the work-items run. */
typedef struct { uint seed_lo, seed_hi; } rng_key_t;

inline uint4 rng_block(const rng_key_t key, const uint stream, const uint step, const uint sub)
{
    philox4x32_key_t k = {{key.seed_lo, key.seed_hi}};
    philox4x32_ctr_t c = {{stream, step, sub, 0x7473u /* "ts" */}};
    philox4x32_ctr_t r = philox4x32(c, k);
    return (uint4)(r.v[0], r.v[1], r.v[2], r.v[3]);
}

/* Uniform integer in [0, bound) from a 32-bit draw (multiply-shift, bias < bound/2^32). */
inline uint rng_below(const uint draw, const uint bound)
{
    return (uint)(((ulong)draw * (ulong)bound) >> 32);
}

#endif
