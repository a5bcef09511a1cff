/* Construction heuristics: nearest neighbour, greedy edge, Quick-Boruvka, space-filling
 * curve, random.
 *
 * nn_tour, greedy_tour and qboruvka_tour run as ONE work-group: one work-item (lid 0)
 * does the inherently sequential bookkeeping, and the whole group scans the remaining
 * cities in parallel when the candidate lists cannot answer, reducing (distance, index)
 * pairs in local memory (no sub-group functions: NVIDIA's OpenCL has none).  Ties break
 * by index, so each gives the same tour as a plain sequential host loop, on every device.
 */
#include "distance.h"
#include "reduce.h"

#define NO_CITY 0x7fffffff

/* Remove city x from the compact list rem[0..*count) (where[] holds positions). */
inline void rem_take(__global int *restrict rem, __global int *restrict where,
                     __local int *count, const int x)
{
    const int p = where[x], last = rem[*count - 1];
    rem[p] = last;
    where[last] = p;
    *count -= 1;
}

/* Work-group argmin of DIST(from, c) over c in rem[0..count): returns the c of the
 * smallest (distance, index), identical on every work-item. */
inline int group_nearest(DIST_PARAMS, __global const int *restrict rem, const int count,
                         const int from, __local int *red_d, __local int *red_j)
{
    const int lid = get_local_id(0), wg = get_local_size(0);
    int bd = NO_CITY, bj = NO_CITY;
    for (int p = lid; p < count; p += wg) {
        const int c = rem[p], d = DIST(from, c);
        if (d < bd || (d == bd && c < bj)) {
            bd = d;
            bj = c;
        }
    }
    group_least_int(red_d, red_j, &bd, &bj);
    return bj;
}

/* Nearest neighbour tour from `start` (Fosin et al. 2013, section 4: NNH over the
 * candidate list).  The first unvisited entry of a (distance, index)-ordered candidate
 * list IS the nearest unvisited city, so the lists only speed it up. */
__kernel void nn_tour(DIST_PARAMS, __global const int *restrict cand, const int m,
                      const int start, __global int *restrict tour,
                      __global int *restrict rem, __global int *restrict where,
                      __global uchar *restrict visited, __local int *red_d, __local int *red_j)
{
    const int lid = get_local_id(0), wg = get_local_size(0);
    __local int cur, next, count;
    for (int c = lid; c < n; c += wg) {
        rem[c] = c;
        where[c] = c;
        visited[c] = 0;
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (lid == 0) {
        count = n;
        rem_take(rem, where, &count, start);
        visited[start] = 1;
        tour[0] = start;
        cur = start;
    }
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    for (int step = 1; step < n; step++) {
        if (lid == 0) {
            int pick = -1;
            for (int s = 0; s < m; s++) {
                const int j = cand[(long)cur * m + s];
                if (!visited[j]) {
                    pick = j;
                    break;
                }
            }
            next = pick;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* every step passes the same barriers (PoCL needs barriers in uniform, not
         * conditional, control flow); the scan is empty when a candidate answered */
        const int best = group_nearest(DIST_ARGS, rem, next < 0 ? count : 0, cur, red_d, red_j);
        if (lid == 0) {
            if (next < 0)
                next = best;
            rem_take(rem, where, &count, next);
            visited[next] = 1;
            tour[step] = next;
            cur = next;
        }
        barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    }
}

/* Candidate edges for greedy: slot s = i*m + r holds edge {i, cand[s]}; each undirected
 * edge is kept once (at i < j, or at i > j when i is not in j's list) with key
 * (distance << 32 | s), so sorting the keys orders edges by (distance, slot). */
__kernel void greedy_edge_keys(const int n, __global const int *restrict cand,
                               __global const int *restrict cand_d, const int m,
                               __global ulong *restrict keys, const int length)
{
    const int s = get_global_id(0);
    if (s >= length)
        return;
    ulong key = ~(ulong)0;
    if (s < n * m) {
        const int i = s / m, j = cand[s];
        int keep = i < j;
        if (!keep) {
            keep = 1;
            for (int r = 0; r < m; r++)
                keep &= cand[(long)j * m + r] != i;
        }
        if (keep)
            key = ((ulong)cand_d[s] << 32) | (ulong)s;
    }
    keys[s] = key;
}

inline int uf_find(__global int *restrict parent, int x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

/* Join the fragments that adj/deg hold (each city's neighbours so far) into the tour:
 * every fragment end goes into rem (in index order), then, from the lowest-numbered end,
 * each fragment is walked and appended, and the next starts at the free end nearest to
 * where the last one ended.  Called by the whole work-group (it has barriers); `state`
 * is three __local ints of the caller's. */
inline void join_fragments(DIST_PARAMS, __global const int *restrict adj,
                           __global const int *restrict deg, __global int *restrict tour,
                           __global int *restrict rem, __global int *restrict where,
                           __local int *state, __local int *red_d, __local int *red_j)
{
    const int lid = get_local_id(0);
    __local int *count = state, *pos = state + 1, *from = state + 2;
    if (lid == 0) {
        *count = 0;
        for (int c = 0; c < n; c++)
            if (deg[c] < 2) {
                rem[*count] = c;
                where[c] = (*count)++;
            }
        *pos = 0;
        *from = -1;
    }
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    while (*pos < n) {
        /* the first fragment starts at the lowest-numbered end (rem was filled in
         * index order); the scan runs empty then, keeping the barriers uniform */
        const int near = group_nearest(DIST_ARGS, rem, *from < 0 ? 0 : *count, *from, red_d, red_j);
        const int a = *from < 0 ? rem[0] : near;
        if (lid == 0) {
            /* walk the fragment that starts at end a, appending it to the tour */
            rem_take(rem, where, count, a);
            int prev = -1, x = a;
            for (;;) {
                tour[(*pos)++] = x;
                int y = -1;
                for (int r = 0; r < deg[x]; r++)
                    if (adj[2 * x + r] != prev) {
                        y = adj[2 * x + r];
                        break;
                    }
                if (y < 0 || (deg[x] == 1 && x != a))
                    break;
                prev = x;
                x = y;
            }
            if (x != a)
                rem_take(rem, where, count, x);
            *from = x;
        }
        barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    }
}

/* Every city alone, of degree 0 (the whole work-group; ends with a barrier). */
inline void no_edges(const int n, __global int *restrict deg, __global int *restrict parent)
{
    for (int c = get_local_id(0); c < n; c += get_local_size(0)) {
        deg[c] = 0;
        parent[c] = c;
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
}

/* Join cities i and j (ends of two fragments, roots ri and rj): the edge goes into adj. */
inline void add_edge(__global int *restrict adj, __global int *restrict deg,
                     __global int *restrict parent, const int i, const int j, const int ri,
                     const int rj)
{
    parent[max(ri, rj)] = min(ri, rj);
    adj[2 * i + deg[i]++] = j;
    adj[2 * j + deg[j]++] = i;
}

/* Greedy edge (the "greedy matching" construction): take candidate edges shortest first
 * while both ends have degree < 2 and no cycle closes; then join the fragments by
 * nearest-neighbour search among fragment ends, starting at the lowest-numbered end. */
__kernel void greedy_tour(DIST_PARAMS, __global const ulong *restrict keys,
                          __global const int *restrict cand, const int m,
                          __global int *restrict adj, __global int *restrict deg,
                          __global int *restrict parent, __global int *restrict tour,
                          __global int *restrict rem, __global int *restrict where,
                          __local int *red_d, __local int *red_j)
{
    __local int state[3];
    no_edges(n, deg, parent);
    if (get_local_id(0) == 0) {
        for (long e = 0; keys[e] != ~(ulong)0; e++) {
            const int s = (int)(keys[e] & 0xffffffffu), i = s / m, j = cand[s];
            if (deg[i] == 2 || deg[j] == 2)
                continue;
            const int ri = uf_find(parent, i), rj = uf_find(parent, j);
            if (ri != rj)
                add_edge(adj, deg, parent, i, j, ri, rj);
        }
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    join_fragments(DIST_ARGS, adj, deg, tour, rem, where, state, red_d, red_j);
}

/* Quick-Boruvka (Applegate, Bixby, Chvatal and Cook 2006, "The Traveling Salesman
 * Problem: A Computational Study", p. 455; Concorde linkern's default start, which sorts
 * the cities by x as here): the cities in the order of a sweep (sweep_keys: by x, then
 * y, or by y, then x; sorted, then key_cities: keys hold the cities; work-group g takes
 * the g-th sweep, `keys` or `keys_y`, into its own part of the buffers, so two sweeps run
 * at once), pass after pass, each of degree < 2 joined to its
 * nearest city of degree < 2 other than its fragment's other end, until n - 1 edges make
 * one path, which join_fragments closes.  Nearest is by qb_key, the distance, then the
 * plane's squared distance (so that equal rounded distances go to the truly nearer city,
 * as Concorde's k-d tree finds it), then by qb_tie, a hash of the run's seed and the
 * pair: on a lattice (the pla instances) many cities are equally near, and a choice by
 * index draws the same direction every time (measured: pils then ends twice as far from
 * the optimum; docs/notebook/pils.md), then the index.  The candidate list (the m nearest
 * by (distance, index), put in that order by qb_lists beforehand, all cities at once)
 * answers when its first free city is nearer than its last entry; otherwise the
 * work-group scans every city of degree < 2 (kept in `ends`, positions in `where`; the
 * tour's buffer, which only the join writes).  lid 0 keeps the books, reading only
 * degrees and ends (the sweep's time was the distances it computed, one city after the
 * other); the group meets only for those scans.  `other` holds each fragment end's other
 * end (-1 for a city alone). */
inline long qb_key(DIST_PARAMS, __global const double *restrict plane, const int i, const int c)
{
    const double dx = plane[2 * i] - plane[2 * c], dy = plane[2 * i + 1] - plane[2 * c + 1];
    return ((long)DIST(i, c) << 32) | (long)as_uint((float)(dx * dx + dy * dy));
}

/* The tie-break of equal qb_keys: a hash of (seed, i, c) above, c below. */
inline ulong qb_tie(const uint seed, const int i, const int c)
{
    uint h = seed ^ ((uint)i * 0x9E3779B1u) ^ ((uint)c * 0x85EBCA77u);
    h ^= h >> 16;
    h *= 0x7FEB352Du;
    h ^= h >> 15;
    h *= 0x846CA68Bu;
    h ^= h >> 16;
    return ((ulong)h << 32) | (uint)c;
}

/* City c as i's nearest so far: (*key, *tie) the best (qb_key, qb_tie) seen. */
inline void qb_consider(DIST_PARAMS, __global const double *restrict plane, const uint seed,
                        const int i, const int c, long *key, ulong *tie)
{
    const long k = qb_key(DIST_ARGS, plane, i, c);
    const ulong t = qb_tie(seed, i, c);
    if (k < *key || (k == *key && t < *tie)) {
        *key = k;
        *tie = t;
    }
}

/* Join i to j (lid 0): the edge, the ends' list, one edge more, and i kept for the next
 * pass while its degree is below 2. */
inline void qb_join(__global int *restrict adj, __global int *restrict deg,
                    __global int *restrict other, __global int *restrict ends,
                    __global int *restrict where, __local int *ends_count,
                    __global int *restrict rem, int *kept, int *edges, const int i, const int j)
{
    const int ei = other[i] < 0 ? i : other[i], ej = other[j] < 0 ? j : other[j];
    adj[2 * i + deg[i]++] = j;
    adj[2 * j + deg[j]++] = i;
    other[ei] = ej;
    other[ej] = ei;
    if (deg[i] == 2)
        rem_take(ends, where, ends_count, i);
    if (deg[j] == 2)
        rem_take(ends, where, ends_count, j);
    if (deg[i] < 2)
        rem[(*kept)++] = i;
    *edges += 1;
}

/* Each city's candidate list in qb's order of nearness ((qb_key, qb_tie) ascending: the
 * keys are distinct, qb_tie ends with the city), one work-item a city, into `sorted`; and
 * `inner`, how many of them are nearer than the list's last entry (all m where the list
 * holds every other city), so the sweep's first free one among those is the city's
 * nearest free city. */
__kernel void qb_lists(DIST_PARAMS, __global const int *restrict cand, const int m,
                       __global const double *restrict plane, const uint seed,
                       __global int *restrict sorted, __global int *restrict inner)
{
    const int i = get_global_id(0);
    if (i >= n)
        return;
    const long row = (long)i * m;
    const int limit = DIST(i, cand[row + m - 1]);
    int nearer = 0;
    for (int r = 0; r < m; r++) {
        const int c = cand[row + r];
        const long key = qb_key(DIST_ARGS, plane, i, c);
        const ulong tie = qb_tie(seed, i, c);
        int rank = 0;
        for (int s = 0; s < m; s++) {
            const int d = cand[row + s];
            const long k = qb_key(DIST_ARGS, plane, i, d);
            rank += k < key || (k == key && qb_tie(seed, i, d) < tie);
        }
        sorted[row + rank] = c;
        nearer += (int)(key >> 32) < limit;
    }
    inner[i] = m < n - 1 ? nearer : m;
}

__kernel void qboruvka_tour(DIST_PARAMS, __global const ulong *restrict keys,
                            __global const int *restrict sorted, const int m,
                            __global int *restrict adj, __global int *restrict deg,
                            __global int *restrict other, __global int *restrict tour,
                            __global int *restrict rem, __global int *restrict where,
                            __local int *red_d, __local int *red_j,
                            __global const double *restrict plane, const uint seed,
                            __local long *red_key, __local ulong *red_tie,
                            __global const int *restrict inner, __global const ulong *restrict keys_y)
{
    const int lid = get_local_id(0), wg = get_local_size(0), g = get_group_id(0);
    __local int state[3], ends_count, searching;
    /* work-group g sweeps along keys (0) or keys_y (1), in its own fragments' buffers */
    keys = g ? keys_y : keys;
    adj += 2L * g * n;
    deg += (long)g * n;
    other += (long)g * n;
    tour += (long)g * n;
    rem += (long)g * n;
    where += (long)g * n;
    for (int c = lid; c < n; c += wg) {
        deg[c] = 0;
        other[c] = -1;
        tour[c] = c;   /* every city an end: the ends' list until the join */
        where[c] = c;
        rem[c] = (int)(keys[c] & 0xffffffffu);
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    /* lid 0's sweep: rem[t..open) this pass, the cities kept for the next in rem[0..kept) */
    int t = 0, open = n, kept = 0, edges = 0;
    if (lid == 0)
        ends_count = n;
    for (;;) {
        if (lid == 0) {
            searching = -1;
            while (edges < n - 1) {
                if (t == open) {
                    open = kept;
                    t = kept = 0;
                }
                const int i = rem[t++];
                if (deg[i] == 2)
                    continue;
                const int o = other[i], nearer = inner[i];
                int j = -1;
                for (int r = 0; r < nearer && j < 0; r++) {
                    const int c = sorted[(long)i * m + r];
                    if (deg[c] < 2 && c != o)
                        j = c;
                }
                /* a city beyond the list is as far as its last entry at least */
                if (j < 0) {
                    searching = i;   /* the group scans */
                    break;
                }
                qb_join(adj, deg, other, tour, where, &ends_count, rem, &kept, &edges, i, j);
            }
        }
        barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
        const int i = searching;
        if (i < 0)
            break;
        long best = LONG_MAX;
        ulong tie = ULONG_MAX;
        for (int p = lid; p < ends_count; p += wg) {
            const int c = tour[p];
            if (c != i && c != other[i])
                qb_consider(DIST_ARGS, plane, seed, i, c, &best, &tie);
        }
        group_least_long_ulong(red_key, red_tie, &best, &tie);
        if (lid == 0)
            qb_join(adj, deg, other, tour, where, &ends_count, rem, &kept, &edges, i, (int)(uint)tie);
        barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    }
    join_fragments(DIST_ARGS, adj, deg, tour, rem, where, state, red_d, red_j);
}

/* Count the cities whose first two candidates (the nearest, lists sorted by distance) are
 * exactly as far in the plane: most of a lattice's cities (pils' init=auto reads it). */
__kernel void nearest_ties(const int n, __global const double *restrict plane,
                           __global const int *restrict cand, const int m,
                           volatile __global int *restrict count)
{
    const int i = get_global_id(0);
    if (i >= n || m < 2)
        return;
    const int a = cand[(long)i * m], b = cand[(long)i * m + 1];
    const double ax = plane[2 * i] - plane[2 * a], ay = plane[2 * i + 1] - plane[2 * a + 1];
    const double bx = plane[2 * i] - plane[2 * b], by = plane[2 * i + 1] - plane[2 * b + 1];
    if (ax * ax + ay * ay == bx * bx + by * by)
        atomic_inc(count);
}

/* The cities in order of one coordinate (`axis`: 0 x, 1 y), then the other, then city:
 * key = qa << (64 - ab) | qb << city_bits | city, the coordinates quantized over the
 * bounding box (a0, ascale for the first; b0, bscale for the other) to the ab and bb bits
 * the city's leave (ab = (64 - city_bits + 1) / 2, bb the rest); sorting the keys gives
 * the sweep.  Ties in the first go along the other, as the cities of a line follow each
 * other. */
__kernel void sweep_keys(const int n, __global const double *restrict plane, const int axis,
                         const double a0, const double ascale, const double b0,
                         const double bscale, const int city_bits, __global ulong *restrict keys,
                         const int length)
{
    const int i = get_global_id(0);
    if (i >= length)
        return;
    if (i >= n) {
        keys[i] = ~(ulong)0;
        return;
    }
    const int ab = (64 - city_bits + 1) / 2, bb = 64 - city_bits - ab;
    const ulong qa = (ulong)min((plane[2 * i + axis] - a0) * ascale, (double)((1ul << ab) - 1)),
                qb = (ulong)min((plane[2 * i + 1 - axis] - b0) * bscale, (double)((1ul << bb) - 1));
    keys[i] = (qa << (64 - ab)) | (qb << city_bits) | (ulong)i;
}

/* Keep the low `bits` of each of the first n keys: the city of a sorted sweep key. */
__kernel void key_cities(const int n, __global ulong *restrict keys, const int bits)
{
    const int t = get_global_id(0);
    if (t < n)
        keys[t] &= (1ul << bits) - 1;
}

/* Space-filling curve: Hilbert index of each city on a 2^16 x 2^16 grid over the
 * bounding box; key = index << 32 | city, so sorting the keys gives the curve order. */
__kernel void hilbert_keys(const int n, __global const double *restrict plane,
                           const double x0, const double y0, const double scale,
                           __global ulong *restrict keys, const int length)
{
    const int i = get_global_id(0);
    if (i >= length)
        return;
    if (i >= n) {
        keys[i] = ~(ulong)0;
        return;
    }
    uint x = (uint)min((plane[2 * i] - x0) * scale, 65535.0);
    uint y = (uint)min((plane[2 * i + 1] - y0) * scale, 65535.0);
    uint d = 0;
    for (uint s = 1u << 15; s > 0; s >>= 1) {
        const uint rx = (x & s) != 0, ry = (y & s) != 0;
        d += s * s * ((3u * rx) ^ ry);
        if (ry == 0) {
            if (rx == 1) {
                x = 65535u - x;
                y = 65535u - y;
            }
            const uint t = x;
            x = y;
            y = t;
        }
    }
    keys[i] = ((ulong)d << 32) | (ulong)i;
}

/* Random tour: a Philox draw per city as sort key (stream 0, step = city). */
__kernel void random_keys(const int n, const uint seed_lo, const uint seed_hi,
                          __global ulong *restrict keys, const int length)
{
    const int i = get_global_id(0);
    if (i >= length)
        return;
    const rng_key_t key = {seed_lo, seed_hi};
    keys[i] = i < n ? (((ulong)rng_block(key, 0u, (uint)i, 0u).x << 32) | (ulong)i) : ~(ulong)0;
}

/* The low 32 bits of the first n sorted keys are the tour. */
__kernel void keys_to_tour(const int n, __global const ulong *restrict keys,
                           __global int *restrict tour)
{
    const int t = get_global_id(0);
    if (t < n)
        tour[t] = (int)(keys[t] & 0xffffffffu);
}
