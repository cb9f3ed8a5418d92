"""CLIP's byte-pair tokenizer, as MineCLIP's text encoder reads it (no model hub, no extra package).

MineCLIP tokenizes with the tokenizer of ``openai/clip-vit-base-patch16`` without its special
tokens, then writes ``<start_of_text>`` (49406), the tokens cut to 75, ``<end_of_text>`` (49407)
and zero padding to 77 (``mineclip/mineclip/tokenization.py``). The byte-pair merges ship with
this package in ``data/bpe_simple_vocab_16e6.txt.gz``, taken unchanged from the ``open_clip_torch``
wheel (``open_clip/bpe_simple_vocab_16e6.txt.gz``, MIT licence; the file of OpenAI's CLIP
repository).

Differences from the reference: text is lower-cased and its whitespace collapsed but not repaired
by ``ftfy``, and the split pattern uses the standard library's ``re``: ``[^\\W\\d_]+`` for
``\\p{L}+`` and ``\\d`` for ``\\p{N}``, the same on letters and decimal digits of any script
(numerals such as ``½`` or ``Ⅻ`` are grouped with letters instead of alone).
"""

from __future__ import annotations

import gzip
import html
import itertools
import re
from functools import cache
from importlib import resources

import numpy as np

VOCABULARY_FILE = "data/bpe_simple_vocab_16e6.txt.gz"
"""The merges file, below :mod:`mrsteve.minecraft`."""

VOCAB_SIZE = 49408
"""Tokens: 256 bytes, their word-final forms, 48,894 merges and the two special tokens."""
START, END = 49406, 49407
"""``<start_of_text>`` and ``<end_of_text>``."""
CONTEXT = 77
"""Tokens per text, start and end included."""

_PATTERN = re.compile(r"<start_of_text>|<end_of_text>|'s|'t|'re|'ve|'m|'ll|'d|[^\W\d_]+|\d|"
                      r"(?:[^\s\w]|_)+", re.IGNORECASE)
"""CLIP's split: special tokens, English contractions, runs of letters, single digits, runs of
other symbols (``_`` is a symbol to CLIP, a word character to ``re``)."""


def _bytes_to_unicode() -> dict[int, str]:
    """CLIP's reversible map from the 256 bytes to printable characters."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
                 *range(ord("®"), ord("ÿ") + 1)]
    codes = printable[:]
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            codes.append(256 + extra)
            extra += 1
    return dict(zip(printable, map(chr, codes), strict=True))


class ClipTokenizer:
    """Text to CLIP token ids (:meth:`encode`) and to MineCLIP's padded rows (:meth:`tokenize`)."""

    def __init__(self) -> None:
        text = resources.files("mrsteve.minecraft").joinpath(VOCABULARY_FILE).read_bytes()
        merges = [tuple(line.split()) for line in
                  gzip.decompress(text).decode("utf-8").split("\n")[1:49152 - 256 - 2 + 1]]
        self.byte_encoder = _bytes_to_unicode()
        vocab = list(self.byte_encoder.values())
        vocab += [v + "</w>" for v in vocab]
        vocab += ["".join(merge) for merge in merges]
        vocab += ["<start_of_text>", "<end_of_text>"]
        if len(vocab) != VOCAB_SIZE:
            raise ValueError(f"the shipped merges give {len(vocab)} tokens, not {VOCAB_SIZE}")
        self.encoder = {token: i for i, token in enumerate(vocab)}
        self.ranks = {merge: i for i, merge in enumerate(merges)}
        self._cache: dict[str, list[str]] = {}

    def _bpe(self, token: str) -> list[str]:
        """The byte-pair merges of one pre-token (already mapped to printable characters)."""
        if token in self._cache:
            return self._cache[token]
        word = [*token[:-1], token[-1] + "</w>"]
        while len(word) > 1:
            pairs = set(itertools.pairwise(word))
            best = min(pairs, key=lambda pair: self.ranks.get(pair, len(self.ranks)))
            if best not in self.ranks:
                break
            merged, i = [], 0
            while i < len(word):
                if i < len(word) - 1 and (word[i], word[i + 1]) == best:
                    merged.append(word[i] + word[i + 1])
                    i += 2
                else:
                    merged.append(word[i])
                    i += 1
            word = merged
        self._cache[token] = word
        return word

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` without the special tokens."""
        text = " ".join(html.unescape(html.unescape(text)).split()).lower()
        ids = []
        for piece in _PATTERN.findall(text):
            mapped = "".join(self.byte_encoder[b] for b in piece.encode("utf-8"))
            ids.extend(self.encoder[t] for t in self._bpe(mapped))
        return ids

    def tokenize(self, texts: list[str] | str, context: int = CONTEXT) -> np.ndarray:
        """``int64[len(texts), context]``: start, at most ``context - 2`` tokens, end, zeros."""
        texts = [texts] if isinstance(texts, str) else texts
        rows = np.zeros((len(texts), context), np.int64)
        for row, text in zip(rows, texts, strict=True):
            ids = self.encode(text)[:context - 2]
            row[:len(ids) + 2] = [START, *ids, END]
        return rows


@cache
def clip_tokenizer() -> ClipTokenizer:
    """The tokenizer (read once: the merges take about a second)."""
    return ClipTokenizer()
