/* Elementwise rules written in C, shared by the compiled sweeps (through
 * adsim/_opcodes.pxd and adsim/_ops/unary.pxi) and the fused kernels that
 * adsim/_fuse/codegen.py generates, so that both compute the same thing.
 * The rules given as expressions are in the rows of adsim/ops.py. */
#ifndef ADSIM_ELEMENTWISE_H
#define ADSIM_ELEMENTWISE_H
#include <math.h>

/* GCC left chain() out of line in the sweeps' largest functions (its
 * inlining limits), where it runs once per element: a call each time */
#if defined(__GNUC__) || defined(__clang__)
#define ADSIM_ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define ADSIM_ALWAYS_INLINE static inline
#endif

/* partial * seed, and 0 when either is 0 (whatever the other): the
 * zero-times-infinity rule of every mode (see adsim/_opcodes.pxd). The
 * product is computed anyway and chosen by a select, so loops vectorise. */
ADSIM_ALWAYS_INLINE double chain(double partial, double seed) {
    double product = partial * seed;
    return (seed != 0.0 && partial != 0.0) ? product : 0.0;
}

/* partial * seed without the rule: the first pass of a fused block
 * (adsim/_fuse/codegen.py _element_loops), redone with chain() on a NaN */
static inline double plain_product(double partial, double seed) { return partial * seed; }

/* slope * seed for a constant slope: chain() only when the slope is zero
 * or not finite (a finite nonzero slope times 0 is 0 already, and times an
 * infinite or NaN seed is what chain() gives; a zero slope must still
 * zero an infinite seed: 0 * exp(1000) along x). */
ADSIM_ALWAYS_INLINE double scaled(double slope, double seed) {
    return (isfinite(slope) && slope != 0.0) ? slope * seed : chain(slope, seed);
}

/* |x|: the side is fixed by a COMPARE recorded before the op */
static inline double adsim_abs_value(double x) { return fabs(x); }
static inline double adsim_abs_slope(double x) { return x >= 0.0 ? 1.0 : -1.0; }

/* sign(x): 0 stays 0 and NaN stays NaN; derivative zero */
static inline double adsim_sign_value(double x) {
    return x > 0.0 ? 1.0 : (x < 0.0 ? -1.0 : x);
}

/* pow(x, c) for an exponent the fused kernels hold as a literal: GCC,
 * free to ignore errno there (-fno-math-errno), computes pow(x, 0.5) as
 * sqrt(x) (and x^1.5 through it), which is NaN at x = -inf where pow gives
 * +inf; so x = -inf is taken apart, with pow's values there (C99 F.9.4.4). */
static inline double adsim_pow_fixed(double x, double c) {
    if (x == -INFINITY && c == c) {
        int odd = fabs(fmod(c, 2.0)) == 1.0;
        if (c == 0.0) return 1.0;
        return c > 0.0 ? (odd ? -INFINITY : INFINITY) : (odd ? -0.0 : 0.0);
    }
    return pow(x, c);
}

/* x^c: y' = c x^(c-1), y'' = c (c-1) x^(c-2); exact for c in {0, 1, 2}.
 * x^0.5 is NumPy's: a square root (NaN at -inf, -0 at -0, where pow gives
 * +inf and +0), with the SQRT row's derivatives. */
static inline double adsim_pow_c_value(double x, double c) {
    if (c == 0.5) return sqrt(x);
    return c == 2.0 ? x * x : adsim_pow_fixed(x, c);
}
static inline double adsim_pow_c_slope(double x, double c) {
    if (c == 0.0) return 0.0;
    if (c == 1.0) return 1.0;
    if (c == 2.0) return 2.0 * x;
    if (c == 0.5) return 0.5 / sqrt(x);
    return c * adsim_pow_fixed(x, c - 1.0);
}
static inline double adsim_pow_c_curvature(double x, double c) {
    if (c == 0.0 || c == 1.0) return 0.0;
    if (c == 2.0) return 2.0;
    if (c == 0.5) return -0.25 / (x * sqrt(x));
    return c * (c - 1.0) * adsim_pow_fixed(x, c - 2.0);
}

/* a^b with both operands varying (the POW row in adsim/ops.py): its partials
 * exact where b is 0 or 1, and ln a taken as 0 where a^b is 0 (the limit of
 * y ln a as a -> 0+) */
static inline double adsim_pow_log(double a, double y) { return y != 0.0 ? log(a) : 0.0; }
static inline double adsim_pow_am1(double a, double b) { return b != 1.0 ? pow(a, b - 1.0) : 1.0; }
static inline double adsim_pow_da(double a, double b) {
    return b != 0.0 ? b * adsim_pow_am1(a, b) : 0.0;
}
static inline double adsim_pow_daa(double a, double b) {
    return (b != 0.0 && b != 1.0) ? b * (b - 1.0) * pow(a, b - 2.0) : 0.0;
}

/* hypot(a, b) (the HYPOT row): partials a / y, b / y and second partials
 * b^2 / y^3, -a b / y^3, a^2 / y^3, which are 0 / 0 at the origin. There
 * the partials are 0, the zero subgradient of np.linalg.norm and of
 * sqrt(a * a + b * b), and the second partials the norm's: infinite on the
 * diagonal (1 / y), 0 across, so that every mode agrees with the norm */
static inline double adsim_hypot_d(double a, double y) { return y != 0.0 ? a / y : 0.0; }
static inline double adsim_hypot_dd(double c, double y) {
    return y != 0.0 ? c * c / (y * y * y) : INFINITY;
}
static inline double adsim_hypot_dab(double a, double b, double y) {
    return y != 0.0 ? -a * b / (y * y * y) : 0.0;
}

/* maximum(a, b) and minimum(a, b) (the MAXIMUM and MINIMUM rows): ties, and
 * NaN in a, take a; the partial in a is 1 where a is taken */
static inline double adsim_maximum_takes_a(double a, double b) {
    return (a >= b || a != a) ? 1.0 : 0.0;
}
static inline double adsim_maximum(double a, double b) { return (a >= b || a != a) ? a : b; }
static inline double adsim_minimum_takes_a(double a, double b) {
    return (a <= b || a != a) ? 1.0 : 0.0;
}
static inline double adsim_minimum(double a, double b) { return (a <= b || a != a) ? a : b; }

/* log(e^a + e^b) and log2(2^a + 2^b) (the LOGADDEXP, LOGADDEXP2 rows):
 * NumPy's npy_logaddexp and npy_logaddexp2, and the partial in a,
 * 1 / (1 + e^(b - a)), taken as 1/2 where a = b (equal infinities too) */
static inline double adsim_logaddexp(double a, double b) {
    if (a == b) return a + 0.693147180559945309417232121458176568;
    double d = a - b;
    if (d > 0.0) return a + log1p(exp(-d));
    if (d <= 0.0) return b + log1p(exp(d));
    return d;                                   /* NaN */
}
static inline double adsim_logaddexp_da(double a, double b) {
    return a == b ? 0.5 : 1.0 / (1.0 + exp(b - a));
}
static inline double adsim_logaddexp2(double a, double b) {
    if (a == b) return a + 1.0;
    double d = a - b;
    if (d > 0.0) return a + 1.442695040888963407359924681001892137 * log1p(exp2(-d));
    if (d <= 0.0) return b + 1.442695040888963407359924681001892137 * log1p(exp2(d));
    return d;
}
static inline double adsim_logaddexp2_da(double a, double b) {
    return a == b ? 0.5 : 1.0 / (1.0 + exp2(b - a));
}

/* c^x: y' = y ln c, y'' = y (ln c)^2; 0 where y = 0 (0^x for x > 0 and
 * inf^x for x < 0 are constant there, not 0 * inf = NaN) */
static inline double adsim_rpow_c_value(double x, double c) { return pow(c, x); }
static inline double adsim_rpow_c_slope(double y, double c) {
    return y * (y != 0.0 ? log(c) : 0.0);
}
static inline double adsim_rpow_c_curvature(double y, double c) {
    double lc = y != 0.0 ? log(c) : 0.0;
    return y * lc * lc;
}
#endif
