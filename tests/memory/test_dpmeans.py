"""DP-Means: k-means++ start, a new cluster for points farther than delta, determinism."""

from __future__ import annotations

import numpy as np
import pytest
from memory_streams import unit

from mrsteve.memory import DPMeans, dpmeans
from mrsteve.memory.dpmeans import (
    by_first_point,
    decides_alike,
    dot_rows,
    draw,
    mean_rows,
    nearer,
    sums_are_exact,
    unchanged_clusters,
)


def blobs(rng, count, dim=32, per_blob=25, noise=0.1):
    centres = unit(rng.normal(size=(count, dim)))
    labels = np.repeat(np.arange(count), per_blob)
    points = unit(centres[labels] + noise * unit(rng.normal(size=(labels.size, dim))))
    return points, labels


@pytest.mark.parametrize("count", [1, 3, 8])
def test_separated_scenes_get_their_own_clusters_beyond_the_starting_ones(count):
    """Unit scenes are about 2 apart in squared distance: with delta = 0.3 no centre can serve
    two, so DP-Means opens clusters beyond K' = 5 when needed. A scene may keep two starting
    clusters (the memory's MERGE_CLUSTERS step joins those)."""
    points, truth = blobs(np.random.default_rng(count), count)
    result = DPMeans(n_init=5, delta=0.3, seed=0).fit(points)
    for label in np.unique(result.labels):
        assert np.unique(truth[result.labels == label]).size == 1
    assert np.unique(result.labels).size >= count


def test_every_point_ends_within_delta_of_its_centre_mean():
    points, _ = blobs(np.random.default_rng(5), 6, noise=0.4)
    result = DPMeans(n_init=2, delta=1.0, seed=3).fit(points)
    distances = ((points - result.centres[result.labels]) ** 2).sum(axis=1)
    assert distances.max() <= 1.0
    for label in range(result.centres.shape[0]):
        np.testing.assert_allclose(
            result.centres[label], points[result.labels == label].mean(axis=0), atol=1e-6
        )


def test_a_small_delta_splits_and_a_large_delta_joins():
    points, _ = blobs(np.random.default_rng(6), 4)
    assert np.unique(DPMeans(n_init=1, delta=10.0).fit(points).labels).size == 1
    assert np.unique(DPMeans(n_init=1, delta=0.05).fit(points).labels).size > 4


def test_labels_are_numbered_by_first_point():
    points, _ = blobs(np.random.default_rng(7), 5)
    labels = DPMeans(seed=1).fit(points[::-1]).labels
    first_seen = [labels.tolist().index(label) for label in range(labels.max() + 1)]
    assert first_seen == sorted(first_seen)


def test_same_seed_same_result_and_fits_advance_the_generator():
    points, _ = blobs(np.random.default_rng(8), 3, noise=0.5)
    a, b = DPMeans(seed=42), DPMeans(seed=42)
    first_a, first_b = a.fit(points), b.fit(points)
    np.testing.assert_array_equal(first_a.labels, first_b.labels)
    np.testing.assert_array_equal(first_a.centres, first_b.centres)
    generator = np.random.default_rng(42)
    np.testing.assert_array_equal(DPMeans(seed=generator).fit(points).labels, first_a.labels)


def test_fewer_points_than_starting_clusters_and_duplicates():
    assert DPMeans(n_init=5).fit(np.ones((1, 4))).labels.tolist() == [0]
    duplicates = np.tile(unit(np.arange(1.0, 5.0)), (7, 1))
    result = DPMeans(n_init=5).fit(duplicates)
    assert result.labels.tolist() == [0] * 7


@pytest.mark.parametrize(
    ("arguments", "message"),
    [({"n_init": 0}, "n_init"), ({"delta": 0.0}, "delta"), ({"max_iter": 0}, "max_iter")],
)
def test_bad_arguments_raise(arguments, message):
    with pytest.raises(ValueError, match=message):
        DPMeans(**arguments)


@pytest.mark.parametrize("points", [np.zeros((0, 3)), np.zeros(3), np.full((2, 3), np.nan)])
def test_bad_points_raise(points):
    with pytest.raises(ValueError, match="points"):
        DPMeans().fit(points)


def test_cluster_sums_of_embeddings_match_blas_bit_for_bit_when_every_order_is_exact():
    """DP-Means sums a cluster's points itself only when every summation order gives the same
    exact float64 sums: float32 embeddings, unless a component is tiny (or a value not float32)."""
    rng = np.random.default_rng(0)
    points = unit(rng.normal(size=(100, 512))).astype(np.float64)
    labels = rng.integers(0, 7, 100)
    assert sums_are_exact(points)
    counts = np.bincount(labels, minlength=7)
    members = labels[None, :] == np.arange(7)[:, None]
    blas = (members @ points) / counts[:, None]
    means = mean_rows(points, labels, counts, np.full(7, -1), np.zeros((0, 512)))
    np.testing.assert_array_equal(means.view(np.int64), blas.view(np.int64))
    tiny = points.copy()
    tiny[3, 5] = np.float32(1e-9)
    assert not sums_are_exact(tiny)
    assert not sums_are_exact(points + 1e-12)  # not float32 values
    assert sums_are_exact(np.zeros((3, 4)))


def test_compiled_steps_match_the_numpy_expressions_bit_for_bit():
    """k-means++ distances, running sums and draws, the cluster means and the renumbering by
    first point, compiled, give what the numpy expressions they replace give."""
    rng = np.random.default_rng(3)
    x = unit(rng.normal(size=(60, 16))).astype(np.float32).astype(np.float64)
    squared = np.einsum("ij,ij->i", x, x)
    closest, cumulative = np.full(60, np.inf), np.empty(60)
    expected = None
    for pick in (4, 17, 4, 59):
        distance = np.maximum(squared - 2.0 * (x @ x[pick]) + squared[pick], 0.0)
        expected = distance if expected is None else np.minimum(expected, distance)
        total = nearer(closest, cumulative, squared, x @ x[pick], pick)
        np.testing.assert_array_equal(closest, expected)
        np.testing.assert_array_equal(cumulative, np.cumsum(expected))
        assert total == np.cumsum(expected)[-1]
        for target in (0.0, 0.3 * total, total, 2 * total):
            found = min(int(np.searchsorted(cumulative, target, side="right")), 59)
            assert draw(cumulative, target) == found
    labels = rng.integers(0, 5, 60)
    counts = np.bincount(labels)
    members = labels[None, :] == np.arange(5)[:, None]
    means = mean_rows(x, labels, counts, np.full(5, -1), np.zeros((0, 16)))
    np.testing.assert_array_equal(means, (members @ x) / counts[:, None])
    renumbered, order = by_first_point(labels, 5)
    _, first_points = np.unique(labels, return_index=True)
    np.testing.assert_array_equal(order, np.argsort(first_points))
    np.testing.assert_array_equal(order[renumbered], labels)


@pytest.mark.parametrize("seed", range(4))
def test_products_summed_here_give_what_blas_products_give(seed, monkeypatch):
    """DP-Means sums its point-centre products and centre norms itself and uses them only when
    every decision holds across their error bounds; the fits match numpy's bit for bit."""
    rng = np.random.default_rng(seed)
    points, _ = blobs(rng, 4, dim=512, per_blob=30, noise=0.5)
    points = np.concatenate([points, points[:10]])  # exact ties: BLAS decides those
    own = DPMeans(seed=seed).fit(points)
    monkeypatch.setattr(dpmeans, "decides_alike", lambda *arguments: False)
    blas = DPMeans(seed=seed).fit(points)
    assert own.iterations == blas.iterations
    np.testing.assert_array_equal(own.labels, blas.labels)
    np.testing.assert_array_equal(own.centres.view(np.int64), blas.centres.view(np.int64))


def test_a_tie_or_a_distance_at_delta_is_left_to_blas():
    squared, centre_squares = np.ones(2), np.ones(2)
    tied = np.array([[0.5, 0.5], [1.0, 0.0]])
    assert not decides_alike(tied, squared, centre_squares, 5.0, 8)
    apart = np.array([[0.9, 0.0], [0.0, 0.9]])  # distances 0.2 and 2.0
    assert decides_alike(apart, squared, centre_squares, 5.0, 8)
    assert not decides_alike(apart, squared, centre_squares, 0.2, 8)


def test_clusters_that_keep_their_points_keep_their_means_and_products():
    """An iteration reuses the mean and the products of every cluster whose points did not
    change (renumbered or not), and computes the rest."""
    rng = np.random.default_rng(5)
    x = unit(rng.normal(size=(12, 16))).astype(np.float32).astype(np.float64)
    before = np.array([0, 0, 1, 1, 2, 2, 2, 3, 3, 3, 3, 1])
    # cluster 0 dies (its points join 1), 2 keeps its points as new 1, 3 loses point 10 to a new
    # cluster 3 (opened), so: new 0 = old 1 + points 0, 1 (changed), new 1 = old 2, new 2 = old 3
    # less point 10 (changed), new 3 = point 10 alone (not a whole old cluster)
    after = np.array([0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 0])
    counts = np.bincount(after)
    kept = unchanged_clusters(before, after, counts, 4)
    np.testing.assert_array_equal(kept, [-1, 2, -1, -1])
    assert (unchanged_clusters(np.full(12, -1), after, counts, 4) == -1).all()
    last_counts = np.bincount(before)
    last = mean_rows(x, before, last_counts, np.full(4, -1), np.zeros((0, 16)))
    means = mean_rows(x, after, counts, kept, last)
    members = after[None, :] == np.arange(4)[:, None]
    np.testing.assert_array_equal(means, (members @ x) / counts[:, None])
    last_products, last_squares = dot_rows(x, last, np.full(4, -1), np.zeros((0, 0)), np.zeros(0))
    products, squares = dot_rows(x, means, kept, last_products, last_squares)
    np.testing.assert_array_equal(products[:, 1], last_products[:, 2])
    np.testing.assert_array_equal(squares[1], last_squares[2])
    np.testing.assert_allclose(products, x @ means.T, rtol=0, atol=1e-12)
    np.testing.assert_allclose(squares, np.einsum("ij,ij->i", means, means), rtol=0, atol=1e-12)
