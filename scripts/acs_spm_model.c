/* A sequential host model of ACS-GPU-SPM (Skinderowicz 2016, section 3.2), for comparing
 * the quality per iteration of tspcl's kernel (kernels_cl/acs.cl) with the algorithm's
 * rules run without any race: the rules as the authors' CUDA code applies them
 * (acs_spm_calc_solution: the greedy step weighs cur's stored edges against the nearest
 * unvisited candidate at tau_min; the roulette the 32 candidates; the fallback the
 * nearest unvisited city at tau_min against the stored edges; every k-th edge's local
 * update both ways round; the global update along the global best).  tau0 = 1 / (n L)
 * with L the nearest-neighbour tour from city 0.  EUC_2D instances only.
 *
 *   cc -O3 -march=native -o /tmp/acs_spm_model scripts/acs_spm_model.c -lm
 *   /tmp/acs_spm_model FILE.tsp OPTIMUM ITERATIONS SEED [ORDER [ANTS [K [EVERY]]]]
 *
 * ORDER: how the ants' steps interleave, each a way a GPU's concurrent ants could be
 * serialised: "step" (default: every ant takes step s from the trails as they were after
 * step s - 1, then all their local updates apply), "ant" (within a step, ant a sees the
 * updates of ants 0 .. a - 1), "tour" (each ant builds its whole tour in turn, as
 * PoCL's few threads run the work-groups), "delayD" (as step, but the updates of step s
 * apply after step s + D: seen D steps late), "chunkD" (the updates wait for the end
 * of every D-th step, then apply in the order of the steps; chunk with D >= n: not until
 * every tour is built), "antchunkD" (as chunkD, a chunk's updates applied ant by ant,
 * each ant's in the order of its steps, as branch exp/spm-chunks' kernel applies them at
 * each city) or "skewD" (as ant, each ant a number of steps behind drawn
 * uniformly from 0 to D every iteration, as GPU ants drift apart: at time t ant a takes
 * step t - offset).  ANTS 256, K 4 (the paper's Table 9).  EVERY:
 * print the selective memory's state every EVERY iterations (before the global update)
 * to stderr.  Prints the best length and its gap % to stdout.  Not part of the package:
 * docs/notebook/acs.md (quality per iteration) and BENCHMARKS.md (ACS) cite its
 * figures, from the build above on an x86-64 CPU with FMA: whether a * tau + b is
 * contracted to one rounding changes individual runs (-ffp-contract=off gives other
 * runs of the same distribution). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S 8    /* edges per city (the paper's s) */
#define CL 32  /* candidates per city */

typedef struct {
    int node[S];
    float tau[S];
    unsigned tail;  /* edges ever added: the newest is in slot tail % S */
} ring_t;

static int n;
static int *dist;     /* n x n */
static float *heur;   /* eta^beta, beta = 3 */
static int *cand;     /* CL nearest per city, ties to the lower city */
static ring_t *ring;
static float tau0;
static long inserts;  /* edges added to a ring, for the state print */
static uint64_t rng_state;

static uint64_t next_u64(void)  /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static float uniform(void)  /* (0, 1] */
{
    return ((next_u64() >> 40) + 1) * (1.0f / 16777216.0f);
}

static float trail(int u, int v)
{
    for (int i = 0; i < S; i++)
        if (ring[u].node[i] == v)
            return ring[u].tau[i];
    return tau0;
}

/* tau(u, v) = a tau(u, v) + b; an absent edge starts from tau0 in the slot after the tail */
static void update_one_way(int u, int v, float a, float b)
{
    for (int i = 0; i < S; i++)
        if (ring[u].node[i] == v) {
            ring[u].tau[i] = a * ring[u].tau[i] + b;
            return;
        }
    const unsigned slot = ++ring[u].tail % S;
    ring[u].node[slot] = v;
    ring[u].tau[slot] = a * tau0 + b;
    inserts++;
}

static void update(int u, int v, float a, float b)
{
    update_one_way(u, v, a, b);
    update_one_way(v, u, a, b);
}

/* qsort: pending updates (cur, next, step, ant) by ant, then step */
static int by_ant(const void *x, const void *y)
{
    const int *a = x, *b = y;
    return a[3] != b[3] ? (a[3] > b[3]) - (a[3] < b[3]) : (a[2] > b[2]) - (a[2] < b[2]);
}

static int visited(const uint32_t *tabu, int v) { return tabu[v >> 5] >> (v & 31) & 1; }

/* the best stored edge of cur to an unvisited city (-1: none), its weight in *best */
static int best_stored(const uint32_t *tabu, int cur, float *best)
{
    int next = -1;
    *best = 0.0f;
    for (int i = 0; i < S; i++) {
        const int v = ring[cur].node[i];
        if (v >= 0 && !visited(tabu, v) && ring[cur].tau[i] * heur[(size_t)cur * n + v] > *best) {
            *best = ring[cur].tau[i] * heur[(size_t)cur * n + v];
            next = v;
        }
    }
    return next;
}

static int next_city(const uint32_t *tabu, int cur, float q0)
{
    const int *c = cand + cur * CL;
    const float *h = heur + (size_t)cur * n;
    int first = -1;
    for (int i = 0; i < CL && first < 0; i++)
        if (!visited(tabu, c[i]))
            first = i;
    float best;
    if (first < 0) {  /* fallback: the nearest unvisited city at tau0, or a stored edge */
        int next = best_stored(tabu, cur, &best), nearest = -1;
        for (int v = 0; v < n; v++)
            if (!visited(tabu, v) && (nearest < 0 || dist[cur * n + v] < dist[cur * n + nearest]))
                nearest = v;
        return tau0 * h[nearest] > best ? nearest : next;
    }
    if (uniform() < q0) {  /* greedy (eq. 1) */
        const int next = best_stored(tabu, cur, &best);
        return tau0 * h[c[first]] > best ? c[first] : next;
    }
    float w[CL], sum = 0.0f;  /* roulette over the candidates (eq. 2) */
    for (int i = 0; i < CL; i++) {
        w[i] = visited(tabu, c[i]) ? 0.0f : trail(cur, c[i]) * h[c[i]];
        sum += w[i];
    }
    const float r = uniform() * sum;
    float acc = 0.0f;
    for (int i = 0; i < CL; i++) {
        acc += w[i];
        if (w[i] > 0.0f && r <= acc)
            return c[i];
    }
    return c[first];
}

static const int *sort_row;  /* nearer(): the distances from the city being listed */

static int nearer(const void *a, const void *b)  /* by distance, ties to the lower city */
{
    const int u = *(const int *)a, v = *(const int *)b;
    return sort_row[u] != sort_row[v] ? (sort_row[u] > sort_row[v]) - (sort_row[u] < sort_row[v])
                                      : (u > v) - (u < v);
}

static void read_euc2d(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        exit(2);
    }
    char line[512];
    double *x = NULL, *y = NULL;
    int coords = 0, count = 0;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "DIMENSION", 9)) {
            n = atoi(strchr(line, ':') + 1);
            x = malloc(sizeof *x * n);
            y = malloc(sizeof *y * n);
        } else if (!strncmp(line, "NODE_COORD_SECTION", 18)) {
            coords = 1;
        } else if (coords && count < n) {
            int id;
            if (sscanf(line, "%d %lf %lf", &id, &x[count], &y[count]) == 3)
                count++;
        }
    }
    fclose(f);
    dist = malloc(sizeof *dist * n * n);
    heur = malloc(sizeof *heur * n * n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            const double dx = x[i] - x[j], dy = y[i] - y[j];
            dist[i * n + j] = (int)(sqrt(dx * dx + dy * dy) + 0.5);
            const float eta = 1.0f / fmaxf((float)dist[i * n + j], 0.5f);
            heur[(size_t)i * n + j] = eta * eta * eta;
        }
    cand = malloc(sizeof *cand * n * CL);
    int *others = malloc(sizeof *others * n);
    for (int i = 0; i < n; i++) {
        int count = 0;
        for (int j = 0; j < n; j++)
            if (j != i)
                others[count++] = j;
        sort_row = dist + i * n;
        qsort(others, count, sizeof *others, nearer);
        memcpy(cand + i * CL, others, sizeof *cand * CL);
    }
    free(others);
    free(x);
    free(y);
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s FILE.tsp OPTIMUM ITERATIONS SEED [step|ant|tour|delayD|chunkD|antchunkD|skewD [ANTS [K [EVERY]]]]\n", argv[0]);
        return 2;
    }
    read_euc2d(argv[1]);
    const long optimum = atol(argv[2]);
    const int iterations = atoi(argv[3]);
    rng_state = strtoull(argv[4], NULL, 10) * 7919 + 1;
    const char *order = argc > 5 ? argv[5] : "step";
    const int by_tour = !strcmp(order, "tour");
    const int delay = !strncmp(order, "delay", 5) ? atoi(order + 5) : -1;
    const int ant_major = !strncmp(order, "antchunk", 8);
    const int chunk = !strncmp(order, "chunk", 5) ? atoi(order + 5) : ant_major ? atoi(order + 8) : 0;
    const int skew = !strncmp(order, "skew", 4) ? atoi(order + 4) : -1;
    const int deferred = !strcmp(order, "step") || delay >= 0 || chunk > 0;
    const int lag = delay >= 0 ? delay : 0;
    if (!by_tour && !deferred && strcmp(order, "ant") && skew < 0) {
        fprintf(stderr, "ORDER must be step, ant, tour, delayD, chunkD, antchunkD or skewD (got %s)\n", order);
        return 2;
    }
    const int ants = argc > 6 ? atoi(argv[6]) : 256, k = argc > 7 ? atoi(argv[7]) : 4;
    const int every = argc > 8 ? atoi(argv[8]) : 0;
    const float q0 = (n - 20.0f) / n, rho = 0.01f, alpha = 0.2f;
    {  /* the nearest-neighbour tour from city 0 gives tau0 */
        char *seen = calloc(n, 1);
        long length = 0;
        int cur = 0;
        seen[0] = 1;
        for (int s = 1; s < n; s++) {
            int best = -1;
            for (int j = 0; j < n; j++)
                if (!seen[j] && (best < 0 || dist[cur * n + j] < dist[cur * n + best]))
                    best = j;
            length += dist[cur * n + best];
            seen[best] = 1;
            cur = best;
        }
        tau0 = 1.0f / ((float)n * (length + dist[cur * n]));
        free(seen);
    }
    ring = malloc(sizeof *ring * n);
    for (int i = 0; i < n; i++) {
        for (int s = 0; s < S; s++)
            ring[i].node[s] = -1, ring[i].tau[s] = tau0;
        ring[i].tail = S - 1;
    }
    const int words = (n + 31) / 32;
    int *tours = malloc(sizeof *tours * ants * n), *best_tour = malloc(sizeof *best_tour * n);
    int *pending = malloc(sizeof *pending * 4 * ants * n);  /* (cur, next, step, ant) */
    uint32_t *tabu = malloc(sizeof *tabu * ants * words);
    int *offset = calloc(ants, sizeof *offset);
    long best_length = -1;
    for (int it = 0; it < iterations; it++) {
        memset(tabu, 0, sizeof *tabu * ants * words);
        for (int a = 0; a < ants; a++) {
            const int start = (int)(next_u64() % (uint64_t)n);
            tours[a * n] = start;
            tabu[a * words + (start >> 5)] |= 1u << (start & 31);
        }
        int held = 0, applied = 0;
        for (int a = 0; a < ants && skew > 0; a++)  /* skewD: ant a runs offset[a] steps behind */
            offset[a] = (int)(next_u64() % (uint64_t)(skew + 1));
        for (int outer = 0; outer < (by_tour ? ants : n - 1 + (skew > 0 ? skew : 0)); outer++)
            for (int inner = 0; inner < (by_tour ? n - 1 : ants); inner++) {
                const int a = by_tour ? outer : inner, step = 1 + (by_tour ? inner : outer - offset[a]);
                if (step >= 1 && step < n) {
                    uint32_t *t = tabu + a * words;
                    const int cur = tours[a * n + step - 1], next = next_city(t, cur, q0);
                    tours[a * n + step] = next;
                    t[next >> 5] |= 1u << (next & 31);
                    if (step % k == 0) {
                        if (deferred)
                            pending[4 * held] = cur, pending[4 * held + 1] = next, pending[4 * held + 2] = step,
                                pending[4 * held + 3] = a, held++;
                        else
                            update(cur, next, 1.0f - rho, rho * tau0);
                    }
                }
                if (deferred && inner == ants - 1) {  /* after every ant's step: the updates due */
                    if (ant_major && (step == n - 1 || step % chunk == 0))
                        qsort(pending + 4 * applied, held - applied, sizeof *pending * 4, by_ant);
                    for (; applied < held; applied++) {
                        const int due = step == n - 1 || (chunk ? step % chunk == 0 : pending[4 * applied + 2] <= step - lag);
                        if (!due)
                            break;
                        update(pending[4 * applied], pending[4 * applied + 1], 1.0f - rho, rho * tau0);
                    }
                }
            }
        long it_best = -1;
        int it_ant = 0;
        double sum = 0.0;
        for (int a = 0; a < ants; a++) {
            if (n % k == 0)  /* the closing edge */
                update(tours[a * n + n - 1], tours[a * n], 1.0f - rho, rho * tau0);
            long length = 0;
            for (int i = 0; i < n; i++)
                length += dist[tours[a * n + i] * n + tours[a * n + (i + 1) % n]];
            sum += length;
            if (it_best < 0 || length < it_best)
                it_best = length, it_ant = a;
        }
        if (every && (it + 1) % every == 0 && best_length > 0) {
            int present = 0;
            for (int i = 0; i < n; i++) {
                const int u = best_tour[i], v = best_tour[(i + 1) % n];
                for (int s = 0; s < S; s++)
                    present += (ring[u].node[s] == v) + (ring[v].node[s] == u);
            }
            fprintf(stderr, "it %d best %ld (%.2f%%) global best's edges stored %d/%d inserts/it %.0f "
                    "ants mean %.2f%%\n", it + 1, best_length, 100.0 * (best_length - optimum) / optimum,
                    present, 2 * n, (double)inserts / every, 100.0 * (sum / ants - optimum) / optimum);
            inserts = 0;
        }
        if (best_length < 0 || it_best < best_length) {
            best_length = it_best;
            memcpy(best_tour, tours + it_ant * n, sizeof *best_tour * n);
        }
        for (int i = 0; i < n; i++)  /* the global update (eq. 4) */
            update(best_tour[i], best_tour[(i + 1) % n], 1.0f - alpha, alpha / (float)best_length);
    }
    printf("%ld %.3f\n", best_length, 100.0 * (best_length - optimum) / optimum);
    return 0;
}
