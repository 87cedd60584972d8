"""The TensorRT generators' parser workers (tools/gen_trt_support.py, tools/gen_trt_behaviour.py) run under a
stand-in `tensorrt` module built here: each probe is parsed in a child, so a probe the parser rejects, raises on,
crashes on or hangs on gets its own row and the probes after it are still parsed."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import gen_trt_behaviour  # noqa: E402
import gen_trt_support  # noqa: E402

# the parser's answer is the probe file's text: accept, reject with an error, raise, die by a signal, hang
FAKE_TENSORRT = '''
import os, signal, time
__version__ = "0.test"
class ILogger:
    class Severity:
        ERROR = 1
    def __init__(self):
        pass
class NetworkDefinitionCreationFlag:
    EXPLICIT_BATCH = 0
class _Output:
    shape = (2, 3)
class _Network:
    num_outputs = 1
    def get_output(self, i):
        return _Output()
class Builder:
    def __init__(self, logger):
        pass
    def create_network(self, flags):
        return _Network()
class _Error:
    def desc(self):
        return "Unsupported   datatype\\n here"
    def func(self):
        return "importProbe"
    def node(self):
        return 0
class OnnxParser:
    def __init__(self, network, logger):
        self.logger, self.num_errors = logger, 0
    def supports_operator(self, op):
        return op == "Add"
    def get_error(self, i):
        return _Error()
    def parse(self, data):
        what = data.decode().strip()
        if what == "reject":
            self.logger.log(1, "Found unsupported datatype (4)")
            self.num_errors = 1
            return False
        if what == "raise":
            raise RuntimeError("parser raised")
        if what == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        if what == "hang":
            time.sleep(60)
        return True
'''
KINDS = ("accept", "reject", "raise", "crash", "hang", "accept2")


@pytest.fixture
def probes(tmp_path):
    (tmp_path / "fake").mkdir()
    (tmp_path / "fake" / "tensorrt.py").write_text(FAKE_TENSORRT)
    paths = {}
    for kind in KINDS:
        paths[kind] = tmp_path / f"{kind}.onnx"
        paths[kind].write_text(kind.rstrip("2"))
    return paths


def run_worker(tmp_path, worker: str, *args: str) -> str:
    script = tmp_path / "worker.py"
    script.write_text(worker)
    env = {"PYTHONPATH": str(tmp_path / "fake"), "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, str(script), *args], env=env, check=True, capture_output=True, text=True,
                          timeout=60).stdout


def test_support_worker_gives_each_probe_its_row(tmp_path, probes):
    listing = tmp_path / "list.jsonl"
    listing.write_text("".join(json.dumps([k, str(p)]) + "\n" for k, p in probes.items()))
    (tmp_path / "list.jsonl.ops").write_text(json.dumps(["Add", "Gemm"]))
    out = tmp_path / "res.jsonl"
    run_worker(tmp_path, gen_trt_support.WORKER, str(listing), str(out), "1")
    rows = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert rows["__ops__"]["importers"] == ["Add"]
    assert rows["accept"]["v"] == rows["accept2"]["v"] == "accept"
    assert rows["reject"] == {"id": "reject", "v": "reject", "func": "importProbe", "desc": "Unsupported datatype here"}
    assert rows["raise"] == {"id": "raise", "v": "reject", "func": "exception", "desc": "parser raised"}
    assert rows["crash"] == {"id": "crash", "v": "crash", "desc": "signal 11"}
    assert rows["hang"] == {"id": "hang", "v": "crash", "desc": "signal 9"}  # killed past the timeout


def test_behaviour_worker_keeps_the_parsers_log_and_goes_on_past_a_crash(tmp_path, probes):
    job = tmp_path / "job.json"
    job.write_text(json.dumps({"names": ["Add", "Gemm"], "probes": {k: str(p) for k, p in probes.items() if k != "hang"}}))
    out = json.loads(run_worker(tmp_path, gen_trt_behaviour.WORKER, str(job)))
    rows = out["probes"]
    assert out["importers"] == ["Add"] and out["version"] == "0.test"
    assert rows["accept"] == rows["accept2"] == {"ok": True, "log": [], "out_shapes": [[2, 3]]}
    assert rows["reject"] == {"ok": False, "desc": "Unsupported datatype here", "func": "importProbe", "node": 0,
                              "log": ["Found unsupported datatype (4)"], "out_shapes": []}
    assert rows["raise"] == {"ok": False, "desc": "parser raised", "func": "exception"}
    assert rows["crash"] == {"ok": False, "crash": "signal 11"}
