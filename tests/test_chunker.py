"""Unit tests: physical lines from bytes, bounded lines, chunks with contiguous numbering."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from schedmate.agents.logtext.lines import clean_line
from schedmate.connectors.chunker import ChunkBuilder, LineChunkStream, LineSplitter, compact_line


def test_carriage_returns_stay_inside_a_line_and_partial_is_exposed() -> None:
    """\\r does not end a line; the unfinished bar is available as the partial line."""
    sp = LineSplitter()
    assert sp.feed(b"a\r b\r c") == []
    assert sp.partial == "a\r b\r c"
    assert sp.feed(b"\nnext\n") == ["a\r b\r c", "next"]
    assert sp.partial is None


def test_invalid_utf8_is_replaced_not_rejected() -> None:
    """Bytes that are not UTF-8 become U+FFFD and the line survives."""
    assert LineSplitter().feed(b"loss \xff\xfe 1.0\n") == ["loss \ufffd\ufffd 1.0"]


def test_long_lines_are_bounded() -> None:
    """A huge line is cut with a note; a huge redraw line keeps its latest redraws."""
    plain = compact_line(b"x" * 10_000, limit=1000)
    assert plain.startswith("x" * 1000) and "bytes cut" in plain
    bar = b"".join(b"\r%d/100000 " % i for i in range(20000))
    kept = compact_line(bar, limit=1000)
    assert len(kept.encode()) <= 1000
    assert clean_line(kept).startswith("19999/100000")


def test_unfinished_huge_redraw_line_stays_bounded_and_counts_its_bytes() -> None:
    """A bar redrawn for hours without a newline does not grow memory; byte sizes stay exact."""
    sp = LineSplitter(limit=1000)
    total = 0
    for i in range(5000):
        chunk = b"\r%d/5000 bar" % i
        total += len(chunk)
        sp.feed(chunk)
    assert len(sp._pending) <= 4 * 1000 + 20
    out = sp.feed_sized(b"\n")
    assert out[0][1] == total
    assert clean_line(out[0][0]) == "4999/5000 bar"


@given(st.lists(st.text(alphabet=st.characters(blacklist_characters="\n"), max_size=50), min_size=1, max_size=60),
       st.integers(1, 7))  # fmt: skip
def test_chunks_number_every_line_once(lines: list[str], max_lines: int) -> None:
    """Chunks carry every line once, with contiguous line numbers and sequence numbers."""
    b = ChunkBuilder("job", max_lines=max_lines)
    chunks = b.add(lines)
    last = b.take(eof=True)
    if last is not None:
        chunks.append(last)
    assert [c.seq for c in chunks] == list(range(len(chunks)))
    got = [(c.first_line + i, line) for c in chunks for i, line in enumerate(c.lines)]
    assert got == list(enumerate(lines, start=1))


def test_stream_sends_a_live_line_once_per_change() -> None:
    """An unfinished progress bar travels as `partial` when it changes, never the same state twice."""
    s = LineChunkStream("job", max_age_s=3600)
    assert s.feed(b" 10%|#  | 1/10\r") == []
    first = s.due()
    assert first is not None and first.chunk.partial == " 10%|#  | 1/10\r" and first.chunk.lines == []
    assert s.due() is None  # unchanged: nothing to send
    s.feed(b" 20%|## | 2/10")
    second = s.due()
    assert second is not None and second.chunk.partial is not None and second.chunk.partial.endswith("2/10")
    assert second.chunk.seq == first.chunk.seq + 1


@given(st.lists(st.binary(max_size=40), max_size=30), st.integers(1, 5))
def test_stream_cuts_cover_the_bytes_once(pieces: list[bytes], max_lines: int) -> None:
    """Whatever the read sizes: every line once, in order, numbered; byte ranges contiguous from 0 to the end."""
    data = b"".join(pieces)
    s = LineChunkStream("job", max_lines=max_lines, max_age_s=0)
    cuts = []
    for piece in pieces:
        cuts += s.feed(piece)
        due = s.due()
        if due is not None:
            cuts.append(due)
    cuts += s.finish()
    lines = [line for c in cuts for line in c.chunk.lines]
    whole = LineSplitter()
    assert lines == whole.feed(data) + whole.flush()
    assert [c.chunk.seq for c in cuts] == list(range(len(cuts)))
    numbered = [c.chunk.first_line + i for c in cuts for i in range(len(c.chunk.lines))]
    assert numbered == list(range(1, len(lines) + 1))
    assert [c.start for c in cuts] == [0] + [c.end for c in cuts[:-1]]
    assert cuts[-1].end == len(data) and cuts[-1].chunk.eof


def test_a_line_without_newline_is_held_in_bounded_memory() -> None:
    """64 MiB with no `\\n` and no `\\r` keeps only the head in memory; the finished line says what was cut and
    its raw length (for byte offsets) is exact."""
    from schedmate.connectors.chunker import MAX_LINE_BYTES, LineSplitter  # noqa: PLC0415

    sp = LineSplitter()
    block = b"x" * (1 << 20)
    for _ in range(64):
        assert sp.feed_sized(block) == []
        assert len(sp._pending) <= 4 * MAX_LINE_BYTES
    (text, raw_len), (after, after_len) = sp.feed_sized(b"yz\nnext line\n")
    assert raw_len == 64 * (1 << 20) + 2 and after == "next line" and after_len == 9
    assert text.startswith("x" * 100) and text.endswith(f"…[{raw_len - MAX_LINE_BYTES} bytes cut]")
