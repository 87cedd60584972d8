"""Seeded fuzz cases: byte mutations of real models plus hand-made structural breakage.

Used by tests/test_fuzz.py (CI-sized) and benchmarks/fuzz.py (long runs).
"""

from __future__ import annotations

import io
import os
import random
import signal
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"  # real exports' graphs, weights left out, in every clone


def seeds() -> list[bytes]:
    paths = sorted((ROOT / "examples").glob("*.onnx"))
    paths += sorted(CORPUS.glob("*.onnx"))[:2]
    return [p.read_bytes() for p in paths]


def mutate(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    kind = rng.randrange(5)
    if kind == 0 and b:  # truncate
        return bytes(b[: rng.randrange(len(b))])
    if kind == 1:  # flip bytes
        for _ in range(rng.randint(1, 16)):
            if b:
                b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    if kind == 2 and b:  # delete a span
        i = rng.randrange(len(b))
        del b[i: i + rng.randint(1, 64)]
        return bytes(b)
    if kind == 3:  # insert junk
        i = rng.randrange(len(b) + 1)
        b[i:i] = os.urandom(rng.randint(1, 64))
        return bytes(b)
    return os.urandom(rng.randint(0, 2048))


def _vi(n, t=T.FLOAT, s=("n", 4)):
    return h.make_tensor_value_info(n, t, list(s))


def structural() -> list[tuple[str, bytes]]:
    """Models that parse but are broken in the ways the reliability issue lists."""
    cases = []

    def add(name, m):
        cases.append((name, m.SerializeToString()))

    def mk(nodes, ins, outs, inits=(), opsets=(("", 17),)):
        g = h.make_graph(nodes, "g", ins, outs, initializer=list(inits))
        return h.make_model(g, opset_imports=[h.make_opsetid(d, v) for d, v in opsets])

    relu = lambda i, o, n="r": h.make_node("Relu", [i], [o], name=n)
    add("dangling input", mk([relu("nope", "y")], [_vi("x")], [_vi("y")]))
    add("missing output", mk([relu("x", "z")], [_vi("x")], [_vi("y")]))
    add("duplicate names", mk([relu("x", "a", "same"), relu("a", "y", "same")], [_vi("x")], [_vi("y")]))
    add("cycle", mk([relu("b", "a", "r1"), relu("a", "b", "r2"), relu("b", "y", "r3")], [_vi("x")], [_vi("y")]))
    add("empty names", mk([h.make_node("Relu", ["x"], ["y"])], [_vi("x")], [_vi("y")]))
    add("unknown op", mk([h.make_node("NoSuchOp", ["x"], ["y"], name="n")], [_vi("x")], [_vi("y")]))
    add("unknown domain", mk([h.make_node("Op", ["x"], ["y"], name="n", domain="x.y")], [_vi("x")], [_vi("y")]))
    add("no opset import", mk([relu("x", "y")], [_vi("x")], [_vi("y")], opsets=()))
    add("duplicate opset import", mk([relu("x", "y")], [_vi("x")], [_vi("y")], opsets=(("", 13), ("", 17))))
    add("future opset", mk([relu("x", "y")], [_vi("x")], [_vi("y")], opsets=(("", 99),)))
    add("huge dims", mk([relu("x", "y")], [_vi("x", s=(2**62, 2**62))], [_vi("y", s=(2**62, 2**62))]))
    add("negative dims", mk([relu("x", "y")], [_vi("x", s=(-5, -1))], [_vi("y")]))
    bad_attr = h.make_node("Resize", ["x", "", "s"], ["y"], name="rz")
    bad_attr.attribute.append(h.make_attribute("mode", 3))  # wrong type: int instead of string
    add("attribute of wrong type", mk([bad_attr], [_vi("x")], [_vi("y")], [nh.from_array(np.ones(2, np.float32), "s")]))
    # nests of If bodies: 25 deep parses; 200 deep is beyond protobuf's nesting limit and must be a clean error
    add("25-deep If nest", _if_nest(mk, 25))
    cases.append(("200-deep If nest", _deep_if_bytes(200)))
    cases.append(("empty file", b""))
    cases.append(("not protobuf", b"hello world, this is not ONNX\n" * 20))
    return cases


def _if_nest(mk, depth):
    body = h.make_graph([h.make_node("Identity", ["x"], ["o0"], name="leaf")], "leaf", [], [_vi("o0")])
    for d in range(depth):
        leaf = h.make_graph([h.make_node("Identity", ["x"], [f"e{d}"], name=f"else{d}")], f"e{d}", [], [_vi(f"e{d}")])
        node = h.make_node("If", ["c"], [f"o{d + 1}"], name=f"if{d}", then_branch=body, else_branch=leaf)
        body = h.make_graph([node], f"b{d}", [], [_vi(f"o{d + 1}")])
    return mk(list(body.node), [_vi("x"), h.make_tensor_value_info("c", T.BOOL, [])], [_vi(f"o{depth}")])


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(num: int, payload: bytes) -> bytes:
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def _deep_if_bytes(depth: int) -> bytes:
    """Wire-format ModelProto with If bodies nested `depth` deep (built by hand: the protobuf runtime refuses)."""
    graph = _field(1, _field(4, b"Identity") + _field(1, b"x") + _field(2, b"o"))  # GraphProto.node
    for d in range(depth):
        attr = _field(1, b"then_branch") + _varint(20 << 3) + _varint(5) + _field(6, graph)
        graph = _field(1, _field(4, b"If") + _field(1, b"c") + _field(2, b"o") + _field(3, f"if{d}".encode()) + _field(5, attr))
    opset = _field(8, _varint(2 << 3) + _varint(17))
    return _varint(1 << 3) + _varint(8) + _field(7, graph) + opset


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def run_case(path: Path, timeout: int = 20) -> tuple[str, int | None, str]:
    """-> (outcome, exit code, detail); outcome is ok, traceback or hang."""
    from onnxlint.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            rc = main([str(path), "--format", "json"])
    except Hang:
        return "hang", None, str(path)
    except BaseException as exc:  # anything escaping main() is a traceback for the user
        return "traceback", None, f"{type(exc).__name__}: {exc}"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    if rc not in (0, 1, 2):
        return "traceback", rc, f"exit code {rc}"
    text = err.getvalue()
    if "Traceback" in text:
        return "traceback", rc, text[-500:]
    if rc == 2:
        lines = [ln for ln in text.splitlines() if ln.strip()]
        if len(lines) != 1 or str(path) not in lines[0]:
            return "traceback", rc, f"exit 2 without one line naming the file: {lines!r}"
    return "ok", rc, ""


def run(n: int, seed: int, workdir: Path) -> dict:
    rng = random.Random(seed)
    counts = {"cases": 0, "exit0": 0, "exit1": 0, "exit2": 0, "traceback": 0, "hang": 0}
    failures = []
    src = seeds()
    items = structural()
    while len(items) < n:
        items.append((f"mutation {len(items)}", mutate(rng.choice(src), rng)))
    for i, (name, data) in enumerate(items[:n]):
        p = workdir / f"case{i}.onnx"
        p.write_bytes(data)
        outcome, rc, detail = run_case(p)
        counts["cases"] += 1
        if outcome == "ok":
            counts[f"exit{rc}"] += 1
        else:
            counts[outcome] += 1
            failures.append((name, detail))
        p.unlink()
    counts["failures"] = failures[:20]
    return counts
