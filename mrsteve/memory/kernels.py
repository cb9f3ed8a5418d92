"""The read hot path compiled with numba: one call ranks every cluster centre, keeps the top-k,
and scores the frames of those clusters through their slot lists, with no Python per cluster."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True, fastmath={"reassoc"})
def search_clusters(
    scores: np.ndarray,
    live: np.ndarray,
    allowed: np.ndarray,
    top_k: int,
    base: np.ndarray,
    head: np.ndarray,
    tail: np.ndarray,
    arena: np.ndarray,
    embeddings: np.ndarray,
    centre_slot: np.ndarray,
    query: np.ndarray,
    threshold: np.float32,
    centres_only: bool,
) -> tuple[np.ndarray, np.ndarray, int]:
    """The paper's Algorithm "Read" over a :class:`~mrsteve.memory.clusters.ClusterTable`:
    ``(slots, scores, dot products computed)`` of the frames scoring at least ``threshold`` in
    the ``top_k`` clusters whose centres score best (``scores``, one per row of the centre
    matrix, a BLAS product done by the caller) among the rows where ``allowed`` is true
    (``allowed`` of length 0: every row). Ties at the k-th centre score go to the lower row.
    With ``centres_only`` the centre frames of those clusters stand for them. (Reassociation
    lets the sums vectorise; their rounding differs from BLAS in the last bits.)"""
    dim = query.shape[0]
    live_count = scores.shape[0]
    if allowed.shape[0] == live_count:
        candidates = np.flatnonzero(allowed[:live_count])
    else:
        candidates = np.arange(live_count)
    count = candidates.shape[0]
    if count > top_k:
        candidate_scores = scores[candidates]
        kth = np.partition(candidate_scores, count - top_k)[count - top_k]
        chosen = np.empty(top_k, np.int64)
        taken = 0
        for index in range(count):
            if candidate_scores[index] > kth:
                chosen[taken] = candidates[index]
                taken += 1
        for index in range(count):
            if taken == top_k:
                break
            if candidate_scores[index] == kth:
                chosen[taken] = candidates[index]
                taken += 1
        candidates = chosen
    if centres_only:
        slots = np.empty(candidates.shape[0], np.int64)
        found = np.empty(candidates.shape[0], np.float32)
        kept = 0
        for row in candidates:
            if scores[row] >= threshold:
                slots[kept] = centre_slot[live[row]]
                found[kept] = scores[row]
                kept += 1
        return slots[:kept], found[:kept], live_count
    total_frames = 0
    for row in candidates:
        cluster = live[row]
        total_frames += tail[cluster] - head[cluster]
    slots = np.empty(total_frames, np.int64)
    found = np.empty(total_frames, np.float32)
    kept = 0
    for row in candidates:
        cluster = live[row]
        for entry in range(base[cluster] + head[cluster], base[cluster] + tail[cluster]):
            slot = arena[entry]
            total = np.float32(0.0)
            for column in range(dim):
                total += embeddings[slot, column] * query[column]
            if total >= threshold:
                slots[kept] = slot
                found[kept] = total
                kept += 1
    return slots[:kept], found[:kept], live_count + total_frames


@numba.njit(cache=True, nogil=True)
def collect_frames(
    slots: np.ndarray,
    scores: np.ndarray,
    steps: np.ndarray,
    poses: np.ndarray,
    near_x: float,
    near_z: float,
    by_distance: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(t, pose, score)`` of the found frames in result order: best score first, or, with
    ``by_distance``, nearest first to ``(near_x, near_z)`` on the ground, ties best score first
    (both orders stable, so equal keys keep the search order)."""
    order = np.argsort(-scores, kind="mergesort")
    if by_distance:
        distance = np.empty(order.shape[0], np.float64)
        for index in range(order.shape[0]):
            slot = slots[order[index]]
            dx = np.float64(poses[slot, 0]) - near_x
            dz = np.float64(poses[slot, 2]) - near_z
            distance[index] = dx * dx + dz * dz
        order = order[np.argsort(distance, kind="mergesort")]
    count = order.shape[0]
    t = np.empty(count, np.int64)
    pose = np.empty((count, 5), np.float32)
    score = np.empty(count, np.float32)
    for index in range(count):
        row = order[index]
        slot = slots[row]
        t[index] = steps[slot]
        pose[index] = poses[slot]
        score[index] = scores[row]
    return t, pose, score
