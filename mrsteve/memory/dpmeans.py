"""DP-Means clustering, as the paper's event clustering uses it (Appendix "Place Event Memory
Write & Read Operations", "Event Cluster Details")."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np
from numpy.typing import ArrayLike

from mrsteve.memory.base import is_int, is_real, require


@dataclass(frozen=True, eq=False)
class DPMeansResult:
    labels: np.ndarray
    """Cluster of each point, int64 in ``0..k-1``, clusters numbered by their first point."""
    centres: np.ndarray
    """Mean of each cluster's points, float64, shape ``(k, d)``."""
    iterations: int


class DPMeans:
    """DP-Means (Kulis & Jordan, 2012) with delayed cluster creation (Dinari & Freifeld, 2022):
    k-means++ picks ``n_init`` starting centres (K'), then Lloyd iterations assign every point to
    its nearest centre and move centres to their means; in each iteration the point farthest from
    its centre opens a new cluster if its squared distance exceeds ``delta``. Stops when nothing
    changes or after ``max_iter`` iterations. Deterministic given ``seed`` (an int or a
    ``numpy.random.Generator``, whose state the successive fits advance)."""

    def __init__(
        self,
        n_init: int = 5,
        delta: float = 1.0,
        max_iter: int = 100,
        seed: int | np.random.Generator = 0,
    ) -> None:
        require(is_int(n_init) and n_init >= 1, "n_init must be an int >= 1", n_init)
        require(is_real(delta) and delta > 0, "delta must be > 0", delta)
        require(is_int(max_iter) and max_iter >= 1, "max_iter must be an int >= 1", max_iter)
        self.n_init = n_init
        self.delta = float(delta)
        self.max_iter = max_iter
        self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)

    def fit(self, points: ArrayLike) -> DPMeansResult:
        """Cluster the rows of ``points`` (shape ``(n, d)``, n >= 1, finite)."""
        x = np.asarray(points, np.float64)
        if x.ndim != 2 or x.shape[0] == 0 or not np.isfinite(x).all():
            raise ValueError(
                f"points must be a finite (n, d) array with n >= 1, got shape {x.shape}"
            )
        squared = np.einsum("ij,ij->i", x, x)
        centres = self._kmeans_plus_plus(x, squared)
        labels = np.full(x.shape[0], -1)
        exact_sums = sums_are_exact(x)
        # per centre, the column of the last products it equals (a cluster whose points did not
        # change keeps its mean, bit for bit: :func:`unchanged_clusters`), -1: computed anew
        kept = np.full(centres.shape[0], -1)
        products, centre_squares = np.zeros((0, 0)), np.zeros(0)
        for iteration in range(1, self.max_iter + 1):
            # the products and centre norms summed here (:func:`dot_rows`) when they make every
            # decision as any within their error bound would (:func:`decides_alike`), else as
            # before by numpy (BLAS); the rest is compiled, with the same float64 operations in
            # the same order
            products, centre_squares = dot_rows(x, centres, kept, products, centre_squares)
            if not decides_alike(products, squared, centre_squares, self.delta, x.shape[1]):
                products = x @ centres.T
                centre_squares = np.einsum("ij,ij->i", centres, centres)
            converged, assigned, counts = assign(products, squared, centre_squares, labels,
                                                 self.delta)
            if converged:
                break
            if exact_sums:  # the same sums, whatever the order (:func:`sums_are_exact`)
                kept = unchanged_clusters(labels, assigned, counts, centres.shape[0])
                centres = mean_rows(x, assigned, counts, kept, centres)
            else:
                kept = np.full(counts.shape[0], -1)
                members = assigned[None, :] == np.arange(counts.shape[0])[:, None]
                centres = (members @ x) / counts[:, None]
            labels = assigned
        labels, order = by_first_point(labels, centres.shape[0])
        return DPMeansResult(labels, centres[order], iteration)

    def _kmeans_plus_plus(self, x: np.ndarray, squared: np.ndarray) -> np.ndarray:
        """Up to ``n_init`` distinct starting centres (Arthur & Vassilvitskii, 2007): each next
        one drawn with probability proportional to the squared distance to the nearest chosen
        (the products by numpy, the rest compiled: :func:`nearer`, :func:`draw`)."""
        count = x.shape[0]
        chosen = [int(self.rng.integers(count))]
        closest = np.full(count, np.inf)
        cumulative = np.empty(count)
        total = nearer(closest, cumulative, squared, x @ x[chosen[0]], chosen[0])
        while len(chosen) < min(self.n_init, count) and not total <= 0.0:  # NaN goes on
            pick = draw(cumulative, self.rng.random() * total)
            chosen.append(pick)
            total = nearer(closest, cumulative, squared, x @ x[pick], pick)
        return x[chosen]


@numba.njit(cache=True, nogil=True)
def nearer(
    closest: np.ndarray,
    cumulative: np.ndarray,
    squared: np.ndarray,
    products: np.ndarray,
    pick: int,
) -> float:
    """Lower ``closest`` (each point's squared distance to its nearest chosen centre) to the
    distance to point ``pick``, ``max((squared - 2 * products) + squared[pick], 0)`` as numpy
    computes it (``products``: every point's with ``pick``); fill ``cumulative`` with their
    running sum, in order, and return the total."""
    total = 0.0
    for point in range(closest.shape[0]):
        distance = np.maximum((squared[point] - 2.0 * products[point]) + squared[pick], 0.0)
        closest[point] = np.minimum(closest[point], distance)
        total += closest[point]
        cumulative[point] = total
    return total


@numba.njit(cache=True, nogil=True)
def draw(cumulative: np.ndarray, target: float) -> int:
    """The first point whose running sum exceeds ``target`` (the last point at most)."""
    return min(np.searchsorted(cumulative, target, side="right"), cumulative.shape[0] - 1)


@numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def dot_rows(
    x: np.ndarray,
    centres: np.ndarray,
    kept: np.ndarray,
    last_products: np.ndarray,
    last_squares: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """``(x @ centres.T, squared norm of each centre)``, each sum in any order (four centres a
    pass over a row of ``x``): within :func:`decides_alike`'s bounds of the exact values, as
    numpy's are. Centre ``c`` with ``kept[c] >= 0`` equals the centre of column ``kept[c]`` of
    ``last_products`` and ``last_squares``: its values are copied from there."""
    count, dim = x.shape
    clusters = centres.shape[0]
    products = np.empty((count, clusters))
    centre_squares = np.zeros(clusters)
    fresh = np.flatnonzero(kept < 0)
    for centre in range(clusters):
        source = kept[centre]
        if source >= 0:
            centre_squares[centre] = last_squares[source]
            for point in range(count):
                products[point, centre] = last_products[point, source]
    for centre in fresh:
        for column in range(dim):
            centre_squares[centre] += centres[centre, column] * centres[centre, column]
    for first in range(0, fresh.shape[0], 4):
        last = min(first + 4, fresh.shape[0])
        for point in range(count):
            row = x[point]
            if last - first == 4:
                c0, c1, c2, c3 = fresh[first], fresh[first + 1], fresh[first + 2], fresh[first + 3]
                total0 = total1 = total2 = total3 = 0.0
                centre0, centre1 = centres[c0], centres[c1]
                centre2, centre3 = centres[c2], centres[c3]
                for column in range(dim):
                    value = row[column]
                    total0 += value * centre0[column]
                    total1 += value * centre1[column]
                    total2 += value * centre2[column]
                    total3 += value * centre3[column]
                products[point, c0] = total0
                products[point, c1] = total1
                products[point, c2] = total2
                products[point, c3] = total3
            else:
                for centre in fresh[first:last]:
                    total = 0.0
                    for column in range(dim):
                        total += row[column] * centres[centre, column]
                    products[point, centre] = total
    return products, centre_squares


@numba.njit(cache=True, nogil=True)
def decides_alike(
    products: np.ndarray,
    squared: np.ndarray,
    centre_squares: np.ndarray,
    delta: float,
    dim: int,
) -> bool:
    """Whether :func:`assign` on any products and centre norms within the error bounds of these
    makes the same decisions as on these: each point's nearest centre, whether a cluster opens
    and, if so, for which point. Any order of summing ``dim`` products (with or without fused
    multiply-adds) lands within ``dim u / (1 - dim u)`` (``u = 2**-53``) times the sum of their
    magnitudes of the exact dot product (Higham, Accuracy and Stability of Numerical Algorithms,
    3.1), a sum at most the product of the two norms (the centre's own squared norm for its
    norm); so each distance ``(squared - 2 * product) + centre_square`` computed from numpy's
    values lies within ``margin`` below of the one from these, and a decision holds when every
    rival is farther than both margins (no ties)."""
    count, clusters = products.shape
    gamma = dim * 2.0**-53 / (1.0 - dim * 2.0**-53)
    nearest = np.empty(count)
    spread = np.empty(count)
    for point in range(count):
        distances = np.empty(clusters)
        margins = np.empty(clusters)
        best = 0
        for centre in range(clusters):
            product = products[point, centre]
            distance = (squared[point] - 2.0 * product) + centre_squares[centre]
            # twice the product's bound, doubled in the distance, and twice the centre norm's;
            # then underflow, and the rounding of both distances, of the margins and of the
            # comparisons
            norms = np.sqrt(squared[point] * centre_squares[centre])
            margin = (4.0 * norms + 2.0 * centre_squares[centre]) * gamma * (1.0 + 4.0 * gamma)
            margin += 1e-300
            margin += 2.0**-50 * (squared[point] + 2.0 * abs(product) + centre_squares[centre])
            if not (np.isfinite(distance) and np.isfinite(margin)):
                return False
            distances[centre], margins[centre] = distance, margin
            if distance < distances[best]:
                best = centre
        for centre in range(clusters):
            if centre != best and not (
                distances[best] + margins[best] < distances[centre] - margins[centre]
            ):
                return False
        nearest[point], spread[point] = distances[best], margins[best]
    farthest = np.argmax(nearest)
    if not nearest[farthest] - spread[farthest] > delta:  # no cluster opens
        return bool((nearest + spread < delta).all())
    for point in range(count):
        if point != farthest and not (
            nearest[point] + spread[point] < nearest[farthest] - spread[farthest]
        ):
            return False
    return True


@numba.njit(cache=True, nogil=True)
def assign(
    products: np.ndarray,
    squared: np.ndarray,
    centre_squares: np.ndarray,
    labels: np.ndarray,
    delta: float,
) -> tuple[bool, np.ndarray, np.ndarray]:
    """One DP-Means assignment, as numpy computed it: each point's squared distance to each
    centre ``(squared - 2 * products) + centre_squares``, the nearest centre (the first on
    ties; a NaN wins, as in ``argmin``), and the point farthest from its centre (likewise)
    opening a new cluster if beyond ``delta``. Returns ``(converged, labels, counts)``:
    converged when no cluster opened and no label changed (then the rest is unset); else each
    point's cluster, clusters that kept points renumbered in order, and their sizes."""
    count, clusters = products.shape
    assigned = np.empty(count, np.int64)
    nearest = np.empty(count, np.float64)
    farthest = 0
    for point in range(count):
        best, best_distance = 0, np.nan
        for centre in range(clusters):
            distance = (squared[point] - 2.0 * products[point, centre]) + centre_squares[centre]
            if centre == 0 or distance < best_distance or np.isnan(distance):
                best, best_distance = centre, distance
                if np.isnan(distance):
                    break
        assigned[point] = best
        nearest[point] = best_distance
        far = nearest[farthest]
        if not np.isnan(far) and (best_distance > far or np.isnan(best_distance)):
            farthest = point
    opened = nearest[farthest] > delta
    if opened:
        assigned[farthest] = clusters
    elif (assigned == labels).all():
        return True, assigned, np.zeros(0, np.int64)
    sizes = np.zeros(clusters + 1, np.int64)
    for point in range(count):
        sizes[assigned[point]] += 1
    renumbered = np.empty(clusters + 1, np.int64)
    kept = 0
    for cluster in range(clusters + 1):
        renumbered[cluster] = kept
        if sizes[cluster]:
            sizes[kept] = sizes[cluster]
            kept += 1
    for point in range(count):
        assigned[point] = renumbered[assigned[point]]
    return False, assigned, sizes[:kept].copy()


@numba.njit(cache=True, nogil=True)
def unchanged_clusters(
    labels: np.ndarray, assigned: np.ndarray, counts: np.ndarray, clusters_before: int
) -> np.ndarray:
    """Per cluster of ``assigned`` (sizes ``counts``), the cluster of ``labels`` (numbered
    ``0..clusters_before-1``; -1 for none yet) with exactly the same points, else -1."""
    before = np.zeros(clusters_before, np.int64)
    source = np.full(counts.shape[0], -2, np.int64)  # -2: no point seen yet
    for point in range(labels.shape[0]):
        old, new = labels[point], assigned[point]
        if old < 0:
            source[new] = -1
            continue
        before[old] += 1
        if source[new] == -2:
            source[new] = old
        elif source[new] != old:
            source[new] = -1
    for cluster in range(counts.shape[0]):
        old = source[cluster]
        if old < 0 or before[old] != counts[cluster]:
            source[cluster] = -1
    return source


@numba.njit(cache=True, nogil=True)
def mean_rows(
    x: np.ndarray, labels: np.ndarray, counts: np.ndarray, kept: np.ndarray, last: np.ndarray
) -> np.ndarray:
    """Per cluster, the mean of its points' rows, summed in point order and divided by the
    cluster's ``counts`` (as numpy divides, correctly rounded); a cluster with ``kept[c] >= 0``
    has the points whose mean is row ``kept[c]`` of ``last``: that row is copied."""
    clusters, dim = counts.shape[0], x.shape[1]
    sums = np.zeros((clusters, dim))
    for point in range(x.shape[0]):
        label = labels[point]
        if kept[label] < 0:
            row = sums[label]
            for column in range(dim):
                row[column] += x[point, column]
    for cluster in range(clusters):
        if kept[cluster] >= 0:
            sums[cluster] = last[kept[cluster]]
            continue
        count = np.float64(counts[cluster])
        for column in range(dim):
            sums[cluster, column] /= count
    return sums


@numba.njit(cache=True, nogil=True)
def by_first_point(labels: np.ndarray, clusters: int) -> tuple[np.ndarray, np.ndarray]:
    """``(labels renumbered, order)``: clusters ``0..clusters-1``, each holding a point,
    numbered by their first point; ``order[new] = old``."""
    renumber = np.full(clusters, -1, np.int64)
    order = np.empty(clusters, np.int64)
    numbered = 0
    renumbered = np.empty_like(labels)
    for point in range(labels.shape[0]):
        label = labels[point]
        if renumber[label] < 0:
            renumber[label] = numbered
            order[numbered] = label
            numbered += 1
        renumbered[point] = renumber[label]
    return renumbered, order


@numba.njit(cache=True, nogil=True)
def sums_are_exact(x: np.ndarray) -> bool:
    """Whether every sum of rows of ``x`` is exact in float64, in any order, so that a matrix
    product with a 0/1 matrix gives the same sums however BLAS orders them. Checked for float32
    values (embeddings): each is then a multiple of ``2**(e - 24)``, where ``2**(e - 1)`` is the
    largest power of two not above the smallest nonzero magnitude, and a sum of such multiples
    is exact while below ``2**(e - 24 + 53)``, which bounds every partial sum when the largest
    column sum of magnitudes does. Rows of unit embeddings pass unless a component is below
    about ``2**-23`` in magnitude (then BLAS sums them, as before)."""
    columns = x.shape[1]
    totals = np.zeros(columns)
    smallest = np.full(columns, np.inf)
    inexact = 0
    for point in range(x.shape[0]):  # per column, branch-free: LLVM vectorises the inner loop
        for column in range(columns):
            value = x[point, column]
            inexact |= np.float64(np.float32(value)) != value
            magnitude = abs(value)
            totals[column] += magnitude
            smallest[column] = min(smallest[column], magnitude if magnitude > 0.0 else np.inf)
    if inexact:
        return False
    if columns == 0 or smallest.min() == np.inf:
        return True
    exponent = math.frexp(smallest.min())[1]
    margin = 1.0 + (x.shape[0] + 1) * 2.0**-52  # the rounding of the column sums above
    return totals.max() * margin < 2.0 ** (exponent - 24 + 53)
