"""N1, compiled: the loops that walk frozen posting lists, in numba — the inner loop of ``rungs.engine.compiled``.

What it is for: the queries-per-second column of notebook 08. The readable
BM25 (``rungs.bm25``) stays the reference; ``rungs.engine.impacts.freeze``
bakes one setting into posting lists of impacts (CSC: ``indptr``, ``pages``,
``impacts``); the functions here walk those lists. Why compiled code is
allowed in a teaching package, here only: a Python loop over postings costs
~50 ns a step, a compiled one ~1 ns, and that is the whole difference between
the fast path and the compiled peers (bm25s' numba backend, tantivy). Every
function is tested against the readable N1 (``tests/test_engine_compiled.py``).

Two ways to find the top k, both exact (same pages, same scores, ties by id):

- ``exhaustive`` (term at a time): add each query word's impacts into one
  score per page, in the query's order (so the floats are the readable
  index's), then keep the k best in a heap, ties by id. Three ways to read
  the scores back, chosen per query from its postings P and the pages N:
  *dense* when P ≥ N/3 (add without bookkeeping, then read the pages in
  blocks of 16: the k-th largest block maximum is a bar the top k clear, and
  only blocks reaching it are read page by page); *touched* otherwise
  (remember each page the first time it scores, without a branch; the cost is
  the postings, never the collection); *merge* from 2^19 pages on for queries
  of at most 8 words (the lists walked together, the smallest page first: no
  score array at all, sequential reads only).
- ``maxscore`` (document at a time, Turtle & Flood 1995): the same answer
  without scoring every matching page; ``rungs.engine.maxscore`` is the
  readable version and explains the bound that makes skipping safe.

What it costs: numba compiles these loops on first use (seconds; cached on
disk after, beside this file or in numba's user cache); a query costs its
postings, a heap of k, and three page-sized scratch arrays the caller owns.
"""

from __future__ import annotations

import numpy as np
from numba import njit  # numba: compiled loops, the one place rungs is not plain numpy (see the docstring)

#: A bound is inflated by this much before it is trusted: sums in another order round differently (< 1e-13).
SLACK = 1e-12


# ---------------------------------------------------------------- the heap of the k best, worst at the root

@njit(inline="always", cache=True)
def _worse(score_a, rank_a, score_b, rank_b):
    # Lower score is worse; at equal scores the larger id rank is worse (ties broken by id ascending).
    return score_a < score_b or (score_a == score_b and rank_a > rank_b)


@njit(cache=True)
def _swap(h_score, h_rank, h_page, i, j):
    """Exchange two heap slots: a page's score, rank and number move together."""
    h_score[i], h_score[j] = h_score[j], h_score[i]
    h_rank[i], h_rank[j] = h_rank[j], h_rank[i]
    h_page[i], h_page[j] = h_page[j], h_page[i]


@njit(cache=True)
def _sift_down(h_score, h_rank, h_page, size, i):
    while True:
        child = 2 * i + 1
        if child >= size:
            return
        right = child + 1
        if right < size and _worse(h_score[right], h_rank[right], h_score[child], h_rank[child]):
            child = right
        if not _worse(h_score[child], h_rank[child], h_score[i], h_rank[i]):
            return
        _swap(h_score, h_rank, h_page, i, child)
        i = child


@njit(cache=True)
def _sift_up(h_score, h_rank, h_page, i):
    while i > 0:
        parent = (i - 1) // 2
        if not _worse(h_score[i], h_rank[i], h_score[parent], h_rank[parent]):
            return
        _swap(h_score, h_rank, h_page, i, parent)
        i = parent


@njit(cache=True)
def _offer(h_score, h_rank, h_page, size, k, score, rank, page):
    """Offer one page to the heap of the k best; returns the heap's new size."""
    if size < k:
        h_score[size], h_rank[size], h_page[size] = score, rank, page
        _sift_up(h_score, h_rank, h_page, size)
        return size + 1
    if _worse(h_score[0], h_rank[0], score, rank):  # better than the worst kept: it takes its place
        h_score[0], h_rank[0], h_page[0] = score, rank, page
        _sift_down(h_score, h_rank, h_page, size, 0)
    return size


@njit(cache=True)
def _drain(h_score, h_rank, h_page, size, out_pages, out_scores):
    """Empty the heap into the outputs, best first (the worst leaves first, written from the end)."""
    n = size
    while size > 0:
        size -= 1
        out_pages[size], out_scores[size] = h_page[0], h_score[0]
        h_score[0], h_rank[0], h_page[0] = h_score[size], h_rank[size], h_page[size]
        _sift_down(h_score, h_rank, h_page, size, 0)
    return n


# ---------------------------------------------------------------- exhaustive, term at a time

@njit(cache=True)
def _accumulate(terms, mult, indptr, pages, impacts, scores, touched):
    # Every posting of every query word, added in the query's order (the order the readable index adds in).
    # A page is remembered the first time its score leaves 0, without a branch: the append is always
    # written and only counted when new (a mispredicted branch per posting cost three times as much).
    n_touched = 0
    for q in range(terms.size):
        t = terms[q]
        m = mult[q] if mult.size else 1.0  # no multiplicities given: every word counts once
        for p in range(indptr[t], indptr[t + 1]):
            d = pages[p]
            s = scores[d]
            touched[n_touched] = d
            n_touched += s == 0.0
            scores[d] = s + impacts[p] * m
    return n_touched


@njit(cache=True)
def _add(terms, mult, indptr, pages, impacts, scores):
    # The same sum, remembering nothing: the caller then reads every page.
    for q in range(terms.size):
        t = terms[q]
        m = mult[q] if mult.size else 1.0
        for p in range(indptr[t], indptr[t + 1]):
            scores[pages[p]] += impacts[p] * m


#: Pages per block in the scan: the largest score of each block is computed first (a loop the CPU vectorises).
BLOCK = 16


@njit(cache=True)
def _kth_largest(values, k):
    """The k-th largest of ``values`` (0.0 if there are fewer than k): a sorted array of the k largest so far."""
    if k > values.size:
        return 0.0
    best = np.zeros(k)  # ascending: best[0] is the smallest of the k largest
    for v in values:
        if v > best[0]:
            i = 1
            while i < k and best[i] < v:  # insertion: shift the smaller ones down one place
                best[i - 1] = best[i]
                i += 1
            best[i - 1] = v
    return best[0]


@njit(cache=True)
def _scan(scores, id_rank, k, h_score, h_rank, h_page):
    """The k best of every page's score, read block by block; returns the heap's size.

    First the largest score of each block of 16 pages. The k-th largest of those maxima is a bar
    the top k clear: k different pages score at least that much. Only the blocks whose maximum
    reaches the bar are read page by page — a few dozen of 200 on CACM — and only their pages at
    or above the bar are offered to the heap (a page tying the bar is offered: ties go by id).
    """
    n = scores.size
    full = n // BLOCK
    block_max = np.empty(full + 1)
    for blk in range(full):
        top = 0.0
        for j in range(BLOCK):  # a fixed count and no max(): a loop the CPU runs on several pages at once
            v = scores[blk * BLOCK + j]
            top = v if v > top else top
        block_max[blk] = top
    top = 0.0
    for j in range(full * BLOCK, n):  # the last, shorter block
        top = scores[j] if scores[j] > top else top
    block_max[full] = top
    bar = _kth_largest(block_max, k)
    if bar <= 0.0:
        bar = 5e-324  # fewer than k blocks scored: every page that scored (> 0) takes part
    size = 0
    for blk in range(full + 1):
        if block_max[blk] >= bar:
            for j in range(blk * BLOCK, min(blk * BLOCK + BLOCK, n)):
                s = scores[j]
                if s >= bar and (size < k or s >= h_score[0]):
                    size = _offer(h_score, h_rank, h_page, size, k, s, id_rank[j], j)
    return size


@njit(cache=True)
def _accumulate_counting(terms, mult, indptr, pages, impacts, scores, held, touched):
    # The same, counting the words each page holds: for match="all", and for impacts of exactly 0
    # (a word held only in a field weighted 0: the page takes part but its score does not leave 0).
    n_touched = 0
    for q in range(terms.size):
        t = terms[q]
        m = mult[q] if mult.size else 1.0
        for p in range(indptr[t], indptr[t + 1]):
            d = pages[p]
            if held[d] == 0:
                touched[n_touched] = d
                n_touched += 1
            held[d] += 1
            scores[d] += impacts[p] * m
    return n_touched


#: Past this many pages (4 MB of scores) the scores no longer sit in the CPU's cache: a query of at most
#: MERGE_WORDS words is then scored by merging its posting lists, page by page, instead (reads in order only).
MERGE_PAGES = 1 << 19
MERGE_WORDS = 8


@njit(cache=True)
def _merge(terms, mult, indptr, pages, impacts, id_rank, k, out_pages, out_scores):
    """Exhaustive scoring page by page: the posting lists walked together, the smallest page first.

    Every matching page is scored, its words added in the query's order (the same floats as adding
    word by word); nothing is written per page, so a collection of any size costs only the postings.
    """
    n = terms.size
    pos = np.empty(n, np.int64)
    end = np.empty(n, np.int64)
    for i in range(n):
        pos[i], end[i] = indptr[terms[i]], indptr[terms[i] + 1]
    h_score = np.empty(k, np.float64)
    h_rank = np.empty(k, np.int64)
    h_page = np.empty(k, np.int64)
    size, none = 0, np.iinfo(np.int32).max
    while True:
        d = none
        for i in range(n):  # the next page: the smallest under the cursors
            if pos[i] < end[i]:
                p = pages[pos[i]]
                d = p if p < d else d
        if d == none:
            return _drain(h_score, h_rank, h_page, size, out_pages, out_scores)
        s = 0.0
        for i in range(n):  # its score, in the query's order
            if pos[i] < end[i] and pages[pos[i]] == d:
                s += impacts[pos[i]] * (mult[i] if mult.size else 1.0)
                pos[i] += 1
        if size < k or s >= h_score[0]:
            size = _offer(h_score, h_rank, h_page, size, k, s, id_rank[d], d)


@njit(cache=True)
def exhaustive(terms, mult, need, counting, merge_pages, indptr, pages, impacts, id_rank, scores, held, touched,
                k, out_pages, out_scores):
    if not counting and terms.size <= MERGE_WORDS and scores.size >= merge_pages:
        return _merge(terms, mult, indptr, pages, impacts, id_rank, k, out_pages, out_scores)
    h_score = np.empty(k, np.float64)
    h_rank = np.empty(k, np.int64)
    h_page = np.empty(k, np.int64)
    size = 0
    if counting:
        n_touched = _accumulate_counting(terms, mult, indptr, pages, impacts, scores, held, touched)
        for i in range(n_touched):
            d = touched[i]
            if held[d] >= need and (size < k or scores[d] >= h_score[0]):  # match="all": every word held
                size = _offer(h_score, h_rank, h_page, size, k, scores[d], id_rank[d], d)
            scores[d], held[d] = 0.0, 0
        return _drain(h_score, h_rank, h_page, size, out_pages, out_scores)
    n_postings = 0
    for q in range(terms.size):
        n_postings += indptr[terms[q] + 1] - indptr[terms[q]]
    if 3 * n_postings >= scores.size:
        # Postings about as many as pages (CACM: 2,600 a query, 3,204 pages): adding without remembering
        # and then reading every page once, in order, costs less than remembering the touched ones.
        _add(terms, mult, indptr, pages, impacts, scores)
        size = _scan(scores, id_rank, k, h_score, h_rank, h_page)
        scores[:] = 0.0  # one sweep, as fast as memory is written
        return _drain(h_score, h_rank, h_page, size, out_pages, out_scores)
    n_touched = _accumulate(terms, mult, indptr, pages, impacts, scores, touched)
    for i in range(n_touched):
        d = touched[i]
        s = scores[d]
        if size < k or s >= h_score[0]:  # a page below the worst kept is refused without a call
            size = _offer(h_score, h_rank, h_page, size, k, s, id_rank[d], d)
        scores[d] = 0.0  # reset only what this query touched: the cost never grows with the collection
    return _drain(h_score, h_rank, h_page, size, out_pages, out_scores)


@njit(cache=True)
def exhaustive_many(terms, mult, starts, needs, counting, merge_pages, indptr, pages, impacts, id_rank, scores,
                     held, touched, k, out_pages, out_scores, out_n):
    # A batch: one compiled call for every query (no Python between queries).
    for q in range(starts.size - 1):
        a, b = starts[q], starts[q + 1]
        out_n[q] = exhaustive(terms[a:b], mult[a:b], needs[q], counting, merge_pages, indptr, pages, impacts,
                               id_rank, scores, held, touched, k, out_pages[q], out_scores[q])


# ---------------------------------------------------------------- MaxScore, document at a time

@njit(cache=True)
def _seek(pages, lo, end, d):
    """The first position at or after ``lo`` whose page is ≥ d: galloping, then binary search.

    Candidates come in increasing order, so the next one is usually close: doubling steps find it in
    O(log distance) reads near the cursor, where a binary search over the rest of a long list would
    jump far (and miss the cache) every time.
    """
    step = 1
    hi = lo
    while hi < end and pages[hi] < d:
        lo = hi + 1
        hi = lo + step
        step *= 2
    if hi > end:
        hi = end
    while lo < hi:
        mid = (lo + hi) // 2
        if pages[mid] < d:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def maxscore(terms, mult, indptr, pages, impacts, upper, id_rank, k, out_pages, out_scores, counters):
    # The query's words sorted by their bound, smallest first; cum[i]: the most words 0..i can add together.
    n = terms.size
    if mult.size == 0:
        mult = np.ones(n)
    bound = upper[terms] * mult
    order = np.argsort(bound, kind="mergesort")
    t_sorted, m_sorted = terms[order], mult[order]
    cum = np.cumsum(bound[order]) * (1.0 + SLACK)
    pos = np.empty(n, np.int64)
    end = np.empty(n, np.int64)
    for i in range(n):
        pos[i], end[i] = indptr[t_sorted[i]], indptr[t_sorted[i] + 1]
    contrib = np.zeros(n, np.float64)  # this page's impact per query word, in the query's order
    h_score = np.empty(k, np.float64)
    h_rank = np.empty(k, np.int64)
    h_page = np.empty(k, np.int64)
    size, theta, first = 0, -1.0, 0  # words [0, first) cannot make a page enter alone: non-essential
    scored, abandoned = 0, 0
    while True:
        # The next candidate: the smallest page in an essential list (only those can bring a page in).
        d = -1
        for i in range(first, n):
            if pos[i] < end[i] and (d < 0 or pages[pos[i]] < d):
                d = pages[pos[i]]
        if d < 0:
            break
        s = 0.0
        for i in range(first, n):
            if pos[i] < end[i] and pages[pos[i]] == d:
                contrib[order[i]] = impacts[pos[i]] * m_sorted[i]
                s += contrib[order[i]]
                pos[i] += 1
        alive = True
        for i in range(first - 1, -1, -1):  # non-essential lists, largest bound first, each looked up once
            if size == k and (s + cum[i]) * (1.0 + SLACK) < theta:
                alive = False  # even every remaining word could not lift it to the k-th score
                break
            lo = _seek(pages, pos[i], end[i], d)  # pages below d are skipped, never read
            pos[i] = lo
            if lo < end[i] and pages[lo] == d:
                contrib[order[i]] = impacts[lo] * m_sorted[i]
                s += contrib[order[i]]
        if alive:
            exact = 0.0
            for q in range(n):  # the score again in the query's order: the same float as exhaustive scoring
                exact += contrib[q]
            scored += 1
            size = _offer(h_score, h_rank, h_page, size, k, exact, id_rank[d], d)
            if size == k:
                theta = h_score[0]
                while first < n and cum[first] < theta:  # a word whose bound (with the smaller ones) < θ
                    first += 1
        else:
            abandoned += 1
        for q in range(n):
            contrib[q] = 0.0
    counters[0], counters[1] = scored, abandoned
    return _drain(h_score, h_rank, h_page, size, out_pages, out_scores)

