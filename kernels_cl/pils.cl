/* Segment-parallel iterated local search (tspcl's own design, issue 39).
 *
 * Every round partitions the cities into cells; one work-group owns one cell.  A cell's
 * cities are where the tour passes through it: pieces, maximal runs of consecutive tour
 * positions.  The work-group lays its pieces end to end, in tour order, as one path in
 * local memory (local indices 0..len-1, each index's position, the candidate lists
 * restricted to the cell and for 2-D coordinate metrics the coordinates).  Every move
 * keeps the two end cities of every piece and which end joins which, so the tour outside
 * the cell is untouched, and the improvements of every cell are kept together: the
 * pieces only change their insides and lengths, and pils_place lays them out again.
 *   Cells are k-d cells of the plane (the host's partitions, pils.py), so a city's
 *   nearest candidates are in its cell whichever pass of the tour they lie on; or runs
 *   of the tour (pils_tour_cells: one piece each) where there are no coordinates.
 *
 * The search inside a cell (moves, kicks, the iterated local search path_ils) is
 * pils_search.h's.
 *
 * Build defines: as pils_search.h's (L_MAX: the most cities a cell holds).
 */
#include "pils_search.h"

/* Positions of the cities: pos[tour[p]] = p. */
__kernel void pils_positions(__global const int *restrict tour, __global int *restrict pos,
                             const int n)
{
    for (int p = get_global_id(0); p < n; p += get_global_size(0))
        pos[tour[p]] = p;
}

/* The tour's neighbours of every city: nbr[2c] and nbr[2c + 1] are the cities before
 * and after c (pils_touched compares a later tour with them). */
__kernel void pils_neighbours(__global const int *restrict tour, const int n,
                              __global int *restrict nbr)
{
    for (int p = get_global_id(0); p < n; p += get_global_size(0)) {
        const int c = tour[p];
        nbr[2 * c] = tour[p == 0 ? n - 1 : p - 1];
        nbr[2 * c + 1] = tour[p == n - 1 ? 0 : p + 1];
    }
}

/* The polish's queue: every city of which a tour edge is not one of its edges in nbr
 * (pils_neighbours of an earlier tour), and every city the last polish left queued
 * (active: it stopped before its queue ran out), goes into queue[0 ..] with its active
 * flag set (don't-look bits off), qcount[0] counting them; qcount[0] must be 0 before.
 * The queue's order varies with the atomics; the local search's moves do not depend on
 * it (localsearch.cl: each queued city's best move, claims by gain and city). */
__kernel void pils_touched(__global const int *restrict tour, const int n,
                           __global const int *restrict nbr, __global int *restrict queue,
                           __global int *restrict qcount, __global int *restrict active)
{
    for (int p = get_global_id(0); p < n; p += get_global_size(0)) {
        const int c = tour[p], a = tour[p == 0 ? n - 1 : p - 1], b = tour[p == n - 1 ? 0 : p + 1];
        const int x = nbr[2 * c], y = nbr[2 * c + 1];
        if (active[c] || !((a == x && b == y) || (a == y && b == x))) {
            active[c] = 1;
            queue[atomic_inc(qcount)] = c;
        }
    }
}

/* Cells that are runs of the tour (instances without coordinates): cell g holds keys
 * [first[g], first[g + 1]), key i being position offset + i (mod n). */
__kernel void pils_tour_cells(__global const int *restrict tour, const int n, const int offset,
                              __global const int *restrict first, const int cells,
                              __global int *restrict members, __global int *restrict cell_of)
{
    for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
        int g = (int)((long)i * cells / n);
        while (g + 1 < cells && first[g + 1] <= i)
            g++;
        while (first[g] > i)
            g--;
        const int p = offset + i, c = tour[p >= n ? p - n : p];
        members[i] = c;
        cell_of[c] = g;
    }
}

/* One round: `copies` work-groups search each cell, each with its own draws
 * (pils_pick keeps the best copy of every cell).
 *   members/first: cell c's cities are members[first[c] .. first[c + 1]); cell_of[x] is
 *                x's cell.  A key is a position relative to `offset` (key = position -
 *                offset mod n): pieces are runs of consecutive keys, so the tour's
 *                edge from key n - 1 to key 0 is never changed this round
 *   cand/cdist/cand_m: the candidate lists and their distances (the first M of cand_m
 *                per city are used)
 *   pos_in:      positions in the tour; local_of: scratch, n ints (the copies of a
 *                cell write the same values)
 *   staging:     copy r of cell c leaves the cell's cities in their new order at
 *                staging[r n + first[c] ..] with, for each, its piece's first key
 *                (staging_base) and its index in the piece (staging_index), and
 *                delta[r n + first key of a piece] = the piece's new length minus its
 *                old one (pils_place lays the tour out from copy 0's, after pils_pick)
 *   descend:     1: first a local search from every city of the cell, to a local
 *                optimum of its moves (verified: a pass that finds nothing)
 *   kicks/window/walk/bridge_cut: kicks per work-group (one more in the first `extra`
 *                groups), as kick_move draws them
 *   seed, round: the draws are Philox(seed; round, group, kick).
 * gain[g] is how much shorter work-group g made its cell's pieces. */
__kernel void pils_round(DIST_PARAMS, __global const int *restrict cand,
                         __global const int *restrict cdist, const int cand_m,
                         __global const int *restrict pos_in,
                         __global const int *restrict members, __global const int *restrict first,
                         __global const int *restrict cell_of, __global int *restrict local_of,
                         __global int *restrict staging, __global int *restrict staging_base,
                         __global int *restrict staging_index, __global int *restrict delta,
                         __global long *restrict gain,
                         const uint seed_lo, const uint seed_hi, const uint round,
                         const int offset, const int copies,
                         const int descend, const int kicks, const int extra,
                         const int window, const int walk, const uint bridge_cut)
{
    __local int city[L_MAX], key[L_MAX];
#if LOCAL_XY
    __local double2 xy[L_MAX];
#endif
    __local ushort path[L_MAX], at[L_MAX], saved[L_MAX], piece[L_MAX], saved_piece[L_MAX],
        old_len[L_MAX], lcand[L_MAX * M], queue[QCAP];
    __local uchar queued[L_MAX];
    __local int keep[QCAP], shared[SHARED_INTS];
    __local long gains[WG];
    __local uint codes[WG];

    const int lid = get_local_id(0), g = (int)group_index();
    const int cell = g / copies, base = first[cell], len = first[cell + 1] - base;
    const long copy = (long)(g % copies) * n;      /* this copy's staging */
    const int my_kicks = kicks + (g < extra);

    /* the cell's cities in key order: key[i] of member i, its rank is its local index */
    for (int i = lid; i < len; i += WG) {
        const int k = pos_in[members[base + i]] - offset;
        key[i] = k < 0 ? k + n : k;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = lid; i < len; i += WG) {
        int rank = 0;
        for (int j = 0; j < len; j++)
            rank += key[j] < key[i];
        city[rank] = members[base + i];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = lid; i < len; i += WG) {
        const int c = city[i], k = pos_in[c] - offset;
        key[i] = k < 0 ? k + n : k;
#if LOCAL_XY
        xy[i] = (double2)(g_coords[2 * c], g_coords[2 * c + 1]);
#endif
        local_of[c] = i;
        path[i] = (ushort)i;
        at[i] = (ushort)i;
        queued[i] = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    /* pieces: runs of consecutive keys; piece j's first key goes to key[j] (j <= i, so
     * no key is overwritten before it is read), its length to old_len[j] */
    if (lid == 0) {
        int pieces = 0, prev = -2;
        for (int i = 0; i < len; i++) {
            const int k = key[i];
            if (k != prev + 1) {
                key[pieces] = k;
                old_len[pieces++] = 0;
            }
            piece[i] = (ushort)(pieces - 1);
            old_len[pieces - 1]++;
            prev = k;
        }
        shared[0] = 0;
    }
    for (int t = lid; t < len * M; t += WG) {
        const int d = cand[(long)city[t / M] * cand_m + t % M];
        const int index = cell_of[d] == cell ? local_of[d] : NONE;
        lcand[t] = (ushort)index;
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    const rng_key_t rkey = {seed_lo, seed_hi};
    const long total = path_ils(DIST_ARGS, SEG_PASS, path, at, piece, saved, saved_piece,
                                saved, len, lcand, queue, queued, keep, shared, gains, codes,
                                rkey, round, (uint)g, descend, my_kicks, window, walk,
                                bridge_cut, 0);       /* no slack: `best` is never touched */

    /* each position's run start in saved[] and the pieces' growth (one work-item),
     * then the staging */
    if (lid == 0) {
        int start = 0;
        for (int i = 0; i < len; i++) {
            if (i > 0 && piece[path[i]] != piece[path[i - 1]]) {
                const int j = piece[path[i - 1]];
                delta[copy + key[j]] = (i - start) - old_len[j];
                start = i;
            }
            saved[i] = (ushort)start;
        }
        const int j = piece[path[len - 1]];
        delta[copy + key[j]] = (len - start) - old_len[j];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = lid; i < len; i += WG) {
        staging[copy + base + i] = city[path[i]];
        staging_base[copy + base + i] = key[piece[path[i]]];
        staging_index[copy + base + i] = i - saved[i];
    }
    if (lid == 0)
        gain[g] = total;
}

/* Exclusive prefix sums of delta (n ints) into shift, in chunks of SCAN_CHUNK: the
 * chunks' sums (pils_scan_sums, a work-group each), their prefix (pils_scan_chunks,
 * one work-item), then each chunk's own (pils_scan_apply, a work-group each). */
#define SCAN_CHUNK 4096
__kernel void pils_scan_sums(__global const int *restrict delta, const int n,
                             __global int *restrict sums, __local long *scratch)
{
    const int from = get_group_id(0) * SCAN_CHUNK, to = min(n, from + SCAN_CHUNK);
    long s = 0;
    for (int i = from + get_local_id(0); i < to; i += get_local_size(0))
        s += delta[i];
    s = group_sum_long(scratch, s);
    if (get_local_id(0) == 0)
        sums[get_group_id(0)] = (int)s;
}

__kernel void pils_scan_chunks(__global int *restrict sums, const int chunks)
{
    int s = 0;
    for (int c = 0; c < chunks; c++) {
        const int v = sums[c];
        sums[c] = s;
        s += v;
    }
}

/* Each work-item scans SCAN_CHUNK / (its group's size) consecutive entries. */
__kernel void pils_scan_apply(__global const int *restrict delta, const int n,
                              __global const int *restrict sums, __global int *restrict shift,
                              __local int *part)
{
    const int lid = get_local_id(0), size = get_local_size(0), each = SCAN_CHUNK / size;
    const int from = get_group_id(0) * SCAN_CHUNK + lid * each, to = min(n, from + each);
    int s = 0;
    for (int i = from; i < to; i++)
        s += delta[i];
    part[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        int run = sums[get_group_id(0)];
        for (int t = 0; t < size; t++) {
            const int v = part[t];
            part[t] = run;
            run += v;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    s = part[lid];
    for (int i = from; i < to; i++) {
        shift[i] = s;
        s += delta[i];
    }
}

/* The new tour: each staged city at its piece's first key, shifted by the growth of the
 * pieces before it, plus its index in the piece (keys back to positions by offset). */
__kernel void pils_place(__global const int *restrict staging,
                         __global const int *restrict staging_base,
                         __global const int *restrict staging_index,
                         __global const int *restrict shift, const int n, const int offset,
                         __global int *restrict tour_out)
{
    for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
        const int b = staging_base[i];
        const int p = b + shift[b] + staging_index[i] + offset;
        tour_out[p >= n ? p - n : p] = staging[i];
    }
}

/* The best copy of every cell (a work-group per cell): the largest gain[c copies + r]
 * (ties to the smallest r) goes to cell_gain[c], and its staging and its pieces'
 * growth become copy 0's. */
__kernel void pils_pick(__global const long *restrict gain, const int copies,
                        __global const int *restrict first, const int n,
                        __global int *restrict staging, __global int *restrict staging_base,
                        __global int *restrict staging_index, __global int *restrict delta,
                        __global long *restrict cell_gain, __local long *gains,
                        __local uint *codes)
{
    const int lid = get_local_id(0), c = get_group_id(0);
    long best = -1;
    uint code = NO_CODE;
    for (int r = lid; r < copies; r += get_local_size(0))
        if (gain[(long)c * copies + r] > best) {   /* r rising: the first of equal gains */
            best = gain[(long)c * copies + r];
            code = (uint)r;
        }
    group_best_gain(gains, codes, &best, &code);
    const long from = (long)code * n;
    for (int i = first[c] + lid; i < (code ? first[c + 1] : 0); i += get_local_size(0)) {
        const int b = staging_base[from + i];
        staging[i] = staging[from + i];
        staging_base[i] = b;
        staging_index[i] = staging_index[from + i];
        delta[b] = delta[from + b];
    }
    if (lid == 0)
        cell_gain[c] = best;
}

/* The round's gain (one work-group): total[0] = the sum of cell_gain[0 .. count). */
__kernel void pils_round_gain(__global const long *restrict cell_gain, const int count,
                              __global long *restrict total, __local long *scratch)
{
    long sum = 0;
    for (int c = get_local_id(0); c < count; c += get_local_size(0))
        sum += cell_gain[c];
    sum = group_sum_long(scratch, sum);
    if (get_local_id(0) == 0)
        total[0] = sum;
}
