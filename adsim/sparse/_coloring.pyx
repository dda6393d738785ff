# cython: language_level=3, boundscheck=False, wraparound=False
# cython: cdivision=True, initializedcheck=False
"""Compiled kernels for coloring sparsity patterns.

Every kernel works on a graph given by index arrays (``numpy.intp``):

* distance-1 graphs (adjacency of a symmetric pattern): ``aptr, aidx`` is the
  CSR structure without the diagonal, and ``bptr, bidx`` are ignored;
* distance-2 graphs (column intersection graph of a matrix ``A``): the vertices
  are the columns, ``aptr, aidx`` is the CSC structure (column -> rows) and
  ``bptr, bidx`` the CSR structure (row -> columns); two columns are
  neighbours when they share a row. The graph is never formed.

Contents: neighbour walks and degrees; greedy coloring; bucket-queue
orderings (smallest last, incidence degree, dynamic largest first); the DSATUR
order; DSATUR with bounded backtracking; star and acyclic coloring keeping
their two-colored structures; per-row uniqueness of labels; the substitution
schedule and its replay for acyclic recovery.

The Python wrappers in :mod:`adsim.sparse.orderings`, :mod:`adsim.sparse.coloring`,
:mod:`adsim.sparse.symmetric` and :mod:`adsim.sparse.recovery` build these
arrays; nothing here allocates per vertex.

References
----------
.. [1] A. H. Gebremedhin, F. Manne and A. Pothen, SIAM Review 47(4), 2005.
.. [2] A. H. Gebremedhin, A. Tarafdar, F. Manne and A. Pothen, SIAM J. Sci.
   Comput. 29(3), 2007.
.. [3] D. Brelaz, Comm. ACM 22(4), 1979.
.. [4] D. W. Matula and L. L. Beck, J. ACM 30(3), 1983.
"""
import numpy as np

cdef struct Graph:
    const Py_ssize_t* aptr
    const Py_ssize_t* aidx
    const Py_ssize_t* bptr
    const Py_ssize_t* bidx
    Py_ssize_t n
    bint distance2


cdef Graph _graph(const Py_ssize_t[::1] aptr, const Py_ssize_t[::1] aidx,
                  const Py_ssize_t[::1] bptr, const Py_ssize_t[::1] bidx, bint distance2):
    cdef Graph g
    g.aptr = &aptr[0]
    g.aidx = &aidx[0]
    g.bptr = &bptr[0]
    g.bidx = &bidx[0]
    g.n = aptr.shape[0] - 1
    g.distance2 = distance2
    return g


cdef Py_ssize_t _collect(Graph* g, Py_ssize_t v, Py_ssize_t* buf,
                         long long* mark, long long stamp) noexcept nogil:
    """Write the distinct neighbours of ``v`` into ``buf``; return their count."""
    cdef Py_ssize_t count = 0, p, q, r, u
    mark[v] = stamp
    for p in range(g.aptr[v], g.aptr[v + 1]):
        if g.distance2:
            r = g.aidx[p]
            for q in range(g.bptr[r], g.bptr[r + 1]):
                u = g.bidx[q]
                if mark[u] != stamp:
                    mark[u] = stamp
                    buf[count] = u
                    count += 1
        else:
            u = g.aidx[p]
            if mark[u] != stamp:
                mark[u] = stamp
                buf[count] = u
                count += 1
    return count


def degrees(aptr, aidx, bptr, bidx, bint distance2):
    """Number of distinct neighbours of every vertex."""
    cdef Graph g = _graph(aptr, aidx, bptr, bidx, distance2)
    cdef Py_ssize_t[::1] deg = np.zeros(g.n, dtype=np.intp)
    cdef Py_ssize_t[::1] buf = np.empty(g.n + 1, dtype=np.intp)
    cdef long long[::1] mark = np.full(g.n + 1, -1, dtype=np.longlong)
    cdef Py_ssize_t v
    for v in range(g.n):
        deg[v] = _collect(&g, v, &buf[0], &mark[0], v)
    return np.asarray(deg)


def greedy_coloring(const Py_ssize_t[::1] order, aptr, aidx, bptr, bidx, bint distance2):
    """Greedy coloring: each vertex, in ``order``, takes the smallest color
    not used by an already colored neighbour (distance-1 or distance-2)."""
    cdef Graph g = _graph(aptr, aidx, bptr, bidx, distance2)
    cdef Py_ssize_t[::1] color = np.full(g.n, -1, dtype=np.intp)
    cdef Py_ssize_t[::1] forbidden = np.full(g.n + 1, -1, dtype=np.intp)
    cdef Py_ssize_t t, v, p, q, r, u, c
    for t in range(order.shape[0]):
        v = order[t]
        for p in range(g.aptr[v], g.aptr[v + 1]):
            if distance2:
                r = g.aidx[p]
                for q in range(g.bptr[r], g.bptr[r + 1]):
                    u = g.bidx[q]
                    if u != v and color[u] >= 0:
                        forbidden[color[u]] = v
            else:
                u = g.aidx[p]
                if u != v and color[u] >= 0:
                    forbidden[color[u]] = v
        c = 0
        while forbidden[c] == v:
            c += 1
        color[v] = c
    return np.asarray(color)


# ---------------------------------------------------------------- bucket queue
cdef struct Buckets:
    Py_ssize_t* head
    Py_ssize_t* nxt
    Py_ssize_t* prv
    Py_ssize_t* key


cdef inline void _bq_insert(Buckets* b, Py_ssize_t v, Py_ssize_t k) noexcept nogil:
    b.key[v] = k
    b.prv[v] = -1
    b.nxt[v] = b.head[k]
    if b.head[k] >= 0:
        b.prv[b.head[k]] = v
    b.head[k] = v


cdef inline void _bq_remove(Buckets* b, Py_ssize_t v) noexcept nogil:
    if b.prv[v] >= 0:
        b.nxt[b.prv[v]] = b.nxt[v]
    else:
        b.head[b.key[v]] = b.nxt[v]
    if b.nxt[v] >= 0:
        b.prv[b.nxt[v]] = b.prv[v]


cdef class _BucketQueue:
    """Vertices in doubly linked lists, one list per integer key."""
    cdef Py_ssize_t[::1] head, nxt, prv, key
    cdef Buckets b

    def __cinit__(self, Py_ssize_t n, Py_ssize_t maxkey, const Py_ssize_t[::1] keys):
        cdef Py_ssize_t v
        self.head = np.full(maxkey + 2, -1, dtype=np.intp)
        self.nxt = np.empty(n + 1, dtype=np.intp)
        self.prv = np.empty(n + 1, dtype=np.intp)
        self.key = np.empty(n + 1, dtype=np.intp)
        self.b.head = &self.head[0]
        self.b.nxt = &self.nxt[0]
        self.b.prv = &self.prv[0]
        self.b.key = &self.key[0]
        for v in range(n - 1, -1, -1):      # lowest index ends up first in its list
            _bq_insert(&self.b, v, keys[v])


def _bucket_order(aptr, aidx, bptr, bidx, bint distance2, bint smallest, Py_ssize_t step,
                  bint by_degree, bint backwards, bint start_largest):
    """Order vertices by repeatedly taking one of extreme key from bucket lists.

    Keys start at the degree (``by_degree``) or 0; taking a vertex adds
    ``step`` to the key of each neighbour not yet taken. ``smallest`` picks the
    minimum key instead of the maximum, ``backwards`` fills the order from the
    end, ``start_largest`` takes a vertex of largest degree first.
    """
    cdef Graph g = _graph(aptr, aidx, bptr, bidx, distance2)
    deg = degrees(aptr, aidx, bptr, bidx, distance2)
    cdef Py_ssize_t n = g.n, maxdeg = int(deg.max(initial=0))
    keys = deg if by_degree else np.zeros(n, dtype=np.intp)
    cdef _BucketQueue queue = _BucketQueue(n, maxdeg + 1, keys)
    cdef Buckets* b = &queue.b
    cdef Py_ssize_t[::1] order = np.empty(n, dtype=np.intp)
    cdef Py_ssize_t[::1] buf = np.empty(n + 1, dtype=np.intp)
    cdef long long[::1] mark = np.full(n + 1, -1, dtype=np.longlong)
    cdef char[::1] taken = np.zeros(n + 1, dtype=np.int8)
    cdef Py_ssize_t t, v, u, i, count, cursor = 0 if smallest else maxdeg + 1
    for t in range(n):
        if t == 0 and start_largest:
            v = int(np.argmax(deg))
        else:
            while b.head[cursor] < 0:
                cursor += 1 if smallest else -1
            v = b.head[cursor]
        _bq_remove(b, v)
        taken[v] = 1
        order[n - 1 - t if backwards else t] = v
        count = _collect(&g, v, &buf[0], &mark[0], t)
        for i in range(count):
            u = buf[i]
            if not taken[u]:
                _bq_remove(b, u)
                _bq_insert(b, u, b.key[u] + step)
                if (smallest and b.key[u] < cursor) or (not smallest and b.key[u] > cursor):
                    cursor = b.key[u]
    return np.asarray(order)


def smallest_last_order(aptr, aidx, bptr, bidx, bint distance2):
    """Smallest-last ordering (Matula & Beck): repeatedly remove a vertex of
    minimum degree in the remaining graph; order is the reverse of removal."""
    return _bucket_order(aptr, aidx, bptr, bidx, distance2, True, -1, True, True, False)


def incidence_degree_order(aptr, aidx, bptr, bidx, bint distance2):
    """Incidence-degree ordering (Coleman & More): start from a vertex of
    largest degree, then repeatedly take the vertex with most ordered neighbours."""
    return _bucket_order(aptr, aidx, bptr, bidx, distance2, False, 1, False, False, True)


def dynamic_largest_first_order(aptr, aidx, bptr, bidx, bint distance2):
    """Dynamic largest-first ordering: repeatedly take the vertex of largest
    degree in the graph induced by the vertices not yet ordered."""
    return _bucket_order(aptr, aidx, bptr, bidx, distance2, False, -1, True, False, False)


# ---------------------------------------------------------------------- DSATUR
cdef inline bint _before(const long long* key, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    return key[a] > key[b] or (key[a] == key[b] and a < b)


cdef void _sift_up(Py_ssize_t* heap, Py_ssize_t* pos, const long long* key,
                   Py_ssize_t i) noexcept nogil:
    cdef Py_ssize_t v = heap[i], parent
    while i > 0:
        parent = (i - 1) // 2
        if not _before(key, v, heap[parent]):
            break
        heap[i] = heap[parent]
        pos[heap[i]] = i
        i = parent
    heap[i] = v
    pos[v] = i


cdef void _sift_down(Py_ssize_t* heap, Py_ssize_t* pos, const long long* key,
                     Py_ssize_t i, Py_ssize_t size) noexcept nogil:
    cdef Py_ssize_t v = heap[i], child
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and _before(key, heap[child + 1], heap[child]):
            child += 1
        if not _before(key, heap[child], v):
            break
        heap[i] = heap[child]
        pos[heap[i]] = i
        i = child
    heap[i] = v
    pos[v] = i


cdef inline bint _hash_add(long long* table, Py_ssize_t mask, long long item) noexcept nogil:
    """Insert ``item`` (>= 0) into an open-addressing set; False if present."""
    cdef unsigned long long h = <unsigned long long>item * 0x9E3779B97F4A7C15ULL
    cdef Py_ssize_t slot = <Py_ssize_t>((h ^ (h >> 31)) & <unsigned long long>mask)
    while table[slot] >= 0:
        if table[slot] == item:
            return False
        slot = (slot + 1) & mask
    table[slot] = item
    return True


def _grown(long long[::1] table):
    """Copy of a hash set into a table twice as large."""
    cdef long long[::1] bigger = np.full(2 * table.shape[0], -1, dtype=np.longlong)
    cdef Py_ssize_t i, mask = bigger.shape[0] - 1
    for i in range(table.shape[0]):
        if table[i] >= 0:
            _hash_add(&bigger[0], mask, table[i])
    return bigger


def dsatur_order(aptr, aidx, bptr, bidx, bint distance2):
    """DSATUR sequence (Brelaz): color greedily, always picking the uncolored
    vertex seeing most distinct colors, ties by degree among uncolored vertices,
    then by index. Returns the order; a greedy coloring in that order
    reproduces the DSATUR coloring."""
    cdef Graph g = _graph(aptr, aidx, bptr, bidx, distance2)
    cdef Py_ssize_t[::1] dyn = degrees(aptr, aidx, bptr, bidx, distance2)
    cdef Py_ssize_t n = g.n, t, v, u, i, c, count, size = n
    cdef long long width = int(np.max(dyn, initial=0)) + 1
    cdef long long[::1] key = np.asarray(dyn, dtype=np.longlong).copy()
    cdef Py_ssize_t[::1] sat = np.zeros(n + 1, dtype=np.intp)
    cdef Py_ssize_t[::1] heap = np.arange(n + 1, dtype=np.intp)
    cdef Py_ssize_t[::1] pos = np.arange(n + 1, dtype=np.intp)
    cdef Py_ssize_t[::1] color = np.full(n + 1, -1, dtype=np.intp)
    cdef Py_ssize_t[::1] forbidden = np.full(n + 1, -1, dtype=np.intp)
    cdef Py_ssize_t[::1] order = np.empty(n, dtype=np.intp)
    cdef Py_ssize_t[::1] buf = np.empty(n + 1, dtype=np.intp)
    cdef long long[::1] mark = np.full(n + 1, -1, dtype=np.longlong)
    cdef long long[::1] seen = np.full(1024, -1, dtype=np.longlong)
    cdef unsigned long long[::1] low = np.zeros(n + 1, dtype=np.uint64)
    cdef Py_ssize_t stored = 0
    for i in range(n // 2 - 1, -1, -1):
        _sift_down(&heap[0], &pos[0], &key[0], i, size)
    for t in range(n):
        v = heap[0]
        size -= 1
        heap[0] = heap[size]
        pos[heap[0]] = 0
        if size > 0:
            _sift_down(&heap[0], &pos[0], &key[0], 0, size)
        order[t] = v
        count = _collect(&g, v, &buf[0], &mark[0], t)
        for i in range(count):
            if color[buf[i]] >= 0:
                forbidden[color[buf[i]]] = v
        c = 0
        while forbidden[c] == v:
            c += 1
        color[v] = c
        for i in range(count):
            u = buf[i]
            if color[u] >= 0:
                continue
            if c < 64:                                   # small colors: a bit mask
                if not (low[u] >> c) & 1:
                    low[u] |= (<unsigned long long>1) << c
                    sat[u] += 1
            else:                                        # others: a hash set of (u, c)
                if 2 * (stored + 1) > seen.shape[0]:
                    seen = _grown(seen)
                if _hash_add(&seen[0], seen.shape[0] - 1, <long long>u * n + c):
                    stored += 1
                    sat[u] += 1
            dyn[u] -= 1
            key[u] = sat[u] * width + dyn[u]
            _sift_up(&heap[0], &pos[0], &key[0], pos[u])
            _sift_down(&heap[0], &pos[0], &key[0], pos[u], size)
    return np.asarray(order)


cdef class _Search:
    """State of a DSATUR search with backtracking for a fixed number of colors:
    uncolored vertices sit in bucket lists keyed by saturation, then degree."""
    cdef Graph g
    cdef Py_ssize_t k, width, top
    cdef int[::1] count                 # count[v * k + c]: neighbours of v colored c
    cdef Py_ssize_t[::1] sat, color, deg
    cdef _BucketQueue queue

    def __cinit__(self, aptr, aidx, bptr, bidx, bint distance2, Py_ssize_t k):
        self.g = _graph(aptr, aidx, bptr, bidx, distance2)
        cdef Py_ssize_t n = self.g.n
        deg = degrees(aptr, aidx, bptr, bidx, distance2)
        self.deg = deg
        self.k = k
        self.width = int(deg.max(initial=0)) + 1
        self.count = np.zeros(n * k + 1, dtype=np.intc)
        self.sat = np.zeros(n + 1, dtype=np.intp)
        self.color = np.full(n + 1, -1, dtype=np.intp)
        self.queue = _BucketQueue(n, (k + 1) * self.width, deg)
        self.top = self.width

    cdef Py_ssize_t pop(self):
        cdef Buckets* b = &self.queue.b
        cdef Py_ssize_t v
        while b.head[self.top] < 0:
            self.top -= 1
        v = b.head[self.top]
        _bq_remove(b, v)
        return v

    cdef void push(self, Py_ssize_t v):
        cdef Py_ssize_t key = self.sat[v] * self.width + self.deg[v]
        _bq_insert(&self.queue.b, v, key)
        if key > self.top:
            self.top = key

    cdef void rekey(self, Py_ssize_t u, Py_ssize_t change):
        self.sat[u] += change
        if self.color[u] < 0:
            _bq_remove(&self.queue.b, u)
            self.push(u)

    cdef bint paint(self, Py_ssize_t v, Py_ssize_t c, int step):
        """Add (step=1) or remove (step=-1) color c at v; False when some
        uncolored neighbour is left without a color."""
        cdef Py_ssize_t p, q, r, u, low, high
        cdef bint alive = True
        cdef Graph* g = &self.g
        self.color[v] = c if step > 0 else -1
        for p in range(g.aptr[v], g.aptr[v + 1]):
            r = g.aidx[p]
            low, high = p, p + 1
            if g.distance2:
                low, high = g.bptr[r], g.bptr[r + 1]
            for q in range(low, high):
                u = g.bidx[q] if g.distance2 else r
                if u == v:
                    continue
                self.count[u * self.k + c] += step
                if step > 0 and self.count[u * self.k + c] == 1:
                    self.rekey(u, 1)
                    if self.color[u] < 0 and self.sat[u] == self.k:
                        alive = False
                elif step < 0 and self.count[u * self.k + c] == 0:
                    self.rekey(u, -1)
        return alive


def search_coloring(aptr, aidx, bptr, bidx, bint distance2, Py_ssize_t k,
                    long long budget):
    """Color with at most ``k`` colors by DSATUR with backtracking (Brelaz 1979):
    the most saturated vertex takes each admissible color in turn, a color is
    abandoned as soon as it leaves a neighbour without any, and only colors up
    to one past the largest in use are tried. Gives up after ``budget`` color
    assignments; returns ``(colors or None, assignments made)``."""
    cdef _Search st = _Search(aptr, aidx, bptr, bidx, distance2, k)
    cdef Py_ssize_t n = st.g.n, depth = 0, v, c, first = 0, used = 0
    cdef Py_ssize_t[::1] stack_v = np.empty(n + 1, dtype=np.intp)
    cdef Py_ssize_t[::1] stack_c = np.empty(n + 1, dtype=np.intp)
    cdef Py_ssize_t[::1] stack_used = np.empty(n + 1, dtype=np.intp)
    cdef long long spent = 0
    if n == 0:
        return np.zeros(0, dtype=np.intp), 0
    v = st.pop()
    while True:
        c = first
        while c < k and c <= used and st.count[v * k + c] > 0:
            c += 1
        if c < k and c <= used:
            spent += 1
            if spent > budget:
                return None, spent
            if not st.paint(v, c, 1):
                st.paint(v, c, -1)
                first = c + 1
                continue
            stack_v[depth] = v
            stack_c[depth] = c
            stack_used[depth] = used
            depth += 1
            used = max(used, c + 1)
            if depth == n:
                return np.asarray(st.color[:n]).copy(), spent
            v = st.pop()
            first = 0
            continue
        st.push(v)                                   # no color left: undo the last choice
        if depth == 0:
            return None, spent
        depth -= 1
        v = stack_v[depth]
        st.paint(v, stack_c[depth], -1)
        used = stack_used[depth]
        first = stack_c[depth] + 1


# ------------------------------------------------------ star and acyclic coloring
def star_coloring(const Py_ssize_t[::1] order, const Py_ssize_t[::1] ptr,
                  const Py_ssize_t[::1] idx, const Py_ssize_t[::1] twin):
    """Greedy star coloring keeping the two-colored stars (Gebremedhin,
    Tarafdar, Manne & Pothen 2007, Algorithm 4.1 in spirit).

    Color ``c`` is forbidden for ``v`` when a neighbour has it, when a colored
    neighbour ``w`` of ``v`` is a spoke of a star whose hub has color ``c``, or
    when ``v`` has two neighbours of one color and one of them touches ``c``.
    """
    cdef Py_ssize_t n = ptr.shape[0] - 1
    cdef Py_ssize_t[::1] color = np.full(n, -1, dtype=np.intp)
    cdef Py_ssize_t[::1] forbidden = np.full(n + 1, -1, dtype=np.intp)
    cdef Py_ssize_t[::1] seen = np.full(n + 1, -1, dtype=np.intp)
    cdef Py_ssize_t[::1] times = np.zeros(n + 1, dtype=np.intp)
    cdef Py_ssize_t[::1] new_star = np.full(n + 1, -1, dtype=np.intp)
    cdef Py_ssize_t[::1] star = np.full(idx.shape[0], -1, dtype=np.intp)
    cdef Py_ssize_t[::1] hub = np.full(idx.shape[0] // 2 + 1, -1, dtype=np.intp)
    cdef Py_ssize_t t, v, p, q, w, x, a, b, c, s, nstars = 0
    for t in range(order.shape[0]):
        v = order[t]
        for p in range(ptr[v], ptr[v + 1]):          # neighbour colors and their counts
            a = color[idx[p]]
            if a >= 0:
                forbidden[a] = v
                if seen[a] != v:
                    seen[a] = v
                    times[a] = 0
                times[a] += 1
        for p in range(ptr[v], ptr[v + 1]):          # paths v - w - x
            w = idx[p]
            a = color[w]
            if a < 0:
                continue
            for q in range(ptr[w], ptr[w + 1]):
                x = idx[q]
                b = color[x]
                if x == v or b < 0 or forbidden[b] == v:
                    continue
                if times[a] >= 2 or hub[star[q]] == x:
                    forbidden[b] = v
        c = 0
        while forbidden[c] == v:
            c += 1
        color[v] = c
        for p in range(ptr[v], ptr[v + 1]):          # place the new edges in stars
            w = idx[p]
            a = color[w]
            if a < 0:
                continue
            if times[a] >= 2:                        # v is the hub of a new star
                if new_star[a] < 0 or hub[new_star[a]] != v:
                    new_star[a] = nstars
                    hub[nstars] = v
                    nstars += 1
                s = new_star[a]
            else:
                s = -1
                for q in range(ptr[w], ptr[w + 1]):
                    if idx[q] != v and color[idx[q]] == c:
                        s = star[q]
                        break
                if s >= 0:
                    hub[s] = w                      # w becomes (or stays) the hub
                else:
                    s = nstars                      # a single edge: no hub yet
                    nstars += 1
            star[p] = s
            star[twin[p]] = s
    return np.asarray(color)


cdef inline Py_ssize_t _find(Py_ssize_t* parent, Py_ssize_t e) noexcept nogil:
    while parent[e] != e:
        parent[e] = parent[parent[e]]
        e = parent[e]
    return e


cdef inline void _union(Py_ssize_t* parent, Py_ssize_t e, Py_ssize_t f) noexcept nogil:
    e = _find(parent, e)
    f = _find(parent, f)
    if e != f:
        parent[f] = e


def acyclic_coloring(const Py_ssize_t[::1] order, const Py_ssize_t[::1] ptr,
                     const Py_ssize_t[::1] idx, const Py_ssize_t[::1] twin):
    """Greedy acyclic coloring keeping the two-colored trees in a disjoint-set
    forest over edges (Gebremedhin, Tarafdar, Manne & Pothen 2007, Algorithm 3.1
    in spirit): ``v`` may not take color ``c`` if two of its neighbours lie in
    one tree colored with ``c``, which would close a two-colored cycle."""
    cdef Py_ssize_t n = ptr.shape[0] - 1, nnz = idx.shape[0]
    cdef Py_ssize_t[::1] color = np.full(n, -1, dtype=np.intp)
    cdef Py_ssize_t[::1] forbidden = np.full(n + 1, -1, dtype=np.intp)
    cdef Py_ssize_t[::1] first_edge = np.full(n + 1, -1, dtype=np.intp)
    cdef Py_ssize_t[::1] first_edge_of = np.full(n + 1, -1, dtype=np.intp)
    cdef Py_ssize_t[::1] parent = np.arange(nnz + 1, dtype=np.intp)
    cdef Py_ssize_t[::1] visit_from = np.full(nnz + 1, -1, dtype=np.intp)
    cdef Py_ssize_t[::1] visit_via = np.full(nnz + 1, -1, dtype=np.intp)
    cdef Py_ssize_t t, v, p, q, w, x, a, b, c, e, root
    for t in range(order.shape[0]):
        v = order[t]
        for p in range(ptr[v], ptr[v + 1]):
            if color[idx[p]] >= 0:
                forbidden[color[idx[p]]] = v
        for p in range(ptr[v], ptr[v + 1]):          # trees reached through w
            w = idx[p]
            if color[w] < 0:
                continue
            for q in range(ptr[w], ptr[w + 1]):
                x = idx[q]
                b = color[x]
                if x == v or b < 0 or forbidden[b] == v:
                    continue
                root = _find(&parent[0], min(q, twin[q]))
                if visit_from[root] != v:
                    visit_from[root] = v
                    visit_via[root] = w
                elif visit_via[root] != w:
                    forbidden[b] = v
        c = 0
        while forbidden[c] == v:
            c += 1
        color[v] = c
        for p in range(ptr[v], ptr[v + 1]):          # join the new edges to trees
            w = idx[p]
            a = color[w]
            if a < 0:
                continue
            e = min(p, twin[p])
            parent[e] = e
            if first_edge_of[a] != v:
                first_edge_of[a] = v
                first_edge[a] = e
            else:
                _union(&parent[0], first_edge[a], e)
            for q in range(ptr[w], ptr[w + 1]):
                if idx[q] != v and color[idx[q]] == c:
                    _union(&parent[0], e, min(q, twin[q]))
    return np.asarray(color)


def unique_in_rows(const Py_ssize_t[::1] ptr, const Py_ssize_t[::1] labels):
    """For each position of a CSR structure: whether its label (``>= 0``) occurs
    only once in its row. Negative labels give False."""
    cdef Py_ssize_t n = ptr.shape[0] - 1, r, p, label
    cdef Py_ssize_t size = int(np.max(labels, initial=-1)) + 2
    cdef Py_ssize_t[::1] seen = np.full(size, -1, dtype=np.intp)
    cdef Py_ssize_t[::1] times = np.zeros(size, dtype=np.intp)
    cdef char[::1] alone = np.zeros(labels.shape[0] + 1, dtype=np.int8)
    for r in range(n):
        for p in range(ptr[r], ptr[r + 1]):
            label = labels[p]
            if label >= 0:
                if seen[label] != r:
                    seen[label] = r
                    times[label] = 0
                times[label] += 1
        for p in range(ptr[r], ptr[r + 1]):
            label = labels[p]
            alone[p] = label >= 0 and times[label] == 1
    return np.asarray(alone[:labels.shape[0]]).astype(bool)


# ------------------------------------------------------------- substitution
def substitution_schedule(const Py_ssize_t[::1] row_of, const Py_ssize_t[::1] idx,
                          const Py_ssize_t[::1] twin, const Py_ssize_t[::1] color,
                          const Py_ssize_t[::1] pair_of, const Py_ssize_t[::1] run_ptr,
                          const Py_ssize_t[::1] run_pos):
    """Order in which the off-diagonal entries are solved for when every
    two-colored subgraph is a forest: repeatedly take a vertex ``u`` with a
    single unsolved neighbour of color ``b`` (a leaf of a two-colored tree).

    ``pair_of[p]`` numbers the (vertex, neighbour color) group of position
    ``p``; group ``k`` holds positions ``run_pos[run_ptr[k]:run_ptr[k+1]]``.
    Returns ``(read_vertex, read_color, update_vertex, update_color, position)``
    per solved edge, or ``None`` if some edge lies on a two-colored cycle.
    """
    cdef Py_ssize_t npairs = run_ptr.shape[0] - 1, nnz = idx.shape[0]
    cdef Py_ssize_t[::1] left = np.diff(np.asarray(run_ptr))
    cdef char[::1] solved = np.zeros(nnz + 1, dtype=np.int8)
    cdef Py_ssize_t[::1] stack = np.empty(npairs + nnz + 1, dtype=np.intp)
    cdef Py_ssize_t nedges = nnz // 2
    cdef Py_ssize_t[::1] read_vertex = np.empty(nedges, dtype=np.intp)
    cdef Py_ssize_t[::1] read_color = np.empty(nedges, dtype=np.intp)
    cdef Py_ssize_t[::1] update_vertex = np.empty(nedges, dtype=np.intp)
    cdef Py_ssize_t[::1] update_color = np.empty(nedges, dtype=np.intp)
    cdef Py_ssize_t[::1] position = np.empty(nedges, dtype=np.intp)
    cdef Py_ssize_t top = 0, k, i, p, u, v, other, done = 0
    for k in range(npairs):
        if left[k] == 1:
            stack[top] = k
            top += 1
    while top > 0:
        top -= 1
        k = stack[top]
        if left[k] != 1:
            continue
        p = -1
        for i in range(run_ptr[k], run_ptr[k + 1]):
            if not solved[run_pos[i]]:
                p = run_pos[i]
                break
        u = row_of[p]
        v = idx[p]
        read_vertex[done] = u
        read_color[done] = color[v]
        update_vertex[done] = v
        update_color[done] = color[u]
        position[done] = p
        done += 1
        solved[p] = 1
        solved[twin[p]] = 1
        left[k] = 0
        other = pair_of[twin[p]]
        left[other] -= 1
        if left[other] == 1:
            stack[top] = other
            top += 1
    if done != nedges:
        return None
    return (np.asarray(read_vertex), np.asarray(read_color), np.asarray(update_vertex),
            np.asarray(update_color), np.asarray(position))


def substitute(double[:, ::1] residual, const Py_ssize_t[::1] read_vertex,
               const Py_ssize_t[::1] read_color, const Py_ssize_t[::1] update_vertex,
               const Py_ssize_t[::1] update_color, double[::1] solved):
    """Run a substitution schedule on the compressed product ``residual``
    (overwritten); ``solved[t]`` receives the value of the t-th edge."""
    cdef Py_ssize_t t
    cdef double value
    with nogil:
        for t in range(read_vertex.shape[0]):
            value = residual[read_vertex[t], read_color[t]]
            solved[t] = value
            residual[update_vertex[t], update_color[t]] -= value
