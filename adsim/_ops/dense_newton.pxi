# Dense Newton solves of solve_ivp's implicit methods in C: the value and the
# reverse-sweep adjoint of the CALLBACK ops of adsim/integrate/_dense_solve.py,
# computed on the sweep's arrays with LAPACK (getrf/getrs, complex for
# Radau's complex system), so that replaying a step does not call Python per
# solve. Their tangent and second-order rules stay in Python
# (adsim/integrate/_newton_solve.py, which also derives the rules below).
#
# A solve's operands: J's values (n*n, row-major), its coefficients (one, or
# alpha and beta) and the right-hand side (n; 2n stacked [real, imag] for the
# complex form). The matrices, formed as SciPy forms them:
#
#   shifted           A = c I - J
#   identity_minus    A = I - c J
#   shifted_complex   A = (alpha + i beta) I - J
#
# A solve is x = A^{-1} b; a transposed solve x = A^{-T} b (A^{-H} b for the
# complex form). Adjoint of x = A^{-1} b: u = A^{-T} x_bar (A^{-H}) is b's
# adjoint and each coefficient p of A (J's values included) gets
# -Re(u^H dA/dp x); a transposed solve swaps the roles: u = A^{-1} x_bar and
# p gets -Re(x^H dA/dp u). A matrix that is singular or not finite gives NaN
# solutions (the methods count them as a failed Newton iteration).
#
# The factorisations are kept per thread (DenseFactors: a FactorCache for
# each thread that solves), so the compiled rules run without the GIL and
# threads replaying one tape never share one. A cache serves one solve at a
# time: no rule calls Python, or another rule, while it holds an entry.
#
# Compiled into adsim/_callback.pyx.

cimport scipy.linalg.cython_lapack as lapack
from libc.string cimport memcmp, memmove
from libc.math cimport NAN, isfinite
import threading

cdef enum:
    SHIFTED = 0
    IDENTITY_MINUS = 1
    SHIFTED_COMPLEX = 2

cdef dict FORM_CODES = {"shifted": SHIFTED, "identity_minus": IDENTITY_MINUS,
                        "shifted_complex": SHIFTED_COMPLEX}


ctypedef struct FactorCache:        # one thread's LU factorisations of one problem
    int n                           # equations
    int kept                        # entries
    int64_t clock
    int* form                       # per entry: its form, -1 while empty
    int64_t* used                   # per entry: clock of its last use
    double* scalars                 # per entry: its 2 coefficients (real forms: c, 0)
    double* data                    # per entry: J's n*n values
    double* lu                      # per entry: 2*n*n doubles (complex factors use all)
    int* piv                        # per entry: n pivots
    char* singular                  # per entry: singular or not finite
    double* work                    # 2n complex numbers: a complex right-hand side
    double* u                       # 2n: an adjoint's solution


cdef int cache_entry(FactorCache* f, int form, const double* scalars,
                     const double* J) noexcept nogil:
    """The entry holding the factors of this matrix (its form, coefficients
    and J's values, compared bit for bit); factored now, in place of the
    least recently used, if none does."""
    cdef size_t nn = <size_t>f.n * f.n
    cdef int k, oldest = 0
    f.clock += 1
    for k in range(f.kept):
        if f.form[k] == form and \
                memcmp(f.scalars + 2 * k, scalars, 2 * sizeof(double)) == 0 and \
                memcmp(f.data + k * nn, J, nn * sizeof(double)) == 0:
            f.used[k] = f.clock
            return k
        if f.used[k] < f.used[oldest]:
            oldest = k
    cache_factor(f, oldest, form, scalars, J)
    f.used[oldest] = f.clock
    return oldest


cdef void cache_factor(FactorCache* f, int k, int form, const double* scalars,
                       const double* J) noexcept nogil:
    cdef int n = f.n, i, j, info = 0
    cdef size_t nn = <size_t>n * n
    cdef double* A = f.lu + 2 * k * nn
    cdef double complex* Z = <double complex*>A
    cdef double c = scalars[0], beta = scalars[1], delta, v
    cdef bint finite = True
    f.form[k] = form
    memcpy(f.scalars + 2 * k, scalars, 2 * sizeof(double))
    memcpy(f.data + k * nn, J, nn * sizeof(double))
    # column-major, as LAPACK reads it: A[i + j n] is row i, column j;
    # delta * c rather than c on the diagonal alone, as NumPy's c * I
    for j in range(n):
        for i in range(n):
            delta = 1.0 if i == j else 0.0
            if form == SHIFTED:
                v = c * delta - J[i * n + j]
            elif form == IDENTITY_MINUS:
                v = delta - c * J[i * n + j]
            else:
                v = c * delta - J[i * n + j]
                Z[i + j * n] = v + 1j * (beta * delta)
                finite = finite and isfinite(v) and isfinite(beta * delta)
                continue
            A[i + j * n] = v
            finite = finite and isfinite(v)
    if finite:
        if form == SHIFTED_COMPLEX:
            lapack.zgetrf(&n, &n, Z, &n, f.piv + k * n, &info)
        else:
            lapack.dgetrf(&n, &n, A, &n, f.piv + k * n, &info)
    f.singular[k] = not finite or info != 0     # info > 0: an exactly zero pivot


cdef void cache_solve(FactorCache* f, int k, bint transposed, const double* b,
                      double* x) noexcept nogil:
    """x = A^{-1} b (A^{-T} b, A^{-H} b for the complex form) with entry k's
    factors; b and x may be the same array."""
    cdef int n = f.n, one = 1, info = 0, i
    cdef int m = 2 * n if f.form[k] == SHIFTED_COMPLEX else n
    cdef size_t nn = <size_t>n * n
    cdef char trans
    cdef double complex* z = <double complex*>f.work
    if f.singular[k]:
        for i in range(m):
            x[i] = NAN
        return
    if f.form[k] == SHIFTED_COMPLEX:
        trans = b'C' if transposed else b'N'
        for i in range(n):
            z[i] = b[i] + 1j * b[n + i]
        lapack.zgetrs(&trans, &n, &one, <double complex*>(f.lu + 2 * k * nn), &n,
                      f.piv + k * n, z, &n, &info)
        for i in range(n):
            x[i] = z[i].real
            x[n + i] = z[i].imag
    else:
        trans = b'T' if transposed else b'N'
        memmove(x, b, n * sizeof(double))
        lapack.dgetrs(&trans, &n, &one, f.lu + 2 * k * nn, &n, f.piv + k * n, x, &n, &info)


cdef class ThreadFactors:
    """One thread's FactorCache (its memory owned here)."""

    cdef FactorCache c

    def __cinit__(self, int n, int kept):
        cdef size_t nn = <size_t>n * n
        cdef int k
        self.c.n, self.c.kept = n, kept
        self.c.form = <int*>malloc(kept * sizeof(int))
        self.c.used = <int64_t*>calloc(kept, sizeof(int64_t))
        self.c.scalars = <double*>calloc(2 * kept, sizeof(double))
        self.c.data = <double*>malloc(kept * nn * sizeof(double))
        self.c.lu = <double*>malloc(2 * kept * nn * sizeof(double))
        self.c.piv = <int*>malloc(kept * n * sizeof(int))
        self.c.singular = <char*>calloc(kept, sizeof(char))
        self.c.work = <double*>malloc(4 * n * sizeof(double))
        self.c.u = <double*>malloc(2 * n * sizeof(double))
        if self.c.form == NULL or self.c.used == NULL or self.c.scalars == NULL or \
                self.c.data == NULL or self.c.lu == NULL or self.c.piv == NULL or \
                self.c.singular == NULL or self.c.work == NULL or self.c.u == NULL:
            raise MemoryError(f"adsim: no memory for {kept} LU factorisations of order {n}")
        for k in range(kept):
            self.c.form[k] = -1

    def __dealloc__(self):
        free(self.c.form)
        free(self.c.used)
        free(self.c.scalars)
        free(self.c.data)
        free(self.c.lu)
        free(self.c.piv)
        free(self.c.singular)
        free(self.c.work)
        free(self.c.u)


cdef class DenseFactors:
    """The LU factorisations of one problem's Newton matrices (``n``
    equations): per thread, the ``kept`` most recently used, each keyed by
    its exact matrix (form, coefficients and J's values, compared bit for
    bit), so a step's Newton iterations, error estimate and adjoints share
    one factorisation as SciPy reuses its factors. Each thread has its own
    (made at its first solve, dropped with the thread), so the compiled
    rules use them without the GIL and concurrent replays never share one;
    a factorisation is a function of its matrix, so results do not depend
    on which thread's cache held it."""

    cdef readonly int n
    cdef readonly int kept
    cdef object local                 # threading.local: the thread's ThreadFactors

    def __cinit__(self, int n, int kept):
        if n < 1 or kept < 1:
            raise ValueError(f"adsim: dense Newton factors of n={n}, kept={kept}")
        self.n, self.kept = n, kept
        self.local = threading.local()

    cdef ThreadFactors mine(self):
        """The calling thread's factorisations (GIL held)."""
        cache = getattr(self.local, "factors", None)
        if cache is None:
            cache = self.local.factors = ThreadFactors(self.n, self.kept)
        return <ThreadFactors>cache

    @property
    def held(self):
        """How many factorisations the calling thread keeps now."""
        cdef ThreadFactors mine = self.mine()
        return sum(1 for k in range(self.kept) if mine.c.form[k] >= 0)

    def solution(self, str form, bint transposed, data, tuple scalars, b):
        """The solve on plain arrays (the rules run in Python: recording,
        tangents, second order): a new array."""
        cdef int code = form_code(form)
        cdef cnp.ndarray J = np.ascontiguousarray(data, dtype=np.float64).reshape(-1)
        cdef cnp.ndarray rhs = np.ascontiguousarray(b, dtype=np.float64).reshape(-1)
        cdef double sc[2]
        cdef int m = 2 * self.n if code == SHIFTED_COMPLEX else self.n
        cdef FactorCache* f = &self.mine().c
        if J.shape[0] != <Py_ssize_t>self.n * self.n or rhs.shape[0] != m or \
                len(scalars) != (2 if code == SHIFTED_COMPLEX else 1):
            raise ValueError(f"adsim: a dense Newton solve of order {self.n} given "
                             f"{J.shape[0]} values of J, {len(scalars)} coefficients and a "
                             f"right-hand side of {rhs.shape[0]}")
        sc[0] = float(scalars[0])
        sc[1] = float(scalars[1]) if code == SHIFTED_COMPLEX else 0.0
        out = np.empty(m, dtype=np.float64)
        cache_solve(f, cache_entry(f, code, sc, <double*>cnp.PyArray_DATA(J)), transposed,
                    <double*>cnp.PyArray_DATA(rhs), <double*>cnp.PyArray_DATA(out))
        return out


cdef int form_code(str form) except -1:
    code = FORM_CODES.get(form)
    if code is None:
        raise ValueError(f"adsim: no Newton matrix form {form!r}; one of {sorted(FORM_CODES)}")
    return code


ctypedef struct DenseSolve:         # the constants of one kind of solve
    int n                           # equations
    int form                        # SHIFTED, IDENTITY_MINUS or SHIFTED_COMPLEX
    bint transposed


cdef class DenseNewtonSolve(CompiledRules):
    """The compiled value and adjoint of one kind of dense Newton solve
    (``form``, ``transposed``) with the factors kept in ``factors``."""

    cdef readonly DenseFactors factors
    cdef DenseSolve spec

    def __cinit__(self, DenseFactors factors not None, str form, bint transposed):
        self.factors = factors
        self.spec.n, self.spec.form, self.spec.transposed = factors.n, form_code(form), transposed

    @property
    def form(self):
        return self.spec.form

    @property
    def transposed(self):
        return bool(self.spec.transposed)

    cdef object bind(self, CompiledOp* op):
        cdef ThreadFactors mine = self.factors.mine()
        op.value = dense_solve_value
        op.adjoint = dense_solve_adjoint
        op.rules = &self.spec
        op.scratch = &mine.c
        return mine


cdef int solve_operands(const DenseSolve* d, Sweep* s, const int32_t* o,
                        double* scalars) except -1 nogil:
    """Checks the op's operand sizes (a tape file could pair the op with
    other shapes); writes its coefficients, returns the size of b and x."""
    cdef int n = d.n, count = 4 if d.form == SHIFTED_COMPLEX else 3
    cdef int m = 2 * n if d.form == SHIFTED_COMPLEX else n, i
    cdef bint fits = o[2] == count and ref_size(s, o[3]) == <int64_t>n * n and \
        ref_size(s, o[0]) == m and ref_size(s, o[2 + count]) == m
    for i in range(1, count - 1):
        fits = fits and ref_size(s, o[3 + i]) == 1
    if not fits:
        with gil:
            raise ValueError(f"adsim: a dense Newton solve of order {n} recorded with "
                             f"operands of other sizes")
    scalars[0] = vptr(s, o[4])[0]
    scalars[1] = vptr(s, o[5])[0] if d.form == SHIFTED_COMPLEX else 0.0
    return m


cdef int dense_solve_value(const void* rules, void* scratch, Sweep* s,
                           const int32_t* o) except -1 nogil:
    cdef const DenseSolve* d = <const DenseSolve*>rules
    cdef FactorCache* f = <FactorCache*>scratch
    cdef double scalars[2]
    solve_operands(d, s, o, scalars)
    cache_solve(f, cache_entry(f, d.form, scalars, vptr(s, o[3])), d.transposed,
                vptr(s, o[2 + o[2]]), vptr(s, o[0]))
    return 0


cdef int dense_solve_adjoint(const void* rules, void* scratch, Sweep* s,
                             const int32_t* o) except -1 nogil:
    cdef const DenseSolve* d = <const DenseSolve*>rules
    cdef FactorCache* f = <FactorCache*>scratch
    cdef double scalars[2]
    cdef int m = solve_operands(d, s, o, scalars)
    cdef int k = -1, j, i
    cdef double* x = vptr(s, o[0])
    cdef double* u = f.u
    cdef double* row
    for j in range(s.q):
        row = aptr(s, o[0]) + j * m
        for i in range(m):
            if row[i] != 0.0:
                break
        else:
            continue                 # a zero adjoint contributes exactly zero
        if k < 0:
            k = cache_entry(f, d.form, scalars, vptr(s, o[3]))
        cache_solve(f, k, not d.transposed, row, u)
        if d.transposed:
            add_coefficient_adjoints(d, s, o, j, scalars, x, u)
        else:
            add_coefficient_adjoints(d, s, o, j, scalars, u, x)
        row = aptr(s, o[2 + o[2]])
        if row != NULL:
            row += j * m
            for i in range(m):
                row[i] += u[i]
    return 0


cdef void add_coefficient_adjoints(const DenseSolve* d, Sweep* s, const int32_t* o, int j,
                                   const double* scalars, const double* L,
                                   const double* R) noexcept nogil:
    """Adds -Re(L^H dA/dp R) to the adjoint (direction j) of every
    coefficient p: J's values and the scalars."""
    cdef int n = d.n, form = d.form, i, l
    cdef double* aJ = aptr(s, o[3])
    cdef double* a1 = aptr(s, o[4])
    cdef double* a2 = aptr(s, o[5]) if form == SHIFTED_COMPLEX else NULL
    cdef const double* J = vptr(s, o[3])
    cdef double c = scalars[0], dot = 0.0, cross = 0.0, JR = 0.0
    if aJ != NULL:
        aJ += <int64_t>j * n * n
    for i in range(n):
        if form == SHIFTED_COMPLEX:
            dot += L[i] * R[i] + L[n + i] * R[n + i]
            cross += L[i] * R[n + i] - L[n + i] * R[i]
        elif form == SHIFTED:
            dot += L[i] * R[i]
        for l in range(n):
            if form == SHIFTED_COMPLEX:
                if aJ != NULL:
                    aJ[i * n + l] += L[i] * R[l] + L[n + i] * R[n + l]
            elif form == SHIFTED:
                if aJ != NULL:
                    aJ[i * n + l] += L[i] * R[l]
            else:
                if aJ != NULL:
                    aJ[i * n + l] += c * (L[i] * R[l])
                JR += L[i] * R[l] * J[i * n + l]
    if a1 != NULL:
        a1[j] += JR if form == IDENTITY_MINUS else -dot
    if a2 != NULL:
        a2[j] += cross
