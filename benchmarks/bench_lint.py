#!/usr/bin/env python3
"""The performance numbers of issue 18, side by side in one run, as ratios of processes measured together.

  python benchmarks/bench_lint.py [--repeat 3] [--quick] [--skip-1m] [--timeout 300]

Prints, each figure next to its reference process measured in the same run (interleaved, median of --repeat):

  1. corpus: `onnxlint MODEL` process / `python -c "import onnx; onnx.checker.check_model(MODEL)"` process,
     per model of $ONNXLINT_CORPUS (default bench-out/corpus)                                        (target <= 1.2)
     twice: with --no-cache (nothing reused, the rule files parsed and validated), and as pre-commit runs it,
     the default command over a model it never saw, the cache folder holding the parsed rules
  2. cache: second `onnxlint` run over a folder of 200 small models / `onnxlint --version` process (target <= 1.5)
  3. 100k nodes: `onnxlint` process / `import onnx; onnx.load(MODEL)` process     (target <= 8, stretch 5)
  4. a 20k-node chain of If nodes: seconds of the lint process                      (target < 60 s)
  5. 1M nodes: peak RSS of the lint process                                        (target <= 1 GB), and time
  6. folders: models per second as the default runs them (200 tiny models: one process, against a forced pool;
     the corpus models 4 times over: a pool of one worker per core, against --jobs 1)
  +  scaling: lint seconds at 1k/10k/100k(/1M) nodes and the ratio per 10x nodes (linear: ~10)

The onnxlint CLI asks numpy's OpenBLAS for one thread (cli._one_blas_thread: its spinning thread per core costs
~0.1 s of CPU per process on 2 cores); the checker process keeps numpy's default, as a user's would. The corpus
rows also give the ratio against a checker process with one BLAS thread, and wall-time ratios, so the
lint's own work can be told apart from that setting.

Every lint figure but the cached one runs with --no-cache (once the CLI has it): with the result cache on, a
repeat would measure a cache hit. CPU time (user+sys of the child, from wait4) is the primary figure: the
machine may be shared, and CPU time does not count the time spent waiting for a core. Wall time is printed alongside. Every child runs with
bytecode caching on (PYTHONPYCACHEPREFIX in a temporary folder, warmed first), as an installed package has .pyc
files: a checkout run with PYTHONDONTWRITEBYTECODE=1 recompiles onnxlint's ~80 modules in every process.

Models are built in a temporary folder: transformer-shaped blocks (bench_lint.transformer), the 1M-node model
by byte templating (one block serialized, renamed per block: seconds, not minutes), the If chain with onnx.helper.
Not run in CI; budget about 10 minutes on 2 cores (--skip-1m: about 5).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("ONNXLINT_CORPUS", ROOT / "bench-out" / "corpus"))  # a folder of .onnx models; none: skipped
PY = sys.executable

CHECKER = "import onnx, sys; onnx.checker.check_model(sys.argv[1])"
LOAD = "import onnx, sys; onnx.load(sys.argv[1], load_external_data=False)"
LINT = "import sys; from onnxlint.cli import main; sys.exit(main())"  # what the onnxlint script runs


# ----------------------------------------------------------------------------- models


def transformer(n_nodes: int, d: int = 64) -> onnx.ModelProto:
    """Blocks of 15 nodes: LayerNorm, Q/K MatMuls, a Shape->Gather->Concat->Reshape subgraph, Softmax; an If last."""
    nodes, inits = [], _shared_inits(d)
    x, b = "x", 0
    rng = np.random.default_rng(0)
    while len(nodes) < n_nodes:
        p = f"b{b}_"
        inits.append(nh.from_array(rng.standard_normal((d, d)).astype(np.float32), p + "w"))
        nodes += _block(p, x)
        x = p + "out"
        b += 1
    nodes.append(_final_if(x, d))
    return _model(nodes, inits, d)


def _shared_inits(d: int) -> list:
    return [nh.from_array(np.array([0], np.int64), "idx0"), nh.from_array(np.array([4, d // 4], np.int64), "tail"),
            nh.from_array(np.array([-1, d], np.int64), "flat"), nh.from_array(np.ones(d, np.float32), "gamma"),
            nh.from_array(np.zeros(d, np.float32), "beta")]


def _block(p: str, x: str) -> list:
    return [
        h.make_node("LayerNormalization", [x, "gamma", "beta"], [p + "ln"], name=p + "ln", axis=-1),
        h.make_node("MatMul", [p + "ln", p + "w"], [p + "q"], name=p + "q"),
        h.make_node("MatMul", [p + "ln", p + "w"], [p + "k"], name=p + "k"),
        h.make_node("Shape", [p + "q"], [p + "shape"], name=p + "shape"),
        h.make_node("Gather", [p + "shape", "idx0"], [p + "bs"], name=p + "gather", axis=0),
        h.make_node("Concat", [p + "bs", "tail"], [p + "newshape"], name=p + "concat", axis=0),
        h.make_node("Reshape", [p + "q", p + "newshape"], [p + "qh"], name=p + "reshape_q"),
        h.make_node("Reshape", [p + "k", p + "newshape"], [p + "kh"], name=p + "reshape_k"),
        h.make_node("Transpose", [p + "kh"], [p + "kt"], name=p + "kt", perm=[0, 2, 1]),
        h.make_node("MatMul", [p + "qh", p + "kt"], [p + "att"], name=p + "att"),
        h.make_node("Softmax", [p + "att"], [p + "sm"], name=p + "softmax", axis=-1),
        h.make_node("MatMul", [p + "sm", p + "qh"], [p + "ctx"], name=p + "ctx"),
        h.make_node("Reshape", [p + "ctx", "flat"], [p + "ctx2"], name=p + "reshape_ctx"),
        h.make_node("Add", [p + "ctx2", x], [p + "res"], name=p + "residual"),
        h.make_node("Relu", [p + "res"], [p + "out"], name=p + "relu"),
    ]


def _final_if(x: str, d: int):
    then_g = h.make_graph([h.make_node("Identity", [x], ["t"], name="then_id")], "then", [],
                         [h.make_tensor_value_info("t", T.FLOAT, ["batch", d])])
    else_g = h.make_graph([h.make_node("Neg", [x], ["e"], name="else_neg")], "else", [],
                         [h.make_tensor_value_info("e", T.FLOAT, ["batch", d])])
    return h.make_node("If", ["cond"], ["y"], name="final_if", then_branch=then_g, else_branch=else_g)


def _model(nodes: list, inits: list, d: int) -> onnx.ModelProto:
    g = h.make_graph(nodes, "transformer", [h.make_tensor_value_info("x", T.FLOAT, ["batch", d]),
                                            h.make_tensor_value_info("cond", T.BOOL, [])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["batch", d])], initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def transformer_bytes(n_nodes: int, path: Path, d: int = 16) -> int:
    """transformer(n_nodes, d) written by templating: block 1's serialized nodes and weight, renamed per block
    (fixed-width names, so every block has the same byte length). Returns the node count."""
    cur, prev = "b@@@@@@@_", "b%%%%%%%_"
    blocks = (n_nodes + 14) // 15
    rng = np.random.default_rng(0)

    def part(nodes: list, inits: list) -> bytes:
        g = h.make_graph(nodes, "", [], [], inits)
        g.ClearField("name")  # the header names the graph
        return g.SerializeToString()

    w = rng.standard_normal((d, d)).astype(np.float32)
    first_b = part(_block("b0000000_", "x"), [nh.from_array(w, "b0000000_w")])
    t = part(_block(cur, prev + "out"), [nh.from_array(w, cur + "w")])
    last = f"b{blocks - 1:07d}_out"
    header = _model([], _shared_inits(d), d)
    gbytes = [header.graph.SerializeToString(), first_b]
    cur_b, prev_b = cur.encode(), prev.encode()
    for b in range(1, blocks):
        gbytes.append(t.replace(cur_b, f"b{b:07d}_".encode()).replace(prev_b, f"b{b - 1:07d}_".encode()))
    gbytes.append(part([_final_if(last, d)], []))
    graph = onnx.GraphProto()
    graph.ParseFromString(b"".join(gbytes))
    header.graph.CopyFrom(graph)
    onnx.save(header, path)
    return len(graph.node)


def if_chain(n: int) -> onnx.ModelProto:
    nodes, prev = [], "x"
    vi = h.make_tensor_value_info
    for i in range(n):
        then_g = h.make_graph([h.make_node("Identity", [prev], [f"t{i}"])], f"then{i}", [], [vi(f"t{i}", T.FLOAT, [2])])
        else_g = h.make_graph([h.make_node("Neg", [prev], [f"e{i}"])], f"else{i}", [], [vi(f"e{i}", T.FLOAT, [2])])
        nodes.append(h.make_node("If", ["c"], [f"x{i}"], name=f"if{i}", then_branch=then_g, else_branch=else_g))
        prev = f"x{i}"
    g = h.make_graph(nodes, "chain", [vi("x", T.FLOAT, [2]), vi("c", T.BOOL, [])], [vi(prev, T.FLOAT, [2])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def small_folder(folder: Path, n: int = 200) -> Path:
    """n distinct small models (a Dropout, an Equal on mixed types, a Cast: a few findings each)."""
    folder.mkdir(parents=True, exist_ok=True)
    vi = h.make_tensor_value_info
    for i in range(n):
        nodes = [h.make_node("Dropout", ["x"], ["d"], name=f"drop{i}"), h.make_node("Equal", ["d", "k"], ["e"], name=f"eq{i}"),
                 h.make_node("Cast", ["e"], ["y"], name=f"cast{i}", to=T.FLOAT)]
        g = h.make_graph(nodes, f"m{i}", [vi("x", T.FLOAT, [4]), vi("k", T.INT32, [4])], [vi("y", T.FLOAT, [4])])
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
        m.ir_version = 8
        onnx.save(m, folder / f"m{i:03d}.onnx")
    return folder


# ----------------------------------------------------------------------------- processes


class Run:
    def __init__(self, cpu: float, wall: float, rss_mb: float, rc: int | None):
        self.cpu, self.wall, self.rss_mb, self.rc = cpu, wall, rss_mb, rc


# Every measured process is started by one small spawner process, not by this one. Linux carries a process's
# peak RSS across fork and exec (exec records the high-water mark of the memory it replaces; with vfork, what
# subprocess uses, that is this process's own peak), so a child started from here reports at least this
# process's peak: after building the 1M-node model that was ~1.47 GB for a `onnx.load` child whose own peak is
# ~0.72 GB. The spawner stays ~10 MB, so its children's ru_maxrss is their own.
SPAWNER = r"""
import json, os, signal, subprocess, sys, time
for line in sys.stdin:
    job = json.loads(line)
    t0 = time.perf_counter()
    p = subprocess.Popen(job["argv"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=job["env"],
                         cwd=job["cwd"], start_new_session=True)
    deadline, rc = t0 + job["timeout"], None
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            rc, wall = os.waitstatus_to_exitcode(status), time.perf_counter() - t0
            break
        if time.perf_counter() > deadline:
            os.killpg(p.pid, signal.SIGKILL)
            pid, status, ru = os.wait4(p.pid, 0)
            wall = None
            break
        time.sleep(0.005)
    print(json.dumps([ru.ru_utime + ru.ru_stime, wall, ru.ru_maxrss, rc]), flush=True)
"""
_spawner: subprocess.Popen | None = None


def run(argv: list[str], env: dict, timeout: float = 600, cwd: Path | None = None) -> Run:
    """One child process (started by the spawner): CPU (user+sys, its children included), wall, peak RSS
    (ru_maxrss), exit code (None when stopped at the timeout)."""
    global _spawner
    if _spawner is None or _spawner.poll() is not None:
        _spawner = subprocess.Popen([PY, "-c", SPAWNER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert _spawner.stdin is not None and _spawner.stdout is not None
    _spawner.stdin.write(json.dumps({"argv": [str(a) for a in argv], "env": env, "timeout": timeout,
                                     "cwd": str(cwd) if cwd is not None else None}) + "\n")
    _spawner.stdin.flush()
    cpu, wall, rss_kb, rc = json.loads(_spawner.stdout.readline())
    return Run(cpu, float("inf") if wall is None else wall, rss_kb / 1024, rc)


def side_by_side(a: list[str], b: list[str], env: dict, repeat: int, timeout: float = 600) -> tuple[Run, Run]:
    """a and b alternately, repeat times each; the medians."""
    ra, rb = [], []
    for _ in range(repeat):
        ra.append(run(a, env, timeout))
        rb.append(run(b, env, timeout))
    return _median(ra), _median(rb)


def _median(runs: list[Run]) -> Run:
    return Run(statistics.median(r.cpu for r in runs), statistics.median(r.wall for r in runs),
               max(r.rss_mb for r in runs), runs[-1].rc)


def _env(pycache: Path) -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    env["NO_COLOR"] = "1"
    return env


def _cli_has(flag: str, env: dict) -> bool:
    out = subprocess.run([PY, "-c", LINT, "--help"], capture_output=True, text=True, env=env)
    return flag in out.stdout


CACHED_RUN = r"""
import sys
from pathlib import Path
from onnxlint import cache
from onnxlint.config import config_file as config_mod
from onnxlint.config.settings import Settings
folder, cdir = Path(sys.argv[1]), sys.argv[2]
files = sorted(folder.glob("*.onnx"))
cfg = config_mod.find_for(folder)
s = Settings.from_config(cfg)
def misses(fs):
    from onnxlint.linting import linter
    return linter.lint_paths(fs, lambda p: s, digest=True).files
reports = cache.lint_with_cache(files, lambda p: s, misses, cdir)
from onnxlint.formats import render
from onnxlint.linting.report import Report
sys.stdout.write(render("text", Report(files=reports)))
"""


def _fmt_ratio(a: float, b: float) -> str:
    return f"{a / b:6.2f}" if b > 0 and a == a and a != float("inf") else "   n/a"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs of each process per figure (median)")
    ap.add_argument("--quick", action="store_true", help="repeat 1, no 1M model, 100 small models")
    ap.add_argument("--skip-1m", action="store_true", help="leave out the 1M-node model (~4 of the 10 minutes)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds before a lint process is stopped")
    args = ap.parse_args()
    repeat = 1 if args.quick else args.repeat
    started = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="bench_lint_"))
    env = _env(tmp / "pycache")
    rows: list[tuple[str, str, str, str]] = []

    def row(what: str, value: str, target: str, detail: str = "") -> None:
        rows.append((what, value, target, detail))
        print(f"  {what:<58} {value:>10} {target:>9}  {detail}", flush=True)

    try:
        print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, python {sys.version.split()[0]}, "
              f"onnx {onnx.__version__}; CPU-time ratios (wall in brackets), median of {repeat}", flush=True)
        for warm in ([PY, "-c", LINT, "--version"], [PY, "-c", CHECKER, "/dev/null"]):
            run(warm, env)  # compile .pyc for onnxlint and onnx into the prefix
        small = small_folder(tmp / "small", 100 if args.quick else 200)
        cached = _cli_has("--cache-dir", env)
        # every figure but the cached one lints afresh: with the cache on, a repeat would measure a cache hit
        fresh = ["--no-cache"] if cached else []
        lint = [PY, "-c", LINT, "--no-progress", *fresh]
        run(lint + [str(small / "m000.onnx")], env)

        # 1. corpus vs the checker process
        corpus = sorted(CORPUS.glob("*.onnx")) if CORPUS.is_dir() else []
        ratios = []
        for m in corpus:
            a, b = side_by_side(lint + [str(m)], [PY, "-c", CHECKER, str(m)], env, repeat)
            ratios.append(a.cpu / b.cpu)
            row(f"corpus {m.name[:40]}: lint / checker process", _fmt_ratio(a.cpu, b.cpu), "<= 1.2",
                f"({a.cpu:.2f}/{b.cpu:.2f} s CPU, wall {_fmt_ratio(a.wall, b.wall).strip()})")
        if ratios:
            row("corpus: worst / median", f"{max(ratios):.2f}/{statistics.median(ratios):.2f}", "<= 1.2")
        if corpus and cached:
            # 1b. the same models as pre-commit runs them: the default command, the cache folder already holding
            # the parsed rules (any earlier run left them), the model itself never seen (a result-cache miss:
            # each run lints a fresh copy under a new path, so the key differs)
            rules_dir = tmp / "rules-cache"
            run([PY, "-c", LINT, "--no-progress", "--cache-dir", str(rules_dir), str(small / "m000.onnx")], env)
            warm_ratios, blas_ratios, wall_ratios = [], [], []
            one_blas = {**env, "OPENBLAS_NUM_THREADS": "1"}  # what the onnxlint CLI sets for itself (cli._one_blas_thread)
            for m in corpus:
                la, lb, lc = [], [], []
                for k in range(repeat):
                    copy = tmp / "miss" / f"{m.stem}-{k}" / m.name
                    copy.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(m, copy)
                    la.append(run([PY, "-c", LINT, "--no-progress", "--cache-dir", str(rules_dir), str(copy)], env))
                    lb.append(run([PY, "-c", CHECKER, str(copy)], env))
                    lc.append(run([PY, "-c", CHECKER, str(copy)], one_blas))
                a, b, c = _median(la), _median(lb), _median(lc)
                warm_ratios.append(a.cpu / b.cpu)
                blas_ratios.append(a.cpu / c.cpu)
                wall_ratios.append(a.wall / b.wall)
                row(f"corpus {m.name[:40]}: default run (rules cached, model new) / checker", _fmt_ratio(a.cpu, b.cpu),
                    "<= 1.2", f"({a.cpu:.2f}/{b.cpu:.2f} s CPU, wall {_fmt_ratio(a.wall, b.wall).strip()}; "
                              f"checker with one BLAS thread too: {_fmt_ratio(a.cpu, c.cpu).strip()})")
            row("corpus, default run: worst / median", f"{max(warm_ratios):.2f}/{statistics.median(warm_ratios):.2f}",
                "<= 1.2", f"(wall {max(wall_ratios):.2f}/{statistics.median(wall_ratios):.2f}; against a checker process "
                          f"that also runs one BLAS thread {max(blas_ratios):.2f}/{statistics.median(blas_ratios):.2f})")

        # 2 + 6. folder of small models: cold as the default runs it, cold with a forced pool, then cached
        cdir = tmp / "cache"
        n_small = len(list(small.glob("*.onnx")))
        lint_dir = [PY, "-c", LINT, "--no-progress", str(small)]
        if cached:
            lint_dir_cached = lint_dir + ["--cache-dir", str(cdir)]
            lint_dir = lint_dir + ["--no-cache"]
        else:
            lint_dir_cached = [PY, "-c", CACHED_RUN, str(small), str(cdir)]
        cores = os.cpu_count() or 1
        default = run(lint_dir, env, args.timeout)  # under POOL_MIN_BYTES: one process, as the default decides
        forced = run(lint_dir + ["--jobs", str(max(cores, 2))], env, args.timeout)
        row(f"folder of {n_small} tiny models: models/s, default (one process below 4 MB)", f"{n_small / default.wall:.1f}",
            "", f"(a forced pool of {max(cores, 2)}: {n_small / forced.wall:.1f}/s, x{default.wall / forced.wall:.2f}: "
                f"workers' start-up outweighs ~{1000 * default.wall / n_small:.0f} ms a model)")
        if corpus:  # real models, 4 copies each (16 files or more engage the pool)
            zoo = tmp / "zoo"
            zoo.mkdir()
            for k in range(4):
                for m in corpus:
                    shutil.copy(m, zoo / f"{k}_{m.name}")
            n_zoo = 4 * len(corpus)
            zoo_cmd = [PY, "-c", LINT, "--no-progress", str(zoo)] + (["--no-cache"] if cached else [])
            pool = run(zoo_cmd, env, args.timeout)
            one = run(zoo_cmd + ["--jobs", "1"], env, args.timeout)
            row(f"folder of {n_zoo} corpus models: models/s, default (a pool of {cores})", f"{n_zoo / pool.wall:.1f}", "",
                f"(--jobs 1: {n_zoo / one.wall:.1f}/s; pool speed-up x{one.wall / pool.wall:.2f})")
            shutil.rmtree(zoo)
        run(lint_dir_cached, env, args.timeout)  # fills the cache
        a, b = side_by_side(lint_dir_cached, [PY, "-c", LINT, "--version"], env, max(repeat, 3))
        how = "" if cached else " [cache not wired into the CLI yet: onnxlint.cache.lint_with_cache]"
        probe = "import atexit, sys; atexit.register(lambda: print(sorted(m for m in ('onnx', 'yaml', 'numpy') " \
                "if m in sys.modules))); from onnxlint.cli import main; main(['--version'])"
        heavy = subprocess.run([PY, "-c", probe], capture_output=True, text=True, env=env).stdout.strip().splitlines()
        if heavy and heavy[-1] != "[]":
            how += f" [`onnxlint --version` imports {heavy[-1]}: not yet the bare start-up]"
        row(f"cached 2nd run over {n_small} models / `onnxlint --version`", _fmt_ratio(a.cpu, b.cpu), "<= 1.5",
            f"({a.cpu:.3f}/{b.cpu:.3f} s CPU, wall {_fmt_ratio(a.wall, b.wall).strip()}){how}")

        # 3 + scaling. transformer models
        sizes = [1000, 10000, 100000]
        times = {}
        for n in sizes:
            p = tmp / f"t{n}.onnx"
            onnx.save(transformer(n), p)
            a, b = side_by_side(lint + [str(p)], [PY, "-c", LOAD, str(p)], env,
                                1 if n >= 100000 else repeat, args.timeout)
            times[n] = a
            row(f"{n // 1000}k nodes: lint / onnx.load process", _fmt_ratio(a.cpu, b.cpu),
                "<= 8" if n == 100000 else "", f"({a.cpu:.2f}/{b.cpu:.2f} s CPU, peak {a.rss_mb:.0f} MB)")
            p.unlink()

        # 4. If chain
        p = tmp / "ifchain.onnx"
        onnx.save(if_chain(20000), p)
        a = run(lint + [str(p)], env, args.timeout)
        row("20k-node If chain: lint process seconds", f"{a.cpu:.1f}", "< 60", f"(wall {a.wall:.1f} s, exit {a.rc})")
        p.unlink()

        # 5. 1M nodes
        if not (args.quick or args.skip_1m):
            p = tmp / "t1m.onnx"
            n = transformer_bytes(1_000_000, p)
            a = run(lint + [str(p)], env, args.timeout)
            b = run([PY, "-c", LOAD, str(p)], env, args.timeout)
            done = a.rc is not None
            row("1M nodes: lint process peak RSS (MB)", f"{a.rss_mb:.0f}", "<= 1024",
                f"({n} nodes, {p.stat().st_size / 1e6:.0f} MB file; load process {b.rss_mb:.0f} MB)"
                + ("" if done else f" [stopped after {args.timeout:.0f} s: peak so far]"))
            row("1M nodes: lint / onnx.load process", _fmt_ratio(a.cpu, b.cpu) if done else "timeout", "",
                f"({a.cpu:.1f}/{b.cpu:.1f} s CPU)")
            times[1_000_000] = a if done else None
            p.unlink()
        keys = [k for k in sorted(times) if times[k] is not None]
        steps = [f"{a // 1000}k->{b // 1000}k x{times[b].cpu / times[a].cpu:.1f}" for a, b in zip(keys, keys[1:])]
        row("scaling: lint CPU per 10x nodes (linear ~10, start-up flattens 1k)", "", "", ", ".join(steps))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
