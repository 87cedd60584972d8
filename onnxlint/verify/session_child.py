"""The child process of `onnxlint verify`: builds one ORT session, runs it once, prints JSON lines.

Run as `python -m onnxlint.verify.session_child MODEL PROVIDERS_JSON SHAPES_JSON OUTDIR`. It is a process of
its own so that a provider library that aborts (onnxruntime-gpu without its CUDA libraries does) costs the
child, never the linter. Placement is decided (and logged) at session creation, so a run that fails later
still leaves that evidence.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def _feeds(sess: Any, shapes: dict[str, list[int]]) -> dict[str, Any]:
    import numpy as np

    types = {"tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(float16)": np.float16,
             "tensor(int64)": np.int64, "tensor(int32)": np.int32, "tensor(int8)": np.int8, "tensor(uint8)": np.uint8,
             "tensor(bool)": np.bool_}
    rng = np.random.default_rng(0)
    feeds = {}
    for i in sess.get_inputs():
        shape = shapes.get(i.name) or [d if isinstance(d, int) and d > 0 else 1 for d in i.shape]
        if i.type == "tensor(string)":
            n = int(np.prod(shape))
            feeds[i.name] = np.array([("a", "b")[k % 2] for k in range(n)], dtype=object).reshape(shape)
            continue
        dt = types.get(i.type, np.float32)
        feeds[i.name] = (rng.random(shape) if np.issubdtype(dt, np.floating) else rng.integers(0, 2, shape)).astype(dt)
    return feeds


def main(argv: list[str]) -> int:
    import onnxruntime as ort

    model, providers, shapes, outdir = argv[0], json.loads(argv[1]), json.loads(argv[2]), argv[3]
    so = ort.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(outdir, "prof")
    so.log_severity_level = 0
    # no fusions: the session's nodes must be the model's nodes, one for one, to compare placements
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model, so, providers=providers)
    print(json.dumps({"providers": sess.get_providers()}), flush=True)
    try:
        sess.run(None, _feeds(sess, shapes))
    except Exception as exc:
        print(json.dumps({"run_error": str(exc).strip().splitlines()[-1][:300]}), flush=True)
    print(json.dumps({"profile": sess.end_profiling()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
