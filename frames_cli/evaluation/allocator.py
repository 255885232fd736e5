"""Holes in CPython's small-object allocator, filled before a fork so forked workers keep pages shared."""

from __future__ import annotations

import os
import re
import sys
import tempfile

#: A line of the size-class table `sys._debugmallocstats` prints: class, size, pools, blocks in use, free blocks.
_SIZE_CLASS_LINE = re.compile(r"^\s*\d+\s+(\d+)\s+\d+\s+\d+\s+(\d+)\s*$", re.MULTILINE)


def free_small_blocks() -> dict[int, int]:
    """Free blocks in the partly used pools of CPython's small-object allocator: {block size in bytes: count}.

    Read from the table `sys._debugmallocstats()` writes to file descriptor 2 (CPython only; an
    empty dict elsewhere, or when the allocator is not pymalloc). File descriptor 2 is pointed
    at a temporary file meanwhile, so call it only while no other thread may write to stderr.
    A process started without stderr (`2>&-`: sys.stderr None, fd 2 closed) gets an empty dict:
    there is no descriptor to point elsewhere, and the fill is only a memory saving.
    """
    if not hasattr(sys, "_debugmallocstats"):
        return {}
    if sys.stderr is not None:
        sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:
        return {}
    with tempfile.TemporaryFile("w+") as table:
        os.dup2(table.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        table.seek(0)
        return {int(size): int(free) for size, free in _SIZE_CLASS_LINE.findall(table.read())}


def fill_allocator_holes() -> list[object]:
    """Objects that fill the free blocks of partly used small-object pools (keep them alive).

    CPython's small-object allocator places a new object in a free block of a pool already in
    use before it takes a fresh pool. A heap that freed many objects (loading cases frees the
    parsed records) keeps free blocks scattered among its objects: 29 MB of free blocks among
    580 MB of objects after loading 10,000 tau2 cases. A forked worker that allocates there
    writes to pages it shares with its parent, and each write copies a whole page: about
    165 MB per worker in bench/eval_scale.py (1,323 against 993 MB summed PSS for two workers).
    Filled before the fork, those blocks cost their size (here 29 MB) once, and the workers
    allocate in fresh pools. Block sizes from 48 bytes are filled with bytes objects
    (33 bytes of header), 32-byte blocks with floats; smaller ones are left. The list that holds
    them is sized once: a list that grows moves its item array through the small size classes,
    and every move frees a block among the ones just filled.
    """
    plan = [(size, free) for size, free in free_small_blocks().items() if size >= 48 or size == 32]
    ballast: list[object] = [None] * sum(free for _, free in plan)
    i = 0
    for size, free in plan:
        for _ in range(free):
            ballast[i] = bytes(size - 33) if size >= 48 else float(i)
            i += 1
    return ballast
