/*
 * Hand-vectorised C reference of the rare-gates target-SGD kernel: lock-step lanes in SIMD registers.
 *
 * The same algorithm as numerics/rare_gates/sim_kernels.py (_sgd_streams) with sim_rng.py: the
 * same keyed xoshiro256++ streams, the same disk sampling (radius 2 sqrt(u), the integer-quadrant
 * sincos of 2 pi v with the fdlibm kernels), the same branch-free gates and batch sums, the same
 * SGD step, and the same risk test (a certified lower bound first, the exact target risk of
 * model._risk only where the bound does not clear the threshold), every floating-point operation
 * in the same order; so compiled with IEEE semantics (-ffp-contract=off, no -ffast-math) it gives
 * the numba kernel's results bit for bit, and numerics/bench.py checks that.
 *
 * Layout: W streams per vector (GCC vector extensions; W = 8 doubles with AVX-512, 4 with AVX or
 * AVX2, 2 otherwise, chosen from the compiler's macros, so -march=native picks the machine's width),
 * NV vectors per lock-step group, so NV * W lanes. For every update the group draws b inputs per
 * lane with the batch sums, parameters and generator states in registers (the b loop is innermost,
 * the lanes are the SIMD dimension). Conversions u64 -> double use exact bit tricks (AVX2 has no
 * vector u64 -> double): u = (r >> 11) 2^-53 is 0.5 + lo 2^-53 from the bits 0x3FE0.. | lo (the low
 * 52 bits lo) minus 0.5 unless bit 52 is set; the sincos argument g < 2^51 is the double with bits
 * 0x4330.. | g minus 2^52. Both are exact, so they equal (double)(int64_t) of the same integers
 * (sim_rng.py computes them the same way). Selections are blends (intrinsics: vblendvpd on AVX,
 * mask blends on AVX-512); the quadrant's signs are XORs of the random bits into the sign bit.
 * The per-update bookkeeping (counters, checks, refill of a finished lane with the next stream)
 * is scalar over the lanes. Nothing here is tuned beyond NV (measured on AVX2; AVX-512 unmeasured).
 *
 *   usage: bench_simd B ETA LAM DELTA0 N_UPDATES CHECK_EVERY THRESHOLD STREAMS SEED
 *
 * As numerics/bench_ref.c: start at the balanced checkpoint of Appendix 19, stream s keyed by
 * (SEED, s, phase 0 = target, offset 0), each stream stopping at its first check with target
 * risk <= THRESHOLD. Output: "seconds T inputs N cpu_seconds C ticks K lanes L width W" (T wall,
 * C process CPU time, K rdtsc ticks over the timed part, 0 where there is no TSC), then one line
 * per stream "s rec first count updates th0 .. th5" (-1: never; parameters as hex floats).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define TICKS() ((unsigned long long)__rdtsc())
#else
#define TICKS() 0ULL
#endif

#if defined(__AVX512F__)
#define W 8
#elif defined(__AVX__)
#define W 4
#else
#define W 2
#endif
#ifndef NV
#define NV 1 /* vectors per lock-step group: 1 measured fastest on AVX2 (2 and 3 spill registers) */
#endif
#define LN (W * NV)

typedef double vd __attribute__((vector_size(8 * W)));
typedef int64_t vi __attribute__((vector_size(8 * W)));
typedef uint64_t vu __attribute__((vector_size(8 * W)));

static const double INV_2PI = 1.0 / (2.0 * 3.141592653589793);
static const double RLO_SLACK = 1e-12;
static const long NEVER = 1L << 62;

#include "bench_common.h"

/* ---- vector helpers ---- */
/* m ? a : b lane by lane for masks m of all ones or zeros (a blend instruction where there is one) */
static inline vd sel(vi m, vd a, vd b) {
#if W == 8
    return (vd)_mm512_mask_blend_pd(_mm512_test_epi64_mask((__m512i)m, (__m512i)m), (__m512d)b, (__m512d)a);
#elif W == 4
    return (vd)_mm256_blendv_pd((__m256d)b, (__m256d)a, (__m256d)m);
#else
    return (vd)(((vi)a & m) | ((vi)b & ~m));
#endif
}
static inline vi seli(vi m, vi a, vi b) { return (vi)sel(m, (vd)a, (vd)b); }
static inline vd vsqrt(vd x) {
#if W == 8
    return (vd)_mm512_sqrt_pd((__m512d)x);
#elif W == 4
    return (vd)_mm256_sqrt_pd((__m256d)x);
#else
    vd y;
    for (int i = 0; i < W; i++) y[i] = __builtin_sqrt(x[i]);
    return y;
#endif
}

static inline vu xoshiro(vu s[4]) {
    vu x = s[0] + s[3];
    vu r = ((x << 23) | (x >> 41)) + s[0];
    vu t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return r;
}

/* Disk input from two outputs: (x0, x1, rho = |x|), as sim_rng._disk_point (exact conversions). */
static inline void disk(vu r1, vu r2, vd *x0, vd *x1, vd *rho) {
    vu lo = (r1 >> 11) & 0xFFFFFFFFFFFFFULL;                 /* low 52 bits of the 53-bit integer */
    vd half_lo = (vd)(lo | 0x3FE0000000000000ULL);           /* 0.5 + lo 2^-53 */
    vu top = r1 >> 63;                                       /* bit 52 of r1 >> 11 */
    vd off = (vd)((top - 1) & 0x3FE0000000000000ULL);        /* 0.5 unless that bit is set, else 0 */
    vd u = half_lo - off;                                    /* (r1 >> 11) 2^-53 exactly */
    vd p = vsqrt(u);
    *rho = 2.0 * p;
    vi m = (vi)((r2 >> 11) & 0x7FFFFFFFFFFFFULL);            /* position in the quadrant, 51 bits */
    vi hi = m > 0x4000000000000LL;
    vi g = seli(hi, 0x8000000000000LL - m, m);               /* reflected to [0, 2^50] */
    vd gd = (vd)(g | 0x4330000000000000LL) - 4503599627370496.0; /* (double) g exactly */
    vd x = gd * QSCALE;
    vd z = x * x, z2 = z * z, z4 = z2 * z2;
    vd ps = ((S1 + z * S2) + z2 * (S3 + z * S4)) + z4 * (S5 + z * S6);
    vd pc = ((C1 + z * C2) + z2 * (C3 + z * C4)) + z4 * (C5 + z * C6);
    vd s = x + (x * z) * ps;
    vd c = (1.0 - 0.5 * z) + z2 * pc;
    vi swap = hi ^ ((vi)(r2 << 1) < 0);                      /* reflected xor odd quadrant: cos <-> sin */
    vd p0 = sel(swap, s, c), p1 = sel(swap, c, s);
    vu signbit = (vu){0} + 0x8000000000000000ULL;
    vu cneg = ((r2 << 1) ^ r2) & signbit;                    /* quadrant 1 or 2: cos < 0 */
    vu sneg = r2 & signbit;                                  /* quadrant 2 or 3: sin < 0 */
    *x0 = *rho * (vd)((vu)p0 ^ cneg);
    *x1 = *rho * (vd)((vu)p1 ^ sneg);
}

/* Certified lower bound of the target risk, -inf when none is cheap (sim_kernels._risk_lower), vectorised. */
static inline vd risk_lower(vd a1, vd a2, vd p1x, vd p1y, vd p2x, vd p2y) {
    vd cr = p1x * p2y - p1y * p2x;
    vd c = (vd)((vu)cr & 0x7FFFFFFFFFFFFFFFULL);
    vd d = p1x * p2x + p1y * p2y;
    vi pos = d > 0.0;
    vd x = c / sel(pos, d, (vd){0} + 1.0);
    vd xc = x - x * x * x / 3.0;
    vd t = sel(a1 * a2 >= 0.0, x, sel(xc > 0.0, xc, (vd){0}));
    vd k12 = (c + (PI - t) * d) * INV_2PI;
    vd n1 = p1x * p1x + p1y * p1y, n2 = p2x * p2x + p2y * p2y;
    vd quad = a1 * a1 * (0.5 * n1) + a2 * a2 * (0.5 * n2) + 2.0 * a1 * a2 * k12;
    vd lin = Q * (a1 * vsqrt(n1) + a2 * vsqrt(n2));
    vd ab = (vd)((vu)(a1 * a1 * n1) & 0x7FFFFFFFFFFFFFFFULL) + (vd)((vu)(a2 * a2 * n2) & 0x7FFFFFFFFFFFFFFFULL) +
            (vd)((vu)(a1 * a2 * k12) & 0x7FFFFFFFFFFFFFFFULL) + (vd)((vu)lin & 0x7FFFFFFFFFFFFFFFULL);
    vd scale = ab + 2.0;
    vd lower = 0.5 * (quad - 2.0 * lin + 2.0) - RLO_SLACK * scale;
    return sel(pos, lower, (vd){0} - INFINITY);
}

static inline double step(double p, double g, double a, double inv_b, double eta, double lam) {
    return p - eta * (a * g * inv_b + lam * p);
}

/* One lock-step group: parameters, generator states and batch sums of LN lanes, row k at [k][lane]. */
typedef struct {
    double P[6][LN] __attribute__((aligned(64)));
    double G[7][LN] __attribute__((aligned(64)));
    double RLO[LN] __attribute__((aligned(64)));
    uint64_t S[4][LN] __attribute__((aligned(64)));
    long sid[LN], n[LN], cd[LN], rec[LN], first[LN], count[LN];
} Group;

/* One input for each lane of vector v: the generator states step twice, the batch sums grow. */
static inline __attribute__((always_inline)) void input(vd p[6], vu s[4], vd acc[7]) {
    vu r1 = xoshiro(s);
    vu r2 = xoshiro(s);
    vd x0, x1, rho;
    disk(r1, r2, &x0, &x1, &rho);
    vd z1 = p[2] * x0 + p[3] * x1, z2 = p[4] * x0 + p[5] * x1;
    vi on1 = z1 > 0.0, on2 = z2 > 0.0;
    vd h1 = sel(on1, z1, (vd){0}), h2 = sel(on2, z2, (vd){0});
    vd r = (p[0] * h1 + p[1] * h2) - rho;
    vd q1 = sel(on1, r, (vd){0}), q2 = sel(on2, r, (vd){0});
    acc[0] += r * h1;
    acc[1] += r * h2;
    acc[2] += q1 * x0;
    acc[3] += q1 * x1;
    acc[4] += q2 * x0;
    acc[5] += q2 * x1;
    acc[6] += sel(on1 ^ on2, (vd){0} + 1.0, (vd){0});
}

/* Draw b inputs per lane and form the batch sums (the hot loop): the b loop innermost, each vector's
 * parameters, generator states and sums in registers. (The other order, the group's vectors
 * innermost with the state in memory as in the numba kernel, measured half as fast here.) */
static void batch(Group *g, long b) {
    vd p[NV][6], acc[NV][7];
    vu s[NV][4];
    for (int v = 0; v < NV; v++) {
        for (int k = 0; k < 6; k++) memcpy(&p[v][k], &g->P[k][v * W], sizeof(vd));
        for (int k = 0; k < 4; k++) memcpy(&s[v][k], &g->S[k][v * W], sizeof(vu));
        for (int k = 0; k < 7; k++) acc[v][k] = (vd){0};
    }
    for (long j = 0; j < b; j++)
        for (int v = 0; v < NV; v++) input(p[v], s[v], acc[v]);
    for (int v = 0; v < NV; v++) {
        for (int k = 0; k < 4; k++) memcpy(&g->S[k][v * W], &s[v][k], sizeof(vu));
        for (int k = 0; k < 7; k++) memcpy(&g->G[k][v * W], &acc[v][k], sizeof(vd));
    }
}

/* The SGD step of every lane (vectorised), then the scalar tallies; returns how many lanes need attention. */
static int update(Group *g, double inv_b, double eta, double lam, long n_updates) {
    for (int v = 0; v < NV; v++) {
        vd pv[6], gv[6];
        for (int k = 0; k < 6; k++) {
            memcpy(&pv[k], &g->P[k][v * W], sizeof(vd));
            memcpy(&gv[k], &g->G[k][v * W], sizeof(vd));
        }
        vd b1 = pv[0], b2 = pv[1];
        pv[0] = pv[0] - eta * (1.0 * gv[0] * inv_b + lam * pv[0]);
        pv[1] = pv[1] - eta * (1.0 * gv[1] * inv_b + lam * pv[1]);
        pv[2] = pv[2] - eta * (b1 * gv[2] * inv_b + lam * pv[2]);
        pv[3] = pv[3] - eta * (b1 * gv[3] * inv_b + lam * pv[3]);
        pv[4] = pv[4] - eta * (b2 * gv[4] * inv_b + lam * pv[4]);
        pv[5] = pv[5] - eta * (b2 * gv[5] * inv_b + lam * pv[5]);
        for (int k = 0; k < 6; k++) memcpy(&g->P[k][v * W], &pv[k], sizeof(vd));
    }
    int attention = 0;
    for (int l = 0; l < LN; l++) {
        long n = ++g->n[l];
        long cd = --g->cd[l];
        long d = (long)g->G[6][l];
        g->count[l] += d;
        if (d > 0 && g->first[l] < 0) g->first[l] = n;
        attention += (cd <= 0 || n >= n_updates);
    }
    return attention;
}

typedef struct {
    double th0[6];
    uint64_t seed;
    long n_updates, check_every, b;
    double threshold, inv_b, eta, lam;
    long *out_int;   /* per stream: rec, first, count, updates */
    double *out_th;  /* per stream: 6 parameters */
} Run;

static void finish(const Run *run, Group *g, int l) {
    long s = g->sid[l];
    run->out_int[4 * s] = g->rec[l];
    run->out_int[4 * s + 1] = g->first[l];
    run->out_int[4 * s + 2] = g->count[l];
    run->out_int[4 * s + 3] = g->n[l];
    for (int k = 0; k < 6; k++) run->out_th[6 * s + k] = g->P[k][l];
}

static void lane_get(const Group *g, int l, double th[6]) {
    for (int k = 0; k < 6; k++) th[k] = g->P[k][l];
}

/* Load the next pending stream into lane l (finishing at once those done at update 0); returns nxt. */
static long refill(const Run *run, Group *g, int l, long nxt, long hi) {
    g->sid[l] = -1;
    while (nxt < hi) {
        long s = nxt++;
        uint64_t st[4];
        seed_state(run->seed, (uint64_t)s, 0, 0, st);
        for (int k = 0; k < 6; k++) g->P[k][l] = run->th0[k];
        for (int k = 0; k < 4; k++) g->S[k][l] = st[k];
        g->sid[l] = s;
        g->n[l] = 0;
        g->cd[l] = run->check_every > 0 ? run->check_every : NEVER;
        g->rec[l] = -1;
        g->first[l] = -1;
        g->count[l] = 0;
        int done = run->n_updates <= 0;
        if (run->check_every > 0) {
            double th[6];
            lane_get(g, l, th);
            if (target_risk(th) <= run->threshold) {
                g->rec[l] = 0;
                done = 1;
            }
        }
        if (!done) return nxt;
        finish(run, g, l);
        g->sid[l] = -1;
    }
    for (int k = 0; k < 6; k++) g->P[k][l] = k == 5 ? 1.0 : 0.0; /* idle: harmless finite values */
    for (int k = 0; k < 4; k++) g->S[k][l] = 1;
    g->n[l] = -NEVER;
    g->cd[l] = NEVER;
    return nxt;
}

/* Streams lo..hi-1 in one group of LN lock-step lanes with refill; returns the inputs drawn. */
static long long run_streams(const Run *run, long lo, long hi) {
    static Group grp;
    Group *g = &grp;
    long long inputs = 0;
    long nxt = lo;
    int active = 0;
    for (int l = 0; l < LN; l++) {
        nxt = refill(run, g, l, nxt, hi);
        active += g->sid[l] >= 0;
    }
    while (active > 0) {
        batch(g, run->b);
        if (update(g, run->inv_b, run->eta, run->lam, run->n_updates) == 0) continue;
        for (int v = 0; v < NV; v++) {
            vd pv[6];
            for (int k = 0; k < 6; k++) memcpy(&pv[k], &g->P[k][v * W], sizeof(vd));
            vd lower = risk_lower(pv[0], pv[1], pv[2], pv[3], pv[4], pv[5]);
            memcpy(&g->RLO[v * W], &lower, sizeof(vd));
        }
        for (int l = 0; l < LN; l++) {
            long n = g->n[l], cd = g->cd[l];
            if (g->sid[l] < 0 || (cd > 0 && n < run->n_updates)) continue;
            int done = n >= run->n_updates;
            if (cd <= 0) {
                g->cd[l] = run->check_every;
                if (!(g->RLO[l] > run->threshold)) {
                    double th[6];
                    lane_get(g, l, th);
                    if (target_risk(th) <= run->threshold) {
                        if (g->rec[l] < 0) g->rec[l] = n;
                        done = 1;
                    }
                }
            }
            if (done) {
                inputs += (long long)g->n[l] * run->b;
                finish(run, g, l);
                nxt = refill(run, g, l, nxt, hi);
                if (g->sid[l] < 0) active--;
            }
        }
    }
    return inputs;
}

int main(int argc, char **argv) {
    if (argc != 10) {
        fprintf(stderr, "usage: %s B ETA LAM DELTA0 N_UPDATES CHECK_EVERY THRESHOLD STREAMS SEED\n", argv[0]);
        return 2;
    }
    Run run;
    run.b = atol(argv[1]);
    run.eta = atof(argv[2]);
    run.lam = atof(argv[3]);
    double delta0 = atof(argv[4]);
    run.n_updates = atol(argv[5]);
    run.check_every = atol(argv[6]);
    run.threshold = atof(argv[7]);
    long streams = atol(argv[8]);
    run.seed = strtoull(argv[9], NULL, 10);
    if (run.b < 1 || streams < 0) {
        fprintf(stderr, "B must be >= 1 and STREAMS >= 0\n");
        return 2;
    }
    double r0 = sqrt(0.45);
    run.inv_b = 1.0 / (double)run.b;
    double th0[6] = {r0, r0, r0 * cos(delta0 / 2.0), r0 * sin(delta0 / 2.0), r0 * cos(delta0 / 2.0),
                     -(r0 * sin(delta0 / 2.0))};
    memcpy(run.th0, th0, sizeof th0);
    run.out_int = malloc(sizeof(long) * 4 * (size_t)(streams + 1));
    run.out_th = malloc(sizeof(double) * 6 * (size_t)(streams + 1));
    struct timespec t0, t1, c0, c1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    unsigned long long k0 = TICKS();
    long long inputs = run_streams(&run, 0, streams);
    unsigned long long k1 = TICKS();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    double cpu = (double)(c1.tv_sec - c0.tv_sec) + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec);
    printf("seconds %.9f inputs %lld cpu_seconds %.9f ticks %llu lanes %d width %d\n", secs, inputs, cpu, k1 - k0, LN, W);
    for (long s = 0; s < streams; s++) {
        long *o = run.out_int + 4 * s;
        printf("%ld %ld %ld %ld %ld", s, o[0], o[1], o[2], o[3]);
        for (int i = 0; i < 6; i++) printf(" %a", run.out_th[6 * s + i]);
        printf("\n");
    }
    free(run.out_int);
    free(run.out_th);
    return 0;
}
