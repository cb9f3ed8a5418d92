"""The hot paths compiled with numba. The read: one call ranks every cluster centre (pivot bounds
first on large tables, byte products where the CPU has them, then int8 codes, then exact scores
for the rows that can still make the top-k), keeps the top-k, scores the frames of those
clusters through their slot lists, filters them and puts them in result order, with no Python
per cluster. The write: one call checks a frame, finds its place cell and stores it; another
appends its slot to its cluster."""

from __future__ import annotations

import llvmlite.binding
import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.extending import intrinsic, overload


@numba.njit(cache=True, nogil=True)
def filtered_in_order(
    slots: np.ndarray,
    t: np.ndarray,
    pose: np.ndarray,
    scores: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    scored: int,
    bytes_read: int,
    embeddings: np.ndarray,
    query: np.ndarray,
    frame_filter: tuple,
    near_x: float,
    near_z: float,
    by_distance: bool,
    limit: int,
) -> tuple:
    """A read's end, from the frames its search found (``slots`` to ``upper``, as
    :func:`search_clusters` finds them; ``scored`` dot products, ``bytes_read``): the first
    ``limit`` frames that pass ``frame_filter`` (:func:`passing_frames`) in result order
    (:func:`settle_read`): ``(t, poses, scores, best score, frames that passed, frames found
    before the filter, dot products computed, bytes read)``."""
    found = slots.shape[0]
    if filters_frames(frame_filter):
        keep = np.flatnonzero(passing_frames(t, pose, frame_filter))
        slots, t, pose = slots[keep], t[keep], pose[keep]
        scores, lower, upper = scores[keep], lower[keep], upper[keep]
    t, pose, scores, best, rescored = settle_read(
        slots, t, pose, scores, lower, upper, embeddings, query, near_x, near_z, by_distance, limit
    )
    return (t, pose, scores, best, slots.shape[0], found, scored,
            bytes_read + rescored * embeddings.strides[0])


@numba.njit(cache=True, nogil=True)
def filters_frames(frame_filter: tuple) -> bool:
    """Whether ``frame_filter`` (:func:`passing_frames`) may drop a frame."""
    since, until, within, outside = frame_filter
    return (since != STEP_MIN or until != STEP_MAX or within.shape[0] > 0
            or outside.shape[0] > 0)


@numba.njit(cache=True, nogil=True)
def passing_frames(t: np.ndarray, pose: np.ndarray, frame_filter: tuple) -> np.ndarray:
    """Which frames pass ``frame_filter = (since, until, within, outside)``: a step in
    ``[since, until]``, a ground position within the disc ``within`` (``(x, z, radius)``;
    no rows: anywhere) and outside every disc of ``outside`` (rows ``(x, z, radius)``), the
    distances in float64 as :meth:`~mrsteve.memory.base.ReadFilter.frames` computes them."""
    since, until, within, outside = frame_filter
    keep = np.empty(t.shape[0], np.bool_)
    for index in range(t.shape[0]):
        x = np.float64(pose[index, 0])
        z = np.float64(pose[index, 2])
        passes = since <= t[index] <= until
        for disc in range(outside.shape[0]):
            dx = x - outside[disc, 0]
            dz = z - outside[disc, 1]
            passes = passes and dx * dx + dz * dz > outside[disc, 2] * outside[disc, 2]
        if within.shape[0] > 0:
            dx = x - within[0]
            dz = z - within[1]
            passes = passes and dx * dx + dz * dz <= within[2] * within[2]
        keep[index] = passes
    return keep


STEP_MIN, STEP_MAX = -(2**63), 2**63 - 1
"""The steps a frame filter's ``since`` and ``until`` take when unbounded (int64's range)."""
EVERY_FRAME = 2**63 - 1
"""A read's ``limit`` that returns every frame found."""


@numba.njit(cache=True, nogil=True, fastmath={"reassoc"})
def search_clusters(
    codes: np.ndarray,
    scales: np.ndarray,
    residuals: np.ndarray,
    live: np.ndarray,
    live_count: int,
    allowed: np.ndarray,
    top_k: int,
    base: np.ndarray,
    head: np.ndarray,
    tail: np.ndarray,
    arena: np.ndarray,
    embeddings: np.ndarray,
    steps: np.ndarray,
    poses: np.ndarray,
    centre_slot: np.ndarray,
    query: np.ndarray,
    threshold: np.float32,
    centres_only: bool,
    pivots: tuple,
    frame_codes: np.ndarray,
    frame_scales: np.ndarray,
    frame_residuals: np.ndarray,
    exact_scores: bool,
    frame_filter: tuple,
    near_x: float,
    near_z: float,
    by_distance: bool,
    limit: int,
    check_query: bool,
) -> tuple:
    """The paper's Algorithm "Read" over a :class:`~mrsteve.memory.cluster_table.ClusterTable`,
    in one compiled call: the frames scoring at least ``threshold`` in the ``top_k`` clusters
    whose centres score best among the rows of the centre matrix where ``allowed`` is true
    (``allowed`` of length 0: every row), then the first ``limit`` of those that pass
    ``frame_filter`` in result order (nearest first to ``(near_x, near_z)`` with
    ``by_distance``, else best first; :func:`filtered_in_order`, whose result this is). One call
    rather than three (search, filter, order) saves ~15 us of a cold read (measured). Ties at
    the k-th centre score go to the lower row. With ``centres_only`` the centre frames of those
    clusters stand for them.

    Ranking is exact but reads a quarter of the bytes and multiplies integers: the query is
    quantised to int16 (``codes[r] * scales[r]``, int8, approximates centre ``r``), every centre
    is first scored by an integer dot product of the two codes, with a bound on the error
    (:func:`_code_error`), and only the rows whose upper bound reaches the k-th largest lower
    bound can be in the top-k; of those, only the ones whose place the bounds leave open are
    scored exactly, from the centre frames' rows of ``embeddings`` (:func:`_top_centres`). With
    a pivot index (:func:`assign_pivots`; ``pivots`` of empty arrays: none), a cheaper bound
    first drops the rows that cannot make the top-k (:func:`_pivot_prune`), and with
    :data:`BYTE_DOTS` a pass of byte products another (:func:`_byte_prune`), so the int16
    bounds of only the rest are computed. Unless ``exact_scores`` asks for every found
    frame's score, the frames of the chosen clusters are decided the same way when the store
    keeps codes of its frames (``frame_codes``, ``frame_scales``, ``frame_residuals``; no rows:
    none; :func:`_scan_coded`): a frame whose bound lies wholly below the threshold is dropped,
    one wholly above is kept with its score not computed (NaN), and only those it straddles are
    scored exactly. ``lower`` and ``upper`` bound every found frame's score (both the score
    where it was computed). The bytes counted are those of the embedding rows, codes and slot
    lists read.

    The frames of the chosen clusters lie in scattered rows: their slots are listed first, and
    each row's cache lines are asked for :data:`PREFETCH_AHEAD` rows before it is scored (10-15 %
    off a 100K-frame read), with the lines of its step and pose, which a found frame copies as it
    is scored; the centre rows scored exactly are asked for the same way. (Reassociation lets the
    sums vectorise; their rounding differs from BLAS in the last bits.)

    With ``check_query`` the query's values are checked first, as
    :func:`~mrsteve.memory.base.check_embedding` checks them (:func:`_is_unit`); a refused
    query finds nothing and counts :data:`REFUSED_QUERY` dot products (the caller raises the
    Python check's error), so a read of a float32 query makes one compiled call, not two (the
    other cost about 10 us of a read answered between faiss reads, measured)."""
    if check_query and not _is_unit(query):
        nothing = np.empty(0, np.int64)
        no_scores = np.empty(0, np.float32)
        return filtered_in_order(nothing, nothing, np.empty((0, 5), np.float32), no_scores,
                                 np.empty(0), np.empty(0), REFUSED_QUERY, 0, embeddings, query,
                                 frame_filter, near_x, near_z, by_distance, limit)
    dim = query.shape[0]
    row_bytes = dim * embeddings.itemsize
    coded_bytes = dim + 8  # a code row, its scale and its residual bound
    if allowed.shape[0] == live_count:
        candidates = np.flatnonzero(allowed[:live_count])
    else:
        candidates = np.arange(live_count)
    count = candidates.shape[0]
    bytes_read = 0
    codable = dim <= MAX_CODED_DIM
    if codable:
        query_codes, query_scale, query_error, query_norm = _quantise_query(query)
    else:
        query_codes, query_scale, query_error, query_norm = np.zeros(0, np.int16), 1.0, 0.0, 1.0
    if count > top_k and codable:
        coded = (codes, scales, residuals, query_codes, query_scale, query_error, query_norm)
        if pivots[3].shape[0] > 0:
            candidates = _pivot_prune(pivots, coded, candidates, top_k)
        bytes_read += candidates.shape[0] * coded_bytes
        if BYTE_DOTS and candidates.shape[0] > BYTE_PRUNE_MIN_ROWS * top_k:
            candidates = _byte_prune(codes, scales, residuals, query, query_norm, candidates,
                                     top_k)
        upper, lower, floor = _code_bounds(coded, candidates, top_k)
        keep = upper >= floor
        candidates, upper, lower = candidates[keep], upper[keep], lower[keep]
        count = candidates.shape[0]
    else:  # no bounds: every score unknown
        lower = np.full(count, -np.inf, np.float32)
        upper = np.full(count, np.inf, np.float32)
    centres = centre_slot[live[candidates]]
    exact = np.full(count, np.nan, np.float32)
    if centres_only:  # the chosen centres' scores are the result: score every candidate
        for index in range(count):
            _prefetch_next(embeddings, centres, index)
            exact[index] = _dot(embeddings, centres[index], query)
        bytes_read += count * row_bytes
        lower = upper = exact
    if count > top_k:
        candidates, exact, rows_scored = _top_centres(candidates, centres, lower, upper, exact,
                                                      top_k, embeddings, query)
        bytes_read += rows_scored * row_bytes
    if centres_only:
        scanned = np.empty(candidates.shape[0], np.int64)
        kept = 0
        for index in range(candidates.shape[0]):
            if exact[index] >= threshold:
                scanned[kept] = centre_slot[live[candidates[index]]]
                exact[kept] = exact[index]
                kept += 1
        slots, found = scanned[:kept], exact[:kept]
        t = np.empty(kept, np.int64)
        pose = np.empty((kept, 5), np.float32)
        for index in range(kept):
            _copy_frame_fields(slots[index], index, steps, poses, t, pose)
        bounds = found.astype(np.float64)
        return filtered_in_order(slots, t, pose, found, bounds, bounds, live_count, bytes_read,
                                 embeddings, query, frame_filter, near_x, near_z, by_distance,
                                 limit)
    total_frames = 0
    for row in candidates:
        cluster = live[row]
        total_frames += tail[cluster] - head[cluster]
    scanned = np.empty(total_frames, np.int64)  # the slots to score, cluster by cluster
    filled = 0
    for row in candidates:
        cluster = live[row]
        for entry in range(base[cluster] + head[cluster], base[cluster] + tail[cluster]):
            scanned[filled] = arena[entry]
            filled += 1
    bytes_read += total_frames * 4
    scored = live_count + total_frames
    if codable and frame_codes.shape[0] > 0 and not exact_scores:
        coded_query = (query_codes, query_scale, query_error, query_norm)
        slots, t, pose, found, lower, upper, exact_rows = _scan_coded(
            scanned, (frame_codes, frame_scales, frame_residuals), coded_query, embeddings,
            steps, poses, query, threshold,
        )
        bytes_read += total_frames * coded_bytes + exact_rows * row_bytes + slots.shape[0] * 28
        return filtered_in_order(slots, t, pose, found, lower, upper, scored, bytes_read,
                                 embeddings, query, frame_filter, near_x, near_z, by_distance,
                                 limit)
    slots = np.empty(total_frames, np.int64)
    found = np.empty(total_frames, np.float32)
    t = np.empty(total_frames, np.int64)
    pose = np.empty((total_frames, 5), np.float32)
    kept = 0
    for index in range(total_frames):
        _prefetch_next(embeddings, scanned, index)
        if index + PREFETCH_AHEAD < total_frames:
            _prefetch_fields(steps, poses, scanned[index + PREFETCH_AHEAD])
        slot = scanned[index]
        total = _dot(embeddings, slot, query)
        if total >= threshold:
            slots[kept] = slot
            found[kept] = total
            _copy_frame_fields(slot, kept, steps, poses, t, pose)
            kept += 1
    bytes_read += total_frames * row_bytes + kept * 28
    bounds = found[:kept].astype(np.float64)
    return filtered_in_order(slots[:kept], t[:kept], pose[:kept], found[:kept], bounds, bounds,
                             scored, bytes_read, embeddings, query, frame_filter, near_x, near_z,
                             by_distance, limit)


@numba.njit(cache=True, nogil=True, fastmath={"reassoc"})
def _top_centres(
    candidates: np.ndarray,
    centres: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    exact: np.ndarray,
    top_k: int,
    embeddings: np.ndarray,
    query: np.ndarray,
) -> tuple:
    """``(chosen rows, their scores, rows scored here)``: the ``top_k`` of ``candidates``
    (ascending rows, more than ``top_k``) whose centre frames (``centres``) score best, ties at
    the k-th score to the lower row; first the rows scoring above the k-th score, then those
    scoring it, each in candidate order. ``lower`` and ``upper`` bound each candidate's exact
    score (infinite: unknown); ``exact`` holds the scores known (NaN: not computed), and only
    the scores the choice and that order need are computed: a row whose lower bound is above
    the (k+1)-th largest upper bound is in the top-k whatever the scores (at most k - 1 others
    can reach its score), and of those only the ones that may be the k-th need their score; a
    row whose upper bound is below the k-th largest lower bound is out. The chosen rows' scores
    not computed are NaN."""
    count = candidates.shape[0]
    cut = _kth_largest(upper, top_k + 1)
    floor = _kth_largest(lower, top_k)
    certain = lower > cut
    open_rows = np.flatnonzero(~certain & (upper >= floor))
    rows_scored = _score_centres(exact, open_rows, centres, embeddings, query)
    chosen = certain.copy()
    needed = top_k - np.count_nonzero(certain)
    least = np.float32(np.inf)  # the smallest score known among the chosen rows
    if needed > 0:
        kth_open = _kth_largest(exact[open_rows], needed)
        taken = 0
        for index in open_rows:
            if exact[index] > kth_open:
                chosen[index] = True
                taken += 1
        for index in open_rows:
            if taken == needed:
                break
            if exact[index] == kth_open:
                chosen[index] = True
                taken += 1
        least = kth_open
    ceiling = least  # a certain row whose lower bound reaches this may score the k-th
    for index in range(count):
        if certain[index]:
            ceiling = min(ceiling, upper[index])
    unsure = np.flatnonzero(certain & (lower <= ceiling))
    rows_scored += _score_centres(exact, unsure, centres, embeddings, query)
    for index in unsure:
        least = min(least, exact[index])
    kth = least  # unscored chosen rows score above it
    rows = np.empty(top_k, np.int64)
    scores = np.empty(top_k, np.float32)
    taken = 0
    for index in range(count):
        if chosen[index] and not exact[index] <= kth:
            rows[taken] = candidates[index]
            scores[taken] = exact[index]
            taken += 1
    for index in range(count):
        if chosen[index] and exact[index] == kth:
            rows[taken] = candidates[index]
            scores[taken] = exact[index]
            taken += 1
    return rows, scores, rows_scored


@numba.njit(cache=True, nogil=True, fastmath={"reassoc"})
def _score_centres(
    exact: np.ndarray, indices: np.ndarray, centres: np.ndarray, embeddings: np.ndarray,
    query: np.ndarray,
) -> int:
    """Fill the NaN ``exact[indices]`` with the scores of their centre frames (``centres``),
    each row's cache lines asked for :data:`PREFETCH_AHEAD` rows before; returns how many."""
    rows = centres[indices]
    filled = 0
    for position in range(indices.shape[0]):
        _prefetch_next(embeddings, rows, position)
        index = indices[position]
        if np.isnan(exact[index]):
            exact[index] = _dot(embeddings, rows[position], query)
            filled += 1
    return filled


@numba.njit(cache=True, nogil=True, fastmath={"reassoc"})
def _scan_coded(
    scanned: np.ndarray,
    frame_codes: tuple,
    coded_query: tuple,
    embeddings: np.ndarray,
    steps: np.ndarray,
    poses: np.ndarray,
    query: np.ndarray,
    threshold: np.float32,
) -> tuple:
    """The frames in ``scanned`` scoring at least ``threshold``, decided from their int8 codes
    where the bound allows (:func:`_code_error`: guaranteed, the float32 rounding of the exact
    sum included), in scan order: ``(slots, t, poses, scores, lower, upper, rows scored
    exactly)``. Only frames whose bound straddles the threshold are scored from their float32
    rows (the same sum as the exact scan, so the same frames are kept with the same scores);
    the other kept frames' scores are NaN."""
    _, code_scales, code_residuals = frame_codes
    query_codes, query_scale, query_error, query_norm = coded_query
    count = scanned.shape[0]
    dim = query.shape[0]
    dots = _frame_code_dots(frame_codes, steps, poses, scanned, query_codes)
    bar = np.float64(threshold)
    lower = np.empty(count)
    upper = np.empty(count)
    settled = np.zeros(count, np.bool_)  # kept by its bound
    to_score = np.empty(count, np.int64)
    scoring = 0
    for index in range(count):
        slot = scanned[index]
        approx = np.float64(dots[index]) * (np.float64(code_scales[slot]) * query_scale)
        bound = _code_error(code_residuals[slot], query_error, query_norm, dim)
        if approx + bound < bar:
            continue
        lower[index] = approx - bound
        upper[index] = approx + bound
        if lower[index] >= bar:
            settled[index] = True
        else:
            to_score[scoring] = index
            scoring += 1
    to_score = to_score[:scoring]
    rows = scanned[to_score]
    exact = np.full(count, np.nan, np.float32)
    keep = settled.copy()
    for position in range(scoring):
        _prefetch_next(embeddings, rows, position)
        index = to_score[position]
        total = _dot(embeddings, rows[position], query)
        if total >= threshold:
            exact[index] = total
            lower[index] = upper[index] = total
            keep[index] = True
    kept = 0
    for index in range(count):
        kept += keep[index]
    slots = np.empty(kept, np.int64)
    found = np.empty(kept, np.float32)
    kept_lower = np.empty(kept)
    kept_upper = np.empty(kept)
    t = np.empty(kept, np.int64)
    pose = np.empty((kept, 5), np.float32)
    position = 0
    for index in range(count):
        if keep[index]:
            slot = scanned[index]
            slots[position] = slot
            found[position] = exact[index]
            kept_lower[position] = lower[index]
            kept_upper[position] = upper[index]
            _copy_frame_fields(slot, position, steps, poses, t, pose)
            position += 1
    return slots, t, pose, found, kept_lower, kept_upper, scoring


@numba.njit(cache=True, nogil=True, fastmath={"reassoc"})
def _dot(embeddings: np.ndarray, row: int, query: np.ndarray) -> np.float32:
    """The float32 score of ``embeddings[row]`` (either precision) against ``query``: the one sum
    every exact score of a read is (reassociated to vectorise, so a frame scores the same
    wherever it is scored)."""
    total = np.float32(0.0)
    for column in range(query.shape[0]):
        total += as_float32(embeddings[row, column]) * query[column]
    return total


@numba.njit(cache=True, nogil=True)
def settle_read(
    slots: np.ndarray,
    t: np.ndarray,
    pose: np.ndarray,
    scores: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    embeddings: np.ndarray,
    query: np.ndarray,
    near_x: float,
    near_z: float,
    by_distance: bool,
    limit: int,
) -> tuple:
    """The first ``limit`` found frames in result order (best first, or nearest first to
    ``(near_x, near_z)`` with ties best first; both stable: then in the order found), scoring
    exactly the frames whose score (NaN: not computed) that order or the best score needs:
    ``(t, pose, scores, best score of every found frame, rows scored here)``. Best first
    needs every score; nearest first only the scores of frames at the same distance as
    another and of those that may be the best (:func:`_score_best`), and it sorts only the
    frames no farther than the ``limit``-th nearest (:func:`_nearest_rows`). The rest stay
    NaN; the best score is exact (NaN when nothing was found)."""
    count = slots.shape[0]
    if not by_distance:
        rescored = _score_missing(scores, np.arange(count), slots, embeddings, query)
        ordered_t, ordered_pose, ordered_scores = _in_order(best_first(scores)[:limit], t, pose,
                                                            scores)
        return ordered_t, ordered_pose, ordered_scores, _best(scores), rescored
    rescored = _score_best(scores, lower, upper, slots, embeddings, query)
    distance = _ground_distances(pose, np.arange(count), near_x, near_z)
    rows = _nearest_rows(distance, limit)
    order = rows[nearest_first(distance[rows])]  # runs of equal distance are ordered below
    count = order.shape[0]
    start = 0
    while start < count:
        stop = start + 1
        while stop < count and distance[order[stop]] == distance[order[start]]:
            stop += 1
        if stop - start > 1:
            run = order[start:stop]
            rescored += _score_missing(scores, run, slots, embeddings, query)
            _sort_best_first(run, scores)
        start = stop
    ordered_t, ordered_pose, ordered_scores = _in_order(order[:limit], t, pose, scores)
    return ordered_t, ordered_pose, ordered_scores, _best(scores), rescored


@numba.njit(cache=True, nogil=True)
def _nearest_rows(distance: np.ndarray, limit: int) -> np.ndarray:
    """The indices, in order, of the ``distance`` values no larger than the ``limit``-th
    smallest (every index when there are no more than ``limit``): the frames whose order the
    first ``limit`` of a nearest-first read depends on, ties at the cut included."""
    count = distance.shape[0]
    if limit >= count:
        return np.arange(count)
    cut = -_kth_largest(-distance, limit)
    return np.flatnonzero(distance <= cut)


@numba.njit(cache=True, nogil=True)
def _score_best(
    scores: np.ndarray, lower: np.ndarray, upper: np.ndarray, slots: np.ndarray,
    embeddings: np.ndarray, query: np.ndarray,
) -> int:
    """Fill in the NaN ``scores`` that the best score needs, of frames bounded by ``lower`` and
    ``upper``: highest upper bound first, each scored unless known, until the next upper bound
    is below the best score so far (no frame after it can beat that). Only frames whose upper
    bound reaches the largest lower bound are candidates; returns how many were scored."""
    best = -np.inf
    for index in range(scores.shape[0]):
        if scores[index] > best:  # False for NaN
            best = np.float64(scores[index])
    if scores.shape[0]:
        best = max(best, lower.max())
    candidates = np.flatnonzero(upper >= best)
    order = candidates[np.argsort(-upper[candidates], kind="mergesort")]
    count = 0
    for position in range(order.shape[0]):
        index = order[position]
        if upper[index] < best:
            break
        if position + 1 < order.shape[0]:
            _prefetch_row(embeddings, slots[order[position + 1]])
        if np.isnan(scores[index]):
            scores[index] = _dot(embeddings, slots[index], query)
            count += 1
        best = max(best, np.float64(scores[index]))
    return count


@numba.njit(cache=True, nogil=True)
def _score_missing(
    scores: np.ndarray, rows: np.ndarray, slots: np.ndarray, embeddings: np.ndarray,
    query: np.ndarray,
) -> int:
    """Fill the NaN ``scores[rows]`` with the exact scores of their frames, each frame's row
    asked for :data:`PREFETCH_AHEAD` ahead; returns how many."""
    missing = np.empty(rows.shape[0], np.int64)
    count = 0
    for row in rows:
        if np.isnan(scores[row]):
            missing[count] = row
            count += 1
    missing = missing[:count]
    stored = slots[missing]
    for position in range(count):
        _prefetch_next(embeddings, stored, position)
        scores[missing[position]] = _dot(embeddings, stored[position], query)
    return count


@numba.njit(cache=True, nogil=True)
def _sort_best_first(run: np.ndarray, scores: np.ndarray) -> None:
    """Sort the indices ``run`` in place by score, highest first, equal scores by index (an
    insertion sort: runs of frames at one distance are short)."""
    for index in range(1, run.shape[0]):
        item = run[index]
        position = index
        while position > 0 and _goes_before(item, run[position - 1], scores):
            run[position] = run[position - 1]
            position -= 1
        run[position] = item


@numba.njit(cache=True, nogil=True)
def _goes_before(first: int, second: int, scores: np.ndarray) -> bool:
    return scores[first] > scores[second] or (scores[first] == scores[second] and first < second)


@numba.njit(cache=True, nogil=True)
def _best(scores: np.ndarray) -> np.float32:
    """The largest score that is not NaN (NaN when none is)."""
    best = np.float32(np.nan)
    for score in scores:
        if not np.isnan(score) and not best >= score:
            best = score
    return best


@numba.njit(cache=True, nogil=True, fastmath={"reassoc"})
def score_rows(embeddings: np.ndarray, rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Float32 dot products of ``embeddings`` rows ``rows`` (either precision) with ``query``."""
    scores = np.empty(rows.shape[0], np.float32)
    for index in range(rows.shape[0]):
        _prefetch_next(embeddings, rows, index)
        scores[index] = _dot(embeddings, rows[index], query)
    return scores


@numba.njit(cache=True, nogil=True, inline="always")
def _copy_frame_fields(
    slot: int, index: int, steps: np.ndarray, poses: np.ndarray, t: np.ndarray, pose: np.ndarray
) -> None:
    """``t[index], pose[index] = steps[slot], poses[slot]``, field by field (no temporaries)."""
    t[index] = steps[slot]
    for field in range(5):
        pose[index, field] = poses[slot, field]


@numba.njit(cache=True, nogil=True)
def square_norm_and_peak(vector: np.ndarray) -> tuple[float, float]:
    """``(sum of squares, largest magnitude)`` of a float vector in float64, without numpy's
    floating-point warnings (NaN gives a NaN sum; the peak skips NaN)."""
    total = 0.0
    peak = 0.0
    for value in vector:
        value64 = np.float64(value)
        total += value64 * value64
        peak = max(peak, abs(value64))
    return total, peak


FLOAT32_MAX = float(np.finfo(np.float32).max)
NORM_TOLERANCE = 1e-3
"""Embeddings and queries must have an L2 norm within ``1 +- NORM_TOLERANCE`` (scores are cosines
only for unit vectors)."""
STORED, BAD_POSE, BAD_EMBEDDING, BAD_PLACE, NO_ROOM = 0, 1, 2, 3, 4
"""What :func:`write_frame` did (:data:`NO_ROOM`: the frame passed the checks, but its slot is
past the arrays)."""
REFUSED_QUERY = -1
"""The dot products :func:`search_clusters` reports for a query its check refused."""
BASE, BLOCK, HEAD, TAIL = 0, 1, 2, 3
"""Columns of a cluster's row in the table's ``blocks``: where its slot block starts in the arena,
its length, and where its slots start and end within it."""
_CELL_RANGE = 2.0**63
"""Place cells are numbered as int64: ``-2**63 <= cell < 2**63``."""


@numba.njit(cache=True, nogil=True)
def write_frame(
    embeddings: np.ndarray,
    poses: np.ndarray,
    steps: np.ndarray,
    slot: int,
    vector: np.ndarray,
    pose: np.ndarray,
    t: int,
    check_vector: bool,
    grid: np.ndarray,
    route: np.ndarray,
    arena: np.ndarray,
    blocks: np.ndarray,
    stale: np.ndarray,
    links: np.ndarray,
    ends: np.ndarray,
    codes: np.ndarray,
    code_scales: np.ndarray,
    code_residuals: np.ndarray,
) -> tuple[int, int, int]:
    """The write of one frame in one call. Check it (:func:`_check_frame`) and, if it passes,
    store it in row ``slot`` (a row past the arrays: :data:`NO_ROOM`), with its int8 codes when
    the store keeps them (``codes``, their scales and residual bounds; no rows: none); then, if it lies in place
    cell ``route[:3]`` while cluster ``route[3]`` (-1: none) takes that cell's frames, append it
    there (:func:`append_slot`), else set ``route`` to its cell and no cluster. Returns
    ``(status, cluster, size of the cluster before)``, status :data:`STORED` or why nothing
    changed; the cluster -1 unless the frame lies on the route, the size -1 unless it was
    appended (its cluster's block full)."""
    status, cell_x, cell_z, yaw_bin = _check_frame(
        vector, pose, embeddings.shape[1], check_vector, grid
    )
    if status != STORED:
        return status, -1, -1
    if slot >= embeddings.shape[0]:
        return NO_ROOM, -1, -1
    for column in range(vector.shape[0]):
        embeddings[slot, column] = as_stored(np.float32(vector[column]), embeddings)
    for field in range(5):
        poses[slot, field] = np.float32(pose[field])
    steps[slot] = t
    if codes.shape[0] > 0:
        _quantise_row(embeddings, slot, codes, code_scales, code_residuals, slot)
    cluster = route[3]
    if cell_x != route[0] or cell_z != route[1] or yaw_bin != route[2]:
        route[0], route[1], route[2], route[3] = cell_x, cell_z, yaw_bin, -1
    elif cluster >= 0:
        return STORED, cluster, append_slot(arena, blocks, stale, links, ends, cluster, slot)
    return STORED, -1, -1


@numba.njit(cache=True, nogil=True)
def _check_frame(
    vector: np.ndarray, pose: np.ndarray, dim: int, check_vector: bool, grid: np.ndarray
) -> tuple[int, int, int, int]:
    """``(status, cell x, cell z, yaw bin)`` of a frame: the checks of
    :func:`mrsteve.memory.base.check_pose` (five numbers, finite within float32), of
    :func:`~mrsteve.memory.base.check_embedding` when ``check_vector`` (unit norm; the size
    ``dim`` always) and, with a ``grid`` ``(C, C / 2, W, W / 2)`` (empty: no place grid), that
    the place cell of the pose as stored (:func:`mrsteve.memory.place.place_key`, the same
    float64 arithmetic) fits int64."""
    if pose.shape[0] != 5:
        return BAD_POSE, 0, 0, 0
    for field in range(5):
        if not abs(np.float64(pose[field])) <= FLOAT32_MAX:  # NaN fails too
            return BAD_POSE, 0, 0, 0
    if vector.shape[0] != dim or (check_vector and not _is_unit(vector)):
        return BAD_EMBEDDING, 0, 0, 0
    if grid.shape[0] == 0:
        return STORED, 0, 0, 0
    cell, half_cell, width, half_width = grid[0], grid[1], grid[2], grid[3]
    x = np.floor((np.float64(np.float32(pose[0])) + half_cell) / cell)
    z = np.floor((np.float64(np.float32(pose[2])) + half_cell) / cell)
    if not (-_CELL_RANGE <= x < _CELL_RANGE and -_CELL_RANGE <= z < _CELL_RANGE):
        return BAD_PLACE, 0, 0, 0
    yaw = np.float64(np.float32(pose[3]))
    return STORED, int(x), int(z), int(np.floor(((yaw + half_width) % 360.0) / width))


@numba.njit(cache=True, nogil=True)
def _is_unit(vector: np.ndarray) -> bool:
    """Whether :func:`~mrsteve.memory.base.check_embedding` accepts a float vector of the right
    size: finite, norm within ``1 +- NORM_TOLERANCE`` (which bounds every value, so no value
    can lie past float32's range). The sum of squares is first taken in any order (vectorised);
    only a norm within ``1e-9`` of the bounds, where that order could decide, is summed again in
    order, as the check does."""
    square_norm = _square_norm_any_order(vector)
    if not np.isfinite(square_norm):
        return False
    off = abs(np.sqrt(square_norm) - 1.0)
    if abs(off - NORM_TOLERANCE) <= 1e-9:
        off = abs(np.sqrt(square_norm_and_peak(vector)[0]) - 1.0)
    return off <= NORM_TOLERANCE


@numba.njit(cache=True, nogil=True, fastmath={"reassoc"})
def _square_norm_any_order(vector: np.ndarray) -> float:
    total = 0.0
    for index in range(vector.shape[0]):  # indexed: LLVM vectorises this loop, not an iterator
        value = np.float64(vector[index])
        total += value * value
    return total


@numba.njit(cache=True, nogil=True)
def append_slot(
    arena: np.ndarray,
    blocks: np.ndarray,
    stale: np.ndarray,
    links: np.ndarray,
    ends: np.ndarray,
    cluster: int,
    slot: int,
) -> int:
    """Add ``slot`` after the last slot of ``cluster`` in its arena block (``blocks`` columns
    :data:`BASE`, :data:`BLOCK`, :data:`HEAD`, :data:`TAIL` of
    :class:`~mrsteve.memory.cluster_table.ClusterTable`) and move the cluster to its new size bucket
    (:func:`move_bucket`); returns the cluster's size before, or -1, changing nothing, when the
    block is full up to its end."""
    block = blocks[cluster]
    end = block[TAIL]
    if end == block[BLOCK]:
        return -1
    arena[block[BASE] + end] = slot
    block[TAIL] = end + 1
    stale[cluster] = True
    size = end - block[HEAD]
    move_bucket(links, ends, cluster, size, size + 1)
    return size


@numba.njit(cache=True, nogil=True)
def move_bucket(
    links: np.ndarray, ends: np.ndarray, cluster: int, old_size: int, new_size: int
) -> None:
    """Move ``cluster`` from its place in the list of clusters of ``old_size`` to
    the end of the list of ``new_size`` (size 0: no list) in
    :class:`~mrsteve.memory.cluster_table.SizeBuckets` ``links`` (previous, next) and ``ends``
    (first, last; row 0: a bound on the largest size, raised here)."""
    if old_size:
        previous, following = links[cluster, 0], links[cluster, 1]
        if previous >= 0:
            links[previous, 1] = following
        else:
            ends[old_size, 0] = following
        if following >= 0:
            links[following, 0] = previous
        else:
            ends[old_size, 1] = previous
    if new_size:
        last = ends[new_size, 1]
        links[cluster, 0], links[cluster, 1] = last, -1
        if last >= 0:
            links[last, 1] = cluster
        else:
            ends[new_size, 0] = cluster
        ends[new_size, 1] = cluster
        ends[0, 0] = max(ends[0, 0], new_size)


@numba.njit(cache=True, nogil=True)
def largest_bucket(ends: np.ndarray) -> int:
    """The first cluster of the largest size in :func:`move_bucket`'s ``ends`` (there must be
    one), lowering the bound on the largest size to it."""
    size = ends[0, 0]
    while ends[size, 0] < 0:
        size -= 1
    ends[0, 0] = size
    return ends[size, 0]


MAX_CODED_DIM = (2**31 - 1) // (127 * 127)
"""Largest embedding size whose int8 dot products fit int32 (133,144); past it every centre is
scored exactly."""


@numba.njit(cache=True, nogil=True, fastmath={"reassoc"})
def _quantise_into(vector: np.ndarray, codes: np.ndarray, levels: int = 127) -> tuple[float, float]:
    """Write the finite ``vector`` as integer ``codes * scale`` in ``-levels .. levels`` (scale =
    its largest magnitude / ``levels``, rounded to float32 as it is stored; each code the
    multiple nearest in float32 arithmetic); returns ``(scale, L2 norm of what the codes
    miss)``. Three loops that LLVM vectorises: the largest magnitude (as the integer maximum of
    the magnitudes' bits, which order like the magnitudes), the codes, and the sum of squares
    (reassociated: it differs from an ordered float64 sum by at most ``dim * 2**-53``
    relatively, far inside the slack the bounds add; :func:`_quantise_row`). 0.25 us a 512-dim
    frame."""
    largest_bits = np.uint32(0)
    for column in range(vector.shape[0]):
        bits = _float32_bits(np.float32(vector[column])) & np.uint32(0x7FFFFFFF)
        largest_bits = max(largest_bits, bits)
    largest = _float32_from_bits(largest_bits)
    top = np.float32(levels)
    scale = np.float32(largest / top) if largest > 0.0 else np.float32(1.0)
    inverse = np.float32(1.0) / scale
    for column in range(vector.shape[0]):
        code = np.float32(np.rint(np.float32(vector[column]) * inverse))
        code = min(top, code)
        code = max(-top, code)
        codes[column] = code
    scale64 = np.float64(scale)
    missed = 0.0
    for column in range(vector.shape[0]):
        miss = np.float64(vector[column]) - np.float64(codes[column]) * scale64
        missed += miss * miss
    return scale64, np.sqrt(missed)


@intrinsic
def _float32_bits(typingctx, value):
    """The bits of float32 ``value`` as uint32."""
    signature = types.uint32(types.float32)

    def codegen(context, builder, signature, arguments):
        return builder.bitcast(arguments[0], ir.IntType(32))

    return signature, codegen


@intrinsic
def _float32_from_bits(typingctx, bits):
    """The float32 whose bits uint32 ``bits`` holds."""
    signature = types.float32(types.uint32)

    def codegen(context, builder, signature, arguments):
        return builder.bitcast(arguments[0], ir.FloatType())

    return signature, codegen


@numba.njit(cache=True, nogil=True)
def quantise_rows(
    embeddings: np.ndarray,
    slots: np.ndarray,
    codes: np.ndarray,
    scales: np.ndarray,
    residuals: np.ndarray,
    start: int,
) -> None:
    """Write rows ``start ..`` of ``codes``, ``scales`` and ``residuals`` for the frames in
    ``slots`` (:func:`_quantise_row`): the centre matrix's rows, or a store's own codes
    (``start`` 0 and every slot)."""
    for index in range(slots.shape[0]):
        _quantise_row(embeddings, slots[index], codes, scales, residuals, start + index)


@numba.njit(cache=True, nogil=True)
def _quantise_row(
    embeddings: np.ndarray,
    slot: int,
    codes: np.ndarray,
    scales: np.ndarray,
    residuals: np.ndarray,
    row: int,
) -> None:
    """Row ``row`` of ``codes``, ``scales`` and ``residuals``: the frame in ``slot`` as stored, as
    int8 codes (:func:`_quantise_into`), its residual rounded up (by a millionth, and 1e-12) so
    that it bounds the float32 truth (what :func:`search_clusters` decides with)."""
    scale, missed = _quantise_into(row_float32(embeddings, slot), codes[row])
    scales[row] = np.float32(scale)
    residuals[row] = np.float32(missed * (1 + 1e-6) + 1e-12)


def query_levels(dim: int) -> int:
    """Largest query code magnitude for ``dim``-dimensional embeddings: the finest int16 codes
    whose dot products with int8 codes (at most 127 in magnitude) still sum exactly in int32,
    32,767 up to 516 dimensions, 127 at :data:`MAX_CODED_DIM`."""
    return min(32767, (2**31 - 1) // (127 * dim))


_query_levels = numba.njit(cache=True, nogil=True)(query_levels)


@numba.njit(cache=True, nogil=True)
def _quantise_query(query: np.ndarray) -> tuple[np.ndarray, float, float, float]:
    """``(codes, scale, error norm, norm)``: the query as int16 codes
    (:func:`query_levels`: 258 times finer than the frames' int8 codes at 512 dimensions, so
    the query's share of every code bound is negligible, at no cost in the dot products, which
    widen the frames' codes to int16 anyway), the L2 norm of what they miss and the query's own
    L2 norm (float64)."""
    square_norm, _ = square_norm_and_peak(query)
    codes = np.empty(query.shape[0], np.int16)
    scale, error = _quantise_into(query, codes, _query_levels(query.shape[0]))
    return codes, scale, error, np.sqrt(square_norm)


@numba.njit(cache=True, nogil=True)
def _code_dots(codes: np.ndarray, rows: np.ndarray, query_codes: np.ndarray) -> np.ndarray:
    """Integer dot products of the int8 ``codes`` rows ``rows`` with int16 ``query_codes``
    (:func:`_quantise_query`; int32, exact up to :data:`MAX_CODED_DIM`; :func:`_code_dot`). Kept
    apart and storing integers: without :data:`WORD_DOTS`, LLVM then turns the inner loop into
    packed 16-bit multiply-adds, 4-5x faster than when the sum is converted to a float in the
    same function (measured)."""
    dots = np.empty(rows.shape[0], np.int32)
    for index in range(rows.shape[0]):
        dots[index] = _code_dot(codes, rows[index], query_codes)
    return dots


@numba.njit(cache=True, nogil=True)
def _frame_code_dots(
    frame_codes: tuple, steps: np.ndarray, poses: np.ndarray, slots: np.ndarray,
    query_codes: np.ndarray,
) -> np.ndarray:
    """:func:`_code_dots` of a read's frames (``frame_codes``: codes, scales, bounds), which lie
    in scattered rows: with each frame's code row, the cache lines of its scale, bound, step
    and pose are asked for :data:`PREFETCH_AHEAD` frames ahead, so that deciding and copying a
    found frame waits on none of them (a cold 1,200-frame scan 105 against 121 us, measured)."""
    codes = frame_codes[0]
    count = slots.shape[0]
    dots = np.empty(count, np.int32)
    for index in range(count):
        if index == 0:
            for first in range(min(PREFETCH_AHEAD, count)):
                _prefetch_frame(frame_codes, steps, poses, slots[first])
        if index + PREFETCH_AHEAD < count:
            _prefetch_frame(frame_codes, steps, poses, slots[index + PREFETCH_AHEAD])
        dots[index] = _code_dot(codes, slots[index], query_codes)
    return dots


@numba.njit(cache=True, nogil=True, inline="always")
def _code_dot(codes: np.ndarray, row: int, query_codes: np.ndarray) -> np.int32:
    """``sum(codes[row] * query_codes)``, int8 by int16 in int32 (wrapping alike on both
    paths): by :func:`_word_dot` with :data:`WORD_DOTS`, else a loop LLVM vectorises."""
    if WORD_DOTS:
        return _word_dot(codes, row, query_codes)
    code = codes[row]
    total = np.int32(0)
    for column in range(query_codes.shape[0]):
        total += np.int32(np.int16(code[column]) * query_codes[column])
    return total


def _target_features() -> dict[str, bool]:
    """The CPU features numba compiles for: those of ``NUMBA_CPU_FEATURES`` where it is set
    (``+avx2,-avx512f,...``), else the host's."""
    if numba.config.CPU_FEATURES is not None:
        return {name[1:]: name[0] == "+" for name in numba.config.CPU_FEATURES.split(",") if name}
    return dict(llvmlite.binding.get_host_cpu_features())


_CPU_FEATURES = _target_features()
WORD_DOTS = bool(_CPU_FEATURES.get("avx2", False))
"""Whether this CPU has AVX2's ``vpmaddwd`` on 256-bit registers: then an int8 code row and the
int16 query are multiplied 16 columns at a time (:func:`_word_dot`). LLVM's own vectorisation of
the loop widens 8 bytes at a time into 128-bit halves, and takes 1.85x as long (37 against 20 ns
a 512-column row, measured)."""
_WORD_CHUNK = 16


def _row_and_query(context, builder, signature, arguments) -> tuple:
    """Codegen of the code-row intrinsics (``codes, row, query_codes, ...``): the addresses of
    ``codes[row]`` (a C-contiguous matrix's row) and of the query codes, and their length."""
    int64 = ir.IntType(64)
    matrix = context.make_array(signature.args[0])(context, builder, arguments[0])
    vector = context.make_array(signature.args[2])(context, builder, arguments[2])
    row_index = context.cast(builder, arguments[1], signature.args[1], types.int64)
    row_address = builder.add(builder.ptrtoint(matrix.data, int64),
                              builder.mul(row_index, builder.extract_value(matrix.strides, 0)))
    return row_address, builder.ptrtoint(vector.data, int64), builder.extract_value(vector.shape, 0)


def _add_lanes(builder, lanes):
    """Codegen: the int32 sum of a vector of int32 lanes."""
    int32 = ir.IntType(32)
    add = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(int32, [lanes.type]),
        f"llvm.vector.reduce.add.v{lanes.type.count}i32")
    return builder.call(add, [lanes])


def _chunks(builder, row_address, query_address, index, row_chunk, query_chunk) -> tuple:
    """Codegen: the ``index``-th chunk of the row's int8 codes and of the query's codes, loaded
    as the vector types ``row_chunk`` and ``query_chunk`` (as many columns, any alignment of
    the row, the query aligned to its element)."""
    int64 = ir.IntType(64)
    width = query_chunk.element.width // 8
    offset = builder.mul(index, int64(row_chunk.count))
    row = builder.load(builder.inttoptr(builder.add(row_address, offset), row_chunk.as_pointer()),
                       align=1)
    query = builder.load(builder.inttoptr(builder.add(query_address,
                                                      builder.mul(offset, int64(width))),
                                          query_chunk.as_pointer()), align=width)
    return row, query


def _sum_one_by_one(builder, row_address, query_address, query_type, start, stop, total) -> None:
    """Codegen: add to the int32 at ``total`` the products of the row's int8 codes and the query's
    codes (of ``query_type``, int8 or int16) of columns ``start`` to ``stop``, one by one."""
    int32, int64 = ir.IntType(32), ir.IntType(64)
    width = int64(query_type.width // 8)
    with cgutils.for_range(builder, builder.sub(stop, start)) as loop:
        column = builder.add(loop.index, start)
        code = builder.load(builder.inttoptr(builder.add(row_address, column),
                                             ir.IntType(8).as_pointer()))
        query_code = builder.load(builder.inttoptr(
            builder.add(query_address, builder.mul(column, width)), query_type.as_pointer()))
        product = builder.mul(builder.sext(code, int32), builder.sext(query_code, int32))
        builder.store(builder.add(builder.load(total), product), total)


@intrinsic
def _word_dot(typingctx, codes, row, query_codes):
    """``sum(codes[row] * query_codes)`` of int8 codes (a C-contiguous matrix's row) and int16
    query codes, in int32 arithmetic (wrapping as the scalar sum does; exact up to
    :data:`MAX_CODED_DIM` with :func:`query_levels`' codes). With :data:`WORD_DOTS`, 16 columns
    at a time: the row's bytes widened to int16 and multiplied pairwise by ``vpmaddwd`` into
    eight int32 lanes; the columns left over (all, without AVX2) are summed one by one."""
    signature = types.int32(codes, row, query_codes)

    def codegen(context, builder, signature, arguments):
        word, int32, int64 = ir.IntType(16), ir.IntType(32), ir.IntType(64)
        row_address, query_address, dim = _row_and_query(context, builder, signature, arguments)
        total = cgutils.alloca_once_value(builder, int32(0))
        covered = int64(0)
        if WORD_DOTS:
            lanes = ir.VectorType(int32, 8)
            words = ir.VectorType(word, _WORD_CHUNK)
            chunk = ir.VectorType(ir.IntType(8), _WORD_CHUNK)
            multiply_add = builder.module.declare_intrinsic(
                "llvm.x86.avx2.pmadd.wd", fnty=ir.FunctionType(lanes, [words, words]))
            sums = cgutils.alloca_once_value(builder, ir.Constant(lanes, [0] * 8))
            chunks = builder.udiv(dim, int64(_WORD_CHUNK))
            with cgutils.for_range(builder, chunks) as loop:
                row_chunk, query_chunk = _chunks(builder, row_address, query_address,
                                                 loop.index, chunk, words)
                products = builder.call(multiply_add,
                                        [builder.sext(row_chunk, words), query_chunk])
                builder.store(builder.add(builder.load(sums), products), sums)
            builder.store(_add_lanes(builder, builder.load(sums)), total)
            covered = builder.mul(chunks, int64(_WORD_CHUNK))
        _sum_one_by_one(builder, row_address, query_address, word, covered, dim, total)
        return builder.load(total)

    return signature, codegen


BYTE_DOTS = bool(_CPU_FEATURES.get("avx512vnni", False) and _CPU_FEATURES.get("avx512bw", False))
"""Whether this CPU multiplies bytes in one instruction (AVX-512 VNNI's ``vpdpbusd``: 64 byte
products summed into 16 int32 lanes): then the centre ranking first bounds every centre with the
query in int8 (:func:`_byte_prune`), at a third of the int16 pass's instructions. Not with AVX2
alone (measured at 100K frames, 2,701 centres, one core): byte products by ``vpmaddubsw`` took
the dot products from 42 to 35 us, but the pass with its bounds 65 us against the int16 pass's
56, the codes' 1.4 MB streaming from L3 either way; and a first pass on 4-bit codes would keep
895 of the 2,701 centres on average (levels 15: 197; int8: 42), too many to save bytes."""
BYTE_PRUNE_MIN_ROWS = 4
"""Byte pruning runs when the candidate centres are more than this many times the top-k."""
_BYTE_CHUNK = 64


@numba.njit(cache=True, nogil=True)
def _byte_prune(
    codes: np.ndarray, scales: np.ndarray, residuals: np.ndarray, query: np.ndarray,
    query_norm: float, rows: np.ndarray, top_k: int,
) -> np.ndarray:
    """The centre ``rows`` (in order) whose exact score may reach the top-k, by int8 code
    bounds (:func:`_code_error`) with the query in int8 codes too (127 levels, so its share of
    each bound is about the centre code's; :func:`_signed_byte_dot`): a row whose upper bound
    is below the ``top_k``-th largest lower bound cannot be in the top-k. The rows kept are then
    bounded again with the query's finer int16 codes (:func:`_code_bounds`), as every row was
    before, so which clusters a read searches is unchanged; only fewer int16 passes run."""
    dim = query.shape[0]
    query_codes = np.empty(dim, np.int8)
    query_scale, query_error = _quantise_into(query, query_codes, 127)
    chunked_sum = np.int32(0)  # the query codes of the dimensions the vector loop covers
    for column in range(dim - dim % _BYTE_CHUNK):
        chunked_sum += np.int32(query_codes[column])
    count = rows.shape[0]
    upper = np.empty(count, np.float32)
    best_lower = np.full(top_k, -np.inf, np.float32)  # a min-heap of the top_k largest so far
    for index in range(count):
        row = rows[index]
        dot = _signed_byte_dot(codes, row, query_codes, chunked_sum)
        approx = np.float64(dot) * (np.float64(scales[row]) * query_scale)
        bound = _code_error(residuals[row], query_error, query_norm, dim)
        upper[index] = np.float32(approx + bound)
        lower = np.float32(approx - bound)
        if lower > best_lower[0]:
            _replace_smallest(best_lower, lower)
    return rows[upper >= best_lower[0]]


@intrinsic
def _signed_byte_dot(typingctx, codes, row, query_codes, chunked_sum):
    """``sum(codes[row] * query_codes)`` of int8 codes (a C-contiguous matrix's row and a
    vector), exact in int32. With :data:`BYTE_DOTS`, 64 columns at a time by ``vpdpbusd``,
    which multiplies unsigned by signed bytes: the row's codes are flipped to ``c + 128``
    (their top bit) and ``128 * chunked_sum`` (the query codes of those columns) taken off
    again; int32 arithmetic wraps, and the true sum fits int32 (:data:`MAX_CODED_DIM`), so the
    result is exact. The columns left over (all, without VNNI) are summed one by one."""
    signature = types.int32(codes, row, query_codes, chunked_sum)

    def codegen(context, builder, signature, arguments):
        byte, int32, int64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
        row_address, query_address, dim = _row_and_query(context, builder, signature, arguments)
        total = cgutils.alloca_once_value(builder, int32(0))
        covered = int64(0)
        if BYTE_DOTS:
            lanes = ir.VectorType(int32, 16)
            chunk = ir.VectorType(byte, _BYTE_CHUNK)
            dpbusd = builder.module.declare_intrinsic(
                "llvm.x86.avx512.vpdpbusd.512", fnty=ir.FunctionType(lanes, [lanes] * 3))
            top_bits = ir.Constant(chunk, [-128] * _BYTE_CHUNK)
            sums = cgutils.alloca_once_value(builder, ir.Constant(lanes, [0] * 16))
            chunks = builder.udiv(dim, int64(_BYTE_CHUNK))
            with cgutils.for_range(builder, chunks) as loop:
                row_chunk, query_chunk = _chunks(builder, row_address, query_address,
                                                 loop.index, chunk, chunk)
                flipped = builder.xor(row_chunk, top_bits)
                builder.store(builder.call(dpbusd, [
                    builder.load(sums), builder.bitcast(flipped, lanes),
                    builder.bitcast(query_chunk, lanes),
                ]), sums)
            offset_sum = context.cast(builder, arguments[3], signature.args[3], types.int32)
            builder.store(builder.sub(_add_lanes(builder, builder.load(sums)),
                                      builder.mul(offset_sum, int32(128))), total)
            covered = builder.mul(chunks, int64(_BYTE_CHUNK))
        _sum_one_by_one(builder, row_address, query_address, byte, covered, dim, total)
        return builder.load(total)

    return signature, codegen


@numba.njit(cache=True, nogil=True, inline="always")
def _code_error(residual: np.float32, query_error: float, query_norm: float, dim: int) -> float:
    """Bound on ``|c . q - (a . b) * s_c * s_q|`` for a unit centre ``c = s_c a + r`` and a query
    ``q = s_q b + e``: ``c . q - s_c s_q (a . b) = s_c (a . e) + r . q``, where
    ``s_c ||a|| = ||c - r|| <= 1 + ||r||``; so at most ``(1 + ||r||) ||e|| + ||r|| ||q||``
    (a stored centre's norm is within 1e-3 of 1, 1.5e-3 in float16: the factor 1.002), plus the
    rounding of the exact scores' float32 sums (``dim * 2**-23 * ||q||``) and of the bounds
    themselves."""
    residual64 = np.float64(residual)
    rounding = dim * 2.0**-23 * 1.002 * query_norm + 1e-6
    return (1.002 + residual64) * query_error + residual64 * query_norm + rounding


@numba.njit(cache=True, nogil=True)
def _code_bounds(coded: tuple, rows: np.ndarray, top_k: int) -> tuple:
    """``(upper, lower, floor)``: float32 bounds on the exact scores of centre ``rows`` from their
    int8 codes (``coded``: the centres' codes, scales and residuals, then the query's codes,
    scale, error norm and norm; :func:`_code_error`), and the ``top_k``-th largest of the
    lower bounds (``1 <= top_k <= len(rows)``), kept in a min-heap as they are computed: a row
    whose upper bound is below it cannot be in the top-k."""
    codes, scales, residuals, query_codes, query_scale, query_error, query_norm = coded
    dots = _code_dots(codes, rows, query_codes)
    upper = np.empty(rows.shape[0], np.float32)
    lower = np.empty(rows.shape[0], np.float32)
    best_lower = np.full(top_k, -np.inf, np.float32)  # a min-heap of the top_k largest so far
    dim = query_codes.shape[0]
    for index in range(rows.shape[0]):
        row = rows[index]
        approx = np.float64(dots[index]) * (np.float64(scales[row]) * query_scale)
        bound = _code_error(residuals[row], query_error, query_norm, dim)
        upper[index] = np.float32(approx + bound)
        lower[index] = np.float32(approx - bound)
        if lower[index] > best_lower[0]:
            _replace_smallest(best_lower, lower[index])
    return upper, lower, best_lower[0]


@numba.njit(cache=True, nogil=True, inline="always")
def _replace_smallest(heap: np.ndarray, value: np.float32) -> None:
    """Put ``value`` in place of the root of the min-heap ``heap`` and sift it down."""
    node = 0
    while True:
        child = 2 * node + 1
        if child >= heap.shape[0]:
            break
        if child + 1 < heap.shape[0] and heap[child + 1] < heap[child]:
            child += 1
        if value <= heap[child]:
            break
        heap[node] = heap[child]
        node = child
    heap[node] = value


PIVOT_SIMILARITY = 0.8
"""A centre joins the pivot group it is most similar to (by its int8 codes) if at least this
similar, else it becomes a new group's pivot (leader clustering)."""


@numba.njit(cache=True, nogil=True)
def assign_pivots(
    codes: np.ndarray,
    scales: np.ndarray,
    rows: np.ndarray,
    embeddings: np.ndarray,
    centre_slot: np.ndarray,
    live: np.ndarray,
    pivots: tuple,
    group_count: int,
    free_groups: np.ndarray,
) -> int:
    """Put centre ``rows`` into pivot groups (leader clustering, :data:`PIVOT_SIMILARITY`); returns
    the groups in use after (``free_groups``: ids below ``group_count`` to reuse first; the
    group arrays must have room for one new group per row).

    ``pivots = (group, along, across, group_codes, group_scales, group_norms)``: a group's pivot
    is the vector ``d = group_codes[g] * group_scales[g]`` (a centre's int8 codes, exact), of
    norm ``group_norms[g]``; centre ``c`` of a row in group ``g`` is stored as
    ``along = c . d / |d|`` and ``across``, an upper bound on ``|c - along d / |d||``, so that
    ``c . q <= along (q . d / |d|) + across |q - (q . d / |d|) d / |d||`` for any query
    (:func:`_pivot_prune`). Which group a centre joins changes no read's result, only how much
    the bound prunes."""
    group, along, across, group_codes, group_scales, group_norms = pivots
    reused = 0
    all_groups = np.arange(group_count)
    for row in rows:
        best, best_similarity = -1, -np.inf
        if group_count > 0:
            dots = _code_dots(group_codes, all_groups, codes[row].astype(np.int16))
            for index in range(group_count):
                if group_norms[index] > 0.0:
                    similarity = dots[index] * np.float64(group_scales[index]) / group_norms[index]
                    if similarity > best_similarity:
                        best, best_similarity = index, similarity
            best_similarity *= np.float64(scales[row])
        if best < 0 or best_similarity < PIVOT_SIMILARITY:
            if reused < free_groups.shape[0]:
                best = free_groups[reused]
                reused += 1
            else:
                best = group_count
                group_count += 1
                all_groups = np.arange(group_count)
            group_codes[best] = codes[row]
            group_scales[best] = scales[row]
            squares = 0
            for value in codes[row]:
                squares += np.int64(value) * np.int64(value)
            group_norms[best] = np.float64(scales[row]) * np.sqrt(np.float64(squares))
        centre = row_float32(embeddings, centre_slot[live[row]])
        norm = group_norms[best]
        scale = np.float64(group_scales[best]) / norm if norm > 0.0 else 0.0
        dot = 0.0
        square_norm = 0.0
        for column in range(centre.shape[0]):
            value = np.float64(centre[column])
            dot += value * (np.float64(group_codes[best, column]) * scale)
            square_norm += value * value
        group[row] = best
        along[row] = dot
        across[row] = np.sqrt(max(square_norm - dot * dot, 0.0) * (1 + 1e-9) + 1e-12) + 1e-9
    return group_count


@numba.njit(cache=True, nogil=True)
def _pivot_prune(pivots: tuple, coded: tuple, candidates: np.ndarray, top_k: int) -> np.ndarray:
    """The candidate rows (in order) whose exact score may reach the top-k by the pivot bound
    (:func:`_pivot_bounds`). A floor on the k-th exact score comes from the int8 lower bounds of
    the ``2 top_k`` rows of highest estimate (any k rows' k-th score is at most the k-th best);
    rows bounded below it cannot be in the top-k (nor tie its k-th score)."""
    upper, estimate = _pivot_bounds(pivots, coded, candidates)
    likely = candidates[_largest(estimate, min(2 * top_k, candidates.shape[0]))]
    floor = _code_bounds(coded, likely, top_k)[2]
    return candidates[upper >= floor]


@numba.njit(cache=True, nogil=True)
def _pivot_bounds(pivots: tuple, coded: tuple, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(upper bound, estimate)`` of the exact score of each centre row from its pivot group
    (:func:`assign_pivots`): ``c . q = along * a + c_perp . q_perp <= along * a + across
    |q_perp|`` with ``a = q . d / |d|``, bounded per group from the int8 codes of the query
    (``|a - a~| <= |e|``, ``e`` what the query's codes miss) and ``|q_perp|^2 = |q|^2 - a^2``,
    plus the rounding of the exact float32 sums (as :func:`_code_error`). The estimate is
    ``along * a~``; rows without a group get infinite both."""
    group, along, across, group_codes, group_scales, group_norms = pivots
    _, _, _, query_codes, query_scale, query_error, query_norm = coded
    groups = group_norms.shape[0]
    dots = _code_dots(group_codes, np.arange(groups), query_codes)
    middle = np.zeros(groups)
    slack = np.zeros(groups)
    perp = np.empty(groups)
    square_norm = query_norm * query_norm * (1 + 1e-9) + 1e-12
    for index in range(groups):
        norm = group_norms[index]
        if norm > 0.0:  # else unused
            middle[index] = dots[index] * (np.float64(group_scales[index]) * query_scale) / norm
            slack[index] = query_error + 1e-9 * (abs(middle[index]) + 1.0)
        nearest = max(abs(middle[index]) - slack[index], 0.0)
        perp[index] = np.sqrt(max(square_norm - nearest * nearest, 0.0))
    rounding = _code_error(np.float32(0.0), 0.0, query_norm, query_codes.shape[0]) + 1e-9
    upper = np.empty(rows.shape[0])
    estimate = np.empty(rows.shape[0])
    for index in range(rows.shape[0]):
        row = rows[index]
        g = group[row]
        if g < 0:
            upper[index] = estimate[index] = np.inf
        else:
            a = along[row]
            upper[index] = a * middle[g] + abs(a) * slack[g] + across[row] * perp[g] + rounding
            estimate[index] = a * middle[g]
    return upper, estimate


@numba.njit(cache=True, nogil=True)
def _largest(values: np.ndarray, count: int) -> np.ndarray:
    """Indices of ``count`` largest ``values`` (ties: any), in one pass over a min-heap of the
    best so far: past the first few, a value rarely beats the smallest kept (numba's
    ``np.partition`` copies and is several times slower at a read's ~10,000 rows)."""
    heap = np.arange(count)
    for start in range(count // 2 - 1, -1, -1):
        _sift_down(values, heap, start)
    cut = values[heap[0]]
    for index in range(count, values.shape[0]):
        if values[index] > cut:
            heap[0] = index
            _sift_down(values, heap, 0)
            cut = values[heap[0]]
    return heap


@numba.njit(cache=True, nogil=True)
def _kth_largest(values: np.ndarray, k: int):
    """The ``k``-th largest of ``values`` (``1 <= k <= len(values)``; NaN-free): the root of
    :func:`_largest`'s min-heap, without numba's copying ``np.partition``."""
    return values[_largest(values, k)[0]]


@numba.njit(cache=True, nogil=True)
def _sift_down(values: np.ndarray, heap: np.ndarray, node: int) -> None:
    """Restore the min-heap order of ``values[heap]`` below ``node``."""
    while True:
        child = 2 * node + 1
        if child >= heap.shape[0]:
            return
        if child + 1 < heap.shape[0] and values[heap[child + 1]] < values[heap[child]]:
            child += 1
        if values[heap[node]] <= values[heap[child]]:
            return
        heap[node], heap[child] = heap[child], heap[node]
        node = child


@numba.njit(cache=True, nogil=True)
def _in_order(order: np.ndarray, t: np.ndarray, pose: np.ndarray,
              scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(t, pose, scores)`` of the frames taken in ``order``."""
    count = order.shape[0]
    ordered_t = np.empty(count, np.int64)
    ordered_pose = np.empty((count, 5), np.float32)
    ordered_scores = np.empty(count, np.float32)
    for index in range(count):
        row = order[index]
        ordered_t[index] = t[row]
        for field in range(5):
            ordered_pose[index, field] = pose[row, field]
        ordered_scores[index] = scores[row]
    return ordered_t, ordered_pose, ordered_scores


@numba.njit(cache=True, nogil=True)
def _ground_distances(pose: np.ndarray, rows: np.ndarray, near_x: float, near_z: float) -> np.ndarray:
    """Squared ground distances (float64) of the frames ``pose[rows]`` from ``(near_x, near_z)``."""
    distance = np.empty(rows.shape[0], np.float64)
    for index in range(rows.shape[0]):
        dx = np.float64(pose[rows[index], 0]) - near_x
        dz = np.float64(pose[rows[index], 2]) - near_z
        distance[index] = dx * dx + dz * dz
    return distance


_RADIX_BITS = 8
_RADIX_PASSES = 4


@numba.njit(cache=True, nogil=True)
def best_first(scores: np.ndarray) -> np.ndarray:
    """Indices that order float32 ``scores`` from highest to lowest, stably (NaN-free input).

    An LSD radix sort on the scores' bits, 8 bits a pass: each float is mapped to an unsigned
    key that sorts like the float (flip every bit of negatives, the sign bit of the rest), then
    complemented for descending order. Four linear passes; at a read's ~1,000 found frames it is
    several times faster than a comparison sort, and its order does not depend on the data."""
    count = scores.shape[0]
    keys = np.empty(count, np.uint32)
    bits = np.ascontiguousarray(scores).view(np.uint32)
    for index in range(count):
        value = bits[index]
        if value == np.uint32(0x80000000):
            value = np.uint32(0)  # -0.0 ties with 0.0, as the floats compare
        if value & np.uint32(0x80000000):
            keys[index] = value  # ~(~value): negative floats sort reversed
        else:
            keys[index] = ~(value | np.uint32(0x80000000))
    order = np.arange(count)
    spare = np.empty(count, np.int64)
    buckets = 1 << _RADIX_BITS
    for shift in range(0, _RADIX_BITS * _RADIX_PASSES, _RADIX_BITS):
        starts = np.zeros(buckets + 1, np.int64)
        for index in range(count):
            starts[((keys[index] >> shift) & (buckets - 1)) + 1] += 1
        for bucket in range(buckets):
            starts[bucket + 1] += starts[bucket]
        for index in range(count):
            row = order[index]
            bucket = (keys[row] >> shift) & (buckets - 1)
            spare[starts[bucket]] = row
            starts[bucket] += 1
        order, spare = spare, order
    return order


_DISTANCE_BITS = 8
"""Bits of a distance key sorted per pass of :func:`nearest_first`."""


@numba.njit(cache=True, nogil=True)
def nearest_first(distance: np.ndarray) -> np.ndarray:
    """Indices that order the non-negative float64 ``distance`` from smallest to largest,
    stably. A non-negative float's bits sort as it does, and so, with ties, do their high 32
    bits: an LSD radix sort orders the high halves' offsets from the smallest (8 bits a pass,
    only over the bits that differ, every pass's histogram counted in one read of the keys),
    then the rare runs of equal high halves are put in order by their whole bits (an insertion
    sort, stable). At a read's ~1,500 frames 11 us, against 18-21 us for an LSD sort of all 64
    bits 11 at a time (measured), which was about 4x faster than numba's argsort."""
    count = distance.shape[0]
    bits = np.ascontiguousarray(distance).view(np.uint64)
    keys = np.empty(count, np.uint32)
    for index in range(count):
        keys[index] = np.uint32(bits[index] >> np.uint64(32))
    order = np.arange(count)
    if count < 2:
        return order
    lowest = keys.min()
    spread = np.uint32(keys.max() - lowest)
    passes = 0  # the digits up to the highest set bit of the spread (a shift stays below 32)
    most = (32 + _DISTANCE_BITS - 1) // _DISTANCE_BITS
    while passes < most and spread >> np.uint32(_DISTANCE_BITS * passes):
        passes += 1
    buckets = 1 << _DISTANCE_BITS
    mask = np.uint32(buckets - 1)
    starts = np.zeros((passes, buckets), np.int64)
    for index in range(count):
        offset = keys[index] - lowest
        keys[index] = offset
        for digit in range(passes):
            starts[digit, (offset >> np.uint32(_DISTANCE_BITS * digit)) & mask] += 1
    spare = np.empty(count, np.int64)
    for digit in range(passes):
        total = 0
        for bucket in range(buckets):
            size = starts[digit, bucket]
            starts[digit, bucket] = total
            total += size
        shift = np.uint32(_DISTANCE_BITS * digit)
        for index in range(count):
            row = order[index]
            bucket = (keys[row] >> shift) & mask
            spare[starts[digit, bucket]] = row
            starts[digit, bucket] += 1
        order, spare = spare, order
    start = 0
    while start < count:
        stop = start + 1
        while stop < count and keys[order[stop]] == keys[order[start]]:
            stop += 1
        for index in range(start + 1, stop):
            row = order[index]
            position = index
            while position > start and bits[order[position - 1]] > bits[row]:
                order[position] = order[position - 1]
                position -= 1
            order[position] = row
        start = stop
    return order


PREFETCH_AHEAD = 4
"""Rows ahead of the one being scored whose cache lines a read asks for (the frames of an event
lie in scattered rows, which the hardware prefetcher does not guess)."""

_CACHE_LINE = 64


@numba.njit(cache=True, nogil=True, inline="always")
def _prefetch_next(matrix: np.ndarray, rows: np.ndarray, index: int) -> None:
    """Before scoring ``rows[index]`` of ``matrix``: ask for the row :data:`PREFETCH_AHEAD`
    further on (at index 0 also the ones before it), so that each is asked for that far ahead."""
    if index == 0:
        for first in range(min(PREFETCH_AHEAD, rows.shape[0])):
            _prefetch_row(matrix, rows[first])
    if index + PREFETCH_AHEAD < rows.shape[0]:
        _prefetch_row(matrix, rows[index + PREFETCH_AHEAD])


@numba.njit(cache=True, nogil=True, inline="always")
def _prefetch_fields(steps: np.ndarray, poses: np.ndarray, slot: int) -> None:
    """Ask for the cache lines of a frame's step and pose (a found frame copies them)."""
    _prefetch(steps.ctypes.data + slot * steps.strides[0])
    _prefetch(poses.ctypes.data + slot * poses.strides[0])


@numba.njit(cache=True, nogil=True, inline="always")
def _prefetch_frame(frame_codes: tuple, steps: np.ndarray, poses: np.ndarray, slot: int) -> None:
    """Ask for the cache lines of a frame's int8 code, its scale and bound, its step and pose."""
    codes, scales, residuals = frame_codes
    _prefetch_row(codes, slot)
    _prefetch(scales.ctypes.data + slot * scales.strides[0])
    _prefetch(residuals.ctypes.data + slot * residuals.strides[0])
    _prefetch_fields(steps, poses, slot)


@numba.njit(cache=True, nogil=True, inline="always")
def _prefetch_row(matrix: np.ndarray, row: int) -> None:
    """Ask for every cache line of ``matrix[row]`` (C-contiguous) without waiting for it."""
    start = matrix.ctypes.data + row * matrix.strides[0]
    for offset in range(0, matrix.strides[0], _CACHE_LINE):
        _prefetch(start + offset)


@intrinsic
def _prefetch(typingctx, address):
    """LLVM's ``prefetch`` (read, keep in every cache level) of the byte at ``address``; a no-op
    where the target has no prefetch instruction."""
    signature = types.void(types.intp)

    def codegen(context, builder, signature, arguments):
        pointer_type = ir.IntType(8).as_pointer()
        int32 = ir.IntType(32)
        function_type = ir.FunctionType(ir.VoidType(), [pointer_type, int32, int32, int32])
        function = builder.module.declare_intrinsic("llvm.prefetch", [pointer_type], function_type)
        pointer = builder.inttoptr(arguments[0], pointer_type)
        builder.call(function, [pointer, int32(0), int32(3), int32(1)])
        return context.get_dummy_value()

    return signature, codegen


# --- float16 frames ---
# numba has no float16 arrays, so a store of float16 frames holds their IEEE half bits as uint16
# (:class:`~mrsteve.memory.frames.FrameStore`); the kernels read and write embeddings through
# these three functions, which compile to plain float32 access for a float32 store and to the
# CPU's half conversions (F16C's vcvtph2ps, vectorised by LLVM) for a half store.


def as_float32(value):
    """A stored embedding value as float32: itself, or the half whose bits a uint16 holds."""
    if isinstance(value, np.uint16):
        return np.float32(np.array(value).view(np.float16))
    return np.float32(value)


def as_stored(value, embeddings):
    """A float32 value as ``embeddings`` stores it: itself, or its half's bits (rounded to
    nearest, ties to even, as numpy's ``astype(np.float16)``) in a uint16 store."""
    if embeddings.dtype == np.uint16:
        return np.array(value, np.float32).astype(np.float16).view(np.uint16)[()]
    return np.float32(value)


def row_float32(embeddings, row):
    """Row ``row`` of a store as float32: the row itself, or a decoded copy of a half row."""
    if embeddings.dtype == np.uint16:
        return embeddings[row].view(np.float16).astype(np.float32)
    return embeddings[row]


@overload(as_float32, inline="always")
def _as_float32_compiled(value):
    if value == types.uint16:
        return lambda value: _half_bits_to_float32(value)
    return lambda value: np.float32(value)


@overload(as_stored, inline="always")
def _as_stored_compiled(value, embeddings):
    if embeddings.dtype == types.uint16:
        return lambda value, embeddings: _float32_to_half_bits(np.float32(value))
    return lambda value, embeddings: np.float32(value)


@overload(row_float32)
def _row_float32_compiled(embeddings, row):
    if embeddings.dtype == types.uint16:

        def decoded(embeddings, row):
            values = np.empty(embeddings.shape[1], np.float32)
            for column in range(values.shape[0]):
                values[column] = _half_bits_to_float32(embeddings[row, column])
            return values

        return decoded
    return lambda embeddings, row: embeddings[row]


@intrinsic
def _half_bits_to_float32(typingctx, bits):
    """The float32 value of the IEEE half whose bits ``bits`` (uint16) holds (exact)."""
    signature = types.float32(types.uint16)

    def codegen(context, builder, signature, arguments):
        return builder.fpext(builder.bitcast(arguments[0], ir.HalfType()), ir.FloatType())

    return signature, codegen


@intrinsic
def _float32_to_half_bits(typingctx, value):
    """The bits (uint16) of float32 ``value`` rounded to the nearest IEEE half, ties to even."""
    signature = types.uint16(types.float32)

    def codegen(context, builder, signature, arguments):
        return builder.bitcast(builder.fptrunc(arguments[0], ir.HalfType()), ir.IntType(16))

    return signature, codegen
