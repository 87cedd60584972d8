#!/usr/bin/env python3
"""The performance figures of issues 18 and 43, side by side in one run, as ratios of processes measured together.

  python benchmarks/bench_lint.py [--repeat 3] [--quick] [--skip-1m] [--only SECTIONS] [--polygraphy EXE]
                                  [--against CHECKOUT]

Prints, each figure next to its reference process measured in the same run (interleaved A B A B ..., median of
--repeat), with the machine's load average at the start and the end:

  corpus   `onnxlint MODEL` process / `python -c "import onnx; onnx.checker.check_model(MODEL)"` process, per
           model of $ONNXLINT_CORPUS (default bench-out/corpus; the shared corpus: tests/corpus has its
           graphs)                                                                          (target <= 1.2)
           twice: with --no-cache (nothing reused, the rule files parsed and validated), and as pre-commit runs
           it, the default command over a model it never saw, the cache folder holding the parsed rules
  folders  models per second as the default runs them (200 tiny models: one process, against a forced pool;
           the corpus models 4 times over: a pool of one worker per core, against --jobs 1)
  cache    second `onnxlint` run over a folder of 200 small models / `onnxlint --version` process (<= 1.5)
  scale    transformer blocks (transformer_blocks.py) at 1k, 10k, 100k nodes / `onnx.load` process
           (100k: target <= 15, stretch 8), and at 100k / `polygraphy inspect model` (--polygraphy; < 1)
  ifchain  a 20k-node chain of If nodes: seconds of the lint process                           (< 60 s)
  1m       1M nodes (~88 MB): peak RSS of the lint process (<= 1.5 GB, stretch 1 GB) and its CPU / the
           `onnx.load` process's (<= 20), the file in the page cache
  +        scaling: lint CPU at 1k/10k/100k(/1M) nodes and the ratio per 10x nodes (linear: ~10)
  against  with --against CHECKOUT (a folder holding an `onnxlint` package: a git worktree of the code before a
           change): at 100k and 1M nodes, the lint process of this onnxlint / that of CHECKOUT's, the two
           alternating in this run: a change measured free of the shared machine's drift between two runs

The onnxlint CLI asks numpy's OpenBLAS for one thread (cli._one_blas_thread: its spinning thread per core costs
~0.1 s of CPU per process on 2 cores); the checker process keeps numpy's default, as a user's would. The corpus
rows also give the ratio against a checker process with one BLAS thread, and wall-time ratios, so the
lint's own work can be told apart from that setting.

Every lint figure but the cached one runs with --no-cache: with the result cache on, a repeat would measure a
cache hit. CPU time (user+sys of the child and its children, from wait4) is the primary figure: the machine
may be shared, and CPU time does not count the time spent waiting for a core. Wall time is printed alongside.
Every child runs with bytecode caching on (PYTHONPYCACHEPREFIX in a temporary folder, warmed first), as an
installed package has .pyc files: a checkout run with PYTHONDONTWRITEBYTECODE=1 recompiles onnxlint's ~80
modules in every process.

Models are built in a temporary folder (transformer_blocks.py: helper-built up to 200k nodes, the 1M-node model
by byte templating; the If chain with onnx.helper). Not run in CI; budget about 15 minutes on 2 cores
(--skip-1m: about 6). polygraphy: install it in a venv of its own (`pip install polygraphy onnx`).
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

import onnx
from onnx import TensorProto as T
from onnx import helper as h

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from transformer_blocks import write as write_transformer  # noqa: E402 - beside this script

CORPUS = Path(os.environ.get("ONNXLINT_CORPUS", ROOT / "bench-out" / "corpus"))  # a folder of .onnx models; none: skipped
PY = sys.executable

CHECKER = "import onnx, sys; onnx.checker.check_model(sys.argv[1])"
LOAD = "import onnx, sys; onnx.load(sys.argv[1], load_external_data=False)"
LINT = "import sys; from onnxlint.cli import main; sys.exit(main())"  # what the onnxlint script runs


# ----------------------------------------------------------------------------- models


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


SECTIONS = ("corpus", "cache", "scale", "ifchain", "1m", "folders")


class Bench:
    """One run's shared state: the temporary folder, the children's environment, the rows printed."""

    def __init__(self, args: argparse.Namespace, tmp: Path):
        self.args, self.tmp = args, tmp
        self.env = _env(tmp / "pycache")
        self.repeat = 1 if args.quick else args.repeat
        self.lint: list[str] = []
        self.cached = False
        self.small: Path = tmp / "small"
        self.against_env: dict | None = None
        if args.against is not None:  # that checkout first on the path
            path = os.pathsep.join(x for x in (str(args.against.resolve()), self.env.get("PYTHONPATH")) if x)
            self.against_env = dict(self.env, PYTHONPATH=path)

    def row(self, what: str, value: str, target: str, detail: str = "") -> None:
        print(f"  {what:<58} {value:>10} {target:>9}  {detail}", flush=True)


def _cpu(a: Run, b: Run) -> str:
    """`a/b s CPU, wall x.xx`: the two processes' CPU seconds and their wall-time ratio."""
    return f"{a.cpu:.2f}/{b.cpu:.2f} s CPU, wall {_fmt_ratio(a.wall, b.wall).strip()}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs of each process per figure (median)")
    ap.add_argument("--quick", action="store_true", help="repeat 1, no 1M model, 100 small models")
    ap.add_argument("--skip-1m", action="store_true", help="leave out the 1M-node model (~4 of the 10 minutes)")
    ap.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated sections ({', '.join(SECTIONS)})")
    ap.add_argument("--polygraphy", default=os.environ.get("POLYGRAPHY") or shutil.which("polygraphy"),
                    help="the `polygraphy` executable to time `polygraphy inspect model` with at 100k nodes "
                         "(default: $POLYGRAPHY, else on PATH; it may live in another venv)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds before a lint process is stopped")
    ap.add_argument("--against", type=Path, help="a checkout whose onnxlint lints the 100k and 1M models "
                                                 "alternately with this one (a worktree of the code before a change)")
    args = ap.parse_args()
    if args.against is not None and not (args.against / "onnxlint" / "__init__.py").is_file():
        ap.error(f"--against {args.against}: no onnxlint package there")
    only = {x.strip() for x in args.only.split(",") if x.strip()}
    if only - set(SECTIONS):
        ap.error(f"unknown section(s): {', '.join(sorted(only - set(SECTIONS)))}")
    if args.quick or args.skip_1m:
        only.discard("1m")
    started = time.perf_counter()
    tmp = Path(tempfile.mkdtemp(prefix="bench_lint_"))
    b = Bench(args, tmp)
    try:
        print(f"machine: {os.cpu_count()} cores, load {_load()}, python {sys.version.split()[0]}, "
              f"onnx {onnx.__version__}, {time.strftime('%Y-%m-%d %H:%M')}; CPU-time ratios (user+sys; wall ratios "
              f"beside), medians of {b.repeat}, compared processes interleaved", flush=True)
        for warm in ([PY, "-c", LINT, "--version"], [PY, "-c", CHECKER, "/dev/null"]):
            run(warm, b.env)  # compile .pyc for onnxlint and onnx into the prefix
        if b.against_env is not None:
            run([PY, "-c", LINT, "--version"], b.against_env)
            print(f"against: this onnxlint {_package(b.env)}, --against {_package(b.against_env)}", flush=True)
        b.small = small_folder(tmp / "small", 100 if args.quick else 200)
        b.cached = _cli_has("--cache-dir", b.env)
        # every figure but the cached one lints afresh: with the cache on, a repeat would measure a cache hit
        b.lint = [PY, "-c", LINT, "--no-progress", *(["--no-cache"] if b.cached else [])]
        run(b.lint + [str(b.small / "m000.onnx")], b.env)
        times: dict[int, Run | None] = {}
        for name, section in (("corpus", _corpus), ("folders", _folders), ("cache", _cached_run), ("scale", _scale),
                              ("ifchain", _if_chain), ("1m", _one_million)):
            if name in only:
                section(b, times)
        keys = [k for k in sorted(times) if times[k] is not None]
        if len(keys) > 1:
            steps = [f"{x // 1000}k->{y // 1000}k x{times[y].cpu / times[x].cpu:.1f}"  # type: ignore[union-attr]
                     for x, y in zip(keys, keys[1:])]
            b.row("scaling: lint CPU per 10x nodes (linear ~10, start-up flattens 1k)", "", "", ", ".join(steps))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"({time.perf_counter() - started:.0f} s; load at the end {_load()})")
    return 0


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def _corpus(b: Bench, times: dict) -> None:
    """1. corpus models: the lint process against the checker process, --no-cache and as pre-commit runs it."""
    env, repeat = b.env, b.repeat
    corpus = sorted(CORPUS.glob("*.onnx")) if CORPUS.is_dir() else []
    ratios, walls = [], []
    for m in corpus:
        a, c = side_by_side(b.lint + [str(m)], [PY, "-c", CHECKER, str(m)], env, repeat)
        ratios.append(a.cpu / c.cpu)
        walls.append(a.wall / c.wall)
        b.row(f"corpus {m.name[:40]}: lint --no-cache / checker", _fmt_ratio(a.cpu, c.cpu), "<= 1.2", f"({_cpu(a, c)})")
    if ratios:
        b.row("corpus --no-cache: worst / median", f"{max(ratios):.2f}/{statistics.median(ratios):.2f}", "<= 1.2",
              f"(wall {max(walls):.2f}/{statistics.median(walls):.2f})")
    if not (corpus and b.cached):
        return
    # the same models as pre-commit runs them: the default command, the cache folder already holding the parsed
    # rules (any earlier run left them), the model itself never seen (a result-cache miss: each run lints a
    # fresh copy under a new path, so the key differs)
    rules_dir = b.tmp / "rules-cache"
    run([PY, "-c", LINT, "--no-progress", "--cache-dir", str(rules_dir), str(b.small / "m000.onnx")], env)
    warm_ratios, blas_ratios, wall_ratios = [], [], []
    one_blas = {**env, "OPENBLAS_NUM_THREADS": "1"}  # what the onnxlint CLI sets for itself (cli._one_blas_thread)
    for m in corpus:
        la, lb, lc = [], [], []
        for k in range(repeat):
            copy = b.tmp / "miss" / f"{m.stem}-{k}" / m.name
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(m, copy)
            la.append(run([PY, "-c", LINT, "--no-progress", "--cache-dir", str(rules_dir), str(copy)], env))
            lb.append(run([PY, "-c", CHECKER, str(copy)], env))
            lc.append(run([PY, "-c", CHECKER, str(copy)], one_blas))
        a, c, d = _median(la), _median(lb), _median(lc)
        warm_ratios.append(a.cpu / c.cpu)
        blas_ratios.append(a.cpu / d.cpu)
        wall_ratios.append(a.wall / c.wall)
        b.row(f"corpus {m.name[:40]}: pre-commit run / checker", _fmt_ratio(a.cpu, c.cpu), "<= 1.2",
              f"({_cpu(a, c)}; checker with one BLAS thread too: {_fmt_ratio(a.cpu, d.cpu).strip()})")
    b.row("corpus, pre-commit run: worst / median", f"{max(warm_ratios):.2f}/{statistics.median(warm_ratios):.2f}",
          "<= 1.2", f"(wall {max(wall_ratios):.2f}/{statistics.median(wall_ratios):.2f}; against a checker process "
                    f"that also runs one BLAS thread {max(blas_ratios):.2f}/{statistics.median(blas_ratios):.2f})")


def _folders(b: Bench, times: dict) -> None:
    """6. folders: models per second as the default runs them."""
    env, small = b.env, b.small
    n_small = len(list(small.glob("*.onnx")))
    lint_dir = [PY, "-c", LINT, "--no-progress", str(small)] + (["--no-cache"] if b.cached else [])
    cores = os.cpu_count() or 1
    default = run(lint_dir, env, b.args.timeout)  # under POOL_MIN_BYTES: one process, as the default decides
    forced = run(lint_dir + ["--jobs", str(max(cores, 2))], env, b.args.timeout)
    b.row(f"folder of {n_small} tiny models: models/s, default (one process below 4 MB)", f"{n_small / default.wall:.1f}",
          "", f"(a forced pool of {max(cores, 2)}: {n_small / forced.wall:.1f}/s, x{default.wall / forced.wall:.2f}: "
              f"workers' start-up outweighs ~{1000 * default.wall / n_small:.0f} ms a model)")
    corpus = sorted(CORPUS.glob("*.onnx")) if CORPUS.is_dir() else []
    if corpus:  # real models, 4 copies each (16 files or more engage the pool)
        zoo = b.tmp / "zoo"
        zoo.mkdir()
        for k in range(4):
            for m in corpus:
                shutil.copy(m, zoo / f"{k}_{m.name}")
        n_zoo = 4 * len(corpus)
        zoo_cmd = [PY, "-c", LINT, "--no-progress", str(zoo)] + (["--no-cache"] if b.cached else [])
        pool = run(zoo_cmd, env, b.args.timeout)
        one = run(zoo_cmd + ["--jobs", "1"], env, b.args.timeout)
        b.row(f"folder of {n_zoo} corpus models: models/s, default (a pool of {cores})", f"{n_zoo / pool.wall:.1f}", "",
              f"(--jobs 1: {n_zoo / one.wall:.1f}/s; pool speed-up x{one.wall / pool.wall:.2f})")
        shutil.rmtree(zoo)


def _cached_run(b: Bench, times: dict) -> None:
    """2. the cached second run over a folder of small models, against `onnxlint --version`."""
    env, small = b.env, b.small
    cdir = b.tmp / "cache"
    n_small = len(list(small.glob("*.onnx")))
    if b.cached:
        lint_dir_cached = [PY, "-c", LINT, "--no-progress", str(small), "--cache-dir", str(cdir)]
    else:
        lint_dir_cached = [PY, "-c", CACHED_RUN, str(small), str(cdir)]
    run(lint_dir_cached, env, b.args.timeout)  # fills the cache
    a, c = side_by_side(lint_dir_cached, [PY, "-c", LINT, "--version"], env, max(b.repeat, 3))
    how = "" if b.cached else " [cache not wired into the CLI yet: onnxlint.cache.lint_with_cache]"
    probe = "import atexit, sys; atexit.register(lambda: print(sorted(m for m in ('onnx', 'yaml', 'numpy') " \
            "if m in sys.modules))); from onnxlint.cli import main; main(['--version'])"
    heavy = subprocess.run([PY, "-c", probe], capture_output=True, text=True, env=env).stdout.strip().splitlines()
    if heavy and heavy[-1] != "[]":
        how += f" [`onnxlint --version` imports {heavy[-1]}: not yet the bare start-up]"
    b.row(f"cached 2nd run over {n_small} models / `onnxlint --version`", _fmt_ratio(a.cpu, c.cpu), "<= 1.5",
          f"({a.cpu:.3f}/{c.cpu:.3f} s CPU, wall {_fmt_ratio(a.wall, c.wall).strip()}){how}")


def _scale(b: Bench, times: dict) -> None:
    """3. transformer blocks at 1k, 10k and 100k nodes against the `onnx.load` process; at 100k also against
    `polygraphy inspect model` (the closest tool that reads a whole graph and reports on it)."""
    for n in (1000, 10000, 100000):
        p = b.tmp / f"t{n}.onnx"
        write_transformer(n, p)
        rep = b.repeat
        a, c = side_by_side(b.lint + [str(p)], [PY, "-c", LOAD, str(p)], b.env, rep, b.args.timeout)
        times[n] = a
        b.row(f"{n // 1000}k nodes: lint / onnx.load process", _fmt_ratio(a.cpu, c.cpu),
              "<= 15" if n == 100000 else "", f"({_cpu(a, c)}; peak {a.rss_mb:.0f}/{c.rss_mb:.0f} MB; "
                                              f"{p.stat().st_size / 1e6:.0f} MB file)")
        if n == 100000 and b.args.polygraphy:
            a, c = side_by_side(b.lint + [str(p)], [b.args.polygraphy, "inspect", "model", str(p)], b.env, rep,
                                b.args.timeout)
            b.row("100k nodes: lint / `polygraphy inspect model` process", _fmt_ratio(a.cpu, c.cpu), "< 1",
                  f"({_cpu(a, c)}; polygraphy exit {c.rc})")
        if n == 100000:
            _against(b, p, "100k nodes", rep)
        p.unlink()


def _if_chain(b: Bench, times: dict) -> None:
    """4. a 20k-node chain of If nodes."""
    p = b.tmp / "ifchain.onnx"
    onnx.save(if_chain(20000), p)
    a = run(b.lint + [str(p)], b.env, b.args.timeout)
    b.row("20k-node If chain: lint process seconds", f"{a.cpu:.1f}", "< 60", f"(wall {a.wall:.1f} s, exit {a.rc})")
    p.unlink()


def _one_million(b: Bench, times: dict) -> None:
    """5. 1M nodes (templated blocks, d=8): peak RSS and CPU of the lint process against the `onnx.load`
    process, the file read once before (warm file cache); interleaved, --repeat times for the load, once
    (twice with --repeat > 3) for the lint."""
    p = b.tmp / "t1m.onnx"
    n = write_transformer(1_000_000, p)
    p.read_bytes()  # warm file cache
    runs = 2 if b.repeat > 3 else 1
    la, lc = [], []
    for k in range(max(runs, b.repeat)):
        if k < runs:
            la.append(run(b.lint + [str(p)], b.env, b.args.timeout))
        lc.append(run([PY, "-c", LOAD, str(p)], b.env, b.args.timeout))
    a, c = _median(la), _median(lc)
    done = all(r.rc is not None for r in la)
    b.row("1M nodes: lint process peak RSS (MB)", f"{a.rss_mb:.0f}", "<= 1536",
          f"({n} nodes, {p.stat().st_size / 1e6:.0f} MB file; load process {c.rss_mb:.0f} MB; stretch 1024)"
          + ("" if done else f" [stopped after {b.args.timeout:.0f} s: peak so far]"))
    b.row("1M nodes: lint / onnx.load process", _fmt_ratio(a.cpu, c.cpu) if done else "timeout", "<= 20", f"({_cpu(a, c)})")
    times[1_000_000] = a if done else None
    _against(b, p, "1M nodes", runs)
    p.unlink()


def _against(b: Bench, p: Path, what: str, repeat: int) -> None:
    """With --against: the lint of p by this onnxlint and by the checkout's, alternating (which goes first
    alternates too), repeat times each; the medians' CPU ratio."""
    if b.against_env is None:
        return
    mine: list[Run] = []
    theirs: list[Run] = []
    pair = [(mine, b.env), (theirs, b.against_env)]
    for k in range(repeat):
        for runs, env in (pair if k % 2 == 0 else pair[::-1]):
            runs.append(run(b.lint + [str(p)], env, b.args.timeout))
    a, c = _median(mine), _median(theirs)
    b.row(f"{what}: lint / lint of --against", _fmt_ratio(a.cpu, c.cpu), "",
          f"({_cpu(a, c)}; peak {a.rss_mb:.0f}/{c.rss_mb:.0f} MB)")


def _package(env: dict) -> str:
    """Where the onnxlint that env's lint processes import lives."""
    out = subprocess.run([PY, "-c", "import onnxlint; print(onnxlint.__file__)"], capture_output=True, text=True,
                         env=env, cwd=tempfile.gettempdir())
    return str(Path(out.stdout.strip()).parent) if out.returncode == 0 else f"(not importable: {out.stderr.strip()[-200:]})"


if __name__ == "__main__":
    raise SystemExit(main())
