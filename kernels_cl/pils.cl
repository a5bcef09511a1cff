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
 * (pils_merge keeps the best copy of every cell, or with it the others that changed
 * other pieces).
 *   members/first: cell c's cities are members[first[c] .. first[c + 1]); cell_of[x] is
 *                x's cell.  A key is a position relative to `offset` (key = position -
 *                offset mod n): pieces are runs of consecutive keys, so the tour's
 *                edge from key n - 1 to key 0 is never changed this round
 *   cand/cand_m: the candidate lists (the first M of cand_m per city are used)
 *   pos_in:      positions in the tour; local_of: scratch, n ints (the copies of a
 *                cell write the same values)
 *   staging:     copy r of cell c leaves the cell's cities in their new order at
 *                staging[r n + first[c] ..] with, for each, its piece's first key
 *                (staging_base) and its index in the piece (staging_index), and
 *                delta[r n + first key of a piece] = the piece's new length minus its
 *                old one (pils_merge gathers the kept copies' for pils_place)
 *   descend:     1: first a local search from every city of the cell, to a local
 *                optimum of its moves (verified: a pass that finds nothing)
 *   kicks/window/walk/bridge_cut: kicks per work-group (one more in the first `extra`
 *                groups), as kick_move draws them
 *   focus:       1: copy r draws its kicks' first cities from its own share of the cell,
 *                members[first[c] + r len / copies ..] (members are in a spatial order,
 *                pils.py kd_cells), so that copies change different pieces; 0: anywhere
 *   seed, round: the draws are Philox(seed; round, group, kick).
 * gain[g] is how much shorter work-group g made its cell's pieces; touched[r n + first
 * key of a piece] is 1 where copy r changed the piece (its cities, their order or its
 * length), else 0; piece_first[first[c] + j] is the first key of cell c's piece j and
 * pieces_of[c] how many pieces it has (written by copy 0). */
__kernel void pils_round(DIST_PARAMS, __global const int *restrict cand, const int cand_m,
                         __global const int *restrict pos_in,
                         __global const int *restrict members, __global const int *restrict first,
                         __global const int *restrict cell_of, __global int *restrict local_of,
                         __global int *restrict staging, __global int *restrict staging_base,
                         __global int *restrict staging_index, __global int *restrict delta,
                         __global long *restrict gain, __global uchar *restrict touched,
                         __global int *restrict piece_first, __global int *restrict pieces_of,
                         const uint seed_lo, const uint seed_hi, const uint round,
                         const int offset, const int copies,
                         const int descend, const int kicks, const int extra,
                         const int window, const int walk, const uint bridge_cut,
                         const int focus)
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
    const int r = g % copies, share_from = (int)((long)r * len / copies);
    const int share = (int)((long)(r + 1) * len / copies) - share_from;
    const long total = path_ils(DIST_ARGS, SEG_PASS, path, at, piece, saved, saved_piece,
                                saved, len, lcand, queue, queued, keep, shared, gains, codes,
                                rkey, round, (uint)g, descend, my_kicks, window, walk,
                                bridge_cut, members, local_of, base + share_from,
                                focus ? share : 0,
                                0);       /* no slack: `best` is never touched */

    /* each position's run start in saved[], the pieces' growth and whether this copy
     * changed them (one work-item; the pieces keep their order, piece j's cities were
     * local indices ostart .. ostart + old_len[j] - 1 in order), then the staging */
    if (lid == 0) {
        int start = 0, ostart = 0, j = 0;
        for (int i = 1; i <= len; i++) {
            saved[i - 1] = (ushort)start;
            if (i < len && piece[path[i]] == piece[path[i - 1]])
                continue;
            j = piece[path[i - 1]];
            const int grown = (i - start) - old_len[j];
            int changed = grown != 0;
            for (int t = start; t < i && !changed; t++)
                changed = path[t] != ostart + (t - start);
            delta[copy + key[j]] = grown;
            touched[copy + key[j]] = (uchar)changed;
            if (r == 0)
                piece_first[base + j] = key[j];
            ostart += old_len[j];
            start = i;
        }
        if (r == 0)
            pieces_of[cell] = j + 1;
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

/* Piece j of the cell whose piece_first entries are pf[0 .. count) (rising keys): the
 * last whose first key is at most k. */
inline int piece_of_key(__global const int *restrict pf, const int count, const int k)
{
    int lo = 0, hi = count - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (pf[mid] <= k)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* The copies of every cell that are kept (a work-group per cell), laid out for
 * pils_place in merged*: the copy with the largest gain[c copies + r] (ties to the
 * smallest r) gives every piece (disjoint 0), or with disjoint 1 the pieces it changed,
 * and then each copy in falling order of gain (ties to the smallest r) whose gain is
 * positive and whose changed pieces (touched) no copy kept before changed gives its
 * changed pieces too: the pieces are disjoint, so their changes add up, and the other
 * pieces stay as they were.  A kept piece's cities, their new first key and index
 * (staging*) and its growth (delta) are taken from its copy, the others' from the tour
 * (pos_in).  Each city's entry goes to merged*[first[c] + local_of[city]]; delta[key]
 * of each piece becomes its kept growth (0 where no copy gives it).  cell_gain[c] is
 * the sum of the kept copies' gains.  Local: order (`copies` ints) and kept (one int);
 * owner is scratch (n ints). */
__kernel void pils_merge(__global const long *restrict gain, const int copies,
                         __global const int *restrict first, const int n, const int offset,
                         __global const int *restrict members, __global const int *restrict pos_in,
                         __global const int *restrict local_of,
                         __global const int *restrict staging,
                         __global const int *restrict staging_base,
                         __global const int *restrict staging_index, __global int *restrict delta,
                         __global const uchar *restrict touched,
                         __global const int *restrict piece_first,
                         __global const int *restrict pieces_of, const int disjoint,
                         __global int *restrict owner, __global int *restrict merged,
                         __global int *restrict merged_base, __global int *restrict merged_index,
                         __global long *restrict cell_gain, __local int *order,
                         __local int *kept)
{
    const int lid = get_local_id(0), size = get_local_size(0), c = get_group_id(0);
    const int base = first[c], len = first[c + 1] - base, count = pieces_of[c];
    __global const int *pf = piece_first + base;
    __global int *own = owner + base;

    /* the copies in falling order of gain, ties to the smallest index */
    for (int r = lid; r < copies; r += size) {
        const long g = gain[(long)c * copies + r];
        int rank = 0;
        for (int s = 0; s < copies; s++) {
            const long h = gain[(long)c * copies + s];
            rank += h > g || (h == g && s < r);
        }
        order[rank] = r;
    }
    for (int j = lid; j < count; j += size)
        own[j] = -1;
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);

    /* the kept copies, one after the other (one work-item): their number in kept[0],
     * themselves in order[0 ..] */
    if (lid == 0) {
        long kept_gain = 0;
        int count_kept = 0;
        for (int t = 0; t < (disjoint ? copies : 1); t++) {
            const int r = order[t];
            const long g = gain[(long)c * copies + r];
            int clash = t > 0 && g <= 0;
            for (int j = 0; j < count && disjoint && !clash; j++)
                clash = touched[(long)r * n + pf[j]] && own[j] >= 0;
            if (clash)
                continue;
            for (int j = 0; j < count; j++)
                if (!disjoint || touched[(long)r * n + pf[j]])
                    own[j] = r;
            kept_gain += g;
            order[count_kept++] = r;     /* count_kept <= t: order[t] was read */
        }
        kept[0] = count_kept;
        cell_gain[c] = kept_gain;
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);

    /* the kept pieces' cities from their copies, the others' from the tour */
    for (int t = 0; t < kept[0]; t++) {
        const int r = order[t];
        const long from = (long)r * n + base;
        for (int i = lid; i < len; i += size) {
            const int b = staging_base[from + i];
            if (own[piece_of_key(pf, count, b)] != r)
                continue;
            const int x = staging[from + i], o = base + local_of[x];
            merged[o] = x;
            merged_base[o] = b;
            merged_index[o] = staging_index[from + i];
        }
    }
    for (int i = lid; i < len; i += size) {
        const int x = members[base + i];
        int k = pos_in[x] - offset;
        k = k < 0 ? k + n : k;
        const int j = piece_of_key(pf, count, k);
        if (own[j] >= 0)
            continue;
        const int o = base + local_of[x];
        merged[o] = x;
        merged_base[o] = pf[j];
        merged_index[o] = k - pf[j];
    }
    for (int j = lid; j < count; j += size)
        delta[pf[j]] = own[j] >= 0 ? delta[(long)own[j] * n + pf[j]] : 0;
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
