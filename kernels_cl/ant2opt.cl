/* 2-opt local search on every ant's tour, one work-group per ant (Skinderowicz 2020,
 * section 5.7: Bentley's 2-opt over the nearest neighbours (32) with don't-look bits,
 * groups of work-items searching in parallel, the whole work-group reversing the
 * chosen segment).
 *
 * The cities still to look at wait in a queue (Bentley's don't-look bits, kept as a
 * queue so that no work-item idles on a resting city).  The group takes C = p / SPLIT
 * of them at a time: SPLIT neighbouring work-items share a city, each evaluating every
 * SPLIT-th of its M candidates (the paper gives a city a warp), and a city tries both
 * 2-opt moves that join it to a candidate c (the successor and the predecessor
 * variants, as tspcl's local search does) whose new edge (a, c) is shorter than the
 * tour edge of a that the move removes: Bentley's neighbour-list rule, which every
 * improving move meets at one of its ends at least, so the lists are read only up to
 * the first candidate as far as a's farther tour neighbour (they are sorted by
 * distance).  Each city keeps its best move; the moves are then applied one after
 * another in queue order, each one whose two removed edges are still in the tour the
 * earlier ones left, both the same way round (its gain is then the same), so one
 * evaluation pays for several moves.  A move reverses the shorter side of the cyclic
 * tour and queues its four ends; a city whose move had to be skipped is queued again;
 * a city that found nothing rests.  When the queue runs dry after a move, every city is
 * queued once more; the search stops when such a full pass applies no move, so the tour
 * is 2-opt optimal within the lists and the rule above (Bentley's bits alone would miss
 * the moves that a change elsewhere opened).
 *
 * With BEST_MOVE (the paper's round, section 5.7: "if any group succeeds, the
 * improvement is applied ... by all groups"), only the chunk's best move is applied (the
 * largest gain, ties to the lower key); the other cities that found a move go back to
 * the queue's head in their order, to look again first, and every queueing of all cities
 * is in tour order, so the search works along the tour as the authors' code does, whose
 * warps take the first cities with clear bits from the tour's start each round.
 *
 * Build with -D M=<candidates> -D SPLIT=<work-items per city, a power of two dividing
 * the work-group size> -D LOCAL_TOUR=<1: the tour, its positions and the queue live in
 * local memory as 16-bit cities (n < 65536 and 6n bytes to spare), 0: in global memory>
 * -D BEST_MOVE=<1: the chunk's best move a round, 0: every still-valid one>.
 */
#include "tour.h"

#if !defined(M) || !defined(SPLIT) || !defined(LOCAL_TOUR) || !defined(BEST_MOVE)
#error "build with -D M=<candidates per city> -D SPLIT=<work-items per city> -D LOCAL_TOUR=<0|1> -D BEST_MOVE=<0|1>"
#endif

#if LOCAL_TOUR
#define TOUR_SPACE __local
#define TOUR_FENCE CLK_LOCAL_MEM_FENCE
typedef ushort city_t;
#else
#define TOUR_SPACE __global
#define TOUR_FENCE (CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)
typedef int city_t;
#endif

DEFINE_GROUP_REVERSE(reverse_path, TOUR_SPACE, city_t)

#define AT(p) ((int)tour[(p) >= n ? (p) - n : (p)])
#define NEXT(p) ((p) + 1 == n ? 0 : (p) + 1)
#define QUEUED(c) ((queued[(c) >> 5] >> ((c) & 31)) & 1u)

/* Queue city c at the tail unless it waits already (one work-item at a time). */
inline void enqueue(TOUR_SPACE city_t *queue, __local uint *queued, __local int *tail_count,
                    const int head, const int n, const int c)
{
    if (QUEUED(c))
        return;
    queued[c >> 5] |= 1u << (c & 31);
    const int at = head + *tail_count;
    queue[at >= n ? at - n : at] = (city_t)c;
    *tail_count += 1;
}

/* Put city c back at the head (one work-item at a time; c was taken this round, so it
 * is not queued and the queue has its place). */
inline void requeue_front(TOUR_SPACE city_t *queue, __local uint *queued, __local int *head,
                          __local int *count, const int n, const int c)
{
    queued[c >> 5] |= 1u << (c & 31);
    *head = *head == 0 ? n - 1 : *head - 1;
    queue[*head] = (city_t)c;
    *count += 1;
}

/* The lowest slot above `after` whose bit is set, -1 when none (the same for every
 * work-item: one flat loop over a chunk's moves, which PoCL 5 builds). */
inline int next_slot(__local const uint *bits, const int words, const int after)
{
    for (int w = (after + 1) >> 5; w < words; w++) {
        const uint rest = bits[w] & (w == (after + 1) >> 5 ? ~0u << ((after + 1) & 31) : ~0u);
        if (rest)
            return w * 32 + 31 - clz(rest & (0u - rest));
    }
    return -1;
}

/* The found slot of the largest gain, ties to the lower key; -1 when none. */
inline int best_slot(__local const uint *found, const int words, __local const long *r_gain,
                     __local const int *r_key)
{
    int keep = -1;
    for (int s = next_slot(found, words, -1); s >= 0; s = next_slot(found, words, s))
        if (keep < 0 || r_gain[s * SPLIT] > r_gain[keep * SPLIT] ||
            (r_gain[s * SPLIT] == r_gain[keep * SPLIT] && r_key[s * SPLIT] < r_key[keep * SPLIT]))
            keep = s;
    return keep;
}

/* Apply the move found in the chunk's slot s, by the whole work-group: one whose two
 * removed edges are still in the tour, both the same way round, reverses the shorter side
 * and queues its four ends; a stale one queues its city again. */
inline void apply_move(const int s, const int n, TOUR_SPACE city_t *tour, TOUR_SPACE city_t *pos,
                       TOUR_SPACE city_t *queue, __local uint *queued, __local const int *r_key,
                       __local const int4 *r_ends, __local int *l_move, __local int4 *l_ends,
                       __local int *l_head, __local int *l_count, __local int *l_moved)
{
    const int lid = get_local_id(0);
    if (lid == 0) {  /* l_move: still valid, the path from .. to to reverse, the city */
        const int k = r_key[s * SPLIT];
        const int4 e = r_ends[s * SPLIT + ((k >> 1) % M) % SPLIT];  /* its lane's */
        const int p1 = pos[e.x], p2 = pos[e.y], q1 = pos[e.z], q2 = pos[e.w];
        const int ahead = p2 == NEXT(p1) && q2 == NEXT(q1);  /* x2 .. y1 */
        const int behind = p1 == NEXT(p2) && q1 == NEXT(q2);  /* x1 .. y2 */
        l_move[0] = ahead || behind;
        l_move[1] = ahead ? p2 : p1;
        l_move[2] = ahead ? q1 : q2;
        l_move[3] = k / (2 * M);
        *l_ends = e;
    }
    barrier(TOUR_FENCE);
    {  /* the path or the rest of the tour, whichever is shorter; nothing for a stale move
        * (one call outside any if: PoCL 5 fails to build a loop under an if inside a loop
        * with barriers) */
        const int from = l_move[1], to = l_move[2];
        const int inner = to - from + (to < from ? n : 0) + 1;
        const int shorter = inner <= n - inner;
        reverse_path(tour, pos, n, shorter ? from : NEXT(to),
                     l_move[0] ? (shorter ? inner : n - inner) : 0);
    }
    if (lid == get_local_size(0) - 1) {  /* the last work-item, idle in most reversals, queues */
        const int4 e = *l_ends;
        if (l_move[0]) {  /* the four ends */
            enqueue(queue, queued, l_count, *l_head, n, e.x);
            enqueue(queue, queued, l_count, *l_head, n, e.y);
            enqueue(queue, queued, l_count, *l_head, n, e.z);
            enqueue(queue, queued, l_count, *l_head, n, e.w);
            *l_moved = 1;
        } else {  /* an earlier move changed it: the city looks again later */
            enqueue(queue, queued, l_count, *l_head, n, l_move[3]);
        }
    }
    barrier(TOUR_FENCE);
}

/* Every city queued: in tour order with BEST_MOVE, else in index order. */
inline void queue_all(TOUR_SPACE city_t *queue, __local uint *queued, TOUR_SPACE const city_t *tour,
                      const int n)
{
    for (int k = get_local_id(0); k < n; k += get_local_size(0))
        queue[k] = BEST_MOVE ? tour[k] : (city_t)k;
    for (int w = get_local_id(0); w < (n + 31) / 32; w += get_local_size(0))
        queued[w] = ~0u;
}

__kernel void ant_two_opt(DIST_PARAMS, __global const int *restrict cand,
                          __global const int *restrict cand_dist,
                          __global int *restrict tours, __global int *restrict work,
                          __global long *restrict lengths, __local city_t *l_work,
                          __local uint *queued, __local long *r_gain, __local int *r_key,
                          __local int4 *r_ends, __local uint *found)
{
    const int lid = get_local_id(0), p = get_local_size(0);
    const int per_chunk = p / SPLIT, slot = lid / SPLIT, lane = lid % SPLIT;
    const int words = (per_chunk + 31) / 32, t = (int)group_index();
    __global int *g_tour = tours + (long)t * n;
    __local int l_head, l_count, l_moved, l_done, l_move[4];
    __local int4 l_ends;
#if LOCAL_TOUR
    __local city_t *tour = l_work, *pos = l_work + n, *queue = l_work + 2 * n;
    for (int k = lid; k < n; k += p)
        tour[k] = (city_t)g_tour[k];
    barrier(CLK_LOCAL_MEM_FENCE);
#else
    __global int *tour = g_tour, *pos = work + 2L * t * n, *queue = pos + n;
#endif
    for (int k = lid; k < n; k += p)
        pos[tour[k]] = (city_t)k;
    queue_all(queue, queued, tour, n);
    for (int w = lid; w < words; w += p)
        found[w] = 0u;
    if (lid == 0) {
        l_head = 0;
        l_count = n;
        l_moved = 0;  /* a move was applied since every city was queued */
        l_done = n < 5;
    }
    barrier(TOUR_FENCE);
    while (!l_done) {
        const int take = min(per_chunk, l_count), head = l_head;
        const int a = slot < take ? (int)queue[head + slot >= n ? head + slot - n : head + slot] : -1;
        barrier(TOUR_FENCE);  /* all have read the head */
        if (lane == 0 && a >= 0)
            atomic_and(&queued[a >> 5], ~(1u << (a & 31)));
        if (lid == 0) {
            l_head = head + take >= n ? head + take - n : head + take;
            l_count -= take;
        }
        long best = 0;
        int key = INT_MAX;
        int4 ends = (int4)(0);  /* (x1, x2, y1, y2): remove (x1, x2), (y1, y2); join x1-y1, x2-y2 */
        if (a >= 0) {
            const int pa = pos[a];
            const int succ_a = AT(pa + 1), pred_a = AT(pa + n - 1);
            const int d_succ = DIST(a, succ_a), d_pred = DIST(pred_a, a);
            const int reach = max(d_succ, d_pred);
            for (int s = lane; s < M; s += SPLIT) {
                const int d_ac = cand_dist[(long)a * M + s];
                if (d_ac >= reach)  /* the lists are sorted: no closer candidate follows */
                    break;
                const int c = cand[(long)a * M + s];
                if (c == a)
                    continue;
                const int pc = pos[c];
                /* successor variant: remove (a, succ a), (c, succ c); add (a, c), (succ a, succ c) */
                const int succ_c = AT(pc + 1);
                if (d_ac < d_succ && succ_a != c && succ_c != a) {
                    const long g = (long)d_succ + DIST(c, succ_c) - d_ac - DIST(succ_a, succ_c);
                    if (g > best) {
                        best = g;
                        key = (a * M + s) * 2;
                        ends = (int4)(a, succ_a, c, succ_c);
                    }
                }
                /* predecessor variant: remove (pred a, a), (pred c, c); add (a, c), (pred a, pred c) */
                const int pred_c = AT(pc + n - 1);
                if (d_ac < d_pred && pred_a != c && pred_c != a) {
                    const long g = (long)d_pred + DIST(pred_c, c) - d_ac - DIST(pred_a, pred_c);
                    if (g > best) {
                        best = g;
                        key = (a * M + s) * 2 + 1;
                        ends = (int4)(pred_a, a, pred_c, c);
                    }
                }
            }
        }
        r_gain[lid] = best;
        r_key[lid] = key;
        r_ends[lid] = ends;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int h = 1; h < SPLIT; h <<= 1) {  /* each city's best move, ties to the lower key */
            if ((lid & (2 * h - 1)) == 0 && (r_gain[lid + h] > r_gain[lid] ||
                                              (r_gain[lid + h] == r_gain[lid] && r_key[lid + h] < r_key[lid]))) {
                r_gain[lid] = r_gain[lid + h];
                r_key[lid] = r_key[lid + h];
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        /* the slot's bit, from its reduced gain, by each of its work-items (the same bit
         * the same way): with `lane == 0 && r_gain[lid] > 0`, the reduction's own test on
         * both sides of the barrier above, PoCL 3 and PoCL 5 built code that never set
         * it when SPLIT = 2, so no move was applied (the H100 was right); by the last
         * lane alone the H100 took 1.3-1.6x as long for the round (docs/notebook/mmas.md) */
        if (r_gain[slot * SPLIT] > 0)
            atomic_or(&found[slot >> 5], 1u << (slot & 31));
        barrier(CLK_LOCAL_MEM_FENCE);
#if BEST_MOVE
        /* the paper's round: the chunk's best move alone (every work-item finds the same);
         * the other cities that found one go back to the queue's head, in order, by
         * work-item 0 (a loop of no trip for the others: PoCL 5 fails to build a loop
         * under `if (lid == 0)` here); then that move, if any */
        const int only = best_slot(found, words, r_gain, r_key);
        for (int s = lid == 0 ? take - 1 : -1; s >= 0; s--)
            if (s != only && ((found[s >> 5] >> (s & 31)) & 1u))
                requeue_front(queue, queued, &l_head, &l_count, n, r_key[s * SPLIT] / (2 * M));
        barrier(TOUR_FENCE);
        if (only >= 0)
            apply_move(only, n, tour, pos, queue, queued, r_key, r_ends, l_move, &l_ends, &l_head,
                       &l_count, &l_moved);
#else
        for (int s = next_slot(found, words, -1); s >= 0; s = next_slot(found, words, s))
            apply_move(s, n, tour, pos, queue, queued, r_key, r_ends, l_move, &l_ends, &l_head,
                       &l_count, &l_moved);
#endif
        for (int w = lid; w < words; w += p)
            found[w] = 0u;
        /* the queue ran dry: queue every city again after a move, else stop (the
         * barriers outside any if: PoCL 5 fails to build a barrier under one) */
        const int dry = l_count == 0, moved = l_moved;
        barrier(TOUR_FENCE);  /* all have read them */
        if (dry && moved)
            queue_all(queue, queued, tour, n);
        if (dry && lid == 0) {
            l_done = !moved;
            l_head = 0;
            l_count = moved ? n : 0;
            l_moved = 0;
        }
        barrier(TOUR_FENCE);
    }
#if LOCAL_TOUR
    for (int k = lid; k < n; k += p)
        g_tour[k] = tour[k];
    barrier(CLK_GLOBAL_MEM_FENCE);
#endif
    const long length = group_tour_length(DIST_ARGS, g_tour, r_gain);
    if (lid == 0)
        lengths[t] = length;
}
