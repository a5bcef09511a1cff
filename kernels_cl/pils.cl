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
 *   Except in spans: the tour is cut into `windows` windows of keys a round, and in each
 * one cell (the one at the window's middle, each cell once) lays the pieces that lie
 * inside the window (SPAN_PIECES at most) out as one span whose joints stand for the
 * tour between them (pils_search.h): any move that keeps the joints is a move of the
 * whole tour that changes only the window's part, so windows never interfere.  A span's
 * pieces may change which end joins which: the outside paths between them change
 * places or turn round, which pils_rejoin lays out after pils_place.  (Re-pairing two
 * cells' pieces at once can split the tour; one cell a window cannot.)
 *   Cells are k-d cells of the plane (the host's partitions, pils.py), so a city's
 *   nearest candidates are in its cell whichever pass of the tour they lie on; or runs
 *   of the tour (pils_tour_cells: one piece each) where there are no coordinates.
 *
 * The search inside a cell (moves, kicks, the iterated local search path_ils) is
 * pils_search.h's.
 *
 * Build defines: as pils_search.h's (L_MAX: the most cities a cell holds), SPAN_PIECES
 * (the pieces a span holds at most) and SCAN_CHUNK (the entries a scan_sums group adds),
 * both pils.py's.
 */
#include "pils_search.h"

/* A span's record (rejoin[]): [0] its joints J (0: no span), [1 + i] the first key of
 * its piece i (i <= J), [1 + SPAN_PIECES + i] the cities now between joints i - 1 and i,
 * [1 + 2 SPAN_PIECES + r] joint r in path order: the outside path after piece j = value &
 * 0xFFFF, walked forward (value >> 16 = 1, from piece j to j + 1) or turned round. */
#define REJOIN_INTS (1 + 3 * SPAN_PIECES)
#define REJOIN_KEYS 1
#define REJOIN_LENGTHS (1 + SPAN_PIECES)
#define REJOIN_JOINTS (1 + 2 * SPAN_PIECES)

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
 *                groups), as kick_move draws them; span_cut is bridge_cut in a cell
 *                with a span (its double bridges start there)
 *   step_budget: > 0: a work-group begins no kick once its local searches have taken
 *                that many steps (kicks is then a bound), so that the round's groups
 *                end together whatever their kicks cost; work[2 g], work[2 g + 1]: the
 *                kicks group g took and its searches' steps
 *   window_of/windows/rejoin: the round's windows (pils_windows) and the spans'
 *                records (pils_rejoin)
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
                         const int window, const int walk, const uint bridge_cut,
                         const uint span_cut, __global const int *restrict window_of,
                         const int windows, __global int *restrict rejoin,
                         const int step_budget, __global int *restrict work)
{
    __local int city[L_MAX], key[L_MAX];
#if LOCAL_XY
    __local double2 xy[L_MAX];
#endif
    __local ushort path[L_MAX], at[L_MAX], saved[L_MAX], piece[L_MAX], saved_piece[L_MAX],
        old_len[L_MAX], lcand[L_MAX * M], queue[QCAP];
    __local uchar queued[L_MAX], joint[L_MAX];
    __local int keep[QCAP], shared[SHARED_INTS], span_at[3];
    __local long gains[WG];
    __local uint codes[WG];

    const int lid = get_local_id(0), g = (int)group_index();
    const int cell = g / copies, base = first[cell], len = first[cell + 1] - base;
    const long copy = (long)(g % copies) * n;      /* this copy's staging */
    const int my_kicks = kicks + (g < extra);
    const int w = windows ? window_of[cell] : -1;  /* this cell's window, if any */
    const long rec = (long)(w * copies + g % copies) * REJOIN_INTS;

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
        joint[i] = 0;
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
        /* the span: the pieces s .. e wholly inside the window, if two or more */
        int s = 0, e = -1, from = 0;
        if (w >= 0) {
            const int wlo = (int)((long)w * n / windows), whi = (int)((long)(w + 1) * n / windows);
            while (s < pieces && key[s] < wlo)
                from += old_len[s++];
            e = s - 1;
            while (e + 1 < pieces && e + 1 - s < SPAN_PIECES && key[e + 1] + old_len[e + 1] <= whi)
                e++;
        }
        const int joints = e > s ? e - s : 0;
        int to = from;
        for (int j = s; j <= e; j++)
            to += old_len[j];
        for (int i = from; joints && i < to; i++) {   /* one piece number, joints between */
            const int j = piece[i];
            joint[i] = (uchar)(i + 1 < to && piece[i + 1] != j ? j - s + 1 : 0);
            piece[i] = (ushort)s;
        }
        span_at[0] = joints ? s : NONE;
        span_at[1] = from;
        span_at[2] = joints ? to - from : 0;
        if (w >= 0) {
            rejoin[rec] = joints;
            for (int i = 0; i <= joints; i++)
                rejoin[rec + REJOIN_KEYS + i] = key[s + i];
        }
    }
    for (int t = lid; t < len * M; t += WG) {
        const int d = cand[(long)city[t / M] * cand_m + t % M];
        const int index = cell_of[d] == cell ? local_of[d] : NONE;
        lcand[t] = (ushort)index;
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    const rng_key_t rkey = {seed_lo, seed_hi};
    const int span = span_at[0];
    int done[2];
    const long total = path_ils(DIST_ARGS, SEG_PASS, path, at, piece, joint, span_at[1],
                                span_at[2], span, saved, saved_piece, saved, len, lcand, queue,
                                queued, keep, shared, gains, codes,
                                rkey, round, (uint)g, descend, my_kicks, window, walk,
                                span == NONE ? bridge_cut : span_cut,
                                0, step_budget, done);    /* no slack: `best` is never touched */

    /* runs: the pieces, and in the span the stretches between two joints, the span's
     * r-th going to its piece s + r's place; each position's run start in saved[] and
     * its place in saved_piece[], each place's growth, the span's joints in path order
     * (one work-item); then the staging */
    if (lid == 0) {
        int start = 0, place = piece[path[0]];
        for (int i = 0; i <= len; i++) {
            const int label = i < len ? piece[path[i]] : NONE;
            const int prev = i > 0 ? piece[path[i - 1]] : NONE;
            const int at_joint = label == span && prev == span && JOINT(path[i - 1], path[i]);
            const int cut = i == len || (i > 0 && (label != prev || at_joint));
            if (cut) {
                delta[copy + key[place]] = (i - start) - old_len[place];
                if (prev == span)
                    rejoin[rec + REJOIN_LENGTHS + place - span] = i - start;
            }
            if (at_joint) {    /* the outside path after piece j, forward when j's end is first */
                const int u = path[i - 1], v = path[i];
                rejoin[rec + REJOIN_JOINTS + place - span] = (joint[min(u, v)] - 1)
                                                             | ((u < v) << 16);
            }
            if (cut && i < len) {
                place = at_joint ? place + 1 : label;
                start = i;
            }
            if (i < len) {
                saved[i] = (ushort)start;
                saved_piece[i] = (ushort)place;
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = lid; i < len; i += WG) {
        staging[copy + base + i] = city[path[i]];
        staging_base[copy + base + i] = key[saved_piece[i]];
        staging_index[copy + base + i] = i - saved[i];
    }
    if (lid == 0) {
        gain[g] = total;
        work[2 * g] = done[0];
        work[2 * g + 1] = done[1];
    }
}

/* Exclusive prefix sums of delta (n ints) into shift, in chunks of SCAN_CHUNK: the
 * chunks' sums (pils_scan_sums, a work-group each), their prefix (pils_scan_chunks,
 * one work-item), then each chunk's own (pils_scan_apply, a work-group each). */
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
 * (ties to the smallest r) goes to cell_gain[c], and its staging, its pieces' growth
 * and, where the cell has a window, its span's record become copy 0's. */
__kernel void pils_pick(__global const long *restrict gain, const int copies,
                        __global const int *restrict first, const int n,
                        __global int *restrict staging, __global int *restrict staging_base,
                        __global int *restrict staging_index, __global int *restrict delta,
                        __global long *restrict cell_gain,
                        __global const int *restrict window_of, const int windows,
                        __global int *restrict rejoin, __local long *gains,
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
    const int w = windows ? window_of[c] : -1;
    const long rec = (long)w * copies * REJOIN_INTS;
    for (int t = lid; t < (w >= 0 && code ? REJOIN_INTS : 0); t += get_local_size(0))
        rejoin[rec + t] = rejoin[rec + (long)code * REJOIN_INTS + t];
    if (lid == 0)
        cell_gain[c] = best;
}

/* The round's windows (one work-item): window w, keys [w n / windows, (w + 1) n / windows),
 * goes to the cell of the city at its middle (window_of[cell] = w, each cell's first
 * window; window_of must be -1 for every cell before), its span record empty until that
 * cell's search writes it. */
__kernel void pils_windows(__global const int *restrict tour, const int n, const int offset,
                           const int windows, __global const int *restrict cell_of,
                           __global int *restrict window_of, const int copies,
                           __global int *restrict rejoin)
{
    for (int w = 0; w < windows; w++) {
        const int mid = (int)(((long)w * n / windows + (long)(w + 1) * n / windows) / 2) + offset;
        const int c = cell_of[tour[mid >= n ? mid - n : mid]];
        rejoin[(long)w * copies * REJOIN_INTS] = 0;
        if (window_of[c] < 0)
            window_of[c] = w;
    }
}

/* The spans' outside paths laid out (a work-group per window, after pils_place): the
 * tour holds, in key order, the span's runs in its pieces' places with the outside paths
 * between them as they were (blocks 2i: run i, 2i + 1: the path after piece i); the
 * runs stay in order and after run r comes the outside path of joint r, forward or turned
 * round.  `moved` (n ints) is scratch; `table` holds 4 ints a block.  rejoined[0] counts
 * the spans whose pieces now join other ends. */
__kernel void pils_rejoin(__global const int *restrict rejoin, const int copies,
                          __global const int *restrict shift, const int n, const int offset,
                          __global int *restrict tour, __global int *restrict moved,
                          __global int *restrict rejoined, __local int *table)
{
    __local int *src = table, *dst = table + 2 * SPAN_PIECES, *size = table + 4 * SPAN_PIECES,
        *turn = table + 6 * SPAN_PIECES;
    const int lid = get_local_id(0);
    const long rec = (long)get_group_id(0) * copies * REJOIN_INTS;
    const int joints = rejoin[rec], blocks = joints ? 2 * joints + 1 : 0;
    if (lid == 0 && joints) {
        for (int i = 0; i <= joints; i++) {
            const int k = rejoin[rec + REJOIN_KEYS + i];
            src[2 * i] = k + shift[k];
            size[2 * i] = rejoin[rec + REJOIN_LENGTHS + i];
        }
        for (int i = 0; i < joints; i++) {
            src[2 * i + 1] = src[2 * i] + size[2 * i];
            size[2 * i + 1] = src[2 * i + 2] - src[2 * i + 1];
        }
        int at = src[0] + size[0], changed = 0;
        dst[0] = src[0];
        turn[0] = 0;
        for (int r = 0; r < joints; r++) {
            const int code = rejoin[rec + REJOIN_JOINTS + r], b = 2 * (code & 0xFFFF) + 1;
            changed |= code != (r | (1 << 16));
            dst[b] = at;
            turn[b] = !(code >> 16);
            at += size[b];
            dst[2 * r + 2] = at;
            turn[2 * r + 2] = 0;
            at += size[2 * r + 2];
        }
        if (changed)
            atomic_inc(rejoined);
        else
            src[0] = -1;       /* the joints in order, none turned: nothing moves */
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int moves = blocks && src[0] >= 0;
    const int from = moves ? src[0] : 0, to = moves ? src[blocks - 1] + size[blocks - 1] : 0;
    for (int p = from + lid; p < to; p += get_local_size(0)) {
        int lo = 0, hi = blocks - 1;                 /* the last block starting at or before p */
        while (lo < hi) {
            const int mid = (lo + hi + 1) / 2;
            if (src[mid] <= p)
                lo = mid;
            else
                hi = mid - 1;
        }
        const int off = p - src[lo], q = dst[lo] + (turn[lo] ? size[lo] - 1 - off : off);
        const int pk = p + offset, qk = q + offset;
        moved[qk >= n ? qk - n : qk] = tour[pk >= n ? pk - n : pk];
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    for (int p = from + lid; p < to; p += get_local_size(0)) {
        const int pk = p + offset;
        tour[pk >= n ? pk - n : pk] = moved[pk >= n ? pk - n : pk];
    }
}

/* The round's totals (one work-group): total[0] = the sum of cell_gain[0 .. count) (the
 * round's gain), total[1] and total[2] the kicks and steps of its `groups` work-groups
 * (pils_round's work). */
__kernel void pils_round_gain(__global const long *restrict cell_gain, const int count,
                              __global const int *restrict work, const int groups,
                              __global long *restrict total, __local long *scratch)
{
    long sum = 0, kicks = 0, steps = 0;
    for (int c = get_local_id(0); c < count; c += get_local_size(0))
        sum += cell_gain[c];
    for (int g = get_local_id(0); g < groups; g += get_local_size(0)) {
        kicks += work[2 * g];
        steps += work[2 * g + 1];
    }
    sum = group_sum_long(scratch, sum);
    kicks = group_sum_long(scratch, kicks);
    steps = group_sum_long(scratch, steps);
    if (get_local_id(0) == 0) {
        total[0] = sum;
        total[1] = kicks;
        total[2] = steps;
    }
}
