/*
 * Plain-C reference of the rare-gates target-SGD loop (one thread, one stream at a time).
 *
 * The same recursion, random streams and floating-point operations, in the same order, as
 * numerics/rare_gates/sim_kernels.py (_sgd_simple / _sgd_streams) with sim_rng.py, so that
 * compiled with IEEE semantics (-ffp-contract=off, no -ffast-math) it reproduces the numba
 * results bit for bit; numerics/bench.py builds it on demand, times it and compares.
 *
 *   usage: bench_ref B ETA LAM DELTA0 N_UPDATES CHECK_EVERY THRESHOLD STREAMS SEED
 *
 * Start: the balanced checkpoint of Appendix 19 (a_i = |w_i| = sqrt(0.45), angle DELTA0).
 * Stream s draws from xoshiro256++ keyed by (SEED, s, phase 0 = target, offset 0). Each
 * stream stops at the first check (every CHECK_EVERY updates, from update 0) with target
 * risk <= THRESHOLD. Output: "seconds T inputs N cpu_seconds C" (wall and process CPU time) on
 * the first line, then one line per stream: "s rec first count updates th0 .. th5" (-1: never;
 * parameters as hex floats). The SIMD version of the same algorithm is numerics/bench_simd.c.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const double U53 = 1.0 / 9007199254740992.0;

#include "bench_common.h"

/* ---- keyed xoshiro256++ (sim_rng.py) ---- */
static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t next(uint64_t s[4]) {
    uint64_t r = rotl(s[0] + s[3], 23) + s[0];
    uint64_t t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
}

/* Input uniform on the disk of radius 2: radius from r1, angle 2 pi u from r2 (quadrant in the top bits). */
static inline void disk_point(uint64_t r1, uint64_t r2, double *x0, double *x1, double *rho) {
    *rho = 2.0 * sqrt((double)(int64_t)(r1 >> 11) * U53);
    uint64_t q = r2 >> 62;
    uint64_t m = (r2 >> 11) & 0x7FFFFFFFFFFFFULL;
    int hi = m > 0x4000000000000ULL;
    uint64_t g = hi ? 0x8000000000000ULL - m : m;
    double x = (double)(int64_t)g * QSCALE;
    double z = x * x, z2 = z * z, z4 = z2 * z2;
    double ps = ((S1 + z * S2) + z2 * (S3 + z * S4)) + z4 * (S5 + z * S6);
    double pc = ((C1 + z * C2) + z2 * (C3 + z * C4)) + z4 * (C5 + z * C6);
    double s = x + (x * z) * ps;
    double c = (1.0 - 0.5 * z) + z2 * pc;
    double ca = hi ? s : c, sa = hi ? c : s;
    int odd = (q & 1) != 0;
    double p0 = odd ? sa : ca, p1 = odd ? ca : sa;
    int cneg = ((q ^ (q >> 1)) & 1) != 0, sneg = (q >> 1) != 0;
    *x0 = *rho * (cneg ? -p0 : p0);
    *x1 = *rho * (sneg ? -p1 : p1);
}

static inline double step(double p, double g, double a, double inv_b, double eta, double lam) {
    return p - eta * (a * g * inv_b + lam * p);
}

int main(int argc, char **argv) {
    if (argc != 10) {
        fprintf(stderr, "usage: %s B ETA LAM DELTA0 N_UPDATES CHECK_EVERY THRESHOLD STREAMS SEED\n", argv[0]);
        return 2;
    }
    long b = atol(argv[1]);
    double eta = atof(argv[2]), lam = atof(argv[3]), delta0 = atof(argv[4]);
    long n_updates = atol(argv[5]), check_every = atol(argv[6]);
    double threshold = atof(argv[7]);
    long streams = atol(argv[8]);
    uint64_t seed = strtoull(argv[9], NULL, 10);
    double r0 = sqrt(0.45), inv_b = 1.0 / (double)b;
    double th0[6] = {r0, r0, r0 * cos(delta0 / 2.0), r0 * sin(delta0 / 2.0), r0 * cos(delta0 / 2.0),
                     -(r0 * sin(delta0 / 2.0))};
    long *out = malloc(sizeof(long) * 4 * streams);
    double *outth = malloc(sizeof(double) * 6 * streams);
    long long inputs = 0;
    struct timespec t0, t1, c0, c1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long s = 0; s < streams; s++) {
        uint64_t st[4];
        seed_state(seed, (uint64_t)s, 0, 0, st);
        double th[6];
        for (int i = 0; i < 6; i++) th[i] = th0[i];
        long rec = -1, first = -1, count = 0, n = 0;
        for (;;) {
            if (n % check_every == 0 && target_risk(th) <= threshold) { rec = n; break; }
            if (n >= n_updates) break;
            double g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, dis = 0;
            for (long j = 0; j < b; j++) {
                uint64_t r1 = next(st), r2 = next(st);
                double x0, x1, rho;
                disk_point(r1, r2, &x0, &x1, &rho);
                double z1 = th[2] * x0 + th[3] * x1, z2 = th[4] * x0 + th[5] * x1;
                int on1 = z1 > 0.0, on2 = z2 > 0.0;
                double h1 = on1 ? z1 : 0.0, h2 = on2 ? z2 : 0.0;
                double r = (th[0] * h1 + th[1] * h2) - rho;
                double q1 = on1 ? r : 0.0, q2 = on2 ? r : 0.0;
                g0 += r * h1; g1 += r * h2;
                g2 += q1 * x0; g3 += q1 * x1; g4 += q2 * x0; g5 += q2 * x1;
                dis += (on1 != on2) ? 1.0 : 0.0;
            }
            double b1 = th[0], b2 = th[1];
            th[0] = step(b1, g0, 1.0, inv_b, eta, lam);
            th[1] = step(b2, g1, 1.0, inv_b, eta, lam);
            th[2] = step(th[2], g2, b1, inv_b, eta, lam);
            th[3] = step(th[3], g3, b1, inv_b, eta, lam);
            th[4] = step(th[4], g4, b2, inv_b, eta, lam);
            th[5] = step(th[5], g5, b2, inv_b, eta, lam);
            n++;
            if (dis > 0.0) { count += (long)dis; if (first < 0) first = n; }
        }
        inputs += (long long)n * b;
        out[4 * s] = rec; out[4 * s + 1] = first; out[4 * s + 2] = count; out[4 * s + 3] = n;
        for (int i = 0; i < 6; i++) outth[6 * s + i] = th[i];
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    double cpu = (double)(c1.tv_sec - c0.tv_sec) + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec);
    printf("seconds %.9f inputs %lld cpu_seconds %.9f\n", secs, inputs, cpu);
    for (long s = 0; s < streams; s++) {
        printf("%ld %ld %ld %ld %ld", s, out[4 * s], out[4 * s + 1], out[4 * s + 2], out[4 * s + 3]);
        for (int i = 0; i < 6; i++) printf(" %a", outth[6 * s + i]);
        printf("\n");
    }
    free(out);
    free(outth);
    return 0;
}
