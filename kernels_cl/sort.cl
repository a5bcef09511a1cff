/* Bitonic sort of 64-bit keys, ascending (length a power of two, padded with ~0).
 * One launch per (k, j) stage; work-item t compare-exchanges one pair.  Keys carry
 * their payload in the low bits, so equal primary keys order by payload: deterministic. */
__kernel void bitonic_step(__global ulong *restrict keys, const uint k, const uint j)
{
    const uint t = get_global_id(0);
    const uint lo = 2 * j * (t / j) + (t % j), hi = lo + j;
    const ulong a = keys[lo], b = keys[hi];
    const int ascending = (lo & k) == 0;
    if ((a > b) == ascending) {
        keys[lo] = b;
        keys[hi] = a;
    }
}
