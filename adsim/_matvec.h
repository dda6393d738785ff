/* Matrix-vector products with several vectors in one pass over the matrix.
 *
 * A tangent sweep needs A x and A v, a second-order adjoint sweep A^T w and
 * A^T w_dot. For matrices larger than the caches the pass over memory is the
 * cost, and BLAS would make one pass per vector (dgemm with a few columns
 * does no better), so these kernels load each row once and use it for every
 * vector. On x86-64 with GCC the loops are also compiled for AVX2/FMA and the
 * variant is picked when the module loads; elsewhere the portable loop runs.
 * All matrix-vector products of a tape go through here, so every sweep
 * computes bitwise the same values on a given machine.
 */
#ifndef ADSIM_MATVEC_H
#define ADSIM_MATVEC_H

#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define ADSIM_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define ADSIM_CLONES
#endif

static inline void adsim_store(double *y, double value, int accumulate)
{
    if (accumulate)
        *y += value;
    else
        *y = value;
}

/* sum_{j0 <= j < k} r[j] x[j] in order: the tail after the vector loops
 * (and the whole sum where vector types are not available). */
static inline double adsim_dot_from(int64_t j0, int64_t k, const double *r, const double *x)
{
    double s = 0.0;
    for (int64_t j = j0; j < k; j++)
        s += r[j] * x[j];
    return s;
}

#if defined(__GNUC__)
/* Four doubles: AVX registers in the AVX2 variant, pairs of SSE2 registers
 * otherwise. Loads go through memcpy, which compiles to unaligned moves. */
typedef double adsim_v4 __attribute__((vector_size(32)));

static inline adsim_v4 adsim_load4(const double *p)
{
    adsim_v4 v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline double adsim_hsum(adsim_v4 a, adsim_v4 b)
{
    adsim_v4 s = a + b;
    return (s[0] + s[1]) + (s[2] + s[3]);
}

/* sum_j row_r[j] x[j] for four rows r: each load of x serves four rows,
 * and eight vector chains hide the latency of the additions. */
static inline void adsim_dot4(int64_t k, const double *r0, const double *r1,
                              const double *r2, const double *r3, const double *x,
                              double *out)
{
    adsim_v4 a0 = {0}, b0 = {0}, a1 = {0}, b1 = {0}, a2 = {0}, b2 = {0}, a3 = {0}, b3 = {0};
    int64_t j = 0;
    for (; j + 8 <= k; j += 8) {
        const adsim_v4 xa = adsim_load4(x + j), xb = adsim_load4(x + j + 4);
        a0 += adsim_load4(r0 + j) * xa;
        b0 += adsim_load4(r0 + j + 4) * xb;
        a1 += adsim_load4(r1 + j) * xa;
        b1 += adsim_load4(r1 + j + 4) * xb;
        a2 += adsim_load4(r2 + j) * xa;
        b2 += adsim_load4(r2 + j + 4) * xb;
        a3 += adsim_load4(r3 + j) * xa;
        b3 += adsim_load4(r3 + j + 4) * xb;
    }
    out[0] = adsim_hsum(a0, b0) + adsim_dot_from(j, k, r0, x);
    out[1] = adsim_hsum(a1, b1) + adsim_dot_from(j, k, r1, x);
    out[2] = adsim_hsum(a2, b2) + adsim_dot_from(j, k, r2, x);
    out[3] = adsim_hsum(a3, b3) + adsim_dot_from(j, k, r3, x);
}

/* The same sums for two rows and two vectors: each row is loaded once for
 * both vectors. Every (row, vector) sum is accumulated exactly as in
 * adsim_dot4, so a value computed with its tangents is bitwise the value
 * computed alone. out = [r0.x0, r1.x0, r0.x1, r1.x1]. */
static inline void adsim_dot2x2(int64_t k, const double *r0, const double *r1,
                                const double *x0, const double *x1, double *out)
{
    adsim_v4 a00 = {0}, b00 = {0}, a10 = {0}, b10 = {0};
    adsim_v4 a01 = {0}, b01 = {0}, a11 = {0}, b11 = {0};
    int64_t j = 0;
    for (; j + 8 <= k; j += 8) {
        const adsim_v4 ra0 = adsim_load4(r0 + j), rb0 = adsim_load4(r0 + j + 4);
        const adsim_v4 ra1 = adsim_load4(r1 + j), rb1 = adsim_load4(r1 + j + 4);
        const adsim_v4 xa0 = adsim_load4(x0 + j), xb0 = adsim_load4(x0 + j + 4);
        const adsim_v4 xa1 = adsim_load4(x1 + j), xb1 = adsim_load4(x1 + j + 4);
        a00 += ra0 * xa0;
        b00 += rb0 * xb0;
        a10 += ra1 * xa0;
        b10 += rb1 * xb0;
        a01 += ra0 * xa1;
        b01 += rb0 * xb1;
        a11 += ra1 * xa1;
        b11 += rb1 * xb1;
    }
    out[0] = adsim_hsum(a00, b00) + adsim_dot_from(j, k, r0, x0);
    out[1] = adsim_hsum(a10, b10) + adsim_dot_from(j, k, r1, x0);
    out[2] = adsim_hsum(a01, b01) + adsim_dot_from(j, k, r0, x1);
    out[3] = adsim_hsum(a11, b11) + adsim_dot_from(j, k, r1, x1);
}
#else
static inline void adsim_dot2x2(int64_t k, const double *r0, const double *r1,
                                const double *x0, const double *x1, double *out)
{
    out[0] = adsim_dot_from(0, k, r0, x0);
    out[1] = adsim_dot_from(0, k, r1, x0);
    out[2] = adsim_dot_from(0, k, r0, x1);
    out[3] = adsim_dot_from(0, k, r1, x1);
}

static inline void adsim_dot4(int64_t k, const double *r0, const double *r1,
                              const double *r2, const double *r3, const double *x,
                              double *out)
{
    out[0] = adsim_dot_from(0, k, r0, x);
    out[1] = adsim_dot_from(0, k, r1, x);
    out[2] = adsim_dot_from(0, k, r2, x);
    out[3] = adsim_dot_from(0, k, r3, x);
}
#endif

/* Y[d][i] (+)= sum_j A[i, j] X[d][j], d < D: A (m x k, row-major) times x_d,
 * four rows at a time (the last rows repeat a row and drop its results). */
ADSIM_CLONES
static void adsim_rows_dot(int64_t m, int64_t k, const double *A, int D,
                           double *const *X, double *const *Y, int accumulate)
{
    double out[4];
    for (int64_t i = 0; i < m; i += 4) {
        const double *r[4];
        for (int l = 0; l < 4; l++)
            r[l] = A + (i + l < m ? i + l : i) * k;
        int d = 0;
        for (; d + 2 <= D; d += 2)          /* vectors in pairs: rows loaded once per pair */
            for (int h = 0; h < 4; h += 2) {
                adsim_dot2x2(k, r[h], r[h + 1], X[d], X[d + 1], out);
                for (int l = 0; l < 2 && i + h + l < m; l++) {
                    adsim_store(Y[d] + i + h + l, out[l], accumulate);
                    adsim_store(Y[d + 1] + i + h + l, out[2 + l], accumulate);
                }
            }
        for (; d < D; d++) {
            adsim_dot4(k, r[0], r[1], r[2], r[3], X[d], out);
            for (int l = 0; l < 4 && i + l < m; l++)
                adsim_store(Y[d] + i + l, out[l], accumulate);
        }
    }
}

/* Y[d][j] (+)= sum_i X[d][i] A[i, j], d < D: x_d times A (m x k, row-major),
 * four rows per pass over y so that y is loaded and stored a quarter as often. */
ADSIM_CLONES
static void adsim_rows_axpy(int64_t m, int64_t k, const double *A, int D,
                            double *const *X, double *const *Y, int accumulate)
{
    if (!accumulate)
        for (int d = 0; d < D; d++)
            memset(Y[d], 0, (size_t)k * sizeof(double));
    int64_t i = 0;
    for (; i + 4 <= m; i += 4) {
        const double *r0 = A + i * k, *r1 = r0 + k, *r2 = r1 + k, *r3 = r2 + k;
        int d = 0;
        for (; d + 2 <= D; d += 2) {        /* vectors in pairs: rows loaded once per pair */
            const double c0 = X[d][i], c1 = X[d][i + 1], c2 = X[d][i + 2], c3 = X[d][i + 3];
            const double e0 = X[d + 1][i], e1 = X[d + 1][i + 1], e2 = X[d + 1][i + 2],
                         e3 = X[d + 1][i + 3];
            double *restrict y = Y[d];
            double *restrict z = Y[d + 1];
            for (int64_t j = 0; j < k; j++) {
                y[j] += (c0 * r0[j] + c1 * r1[j]) + (c2 * r2[j] + c3 * r3[j]);
                z[j] += (e0 * r0[j] + e1 * r1[j]) + (e2 * r2[j] + e3 * r3[j]);
            }
        }
        for (; d < D; d++) {
            const double c0 = X[d][i], c1 = X[d][i + 1], c2 = X[d][i + 2], c3 = X[d][i + 3];
            double *restrict y = Y[d];
            for (int64_t j = 0; j < k; j++)
                y[j] += (c0 * r0[j] + c1 * r1[j]) + (c2 * r2[j] + c3 * r3[j]);
        }
    }
    for (; i < m; i++) {
        const double *row = A + i * k;
        for (int d = 0; d < D; d++) {
            const double c = X[d][i];
            double *restrict y = Y[d];
            for (int64_t j = 0; j < k; j++)
                y[j] += c * row[j];
        }
    }
}

/* The dots of four rows r[0..3] of A with x over the columns [from, k), into
 * out[0..3], and z[j] += c[0] r[0][j] + ... + c[3] r[3][j] over the same
 * columns: one pass over the four rows serves both products (the
 * quadratic form's kernels below). */
static inline void adsim_four_rows_dot_axpy(int64_t from, int64_t k, const double *const *r,
                                            const double *c, const double *x, double *z,
                                            double *out)
{
    const double *r0 = r[0], *r1 = r[1], *r2 = r[2], *r3 = r[3];
    const double c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3];
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int64_t j = from;
#if defined(__GNUC__)
    const adsim_v4 e0 = {c0, c0, c0, c0}, e1 = {c1, c1, c1, c1};
    const adsim_v4 e2 = {c2, c2, c2, c2}, e3 = {c3, c3, c3, c3};
    adsim_v4 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
    for (; j + 4 <= k; j += 4) {
        const adsim_v4 xv = adsim_load4(x + j);
        const adsim_v4 v0 = adsim_load4(r0 + j), v1 = adsim_load4(r1 + j);
        const adsim_v4 v2 = adsim_load4(r2 + j), v3 = adsim_load4(r3 + j);
        adsim_v4 zv = adsim_load4(z + j);
        a0 += v0 * xv;
        a1 += v1 * xv;
        a2 += v2 * xv;
        a3 += v3 * xv;
        zv += (e0 * v0 + e1 * v1) + (e2 * v2 + e3 * v3);
        memcpy(z + j, &zv, sizeof zv);
    }
    s0 = (a0[0] + a0[1]) + (a0[2] + a0[3]);
    s1 = (a1[0] + a1[1]) + (a1[2] + a1[3]);
    s2 = (a2[0] + a2[1]) + (a2[2] + a2[3]);
    s3 = (a3[0] + a3[1]) + (a3[2] + a3[3]);
#endif
    for (; j < k; j++) {
        s0 += r0[j] * x[j];
        s1 += r1[j] * x[j];
        s2 += r2[j] * x[j];
        s3 += r3[j] * x[j];
        z[j] += (c0 * r0[j] + c1 * r1[j]) + (c2 * r2[j] + c3 * r3[j]);
    }
    out[0] = s0;
    out[1] = s1;
    out[2] = s2;
    out[3] = s3;
}

/* y = A x and z = A^T x (z[j] = sum_i x[i] A[i, j]) for a square A (k x k,
 * row-major) in one pass over A: each group of four rows is loaded once and
 * serves both products (the gradient (A + A^T) x of the quadratic form
 * x^T A x, whose value is x . y). Used for matrices that are not symmetric. */
ADSIM_CLONES
static void adsim_rows_dot_axpy(int64_t k, const double *A, const double *x, double *y,
                                double *z)
{
    memset(z, 0, (size_t)k * sizeof(double));
    int64_t i = 0;
    for (; i + 4 <= k; i += 4) {
        const double *r[4] = {A + i * k, A + (i + 1) * k, A + (i + 2) * k, A + (i + 3) * k};
        adsim_four_rows_dot_axpy(0, k, r, x + i, x, z, y + i);
    }
    for (; i < k; i++) {
        const double *row = A + i * k;
        const double c = x[i];
        double s = 0.0;
        for (int64_t j = 0; j < k; j++) {
            s += row[j] * x[j];
            z[j] += c * row[j];
        }
        y[i] = s;
    }
}

/* y = A x for a symmetric A (k x k, row-major) from its upper triangle and
 * its 4 x 4 diagonal blocks: half the memory a general product reads (the
 * gradient 2 A x of a symmetric quadratic form). Rows go in groups of four:
 * each row's dot runs over the columns from its group's first on, and the
 * group's entries right of its block add x[row] A[row, j] into y[j], the
 * entry A[j, row] of the lower triangle mirrored. */
ADSIM_CLONES
static void adsim_symmetric_rows_dot(int64_t k, const double *A, const double *x, double *y)
{
    memset(y, 0, (size_t)k * sizeof(double));
    int64_t i = 0;
    for (; i + 4 <= k; i += 4) {
        const double *r[4] = {A + i * k, A + (i + 1) * k, A + (i + 2) * k, A + (i + 3) * k};
        double out[4];
        adsim_four_rows_dot_axpy(i + 4, k, r, x + i, x, y, out);
        for (int l = 0; l < 4; l++) {
            double s = out[l];
            for (int64_t j = i; j < i + 4; j++)         /* the diagonal block */
                s += r[l][j] * x[j];
            y[i + l] += s;
        }
    }
    for (; i < k; i++) {                                /* the last rows, one at a time */
        const double *row = A + i * k;
        const double c = x[i];
        double s = row[i] * c;
        for (int64_t j = i + 1; j < k; j++) {
            s += row[j] * x[j];
            y[j] += c * row[j];
        }
        y[i] += s;
    }
}

#endif
