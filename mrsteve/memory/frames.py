"""Contiguous frame storage: one row (a *slot*) per frame in an embedding matrix (float32, or
float16 at half the bytes), a float32 pose matrix and an int64 step vector, and, for memories
whose reads scan frames, each frame's int8 codes with a scale and a residual bound (what a read
decides most frames from: a quarter of a float32 row's bytes). Evicted slots go on a free list
and are reused first. Clusters refer to slots as int32 (up to 2**31 frames)."""

from __future__ import annotations

import math
from collections.abc import Sized

import numpy as np

from mrsteve.memory.kernels import MAX_CODED_DIM, quantise_rows, score_rows

GROWTH_ROWS = 1024
"""Rows added when an unlimited store is full: fixed chunks keep spare memory under 1 % at 100K
frames. Growth resizes in place (realloc; glibc remaps large blocks instead of copying them), so
its cost is faulting in the new pages, which the writes would pay anyway."""
_STORAGE = {"float32": np.dtype(np.float32), "float16": np.dtype(np.uint16)}
"""The dtype of the embedding matrix: numba has no float16 arrays, so float16 frames are held as
their IEEE half bits in uint16 (decoded by :func:`~mrsteve.memory.kernels.as_float32`)."""
PRECISIONS = tuple(_STORAGE)
"""How a store keeps embeddings. float16 halves the bytes a read moves (the frames of a 100K-frame
read: 2.6 -> 1.3 MB) and the memory; a stored unit vector's scores then differ from float32's by
up to about 1e-4 (each value is rounded to 11 significant bits; 6e-5 at most in 20K-frame
runs)."""
LIST_ENTRY_BYTES = 8
DICT_ENTRY_BYTES = 100


def container_nbytes(*containers: Sized) -> int:
    """Estimated bytes of Python index containers, from their lengths alone (so a loaded memory
    reports what the saved one did): a pointer per list entry, 100 bytes per dict entry (hash
    slot, key and value objects)."""
    return sum(
        (DICT_ENTRY_BYTES if isinstance(c, dict) else LIST_ENTRY_BYTES) * len(c) for c in containers
    )


class FrameStore:
    """Frames of one memory. ``max_rows`` bounds the allocation (a capacity-limited memory needs
    ``capacity + 1`` rows: it writes before it evicts); ``None`` grows without bound.
    ``precision`` (one of :data:`PRECISIONS`) is how embeddings are kept; :meth:`vectors` reads
    them back as float32 either way. With ``coded`` (and at most
    :data:`~mrsteve.memory.kernels.MAX_CODED_DIM` dimensions) each frame also keeps int8 codes
    of its embedding as stored, with their scale and a bound on what they miss
    (:func:`~mrsteve.memory.kernels.quantise_rows`), written with the frame; they are derived,
    so a saved memory leaves them out and a loaded one recomputes them (:meth:`code_all`)."""

    def __init__(
        self, dim: int, max_rows: int | None, precision: str = "float32", coded: bool = False
    ) -> None:
        self.dim = dim
        self.max_rows = max_rows
        self.precision = precision
        self.coded = coded and dim <= MAX_CODED_DIM
        self.embeddings = np.zeros((0, dim), _STORAGE[precision])
        self.poses = np.zeros((0, 5), np.float32)
        self.steps = np.zeros(0, np.int64)
        self.codes = np.zeros((0, dim if self.coded else 0), np.int8)
        self.code_scales = np.zeros(0, np.float32)
        self.code_residuals = np.zeros(0, np.float32)
        self.used = 0
        """Slots handed out so far (the high-water mark); rows past it are spare."""
        self.free: list[int] = []

    def add(self, embedding: np.ndarray, pose: tuple[float, ...], t: int) -> int:
        """Store a frame as given (unchecked); returns its slot."""
        slot = self.next_slot()
        if slot == self.embeddings.shape[0]:
            self.grow()
        self.embeddings[slot] = self._encoded(embedding)
        self.poses[slot] = pose
        self.steps[slot] = t
        if self.coded:
            self._code(slot, slot + 1)
        self.take(slot)
        return slot

    @property
    def frame_codes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(codes, scales, residual bounds)`` as the compiled read and write take them (rows
        for every slot; none when the store keeps no codes)."""
        if not self.coded:
            return NO_CODES
        return self.codes, self.code_scales, self.code_residuals

    def code_all(self) -> None:
        """Compute the codes of every slot handed out (after a load)."""
        if self.coded:
            self._code(0, self.used)

    def _code(self, start: int, stop: int) -> None:
        """Codes of slots ``start:stop``."""
        quantise_rows(self.embeddings, np.arange(start, stop), self.codes, self.code_scales,
                      self.code_residuals, start)

    def vectors(self, rows: int | slice | np.ndarray) -> np.ndarray:
        """The embeddings in ``rows`` as float32 (a copy)."""
        stored = self.embeddings[rows]
        if self.precision == "float16":
            return stored.view(np.float16).astype(np.float32)
        return stored.copy() if stored.base is self.embeddings else stored  # a view, or a copy

    def scores(self, query: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Float32 dot products of the embeddings in ``rows`` with ``query`` (float32): float32
        frames in one BLAS product over every stored row (faster than gathering), float16 frames
        in a compiled pass over ``rows``."""
        if self.precision == "float16":
            return score_rows(self.embeddings, rows, query)
        return (self.embeddings[: self.used] @ query)[rows]

    def peak_score(self, query: np.ndarray) -> float:
        """The largest dot product of ``query`` with any row handed out so far: at least the
        best score of the frames held (rows freed since count too); ``-inf`` before any."""
        if self.used == 0:
            return -math.inf
        return float(self.scores(query, np.arange(self.used)).max())

    def _encoded(self, embeddings: np.ndarray) -> np.ndarray:
        """Embeddings (float) as the matrix stores them: float32, or float16 bits from the
        float32 values (rounded to nearest, as the compiled write does)."""
        values = np.asarray(embeddings, np.float32)
        if self.precision == "float16":
            return values.astype(np.float16).view(np.uint16)
        return values

    def next_slot(self) -> int:
        """The slot the next frame takes: the last one freed, else the next unused row (past the
        arrays when they are full: :meth:`grow` first)."""
        return self.free[-1] if self.free else self.used

    def take(self, slot: int) -> None:
        """Mark :meth:`next_slot` as holding a frame."""
        if self.free:
            self.free.pop()
        else:
            self.used += 1

    def release(self, slots: int | np.ndarray) -> None:
        """Give slots back for reuse (their rows are overwritten by later frames)."""
        if isinstance(slots, np.ndarray):
            self.free.extend(slots.tolist())
        else:
            self.free.append(slots)

    def grow(self) -> None:
        """Add :data:`GROWTH_ROWS` rows (at most up to ``max_rows``)."""
        rows = self.embeddings.shape[0] + GROWTH_ROWS
        if self.max_rows is not None:
            rows = min(rows, self.max_rows)
        names = ("embeddings", "poses", "steps")
        if self.coded:
            names += ("codes", "code_scales", "code_residuals")
        for name in names:
            shape = (rows,) + getattr(self, name).shape[1:]
            try:  # in place; no local names may refer to the arrays, or numpy refuses
                getattr(self, name).resize(shape, refcheck=True)
            except ValueError:  # something else holds a view (a debugger, say): copy instead
                setattr(self, name, _grown(getattr(self, name), rows))

    @property
    def nbytes(self) -> int:
        return (
            self.embeddings.nbytes
            + self.poses.nbytes
            + self.steps.nbytes
            + self.codes.nbytes
            + self.code_scales.nbytes
            + self.code_residuals.nbytes
            + container_nbytes(self.free)
        )

    # --- persistence ---

    def to_arrays(self) -> dict[str, np.ndarray]:
        embeddings = self.embeddings[: self.used]
        if self.precision == "float16":
            embeddings = embeddings.view(np.float16)  # saved as what they are
        return {
            "embeddings": embeddings,
            "poses": self.poses[: self.used],
            "steps": self.steps[: self.used],
            "free": np.asarray(self.free, np.int64),
        }

    @classmethod
    def from_arrays(
        cls,
        arrays: dict[str, np.ndarray],
        max_rows: int | None,
        precision: str = "float32",
        coded: bool = False,
    ) -> FrameStore:
        """A store holding saved ``arrays`` (:meth:`to_arrays`), its codes not yet computed
        (:meth:`code_all`, once the frames are checked)."""
        embeddings = arrays["embeddings"]
        if embeddings.dtype != np.dtype(precision):
            raise ValueError(
                f"frames.embeddings holds {embeddings.dtype} values, but the memory keeps "
                f"{precision} frames (frame_precision)"
            )
        store = cls(int(embeddings.shape[1]), max_rows, precision, coded)
        used = int(embeddings.shape[0])
        if max_rows is not None and used > max_rows:
            raise ValueError(f"{used} frames stored, more than the {max_rows} rows allowed")
        while store.embeddings.shape[0] < used:  # the rows the store had grown to
            store.grow()
        store.used = used
        store.embeddings[:used] = embeddings.view(store.embeddings.dtype)
        store.poses[:used] = arrays["poses"]
        store.steps[:used] = arrays["steps"]
        store.free = arrays["free"].astype(np.int64).tolist()
        if store.free and not 0 <= min(store.free) <= max(store.free) < used:
            raise ValueError("free slots outside the frames stored")
        return store


NO_CODES = (np.zeros((0, 0), np.int8), np.zeros(0, np.float32), np.zeros(0, np.float32))
"""``frame_codes`` of a store without codes."""


def _grown(array: np.ndarray, rows: int) -> np.ndarray:
    grown = np.zeros((rows,) + array.shape[1:], array.dtype)
    grown[: min(rows, array.shape[0])] = array[:rows]
    return grown
