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
    steps: np.ndarray,
    poses: np.ndarray,
    centre_slot: np.ndarray,
    query: np.ndarray,
    threshold: np.float32,
    centres_only: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """The paper's Algorithm "Read" over a :class:`~mrsteve.memory.clusters.ClusterTable`:
    ``(slots, t, poses, scores, dot products computed)`` of the frames scoring at least
    ``threshold`` in
    the ``top_k`` clusters whose centres score best (``scores``, one per row of the centre
    matrix, a BLAS product done by the caller) among the rows where ``allowed`` is true
    (``allowed`` of length 0: every row). Ties at the k-th centre score go to the lower row.
    With ``centres_only`` the centre frames of those clusters stand for them. A found frame's
    step and pose are fetched as it is scored, so their cache misses overlap the scan.
    (Reassociation
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
        total_frames = candidates.shape[0]
    else:
        total_frames = 0
        for row in candidates:
            cluster = live[row]
            total_frames += tail[cluster] - head[cluster]
    slots = np.empty(total_frames, np.int64)
    found = np.empty(total_frames, np.float32)
    t = np.empty(total_frames, np.int64)
    pose = np.empty((total_frames, 5), np.float32)
    kept = 0
    for row in candidates:
        cluster = live[row]
        if centres_only:
            if scores[row] >= threshold:
                slot = centre_slot[cluster]
                slots[kept] = slot
                found[kept] = scores[row]
                t[kept] = steps[slot]
                pose[kept] = poses[slot]
                kept += 1
            continue
        for entry in range(base[cluster] + head[cluster], base[cluster] + tail[cluster]):
            slot = arena[entry]
            total = np.float32(0.0)
            for column in range(dim):
                total += embeddings[slot, column] * query[column]
            if total >= threshold:
                slots[kept] = slot
                found[kept] = total
                t[kept] = steps[slot]
                pose[kept] = poses[slot]
                kept += 1
    scored = live_count if centres_only else live_count + total_frames
    return slots[:kept], t[:kept], pose[:kept], found[:kept], scored


@numba.njit(cache=True, nogil=True)
def order_frames(
    t: np.ndarray,
    pose: np.ndarray,
    scores: np.ndarray,
    near_x: float,
    near_z: float,
    by_distance: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The found frames ``(t, pose, score)`` in result order: best score first, or, with
    ``by_distance``, nearest first to ``(near_x, near_z)`` on the ground, ties best score first
    (the distance sort is stable; equal scores keep a deterministic order)."""
    order = np.argsort(-scores)  # quicksort: a quarter faster than merge sort at ~1,000 frames
    if by_distance:
        distance = np.empty(order.shape[0], np.float64)
        for index in range(order.shape[0]):
            dx = np.float64(pose[order[index], 0]) - near_x
            dz = np.float64(pose[order[index], 2]) - near_z
            distance[index] = dx * dx + dz * dz
        order = order[np.argsort(distance, kind="mergesort")]
    count = order.shape[0]
    ordered_t = np.empty(count, np.int64)
    ordered_pose = np.empty((count, 5), np.float32)
    ordered_score = np.empty(count, np.float32)
    for index in range(count):
        row = order[index]
        ordered_t[index] = t[row]
        ordered_pose[index] = pose[row]
        ordered_score[index] = scores[row]
    return ordered_t, ordered_pose, ordered_score
