#!/usr/bin/env bash
# Confirm the static CUDA placement prediction with real CUDA sessions, on a machine with an NVIDIA GPU.
#
#   benchmarks/gpu_verify.sh [WHEEL_DIR]
#
# Runs from the source tree (no build step) in its own venv (.gpu-venv, seeing the machine's packages), so
# the machine's Python is never changed. Missing packages come from WHEEL_DIR (default: ./wheels, or
# $ONNXLINT_WHEELS) with --no-index, else from the package index; onnxruntime-gpu goes into the venv when
# the machine's onnxruntime has no CUDA EP. Prints `onnxlint doctor`, then a confirmed / missed /
# false-alarm table for examples/*.onnx and ../shared/corpus/models/*.onnx.
# Stops starting new models after 13 minutes so the whole run stays under 15.
set -u
cd "$(dirname "$0")/.."
START=$SECONDS
BUDGET=${GPU_VERIFY_BUDGET_S:-780}
WHEELS=${1:-${ONNXLINT_WHEELS:-wheels}}
BASE_PY=${PYTHON:-python3}
OUT=${OUT:-$(mktemp -d)}
[ -x .gpu-venv/bin/python ] || "$BASE_PY" -m venv --system-site-packages .gpu-venv || exit 2
PY=.gpu-venv/bin/python
FIND=()
[ -d "$WHEELS" ] && FIND=(--find-links "$WHEELS")

pip_get() {  # carried wheels first, then the index
  "$PY" -m pip install -q --disable-pip-version-check --no-index "${FIND[@]}" "$@" 2>/dev/null ||
    "$PY" -m pip install -q --disable-pip-version-check "${FIND[@]}" "$@"
}

"$PY" -c "import onnx, numpy, yaml, onnx_graphsurgeon" 2>/dev/null ||
  pip_get onnx numpy pyyaml onnx-graphsurgeon "ml_dtypes<0.7" || { echo "cannot install onnxlint's dependencies"; exit 2; }
if ! "$PY" -c "import onnxruntime as o, sys; sys.exit('CUDAExecutionProvider' not in o.get_available_providers())" 2>/dev/null; then
  pip_get onnxruntime-gpu || { echo "cannot install onnxruntime-gpu (no wheel in $WHEELS, no index)"; exit 2; }
fi

export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
echo "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -4
"$PY" -c "import onnxruntime as o; print('onnxruntime', o.__version__, o.get_available_providers())"
echo "== onnxlint doctor"
timeout 120 "$PY" -m onnxlint doctor

echo "== verify (CUDAExecutionProvider, CPUExecutionProvider)"
: > "$OUT/verify.jsonl"
for m in examples/*.onnx ../shared/corpus/models/*.onnx; do
  [ -f "$m" ] || continue
  left=$((BUDGET - (SECONDS - START)))
  if [ "$left" -lt 20 ]; then echo "time budget spent; skipped $m and the rest"; break; fi
  per=$(( left < 180 ? left : 180 ))
  timeout "$((per + 10))" "$PY" -m onnxlint verify "$m" --format json --timeout "$per" >> "$OUT/verify.jsonl" 2>> "$OUT/verify.err" ||
    true  # exit 1 = misses or a failed session, both in the JSON
done

"$PY" - "$OUT/verify.jsonl" <<'PYEOF'
import json, sys
tot = {"confirmed": 0, "missed": 0, "false_alarms": 0, "observed": 0}
text = open(sys.argv[1]).read().strip()
entries = []
dec = json.JSONDecoder()
i = 0
while i < len(text):
    obj, i = dec.raw_decode(text, i)
    entries.extend(obj)
    while i < len(text) and text[i].isspace():
        i += 1
why = next((e["cuda_unavailable"] for e in entries if "cuda_unavailable" in e), None)
if why:
    print(f"NOTE: the CUDA EP was not exercised, nothing was compared: {why}")
print(f"{'model':<48} {'observed':>8} {'on CPU':>6} {'confirmed':>9} {'missed':>6} {'false al.':>9}")
for e in entries:
    name = e["filename"].rsplit("/", 1)[-1][:48]
    if "error" in e or "cuda_unavailable" in e:
        print(f"{name:<48} not verified: {e.get('error', 'CUDA EP not exercised')[:110]}")
        continue
    print(f"{name:<48} {e['nodes_observed']:>8} {e['on_cpu']:>6} {len(e['confirmed']):>9} {len(e['missed']):>6} {len(e['false_alarms']):>9}")
    details = {d["location"]: d for d in e["details"]}
    for k in ("missed", "false_alarms"):
        for n in e[k]:
            d = details[n]
            print(f"    {k}: {n} {d['op_type']} predicted {d['predicted_ep']}, ran on {d['ran_on']}")
    if e.get("run_error"):
        print(f"    run failed (placement from the session log): {e['run_error'][:100]}")
    tot["confirmed"] += len(e["confirmed"]); tot["missed"] += len(e["missed"])
    tot["false_alarms"] += len(e["false_alarms"]); tot["observed"] += e["nodes_observed"]
print(f"{'total':<48} {tot['observed']:>8} {'':>6} {tot['confirmed']:>9} {tot['missed']:>6} {tot['false_alarms']:>9}")
PYEOF
echo "raw results: $OUT/verify.jsonl (stderr: $OUT/verify.err); $((SECONDS - START)) s"
