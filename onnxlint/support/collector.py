"""Python's cyclic garbage collector held off while one model is linted or placed.

A model's index, optimizer state and prediction make millions of objects that live until the model is done;
every automatic collection meanwhile walks them all (they reach the oldest generation) and frees no cycle. The
collector runs again, as it was, once the model is done."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
