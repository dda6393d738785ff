# cython: language_level=3
"""Content digests of arrays: how the tape cache sees that a large array
changed without keeping a copy of it, at about the speed memory is read.

Two universal hash families [1]_, keyed at random when adsim is imported:

1. The array's bytes, in C order of its elements, are cut into blocks of
   2 KB (the last one padded with zero bytes), and each block is compressed
   to 32 bytes by NH [2]_ with four Toeplitz-shifted keys: for 8-byte words
   m_i = (lo_i, hi_i) and key words k_i, lane t (t = 0..3) is

       sum_i ((lo_i + klo_(i+t)) mod 2^32) ((hi_i + khi_(i+t)) mod 2^32)  mod 2^64.

   Two different blocks give the same four lanes with probability at most
   2^-128 (Toeplitz NH with four iterations of 32-bit words [2]_). This is
   one 32 x 32 -> 64-bit product per lane and word: four (AVX2) or two (SSE2)
   words per instruction.
2. The lanes of all blocks, as 32-bit limbs, then the byte count as two
   limbs, are hashed by two polynomials over the prime field p = 2^61 - 1
   with independent keys: c_1 .. c_L -> sum_i c_i k^(L - i) mod p. Two
   different limb strings of equal length collide with probability at most
   (L / (p - 1))^2.

So two different arrays of equal byte length get the same digest with
probability at most 2^-128 + ((8 B + 2) / (2^61 - 2))^2 for B blocks: below
10^-23 for 800 MB. The bound holds for any change made without knowing the
keys, which never leave the process. The GIL is released while hashing.

References
----------
.. [1] J. L. Carter and M. N. Wegman, "Universal classes of hash functions",
   J. Comput. Syst. Sci. 18(2), 143-154, 1979.
.. [2] J. Black, S. Halevi, H. Krawczyk, T. Krovetz and P. Rogaway, "UMAC:
   Fast and secure message authentication", CRYPTO 1999, LNCS 1666, 216-233
   (NH and its Toeplitz extension, section 4).
"""
import os

import numpy as np

cimport numpy as cnp
from libc.stdint cimport uint64_t

cnp.import_array()

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    #if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    #include <immintrin.h>
    #define ADSIM_X86 1
    #endif

    #define ADSIM_P61 ((uint64_t)0x1FFFFFFFFFFFFFFFULL)

    /* 128-bit sums of 64 x 64-bit products, and their reduction modulo p */
    #if defined(__SIZEOF_INT128__) && !defined(ADSIM_NO_INT128)
    typedef unsigned __int128 adsim_u128;
    static inline adsim_u128 adsim_mul(uint64_t a, uint64_t b) { return (adsim_u128)a * b; }
    static inline adsim_u128 adsim_add(adsim_u128 x, adsim_u128 y) { return x + y; }
    static inline adsim_u128 adsim_add64(adsim_u128 x, uint64_t y) { return x + y; }
    static inline uint64_t adsim_low(adsim_u128 x) { return (uint64_t)x; }
    static inline uint64_t adsim_shift61(adsim_u128 x) { return (uint64_t)(x >> 61); }
    #else                                   /* compilers without a 128-bit integer */
    typedef struct { uint64_t lo, hi; } adsim_u128;
    static inline adsim_u128 adsim_mul(uint64_t a, uint64_t b) {
        uint64_t a0 = a & 0xFFFFFFFFu, a1 = a >> 32, b0 = b & 0xFFFFFFFFu, b1 = b >> 32;
        uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
        uint64_t mid = (p00 >> 32) + (p01 & 0xFFFFFFFFu) + (p10 & 0xFFFFFFFFu);
        adsim_u128 r;
        r.lo = (mid << 32) | (p00 & 0xFFFFFFFFu);
        r.hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
        return r;
    }
    static inline adsim_u128 adsim_add(adsim_u128 x, adsim_u128 y) {
        adsim_u128 r;
        r.lo = x.lo + y.lo;
        r.hi = x.hi + y.hi + (r.lo < x.lo);
        return r;
    }
    static inline adsim_u128 adsim_add64(adsim_u128 x, uint64_t y) {
        adsim_u128 r;
        r.lo = x.lo + y;
        r.hi = x.hi + (r.lo < x.lo);
        return r;
    }
    static inline uint64_t adsim_low(adsim_u128 x) { return x.lo; }
    static inline uint64_t adsim_shift61(adsim_u128 x) { return (x.hi << 3) | (x.lo >> 61); }
    #endif
    #define ADSIM_BLOCK_WORDS 256
    #define ADSIM_BLOCK_BYTES (8 * ADSIM_BLOCK_WORDS)
    #define ADSIM_NH_KEY_WORDS (ADSIM_BLOCK_WORDS + 3)

    enum { ADSIM_PORTABLE = 0, ADSIM_SSE2 = 1, ADSIM_AVX2 = 2 };

    typedef struct {
        const uint64_t *nh_key;       /* ADSIM_NH_KEY_WORDS words */
        uint64_t h[2];                /* the two polynomial hashes, each < 2^62 */
        uint64_t power[2][9];         /* k^0 .. k^8 mod p of each polynomial key */
        unsigned char pending[ADSIM_BLOCK_BYTES];   /* bytes not yet making a block */
        size_t n_pending;
        uint64_t n_bytes;
        int kernel;
    } adsim_digest;

    /* x < 2^124 -> a value < 2^62 congruent to x mod p (2^61 = 1 mod p) */
    static inline uint64_t adsim_fold(adsim_u128 x) {
        uint64_t y = (adsim_low(x) & ADSIM_P61) + adsim_shift61(x);
        return (y & ADSIM_P61) + (y >> 61);
    }

    /* ---- NH of one block: four Toeplitz lanes ---------------------------- */
    static void adsim_nh_portable(const unsigned char *p, const uint64_t *key, uint64_t out[4]) {
        uint64_t w[ADSIM_BLOCK_WORDS];
        memcpy(w, p, ADSIM_BLOCK_BYTES);
        for (int t = 0; t < 4; t++) {
            uint64_t a = 0;
            for (int i = 0; i < ADSIM_BLOCK_WORDS; i++) {
                uint32_t lo = (uint32_t)w[i] + (uint32_t)key[i + t];
                uint32_t hi = (uint32_t)(w[i] >> 32) + (uint32_t)(key[i + t] >> 32);
                a += (uint64_t)lo * hi;
            }
            out[t] = a;
        }
    }

    #ifdef ADSIM_X86
    __attribute__((target("sse2")))
    static void adsim_nh_sse2(const unsigned char *p, const uint64_t *key, uint64_t out[4]) {
        __m128i a[4] = {_mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128(),
                        _mm_setzero_si128()};
        for (int i = 0; i < ADSIM_BLOCK_WORDS; i += 2) {
            __m128i m = _mm_loadu_si128((const __m128i *)(p + 8 * i));
            for (int t = 0; t < 4; t++) {
                __m128i x = _mm_add_epi32(m, _mm_loadu_si128((const __m128i *)(key + i + t)));
                a[t] = _mm_add_epi64(a[t], _mm_mul_epu32(x, _mm_srli_epi64(x, 32)));
            }
        }
        for (int t = 0; t < 4; t++) {
            uint64_t s[2];
            _mm_storeu_si128((__m128i *)s, a[t]);
            out[t] = s[0] + s[1];
        }
    }

    __attribute__((target("avx2")))
    static void adsim_nh_avx2(const unsigned char *p, const uint64_t *key, uint64_t out[4]) {
        __m256i a[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(),
                        _mm256_setzero_si256(), _mm256_setzero_si256()};
        for (int i = 0; i < ADSIM_BLOCK_WORDS; i += 4) {
            __m256i m = _mm256_loadu_si256((const __m256i *)(p + 8 * i));
            for (int t = 0; t < 4; t++) {
                __m256i x = _mm256_add_epi32(
                    m, _mm256_loadu_si256((const __m256i *)(key + i + t)));
                a[t] = _mm256_add_epi64(a[t], _mm256_mul_epu32(x, _mm256_srli_epi64(x, 32)));
            }
        }
        for (int t = 0; t < 4; t++) {
            uint64_t s[4];
            _mm256_storeu_si256((__m256i *)s, a[t]);
            out[t] = s[0] + s[1] + s[2] + s[3];
        }
    }
    #endif

    /* the kernels this machine runs, best last */
    static int adsim_best_kernel(void) {
    #ifdef ADSIM_X86
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") ? ADSIM_AVX2 : ADSIM_SSE2;
    #else
        return ADSIM_PORTABLE;
    #endif
    }

    /* ---- the polynomial over the blocks' lanes ----------------------------- */
    static void adsim_digest_init(adsim_digest *d, const uint64_t *nh_key, uint64_t k0,
                                  uint64_t k1, int kernel) {
        uint64_t keys[2] = {k0, k1};
        for (int j = 0; j < 2; j++) {
            d->h[j] = 0;
            d->power[j][0] = 1;
            for (int e = 1; e < 9; e++) {
                uint64_t v = adsim_fold(adsim_mul(d->power[j][e - 1], keys[j]));
                d->power[j][e] = v >= ADSIM_P61 ? v - ADSIM_P61 : v;
            }
        }
        d->nh_key = nh_key;
        d->n_pending = 0;
        d->n_bytes = 0;
        d->kernel = kernel;
    }

    /* eight limbs (four words): h <- h k^8 + c_1 k^7 + ... + c_8 */
    static void adsim_poly_words(adsim_digest *d, const uint64_t w[4]) {
        for (int j = 0; j < 2; j++) {
            const uint64_t *k = d->power[j];
            adsim_u128 s = adsim_mul(d->h[j], k[8]);
            for (int i = 0; i < 4; i++) {
                s = adsim_add(s, adsim_mul(w[i] & 0xFFFFFFFFu, k[7 - 2 * i]));
                s = adsim_add(s, adsim_mul(w[i] >> 32, k[6 - 2 * i]));
            }
            d->h[j] = adsim_fold(s);
        }
    }

    static void adsim_digest_block(adsim_digest *d, const unsigned char *p) {
        uint64_t lanes[4];
    #ifdef ADSIM_X86
        if (d->kernel == ADSIM_AVX2) adsim_nh_avx2(p, d->nh_key, lanes);
        else if (d->kernel == ADSIM_SSE2) adsim_nh_sse2(p, d->nh_key, lanes);
        else
    #endif
        adsim_nh_portable(p, d->nh_key, lanes);
        adsim_poly_words(d, lanes);
    }

    static void adsim_digest_feed(adsim_digest *d, const unsigned char *p, size_t n) {
        d->n_bytes += n;
        if (d->n_pending) {
            size_t take = ADSIM_BLOCK_BYTES - d->n_pending;
            if (take > n) take = n;
            memcpy(d->pending + d->n_pending, p, take);
            d->n_pending += take;
            p += take;
            n -= take;
            if (d->n_pending < ADSIM_BLOCK_BYTES) return;
            adsim_digest_block(d, d->pending);
            d->n_pending = 0;
        }
        for (; n >= ADSIM_BLOCK_BYTES; n -= ADSIM_BLOCK_BYTES, p += ADSIM_BLOCK_BYTES)
            adsim_digest_block(d, p);
        memcpy(d->pending, p, n);
        d->n_pending = n;
    }

    /* the last block zero-padded, then the byte count as two limbs */
    static void adsim_digest_finish(adsim_digest *d, uint64_t out[2]) {
        if (d->n_pending) {
            memset(d->pending + d->n_pending, 0, ADSIM_BLOCK_BYTES - d->n_pending);
            adsim_digest_block(d, d->pending);
        }
        for (int j = 0; j < 2; j++) {
            adsim_u128 s = adsim_add64(
                adsim_add(adsim_mul(d->h[j], d->power[j][2]),
                          adsim_mul(d->n_bytes & 0xFFFFFFFFu, d->power[j][1])),
                d->n_bytes >> 32);
            uint64_t h = adsim_fold(s);
            while (h >= ADSIM_P61) h -= ADSIM_P61;
            out[j] = h;
        }
    }
    """
    int ADSIM_BLOCK_WORDS
    int ADSIM_NH_KEY_WORDS
    int ADSIM_PORTABLE, ADSIM_SSE2, ADSIM_AVX2
    ctypedef struct adsim_digest:
        pass
    int adsim_best_kernel()
    void adsim_digest_init(adsim_digest *d, const uint64_t *nh_key, uint64_t k0, uint64_t k1,
                           int kernel) nogil
    void adsim_digest_feed(adsim_digest *d, const unsigned char *p, size_t n) nogil
    void adsim_digest_finish(adsim_digest *d, uint64_t out[2]) nogil

P61 = (1 << 61) - 1
BLOCK_WORDS = ADSIM_BLOCK_WORDS
_KERNELS = {"portable": ADSIM_PORTABLE, "sse2": ADSIM_SSE2, "avx2": ADSIM_AVX2}
_BEST = adsim_best_kernel()
KERNELS = tuple(name for name, k in _KERNELS.items() if k <= _BEST)  # this machine's


def _poly_key():
    return int.from_bytes(os.urandom(8), "little") % (P61 - 1) + 1


# this process's keys (NH key words, two polynomial keys); tests read them
KEYS = (np.frombuffer(os.urandom(8 * ADSIM_NH_KEY_WORDS), dtype=np.uint64).copy(),
        _poly_key(), _poly_key())


cdef void _feed_strided(adsim_digest *d, const char *data, int axis, int ndim,
                        const cnp.npy_intp *shape, const cnp.npy_intp *strides,
                        size_t itemsize) noexcept nogil:
    """The elements from ``axis`` on, in C order: whole rows where the last
    axis is contiguous, element by element where it is not."""
    cdef cnp.npy_intp i
    if axis == ndim - 1 and strides[axis] == <cnp.npy_intp>itemsize:
        adsim_digest_feed(d, <const unsigned char *>data, <size_t>shape[axis] * itemsize)
    elif axis == ndim - 1:
        for i in range(shape[axis]):
            adsim_digest_feed(d, <const unsigned char *>(data + i * strides[axis]), itemsize)
    else:
        for i in range(shape[axis]):
            _feed_strided(d, data + i * strides[axis], axis + 1, ndim, shape, strides, itemsize)


def digest(cnp.ndarray a not None, keys=None, kernel=None):
    """The content digest of ``a`` (an int below 2^125): its elements'
    bytes in C order, whatever its strides; see the module docstring.
    ``keys`` (as :data:`KEYS`) and ``kernel`` (one of :data:`KERNELS`)
    replace this process's choices, for tests."""
    if a.dtype.hasobject:
        raise TypeError("adsim: an array of Python objects has no content digest")
    nh_key, k0, k1 = KEYS if keys is None else keys
    cdef uint64_t[::1] key_words = nh_key
    if key_words.shape[0] != ADSIM_NH_KEY_WORDS or not 0 < k0 < P61 or not 0 < k1 < P61:
        raise ValueError("adsim: digest keys are malformed")
    cdef int chosen = _BEST if kernel is None else _KERNELS[kernel]
    if chosen > _BEST:
        raise ValueError(f"adsim: this machine cannot run the {kernel} kernel")
    cdef adsim_digest d
    cdef uint64_t out[2]
    cdef uint64_t c0 = k0, c1 = k1
    cdef int ndim = a.ndim
    cdef size_t itemsize = a.itemsize
    cdef const char *data = <const char *>cnp.PyArray_DATA(a)
    cdef bint contiguous = cnp.PyArray_IS_C_CONTIGUOUS(a)
    cdef cnp.npy_intp size = a.size
    cdef size_t nbytes = a.nbytes
    cdef const cnp.npy_intp *shape = cnp.PyArray_DIMS(a)
    cdef const cnp.npy_intp *strides = cnp.PyArray_STRIDES(a)
    with nogil:
        adsim_digest_init(&d, &key_words[0], c0, c1, chosen)
        if size == 0:
            pass
        elif contiguous or ndim == 0:
            adsim_digest_feed(&d, <const unsigned char *>data, nbytes)
        else:
            _feed_strided(&d, data, 0, ndim, shape, strides, itemsize)
        adsim_digest_finish(&d, out)
    return (int(out[0]) << 64) | int(out[1])


# ---- runs of Python numbers ------------------------------------------------------

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.float cimport PyFloat_AS_DOUBLE
from cpython.long cimport PyLong_AsLongLongAndOverflow
from cpython.ref cimport PyObject
from libc.stdint cimport int64_t

cdef extern from "Python.h":
    Py_ssize_t PySequence_Fast_GET_SIZE(object o)
    PyObject **PySequence_Fast_ITEMS(object o)


def number_run(items):
    """The exact contents of a list or tuple whose items all have the type
    of the first, ``float``, ``numpy.float64`` or ``int`` (within 64 bits),
    as bytes: IEEE bits of floats (NaNs and signed zeros count), values of
    ints; None for anything else. About a nanosecond per item."""
    if type(items) is not list and type(items) is not tuple or not items:
        return None
    cdef Py_ssize_t n = PySequence_Fast_GET_SIZE(items), i
    cdef PyObject **item = PySequence_Fast_ITEMS(items)
    kind = type(items[0])
    cdef bint floats = kind is float or kind is np.float64
    if not floats and kind is not int:
        return None
    out = PyBytes_FromStringAndSize(NULL, n * 8)
    cdef double *as_double = <double *>PyBytes_AS_STRING(out)
    cdef int64_t *as_int = <int64_t *>as_double
    cdef int overflow = 0
    for i in range(n):
        if type(<object>item[i]) is not kind:
            return None
        if floats:
            as_double[i] = PyFloat_AS_DOUBLE(<object>item[i])
        else:
            as_int[i] = PyLong_AsLongLongAndOverflow(<object>item[i], &overflow)
            if overflow:
                return None
    return out


def all_of_type(items, kind):
    """Whether every item of a list or tuple has exactly the type ``kind``."""
    if type(items) is not list and type(items) is not tuple:
        raise TypeError("adsim: all_of_type takes a list or a tuple")
    cdef Py_ssize_t n = PySequence_Fast_GET_SIZE(items), i
    cdef PyObject **item = PySequence_Fast_ITEMS(items)
    for i in range(n):
        if type(<object>item[i]) is not kind:
            return False
    return True
