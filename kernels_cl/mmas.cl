/* The MAX-MIN Ant System's pheromone side (Skinderowicz 2020, section 2.1 and Fig. 1;
 * section 4.4 and Fig. 9 for the kernels): choice_info = tau^alpha * eta^beta for every
 * edge once per iteration (the construction reads only it, and WRS its reciprocal),
 * evaporation tau = max(rho * tau, tau_min) over the whole matrix, deposit
 * tau = min(tau + 1/L, tau_max) along one tour; the limits follow the global best
 * (Stuetzle and Hoos: tau_max = 1 / ((1 - rho) L_gb), tau_min from p_best).  No atomics:
 * every cell has one writer.  rho is the fraction of pheromone kept, as in the paper.
 *
 * -D WEIGHTS=W_CANDIDATES -D CL=<cl> (beyond the paper) keeps tau, eta^beta and the
 * weights for the candidate edges only, cell i * CL + s for the s-th candidate of i; an
 * edge outside the lists keeps tau_min (kernels_cl/aco.cl computes its weight).
 */
#include "distance.h"
#include "best.h"

/* The host passes the stores' codes W_MATRIX, W_CANDIDATES (tspcl/solvers/mmas.py
 * STORES), the store WEIGHTS, the deposit sources SOURCE_* (SOURCES) and the status
 * words B_* (tspcl/solvers/best.py BestWord). */
#if !defined(W_MATRIX) || !defined(W_CANDIDATES)
#error "the host passes the stores' codes W_MATRIX, W_CANDIDATES"
#endif
#if WEIGHTS == W_CANDIDATES
#define WIDTH CL
#else
#define WIDTH n
#endif

/* The cell of edge (i, j), or -1 when the store has none (j not a candidate of i). */
inline long edge_cell(const int n, __global const int *restrict cand, const int i, const int j)
{
#if WEIGHTS == W_CANDIDATES
    for (int s = 0; s < CL; s++)
        if (cand[(long)i * CL + s] == j)
            return (long)i * CL + s;
    return -1;
#else
    return (long)i * n + j;
#endif
}

/* limits (double): tau_min, tau_max */

/* eta^beta of every stored edge (eta = 1/d, d = 0 counted as 0.5), once per run. */
__kernel void mmas_heuristic(DIST_PARAMS, __global const int *restrict cand, const float beta,
                             __global float *restrict heur)
{
    const ulong id = get_global_id(0), cells = (ulong)n * WIDTH;
    if (id >= cells)
        return;
    const int i = (int)(id / WIDTH);
#if WEIGHTS == W_CANDIDATES
    const int j = cand[id];
#else
    const int j = (int)(id % n);
#endif
    const float d = i == j ? 0.0f : (float)max(DIST(i, j), 0);
    heur[id] = i == j ? 0.0f : pow(1.0f / max(d, 0.5f), beta);
}

inline void set_weight(const ulong cell, const float tau, const float alpha,
                       __global const float *restrict heur, __global float *restrict weight,
                       __global float *restrict inv_weight)
{
    const float w = (alpha == 1.0f ? tau : pow(tau, alpha)) * heur[cell];
    weight[cell] = w;
    if (inv_weight)
        inv_weight[cell] = w > 0.0f ? 1.0f / w : INFINITY;
}

/* Evaporation (evaporate = 1) or a plain reset to tau_max (0), then every weight. */
__kernel void mmas_trails(const ulong cells, __global float *restrict tau,
                          __global const float *restrict heur, __global float *restrict weight,
                          __global float *restrict inv_weight, __global const double *restrict limits,
                          const float rho, const float alpha, const int evaporate)
{
    const ulong id = get_global_id(0);
    if (id >= cells)
        return;
    const float t = evaporate ? max(rho * tau[id], (float)limits[0]) : (float)limits[1];
    tau[id] = t;
    set_weight(id, t, alpha, heur, weight, inv_weight);
}

/* Deposit 1/length on both directions of every edge of the chosen tour (the iteration
 * best, from ant `B_ITER_INDEX`, the global best or the best since the last reset), at
 * most tau_max. */
__kernel void mmas_deposit(const int n, __global float *restrict tau,
                           __global const float *restrict heur, __global float *restrict weight,
                           __global float *restrict inv_weight, __global const double *restrict limits,
                           __global const long *restrict status, __global const int *restrict tours,
                           __global const int *restrict best_tour,
                           __global const int *restrict restart_tour, const int source,
                           const float alpha, __global const int *restrict cand)
{
    const int k = get_global_id(0);
    if (k >= n)
        return;
    __global const int *tour = source == SOURCE_GLOBAL ? best_tour
                             : source == SOURCE_RESTART ? restart_tour
                                                        : tours + status[B_ITER_INDEX] * (long)n;
    const long length = status[source == SOURCE_GLOBAL ? B_BEST
                               : source == SOURCE_RESTART ? B_RESTART_BEST : B_ITER_BEST];
    const float amount = (float)(1.0 / (double)length);
    const float tau_max = (float)limits[1];
    const int i = tour[k], j = tour[k + 1 == n ? 0 : k + 1];
    const long cells[2] = {edge_cell(n, cand, i, j), edge_cell(n, cand, j, i)};
    for (int e = 0; e < 2; e++) {
        const long c = cells[e];
        if (c < 0 || (e == 1 && c == cells[0]))
            continue;
        const float t = min(tau[c] + amount, tau_max);
        tau[c] = t;
        set_weight((ulong)c, t, alpha, heur, weight, inv_weight);
    }
}

/* One work-group: the iteration's best ant, the global best and the best since the last
 * reset (best.h), and the trail limits when the global best improves. */
__kernel void mmas_best(const int n, const int ants, __global const long *restrict lengths,
                        __global const int *restrict tours, __global int *restrict best_tour,
                        __global int *restrict restart_tour, __global long *restrict status,
                        const int iteration, __local long *r_len, __local int *r_ant,
                        __global double *restrict limits, const double rho, const double p_best)
{
    const int improved = keep_best(n, ants, lengths, tours, best_tour, restart_tour, status, iteration,
                                   r_len, r_ant);
    if (improved && get_local_id(0) == 0) {
        const double tau_max = 1.0 / ((1.0 - rho) * (double)status[B_BEST]);
        const double p_dec = pow(p_best, 1.0 / n);
        const double avg = n / 2.0;
        limits[0] = min(tau_max, tau_max * (1.0 - p_dec) / ((avg - 1.0) * p_dec));
        limits[1] = tau_max;
    }
}

/* The construction's list weights (kernels_cl/aco.cl, matrix store only): the weight of
 * each candidate edge copied next to its list, so that a construction step loads the
 * list and the weights together instead of one after the other. */
__kernel void mmas_list_weights(const int n, const int cl, __global const int *restrict cand,
                                __global const float *restrict weight,
                                __global float *restrict list_weight)
{
    const ulong id = get_global_id(0);
    if (id >= (ulong)n * cl)
        return;
    list_weight[id] = weight[(id / cl) * n + cand[id]];
}
