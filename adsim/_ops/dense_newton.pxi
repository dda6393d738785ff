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
# Compiled into adsim/_callback.pyx.

cimport scipy.linalg.cython_lapack as lapack
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memcmp, memmove
from libc.math cimport NAN, isfinite

cdef enum:
    SHIFTED = 0
    IDENTITY_MINUS = 1
    SHIFTED_COMPLEX = 2

cdef dict FORM_CODES = {"shifted": SHIFTED, "identity_minus": IDENTITY_MINUS,
                        "shifted_complex": SHIFTED_COMPLEX}


cdef class DenseFactors:
    """The LU factorisations of one problem's Newton matrices (``n``
    equations): the ``kept`` most recently used, each keyed by its exact
    matrix (form, coefficients and J's values, compared bit for bit), so a
    step's Newton iterations, error estimate and adjoints share one
    factorisation as SciPy reuses its factors. Used with the GIL held (the
    rules of CALLBACK ops run under it): threads replaying one tape share it."""

    cdef readonly int n
    cdef readonly int kept
    cdef int64_t clock
    cdef int* form                    # per entry: its form, -1 while empty
    cdef int64_t* used                # per entry: clock of its last use
    cdef double* scalars              # per entry: its 2 coefficients (real forms: c, 0)
    cdef double* data                 # per entry: J's n*n values
    cdef double* lu                   # per entry: 2*n*n doubles (complex factors use all)
    cdef int* piv                     # per entry: n pivots
    cdef char* singular               # per entry: singular or not finite
    cdef double* work                 # 2n complex numbers: a complex right-hand side

    def __cinit__(self, int n, int kept):
        if n < 1 or kept < 1:
            raise ValueError(f"adsim: dense Newton factors of n={n}, kept={kept}")
        self.n, self.kept = n, kept
        cdef size_t nn = <size_t>n * n
        self.form = <int*>malloc(kept * sizeof(int))
        self.used = <int64_t*>calloc(kept, sizeof(int64_t))
        self.scalars = <double*>calloc(2 * kept, sizeof(double))
        self.data = <double*>malloc(kept * nn * sizeof(double))
        self.lu = <double*>malloc(2 * kept * nn * sizeof(double))
        self.piv = <int*>malloc(kept * n * sizeof(int))
        self.singular = <char*>calloc(kept, sizeof(char))
        self.work = <double*>malloc(4 * n * sizeof(double))
        if self.form == NULL or self.used == NULL or self.scalars == NULL or \
                self.data == NULL or self.lu == NULL or self.piv == NULL or \
                self.singular == NULL or self.work == NULL:
            raise MemoryError(f"adsim: no memory for {kept} LU factorisations of order {n}")
        for k in range(kept):
            self.form[k] = -1

    def __dealloc__(self):
        free(self.form)
        free(self.used)
        free(self.scalars)
        free(self.data)
        free(self.lu)
        free(self.piv)
        free(self.singular)
        free(self.work)

    @property
    def held(self):
        """How many factorisations are kept now."""
        return sum(1 for k in range(self.kept) if self.form[k] >= 0)

    cdef int entry(self, int form, const double* scalars, const double* J) noexcept:
        """The entry holding the factors of this matrix; factored now, in
        place of the least recently used, if none does."""
        cdef size_t nn = <size_t>self.n * self.n
        cdef int k, oldest = 0
        self.clock += 1
        for k in range(self.kept):
            if self.form[k] == form and \
                    memcmp(self.scalars + 2 * k, scalars, 2 * sizeof(double)) == 0 and \
                    memcmp(self.data + k * nn, J, nn * sizeof(double)) == 0:
                self.used[k] = self.clock
                return k
            if self.used[k] < self.used[oldest]:
                oldest = k
        self.factor(oldest, form, scalars, J)
        self.used[oldest] = self.clock
        return oldest

    cdef void factor(self, int k, int form, const double* scalars, const double* J) noexcept:
        cdef int n = self.n, i, j, info = 0
        cdef size_t nn = <size_t>n * n
        cdef double* A = self.lu + 2 * k * nn
        cdef double complex* Z = <double complex*>A
        cdef double c = scalars[0], beta = scalars[1], delta, v
        cdef bint finite = True
        self.form[k] = form
        memcpy(self.scalars + 2 * k, scalars, 2 * sizeof(double))
        memcpy(self.data + k * nn, J, nn * sizeof(double))
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
                lapack.zgetrf(&n, &n, Z, &n, self.piv + k * n, &info)
            else:
                lapack.dgetrf(&n, &n, A, &n, self.piv + k * n, &info)
        self.singular[k] = not finite or info != 0     # info > 0: an exactly zero pivot

    cdef void solve(self, int k, bint transposed, const double* b, double* x) noexcept:
        """x = A^{-1} b (A^{-T} b, A^{-H} b for the complex form) with entry
        k's factors; b and x may be the same array."""
        cdef int n = self.n, one = 1, info = 0, i
        cdef int m = 2 * n if self.form[k] == SHIFTED_COMPLEX else n
        cdef size_t nn = <size_t>n * n
        cdef char trans
        cdef double complex* z = <double complex*>self.work
        if self.singular[k]:
            for i in range(m):
                x[i] = NAN
            return
        if self.form[k] == SHIFTED_COMPLEX:
            trans = b'C' if transposed else b'N'
            for i in range(n):
                z[i] = b[i] + 1j * b[n + i]
            lapack.zgetrs(&trans, &n, &one, <double complex*>(self.lu + 2 * k * nn), &n,
                          self.piv + k * n, z, &n, &info)
            for i in range(n):
                x[i] = z[i].real
                x[n + i] = z[i].imag
        else:
            trans = b'T' if transposed else b'N'
            memmove(x, b, n * sizeof(double))
            lapack.dgetrs(&trans, &n, &one, self.lu + 2 * k * nn, &n, self.piv + k * n, x,
                          &n, &info)

    def solution(self, str form, bint transposed, data, tuple scalars, b):
        """The solve on plain arrays (the rules run in Python: recording,
        tangents, second order): a new array."""
        cdef int code = form_code(form)
        cdef cnp.ndarray J = np.ascontiguousarray(data, dtype=np.float64).reshape(-1)
        cdef cnp.ndarray rhs = np.ascontiguousarray(b, dtype=np.float64).reshape(-1)
        cdef double sc[2]
        cdef int m = 2 * self.n if code == SHIFTED_COMPLEX else self.n
        if J.shape[0] != <Py_ssize_t>self.n * self.n or rhs.shape[0] != m or \
                len(scalars) != (2 if code == SHIFTED_COMPLEX else 1):
            raise ValueError(f"adsim: a dense Newton solve of order {self.n} given "
                             f"{J.shape[0]} values of J, {len(scalars)} coefficients and a "
                             f"right-hand side of {rhs.shape[0]}")
        sc[0] = float(scalars[0])
        sc[1] = float(scalars[1]) if code == SHIFTED_COMPLEX else 0.0
        out = np.empty(m, dtype=np.float64)
        self.solve(self.entry(code, sc, <double*>cnp.PyArray_DATA(J)), transposed,
                   <double*>cnp.PyArray_DATA(rhs), <double*>cnp.PyArray_DATA(out))
        return out


cdef int form_code(str form) except -1:
    code = FORM_CODES.get(form)
    if code is None:
        raise ValueError(f"adsim: no Newton matrix form {form!r}; one of {sorted(FORM_CODES)}")
    return code


cdef class DenseNewtonSolve(CompiledRules):
    """The compiled value and adjoint of one kind of dense Newton solve
    (``form``, ``transposed``) with the factors kept in ``factors``."""

    cdef readonly DenseFactors factors
    cdef readonly int form
    cdef readonly bint transposed

    def __cinit__(self, DenseFactors factors not None, str form, bint transposed):
        self.factors, self.form, self.transposed = factors, form_code(form), transposed

    cdef int operands(self, Sweep* s, const int32_t* o, double* scalars) except -1:
        """Checks the op's operand sizes (a tape file could pair the op with
        other shapes); writes its coefficients, returns the size of b and x."""
        cdef int n = self.factors.n, count = 4 if self.form == SHIFTED_COMPLEX else 3
        cdef int m = 2 * n if self.form == SHIFTED_COMPLEX else n, i
        cdef bint fits = o[2] == count and ref_size(s, o[3]) == <int64_t>n * n and \
            ref_size(s, o[0]) == m and ref_size(s, o[2 + count]) == m
        for i in range(1, count - 1):
            fits = fits and ref_size(s, o[3 + i]) == 1
        if not fits:
            raise ValueError(f"adsim: a dense Newton solve of order {n} recorded with "
                             f"operands of other sizes")
        scalars[0] = vptr(s, o[4])[0]
        scalars[1] = vptr(s, o[5])[0] if self.form == SHIFTED_COMPLEX else 0.0
        return m

    cdef int value(self, Sweep* s, const int32_t* o) except -1:
        cdef double scalars[2]
        cdef int m = self.operands(s, o, scalars)
        cdef DenseFactors f = self.factors
        f.solve(f.entry(self.form, scalars, vptr(s, o[3])), self.transposed,
                vptr(s, o[2 + o[2]]), vptr(s, o[0]))
        return 0

    cdef int adjoint(self, Sweep* s, const int32_t* o) except -1:
        cdef double scalars[2]
        cdef int m = self.operands(s, o, scalars)
        cdef DenseFactors f = self.factors
        cdef int n = f.n, k = -1, j, i
        cdef double* x = vptr(s, o[0])
        cdef double* row
        cdef double* u = <double*>malloc(m * sizeof(double))
        if u == NULL:
            raise MemoryError("adsim: no memory for a Newton solve's adjoint")
        try:
            for j in range(s.q):
                row = aptr(s, o[0]) + j * m
                for i in range(m):
                    if row[i] != 0.0:
                        break
                else:
                    continue                 # a zero adjoint contributes exactly zero
                if k < 0:
                    k = f.entry(self.form, scalars, vptr(s, o[3]))
                f.solve(k, not self.transposed, row, u)
                if self.transposed:
                    self.add_coefficient_adjoints(s, o, j, scalars, x, u)
                else:
                    self.add_coefficient_adjoints(s, o, j, scalars, u, x)
                row = aptr(s, o[2 + o[2]])
                if row != NULL:
                    row += j * m
                    for i in range(m):
                        row[i] += u[i]
        finally:
            free(u)
        return 0

    cdef void add_coefficient_adjoints(self, Sweep* s, const int32_t* o, int j,
                                       const double* scalars, const double* L,
                                       const double* R) noexcept:
        """Adds -Re(L^H dA/dp R) to the adjoint (direction j) of every
        coefficient p: J's values and the scalars."""
        cdef int n = self.factors.n, i, l
        cdef double* aJ = aptr(s, o[3])
        cdef double* a1 = aptr(s, o[4])
        cdef double* a2 = aptr(s, o[5]) if self.form == SHIFTED_COMPLEX else NULL
        cdef const double* J = vptr(s, o[3])
        cdef double c = scalars[0], dot = 0.0, cross = 0.0, JR = 0.0
        if aJ != NULL:
            aJ += <int64_t>j * n * n
        for i in range(n):
            if self.form == SHIFTED_COMPLEX:
                dot += L[i] * R[i] + L[n + i] * R[n + i]
                cross += L[i] * R[n + i] - L[n + i] * R[i]
            elif self.form == SHIFTED:
                dot += L[i] * R[i]
            for l in range(n):
                if self.form == SHIFTED_COMPLEX:
                    if aJ != NULL:
                        aJ[i * n + l] += L[i] * R[l] + L[n + i] * R[n + l]
                elif self.form == SHIFTED:
                    if aJ != NULL:
                        aJ[i * n + l] += L[i] * R[l]
                else:
                    if aJ != NULL:
                        aJ[i * n + l] += c * (L[i] * R[l])
                    JR += L[i] * R[l] * J[i * n + l]
        if a1 != NULL:
            a1[j] += JR if self.form == IDENTITY_MINUS else -dot
        if a2 != NULL:
            a2[j] += cross
