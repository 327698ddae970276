/* Shared by the bench's C references (numerics/bench_ref.c, numerics/bench_simd.c): the constants of the
 * target-SGD kernel, the keyed xoshiro256++ seeding of numerics/rare_gates/sim_rng.py and the exact target risk of
 * numerics/rare_gates/model.py, written once. Needs <math.h> and <stdint.h> first. */
#ifndef PAPER_AUDIT_BENCH_COMMON_H
#define PAPER_AUDIT_BENCH_COMMON_H

static const double PI = 3.141592653589793;
static const double TWO_PI = 2.0 * 3.141592653589793;
static const double Q = 2.0 / 3.141592653589793;
static const double QSCALE = 0.5 * 3.141592653589793 / 2251799813685248.0;
static const double S1 = -1.66666666666666324348e-01, S2 = 8.33333333332248946124e-03,
                    S3 = -1.98412698298579493134e-04, S4 = 2.75573137070700676789e-06,
                    S5 = -2.50507602534068634195e-08, S6 = 1.58969099521155010221e-10;
static const double C1 = 4.16666666666666019037e-02, C2 = -1.38888888888741095749e-03,
                    C3 = 2.48015872894767294178e-05, C4 = -2.75573143513906633035e-07,
                    C5 = 2.08757232129817482790e-09, C6 = -1.13596475577881948265e-11;

/* ---- keyed xoshiro256++ seeding (sim_rng.py) ---- */
static uint64_t fmix64(uint64_t x) {
    x ^= x >> 33; x *= 0xFF51AFD7ED558CCDULL;
    x ^= x >> 33; x *= 0xC4CEB9FE1A85EC53ULL;
    x ^= x >> 33;
    return x;
}

static void seed_state(uint64_t seed, uint64_t stream, uint64_t phase, uint64_t offset, uint64_t st[4]) {
    uint64_t h = fmix64(seed ^ 0x6A09E667F3BCC909ULL);
    h = fmix64(h ^ (stream + 0xBB67AE8584CAA73BULL));
    h = fmix64(h ^ (phase + 0x3C6EF372FE94F82BULL));
    h = fmix64(h ^ (offset + 0xA54FF53A5F1D36F1ULL));
    uint64_t nonzero = 0;
    for (int i = 0; i < 4; i++) { /* SplitMix64 */
        h += 0x9E3779B97F4A7C15ULL;
        uint64_t z = h;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        st[i] = z ^ (z >> 31);
        nonzero |= st[i];
    }
    if (!nonzero) st[0] = 1;
}

/* ---- exact target risk (numerics/rare_gates/model.py: _risk with target=True) ---- */
static void two_prod(double a, double b, double *p, double *e) {
    *p = a * b;
    double split = 134217729.0, t = split * a, ah = t - (t - a), al = a - ah;
    t = split * b;
    double bh = t - (t - b), bl = b - bh;
    *e = ((ah * bh - *p) + ah * bl + al * bh) + al * bl;
}

static double cross(double u0, double u1, double v0, double v1) {
    double p1, e1, p2, e2;
    two_prod(u0, v1, &p1, &e1);
    two_prod(u1, v0, &p2, &e2);
    return (p1 - p2) + (e1 - e2);
}

static double x_minus_atan(double x) {
    if (x >= 0.25) return x - atan(x);
    double x2 = x * x, total = 0.0, term = x * x2;
    for (int k = 1; k < 40; k++) {
        total += term / (2.0 * k + 1.0) * ((k % 2 == 1) ? 1.0 : -1.0);
        term *= x2;
    }
    return total;
}

static double kernel(double u0, double u1, double v0, double v1) {
    double c = fabs(cross(u0, u1, v0, v1)), d = u0 * v0 + u1 * v1;
    if (c == 0.0 && d <= 0.0) return 0.0;
    if (d >= 0.0) return (c + (PI - atan2(c, d)) * d) / TWO_PI;
    double ad = -d;
    if (c >= 0.25 * ad) return (c - ad * atan2(c, ad)) / TWO_PI;
    return ad * x_minus_atan(c / ad) / TWO_PI;
}

static double target_risk(const double th[6]) {
    double a1 = th[0], a2 = th[1];
    double k11 = 0.5 * (th[2] * th[2] + th[3] * th[3]);
    double k22 = 0.5 * (th[4] * th[4] + th[5] * th[5]);
    double k12 = kernel(th[2], th[3], th[4], th[5]);
    double quad = a1 * a1 * k11 + a2 * a2 * k22 + 2.0 * a1 * a2 * k12;
    double lin = Q * (a1 * hypot(th[2], th[3]) + a2 * hypot(th[4], th[5]));
    return 0.5 * (quad - 2.0 * lin + 2.0);
}

#endif
