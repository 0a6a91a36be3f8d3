"""jsonscan's walk over numpy arrays (imported on first use: `--demo` never loads numpy).

Bytes 64 at a time as bit masks: the quotes, backslashes and brackets of each 64-byte word,
the string interiors from the quotes by a prefix parity, the depth at each word's start from
the brackets' counts; only the few words where the depth could pass the bound or come back
to a level asked for are looked at bit by bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kubectl_tspread.snapshot.bounds import MAX_DEPTH

_U64 = np.uint64
_SHIFTS = tuple(_U64(s) for s in (1, 2, 4, 8, 16, 32))
_ONE, _TOP = _U64(1), _U64(63)
_HAS_COUNT = hasattr(np, "bitwise_count")
_POP8 = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)

def _popcount8(words: Any) -> Any:
    """The bits set in each 64-bit word, as uint8 (numpy < 2.0 has no bitwise_count)."""
    return _POP8[words.view(np.uint8)].reshape(-1, 8).sum(axis=1, dtype=np.uint8)


_WINDOW = 1 << 20  # bytes walked at a time: the temporaries stay in the CPU's caches


def _window(w: Any, a: Any, lo: int, inside_before: int, carry_bs: int) -> tuple[Any, Any, int, int]:
    """(opening, closing) brackets outside strings of the window `w` = a[lo:lo + len(w)] as
    64-bit words (bit i of word k for byte 64k + i), and the string and backslash state
    after it. `inside_before`: whether the window starts inside a string; `carry_bs`:
    whether the byte before it is a backslash."""
    def bits(mask: Any) -> Any:
        return np.packbits(mask, bitorder="little").view("<u8")

    quotes = bits(w == 34)
    backslashes = bits(w == 92)
    folded = w | 32  # `[` and `]` fold onto `{` and `}`, nothing else does
    opens, closes = bits(folded == 123), bits(folded == 125)
    if carry_bs or backslashes.any():
        quotes = _unescaped(a, lo, quotes, backslashes, carry_bs)
    inside = quotes.copy()
    for s in _SHIFTS:  # the parity of the quotes up to each bit, within its word
        inside ^= inside << s
    parity = (np.bitwise_count(quotes) if _HAS_COUNT else _popcount8(quotes)) & 1
    before = (np.cumsum(parity, dtype=np.uint8) - parity + inside_before) & 1  # up to each word
    inside ^= (-before.astype(np.int64)).view(np.uint64)
    outside = ~inside
    opens &= outside
    closes &= outside
    return opens, closes, int((before[-1] + parity[-1]) & 1), int(backslashes[-1] >> _TOP)


def _unescaped(a: Any, lo: int, quotes: Any, backslashes: Any, carry_bs: int) -> Any:
    """`quotes` (of a[lo:]) without those escaped by an odd run of backslashes (few: the run
    before each quote that follows a backslash is counted back in `a`)."""
    carry = np.zeros_like(backslashes)
    carry[0] = carry_bs
    carry[1:] = backslashes[:-1] >> _TOP
    after = quotes & ((backslashes << _ONE) | carry)
    words = np.flatnonzero(after)
    if not words.size:
        return quotes
    rows, cols = np.nonzero(np.unpackbits(after[words].view(np.uint8), bitorder="little").reshape(-1, 64))
    at = words[rows] * 64 + cols + lo
    # nearly always a lone backslash (`\"`): only longer runs are counted back further
    longer = (at >= 2) & (a[np.maximum(at - 2, 0)] == 92)
    run = np.ones(at.size, dtype=np.int64)
    if longer.any():
        far = np.flatnonzero(longer)
        alive = np.ones(far.size, dtype=bool)
        k = 2
        while alive.any():
            back = at[far] - k
            alive &= back >= 0
            alive[alive] = a[back[alive]] == 92
            run[far] += alive
            k += 1
    escaped = at[(run & 1) == 1] - lo
    if not escaped.size:
        return quotes
    word_of = escaped >> 6
    bit = np.left_shift(np.ones(escaped.size, dtype=np.uint64), (escaped & 63).astype(np.uint64))
    first = np.flatnonzero(np.r_[True, word_of[1:] != word_of[:-1]])
    quotes = quotes.copy()
    quotes[word_of[first]] &= ~np.bitwise_or.reduceat(bit, first)
    return quotes


class Scanned:
    """buf[start:stop] walked from nesting depth `depth`, outside any string (where a document
    or an item starts). `stop` is `len(buf)` when `final`, else the last multiple of 64
    bytes: the rest waits for more input. `too_deep`: the first byte past MAX_DEPTH, or
    None; `end_depth`: the depth at `stop`. `returns()` gives the brackets that come down to
    `level` or below, or open from there.
    """

    def __init__(self, buf: Any, start: int, depth: int, final: bool, level: int = 0, limit: int | None = None):
        n = len(buf) - start
        if limit is not None and limit < n:
            n, final = limit - limit % 64, False
        whole = n - n % 64
        a = np.frombuffer(buf, dtype=np.uint8, count=whole, offset=start)
        if final and n % 64:
            tail = np.frombuffer(bytes(buf[start + whole:]) + b" " * (64 - n % 64), dtype=np.uint8)
            a = np.concatenate((a, tail))
        self.start, self.stop, self.level = start, start + (n if final else whole), level
        self.too_deep: int | None = None
        # the words where the depth may come down to `level`: their index, opening and
        # closing bits, and depth at their start (a handful per document or item)
        found: list[tuple[Any, Any, Any, Any]] = []
        inside, carry_bs = 0, 0
        for lo in range(0, a.size, _WINDOW):
            opens, closes, inside, carry_bs = _window(a[lo:lo + _WINDOW], a, lo, inside, carry_bs)
            no = np.bitwise_count(opens) if _HAS_COUNT else _popcount8(opens)
            nc = np.bitwise_count(closes) if _HAS_COUNT else _popcount8(closes)
            net = no.astype(np.int32) - nc
            ends = np.cumsum(net, dtype=np.int64) + depth
            begins = ends - net
            if self.too_deep is None and int((begins + no).max()) > MAX_DEPTH:
                self.too_deep = self._first_too_deep(lo, opens, closes, begins, no)
            near = np.flatnonzero((begins - nc <= level) & ((no | nc) > 0))
            if near.size:
                near = near[_lowest(opens[near], closes[near], begins[near]) <= level]
            if near.size:
                found.append((near + lo // 64, opens[near], closes[near], begins[near]))
            depth = int(ends[-1])
        self.end_depth = depth
        if found:
            self._words, self._opens, self._closes, self._begins = (np.concatenate(x) for x in zip(*found))
        else:
            self._words = None

    def _first_too_deep(self, lo: int, opens: Any, closes: Any, begins: Any, no: Any) -> int | None:
        words = np.flatnonzero(begins + no > MAX_DEPTH)
        depth = _depths(opens[words], closes[words], begins[words])[2]
        rows, cols = np.nonzero(depth > MAX_DEPTH)
        if not rows.size:
            return None
        return self.start + lo + int(words[rows[0]]) * 64 + int(cols[0])  # row-major: the first

    def returns(self) -> tuple[list[int], list[int], list[bool]]:
        """The brackets that come down to `level` or below, or open from there, in order: (their
        byte offsets in buf, the depth after each, whether each opens); an opening bracket's
        depth after is one more than before it. With level 0: where each document starts and
        ends."""
        if self._words is None:
            return [], [], []
        ob, cb, depth = _depths(self._opens, self._closes, self._begins)
        # an opening bracket counts from the depth before it, a closing one from the depth after
        keep = ((depth - ob) <= self.level) & ((ob | cb) == 1)
        rows, cols = np.nonzero(keep)
        return ((self._words[rows] * 64 + cols + self.start).tolist(), depth[rows, cols].tolist(),
                (ob[rows, cols] == 1).tolist())


def _byte_tables() -> tuple[Any, Any]:
    """For each pair of bytes (opening bits << 8 | closing bits): the change of depth over
    those 8 bytes, and the lowest depth a bracket among them counts from (an opening one
    from the depth before it, a closing one from the depth after it; 127 for none), both
    from the depth at the first byte."""
    pairs = np.arange(1 << 16)
    opening, closing = pairs >> 8, pairs & 255
    depth = np.zeros(1 << 16, dtype=np.int64)
    lowest = np.full(1 << 16, 127, dtype=np.int64)
    for bit in range(8):
        o, c = (opening >> bit) & 1, (closing >> bit) & 1
        lowest = np.where(o == 1, np.minimum(lowest, depth), lowest)
        depth = depth + o - c
        lowest = np.where(c == 1, np.minimum(lowest, depth), lowest)
    return depth.astype(np.int8), lowest.astype(np.int8)


_NET8, _LOWEST8 = _byte_tables()


def _lowest(opens: Any, closes: Any, begins: Any) -> Any:
    """The lowest depth any bracket of each word counts from (see returns()), exactly, a
    byte at a time through _byte_tables: far fewer words than the bound from the counts."""
    pairs = (opens.view(np.uint8).astype(np.uint16) << 8) | closes.view(np.uint8)
    net = _NET8[pairs].astype(np.int32)
    run = np.cumsum(net)
    before = run - net  # the depth change up to each byte, running over all the words
    first = before[::8]  # ... at each word's first byte
    low = (before.reshape(-1, 8) - first[:, None] + _LOWEST8[pairs].reshape(-1, 8)).min(axis=1)
    return begins + low


def _depths(opens: Any, closes: Any, begins: Any) -> tuple[Any, Any, Any]:
    """(opening bits, closing bits, the depth after each byte) of the given words, 64 a row."""
    ob = np.unpackbits(opens.view(np.uint8), bitorder="little").reshape(-1, 64)
    cb = np.unpackbits(closes.view(np.uint8), bitorder="little").reshape(-1, 64)
    # one running sum over all the rows (a cumsum along each short row is much slower)
    run = np.cumsum((ob.astype(np.int32) - cb).ravel()).reshape(-1, 64)
    before = np.empty(len(run), dtype=np.int64)
    before[0] = 0
    before[1:] = run[:-1, -1]
    return ob, cb, run - before[:, None] + begins[:, None]


