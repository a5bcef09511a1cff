/* Local search over candidate lists on the device, many non-conflicting improving moves
 * per pass, with an active-city queue (don't-look bits), and iterated local search.
 *
 * Fosin et al. 2013 (section 4.1, Figure 3): work-items per (city, candidate) pair,
 * gains computed on the fly.  Beyond the paper (issue 3, item 3):
 *  - only the cities in the active queue are evaluated; a city leaves the queue when it
 *    has no improving move and re-enters when a tour edge of it or of one of its
 *    candidates changes (don't-look bits, Bentley; the paper, section 2, found them
 *    useless with one move per pass);
 *  - each queued city finds its best move; the moves are then claimed on blocks of
 *    CLAIM_BLOCK tour positions (largest gain, then smallest city wins a block), and
 *    every move that wins all the blocks it touches is applied in the same pass: the
 *    moves touch disjoint position ranges, so their gains add up exactly;
 *  - the reduction, the selection and the moves all run on the device.
 * The tour is an array plus a position array; every move is at most REVERSALS
 * reversals of position intervals inside its own range.
 *
 * One step = ls_eval -> ls_control -> ls_claim -> ls_resolve -> ls_apply.
 *
 * Build defines: METRIC (distance.h), M (candidates per city), USE_2OPT, USE_OROPT,
 * USE_3OPT, USE_LK, LK_DEPTH (most 2-opt steps of a chain), LK_BREADTH (alternatives
 * tried for a chain's second step), LK_STEP_M (candidates a chain's later steps scan,
 * at most M), APPLY_GROUP (ls_apply's work-group size).
 * Move `sub`s evaluated by work-item (a, slot) with c = cand[a][slot], one header per
 * kind of move:
 *   0, 1   2-opt (ls_twoopt.h)
 *   2..13  Or-opt: a segment of 1..3 cities moved next to c (ls_oropt.h)
 *   16+    3-opt (Fosin et al., section 4.2, Figure 4; ls_threeopt.h)
 *   448+   Lin-Kernighan chain (ls_lk.h)
 * A move is identified by code = (a * M + slot) * CODE_STRIDE + sub (ls_move.h).  The
 * double-bridge kick is in ls_kick.h, the claiming and applying of moves in ls_apply.h.
 */
#include "distance.h"
#include "reduce.h"

#ifndef M
#define M 10
#endif
#ifndef USE_2OPT
#define USE_2OPT 1
#endif
#ifndef USE_OROPT
#define USE_OROPT 0
#endif
#ifndef USE_3OPT
#define USE_3OPT 0
#endif
#ifndef USE_LK
#define USE_LK 0
#endif
#ifndef LK_DEPTH
#define LK_DEPTH 6
#endif
#ifndef LK_BREADTH
#define LK_BREADTH 1
#endif
#ifndef LK_STEP_M
#define LK_STEP_M 10
#endif
#ifndef APPLY_GROUP
#define APPLY_GROUP 256
#endif

/* state[]: the search's bookkeeping (long), read by the host a few words at a time; the
 * host passes the words' positions S_* (tspcl/solvers/localsearch.py StateWord, which
 * says what each holds). */

#define MODE_NONE 0
#define MODE_IMPROVE 1
#define MODE_KICK 2

#include "ls_move.h"
#include "ls_twoopt.h"
#include "ls_oropt.h"
#include "ls_threeopt.h"
#include "ls_lk.h"
#include "ls_kick.h"
#include "ls_apply.h"

/* Gain of move `sub` from city a toward candidate c, or NO_GAIN when invalid;
 * when mv != 0 also describe it (reversals and range). */
inline long move_gain(DIST_PARAMS, __global const int *restrict tour,
                      __global const int *restrict pos, __global const int *restrict cand,
                      const int sub, const int a, const int c, move_t *mv)
{
    if (a == c)
        return NO_GAIN;
#if USE_LK
    if (sub >= SUB_LK)
        return lk_move(DIST_ARGS, tour, pos, cand, sub - SUB_LK, a, c, mv);
#endif
    if (sub >= SUB_3OPT)
        return three_opt_move(DIST_ARGS, tour, pos, cand, sub - SUB_3OPT, a, c, mv);
    if (sub < SUB_OROPT)
        return two_opt_move(DIST_ARGS, tour, pos, sub, a, c, mv);
    return or_opt_move(DIST_ARGS, tour, pos, sub - SUB_OROPT, a, c, mv);
}

/* Best move of work-item (a, slot, side) over every enabled kind, into (bg, bc).  The
 * 2-opt and Or-opt gains are those of move_gain (subs 0..13), computed together from one
 * read of the tour around a and c (pair_view): every one of them adds the edge (a, c).
 * With sides = 2, side 0 takes them and the 3-opt / chain moves of direction +1, side 1
 * those of direction -1 (sides = 1: side 0 takes all). */
inline void best_of_pair(DIST_PARAMS, __global const int *restrict tour,
                         __global const int *restrict pos, __global const int *restrict cand,
                         const int a, const int slot, const int sides, const int side,
                         long *bg, long *bc)
{
    const int c = cand[a * M + slot];
    if (a == c)
        return;
    const pair_t pr = pair_view(DIST_ARGS, tour, pos, a, c, (long)a * M + slot);
#if USE_2OPT
    if (side == 0)
        two_opt_best(DIST_ARGS, &pr, bg, bc);
#endif
#if USE_OROPT
    if (side == 0)
        or_opt_best(DIST_ARGS, &pr, bg, bc);
#endif
#if USE_3OPT
    three_opt_best(DIST_ARGS, tour, pos, cand, &pr, sides, side, bg, bc);
#endif
#if USE_LK
    lk_best(DIST_ARGS, tour, pos, cand, &pr, sides, side, bg, bc);
#endif
}

/* Evaluation pass over the active queue: work-group = C = wg / (M * sides) cities,
 * work-item = (city, side, slot); each city's best move goes to ent_gain/ent_code[queue
 * index] and the city leaves the queue (ls_apply puts it back if it keeps an improving
 * move).  Each work-group leaves its best (gain, code) in group_gain/group_code.  Also
 * resets the claim blocks for this step. */
__kernel void ls_eval(DIST_PARAMS, __global const int *restrict cand,
                      __global const int *restrict tour, __global const int *restrict pos,
                      __global const long *restrict state, __global const int *restrict queue,
                      __global const int *restrict qcount, __global int *restrict active,
                      __global long *restrict ent_gain, __global long *restrict ent_code,
                      __global long *restrict group_gain, __global long *restrict group_code,
                      __global int *restrict block_gain, __global int *restrict block_id,
                      const int nblocks, const int sides, __local long *lg,
                      __local long *lc)
{
    const int city_items = M * sides, lid = get_local_id(0), C = get_local_size(0) / city_items;
    for (int b = get_global_id(0); b < nblocks; b += get_global_size(0)) {
        block_gain[b] = 0;
        block_id[b] = INT_MAX;
    }
    if (state[S_DONE])
        return;
    const int parity = (int)(state[S_FLAGS] & 1), qlen = qcount[parity];
    __global const int *q = queue + (long)parity * n;
    const int local_city = lid / city_items, item = lid % city_items;
    const int slot = item % M, side = item / M;
    long gbest = NO_GAIN, gcode = LONG_MAX;
    for (int base = get_group_id(0) * C; base < qlen; base += get_num_groups(0) * C) {
        const int idx = base + local_city;
        long bg = NO_GAIN, bc = LONG_MAX;
        if (local_city < C && idx < qlen)
            best_of_pair(DIST_ARGS, tour, pos, cand, q[idx], slot, sides, side, &bg, &bc);
        lg[lid] = bg;
        lc[lid] = bc;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (local_city < C && idx < qlen && item == 0) {
            for (int s = 1; s < city_items; s++)
                if (better(lg[lid + s], lc[lid + s], bg, bc)) {
                    bg = lg[lid + s];
                    bc = lc[lid + s];
                }
            ent_gain[idx] = bg;
            ent_code[idx] = bc;
            active[q[idx]] = 0;
            if (better(bg, bc, gbest, gcode)) {
                gbest = bg;
                gcode = bc;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    group_best_gain_long(lg, lc, &gbest, &gcode);
    if (lid == 0) {
        group_gain[get_group_id(0)] = gbest;
        group_code[get_group_id(0)] = gcode;
    }
}

inline int entry_city(const long code) { return (int)(code / CODE_STRIDE / M); }

/* Gain and description of the move with code `code` (see the header). */
inline long move_of_code(DIST_PARAMS, __global const int *restrict tour,
                         __global const int *restrict pos, __global const int *restrict cand,
                         const long code, move_t *mv)
{
    const int item = (int)(code / CODE_STRIDE);
    return move_gain(DIST_ARGS, tour, pos, cand, (int)(code % CODE_STRIDE), item / M, cand[item], mv);
}

/* One work-group: fold in the last step's applied moves, reduce the group bests, then
 * decide this step.  With an improving move somewhere the step claims and applies
 * moves; at a local optimum the best tour is saved (or, with acceptance "better", the
 * walk returns to it), then a kick follows while the budget lasts (Fosin et al. 2013,
 * Algorithm 1, lines 4-10).  A plain local search (no kick budget) that reached its
 * optimum on a partial queue re-checks every city once before it stops, so that its
 * result is a local optimum of the whole neighbourhood, unless its start queue is
 * trusted (FLAGS bit 3: the caller queued every city that can have an improving move). */
__kernel void ls_control(DIST_PARAMS, __global const int *restrict cand,
                         __global int *restrict tour, __global int *restrict pos,
                         __global int *restrict best_tour,
                         __global const long *restrict group_gain,
                         __global const long *restrict group_code, const int groups,
                         const int apply_groups, __global long *restrict state,
                         __global int *restrict move, __global int *restrict queue,
                         __global int *restrict qcount, __global int *restrict active,
                         __global const long *restrict ent_gain,
                         __global const long *restrict ent_code, const int single,
                         __local long *lg, __local long *lc)
{
    const int lid = get_local_id(0), wg = get_local_size(0);
    long bg = NO_GAIN, bc = LONG_MAX;
    for (int g = lid; g < groups; g += wg)
        if (better(group_gain[g], group_code[g], bg, bc)) {
            bg = group_gain[g];
            bc = group_code[g];
        }
    group_best_gain_long(lg, lc, &bg, &bc);
    /* lid 0 decides; the rest of the group learns the decision through local memory */
    __local int recheck_all, l_parity, l_mode, l_save, l_restore;
    if (lid == 0) {
        recheck_all = 0;
        for (int g = 0; g < apply_groups; g++) {
            state[S_CUR_LEN] -= state[S_PENDING + 2 * g];
            state[S_MOVES] += state[S_PENDING + 2 * g + 1];
            state[S_PENDING + 2 * g] = 0;
            state[S_PENDING + 2 * g + 1] = 0;
        }
        state[S_SAVE] = 0;
        state[S_RESTORE] = 0;
        state[S_MODE] = MODE_NONE;
    }
    if (state[S_DONE])
        return;
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        const long flags = state[S_FLAGS];
        const int parity = (int)((flags & 1) ^ 1), full = (int)((flags >> 1) & 1);
        const int trusted = (int)((flags >> 3) & 1);
        state[S_FLAGS] = parity | (flags & 12);
        qcount[parity] = 0;
        state[S_STEPS] += 1;
        if (bg > 0) {
            state[S_MODE] = MODE_IMPROVE;
            state[S_BEST_CODE] = bc;
        } else if (state[S_BUDGET] == 0 && !full && !trusted) {
            recheck_all = 1;
            state[S_FLAGS] = parity | 2 | (flags & 12);
            qcount[parity] = n;
        } else {
            const long cur = state[S_CUR_LEN], best = state[S_BEST_LEN];
            if (cur < best) {
                state[S_BEST_LEN] = cur;
                state[S_SAVE] = 1;
            } else if (state[S_ACCEPT] >= 0 && cur > best + best * state[S_ACCEPT] / 1000000) {
                state[S_RESTORE] = 1;            /* kick from the best next step */
                state[S_CUR_LEN] = best;
            }
            if (state[S_RESTORE]) {
                /* the queue stays empty: the best tour is a local optimum */
            } else if (state[S_KICKS] >= state[S_BUDGET] || n < 8) {
                state[S_DONE] = 1;
            } else {
                move_t mv = no_move();
                const rng_key_t key = {(uint)state[S_SEED_LO], (uint)state[S_SEED_HI]};
                state[S_CUR_LEN] += double_bridge(DIST_ARGS, tour, key, (uint)state[S_KICKS],
                                                  (int)state[S_KICK_WINDOW], &mv);
                state[S_KICKS] += 1;
                state[S_MODE] = MODE_KICK;
                for (int r = 0; r < KICK_REVERSALS; r++) {
                    move[2 * r] = mv.start[r];
                    move[2 * r + 1] = mv.len[r];
                }
            }
        }
        l_parity = parity;
        l_mode = (int)state[S_MODE];
        l_save = (int)state[S_SAVE];
        l_restore = (int)state[S_RESTORE];
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    const int parity = l_parity, mode = l_mode;
    if (recheck_all)
        for (int c = lid; c < n; c += wg) {
            active[c] = 1;
            queue[(long)parity * n + c] = c;
        }
    if (!single)
        return;
    /* single: this work-group also does the step's copies and applies its one move or
     * kick (ILS after the first kick: two launches per step instead of five). */
    __local int ends[4 * REVERSALS];
    __local move_t lmv;
    __global int *next = queue + (long)parity * n, *next_count = qcount + parity;
    if (l_save)
        for (int p = lid; p < n; p += wg)
            best_tour[p] = tour[p];
    if (l_restore)
        for (int p = lid; p < n; p += wg) {
            const int c = best_tour[p];
            tour[p] = c;
            pos[c] = p;
        }
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (mode == MODE_IMPROVE) {
        const int qlen = qcount[parity ^ 1];
        for (int idx = lid; idx < qlen; idx += wg)      /* improving cities stay queued */
            if (ent_gain[idx] > 0)
                activate(entry_city(ent_code[idx]), active, next, next_count);
    }
    if (lid == 0) {
        move_t mv = no_move();
        if (mode == MODE_IMPROVE) {
            state[S_CUR_LEN] -= move_of_code(DIST_ARGS, tour, pos, cand, state[S_BEST_CODE], &mv);
            state[S_MOVES] += 1;
        } else if (mode == MODE_KICK)
            mv = stored_move(move, KICK_REVERSALS);
        lmv = mv;
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (mode != MODE_NONE) {
        const move_t mv = lmv;
        apply_move(n, &mv, 1, cand, tour, pos, active, next, next_count, ends);
    }
}

/* The copies asked by ls_control (save / restore), then: every improving queued move
 * that is short enough (or the step's best) raises the gain on the blocks it touches.
 * claim_first/claim_count[idx] get its touched positions (count 0: not taking part) and
 * ent_move[idx] its reversals: decoded here, while the tour is the one it was found on
 * (a Lin-Kernighan chain reads cities outside its own range). */
__kernel void ls_claim(DIST_PARAMS, __global const int *restrict cand,
                       __global int *restrict tour, __global int *restrict pos,
                       __global int *restrict best_tour, __global const long *restrict state,
                       __global const int *restrict qcount, __global const long *restrict ent_gain,
                       __global const long *restrict ent_code, __global int *restrict claim_first,
                       __global int *restrict claim_count, __global int *restrict ent_move,
                       __global int *restrict block_gain, __global int *restrict block_id)
{
    const int gid = get_global_id(0), gsize = get_global_size(0);
    if (state[S_SAVE])
        for (int p = gid; p < n; p += gsize)
            best_tour[p] = tour[p];
    if (state[S_RESTORE])
        for (int p = gid; p < n; p += gsize) {
            const int c = best_tour[p];
            tour[p] = c;
            pos[c] = p;
        }
    if (state[S_MODE] != MODE_IMPROVE)
        return;
    const int qlen = qcount[(state[S_FLAGS] & 1) ^ 1];
    for (int idx = gid; idx < qlen; idx += gsize) {
        claim_count[idx] = 0;
        const long g = ent_gain[idx], code = ent_code[idx];
        if (g <= 0 || ((state[S_FLAGS] & 4) && code != state[S_BEST_CODE]))
            continue;
        move_t mv = no_move();
        move_of_code(DIST_ARGS, tour, pos, cand, code, &mv);
        const int first = wrap(mv.lo - 1, n), count = min(mv.span + 2, n);
        if (count > MAX_CLAIM_BLOCKS * CLAIM_BLOCK && code != state[S_BEST_CODE])
            continue;
        claim_first[idx] = first;
        claim_count[idx] = count;
        for (int r = 0; r < REVERSALS; r++) {
            ent_move[(long)idx * MOVE_WORDS + 2 * r] = mv.start[r];
            ent_move[(long)idx * MOVE_WORDS + 2 * r + 1] = mv.len[r];
        }
        claim_blocks(0, first, count, n, block_gain, block_id, (int)min(g, (long)INT_MAX), 0);
    }
}

/* Moves that hold the top gain on all their blocks bid their city for them. */
__kernel void ls_resolve(const int n, __global const long *restrict state,
                         __global const int *restrict qcount, __global const long *restrict ent_gain,
                         __global const long *restrict ent_code, __global int *restrict claim_first,
                         __global int *restrict claim_count, __global int *restrict block_gain,
                         __global int *restrict block_id)
{
    if (state[S_DONE] || state[S_MODE] != MODE_IMPROVE)
        return;
    const int qlen = qcount[(state[S_FLAGS] & 1) ^ 1];
    for (int idx = get_global_id(0); idx < qlen; idx += get_global_size(0)) {
        const int count = claim_count[idx];
        if (count == 0)
            continue;
        const int g32 = (int)min(ent_gain[idx], (long)INT_MAX), a = entry_city(ent_code[idx]);
        if (claim_blocks(1, claim_first[idx], count, n, block_gain, block_id, g32, a))
            claim_blocks(2, claim_first[idx], count, n, block_gain, block_id, g32, a);
        else
            claim_count[idx] = 0;
    }
}

/* One work-group per move: the winners of every block they touch are applied (from
 * ent_move, inside their claimed range); improving moves that lost stay queued.  Group 0
 * applies this step's kick.  Each group leaves its applied gain and move count in
 * state[S_PENDING + 2 * group ...]. */
__kernel void ls_apply(const int n, __global const int *restrict cand,
                       __global int *restrict tour, __global int *restrict pos,
                       __global long *restrict state, __global const int *restrict move,
                       __global const int *restrict queue, __global int *restrict qcount,
                       __global int *restrict active, __global const long *restrict ent_gain,
                       __global const long *restrict ent_code,
                       __global const int *restrict claim_first,
                       __global const int *restrict claim_count,
                       __global const int *restrict ent_move,
                       __global const int *restrict block_id)
{
    __local int winners[APPLY_GROUP];
    __local int nwin;
    __local int ends[4 * REVERSALS];
    __local move_t lmv;
    const int lid = get_local_id(0), wg = get_local_size(0), group = get_group_id(0);
    const long mode = state[S_MODE];
    if (state[S_DONE] || mode == MODE_NONE)
        return;
    const int parity = (int)(state[S_FLAGS] & 1);
    __global int *next = (__global int *)queue + (long)parity * n;
    __global int *next_count = qcount + parity;
    if (mode == MODE_KICK) {
        if (group == 0) {
            const move_t mv = stored_move(move, KICK_REVERSALS);
            apply_move(n, &mv, 1, cand, tour, pos, active, next, next_count, ends);
        }
        return;
    }
    const int qlen = qcount[parity ^ 1];
    long applied = 0, moves = 0;
    for (int base = group * wg; base < qlen; base += get_num_groups(0) * wg) {
        if (lid == 0)
            nwin = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        const int idx = base + lid;
        if (idx < qlen && ent_gain[idx] > 0) {
            const int a = entry_city(ent_code[idx]);
            if (claim_count[idx] > 0 &&
                claim_blocks(3, claim_first[idx], claim_count[idx], n, 0, (__global int *)block_id, 0, a))
                winners[atomic_inc(&nwin)] = idx;
            else
                activate(a, active, next, next_count);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int w = 0; w < nwin; w++) {
            if (lid == 0) {
                lmv = stored_move(ent_move + (long)winners[w] * MOVE_WORDS, REVERSALS);
                applied += ent_gain[winners[w]];
                moves += 1;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            const move_t mv = lmv;
            apply_move(n, &mv, 0, cand, tour, pos, active, next, next_count, ends);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        state[S_PENDING + 2 * group] = applied;
        state[S_PENDING + 2 * group + 1] = moves;
    }
}
