#!/usr/bin/env python3
"""Which inputs and outputs of ORT's CUDA kernels live in host memory, read from ORT's kernel registrations.

A CUDA kernel's KernelDef says `.InputMemoryType(OrtMemTypeCPUInput, i)` / `.OutputMemoryType(OrtMemTypeCPUOutput,
i)` for the inputs it reads from and the outputs it writes to host memory (Reshape's shape, GroupQueryAttention's
total_sequence_length). ORT's Python API does not expose them (KernelDef has op_name, domain, version_range,
type_constraints, provider), so they are read from the registration macros in ORT's sources:
onnxruntime/core/providers/cuda/** and onnxruntime/contrib_ops/cuda/** (ONNX_OPERATOR_[VERSIONED_][TYPED_]KERNEL_EX
with kCudaExecutionProvider). GetCpuPreferredNodes (IsInputOnCpu / IsOutputOnCpu) and the Memcpy transformer read
them; onnxlint's copy is onnxlint/data/ort-cuda-memory.json (kernel_registry.cuda_memory).

    python tools/gen_cuda_memory.py SOURCE... [--merge] [--out onnxlint/data/ort-cuda-memory.json]

SOURCE: ORT source files or folders (an onnxruntime checkout's onnxruntime/contrib_ops/cuda, say), each with the
commit it was taken from as `PATH@COMMIT` when known. --merge keeps the ops already in the table that the
sources do not register (the table's ai.onnx rows were read from core/providers/cuda before this tool existed);
each op the sources register is written from them. The sources read are listed under "_sources".
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "onnxlint" / "data" / "ort-cuda-memory.json"
REGISTRATION = re.compile(r"ONNX_OPERATOR_(VERSIONED_)?(TYPED_)?KERNEL_EX\(\s*(\w+)\s*,\s*(\w+)\s*,\s*(\d+)")
CPU_INPUT = re.compile(r"InputMemoryType\(\s*OrtMemTypeCPUInput\s*,\s*(\d+)\s*\)")
ABOUT = ("Which inputs/outputs of ORT CUDA kernels live in host (CPU) memory. Read from the kernel registrations in "
         "onnxruntime/core/providers/cuda/** and onnxruntime/contrib_ops/cuda/** (tools/gen_cuda_memory.py; _sources): each "
         "`.InputMemoryType(OrtMemTypeCPUInput, i)` / `.OutputMemoryType(OrtMemTypeCPUOutput, i)` call. OperatorKernels.md "
         "does not carry this; it drives ORT's GetCpuPreferredNodes (IsInputOnCpu / IsOutputOnCpu) and where Memcpy nodes "
         "go. `since` limits an entry to kernels of that since-version and later.")
CPU_OUTPUT = re.compile(r"OutputMemoryType\(\s*OrtMemTypeCPUOutput\s*,\s*(\d+)\s*\)")


def _call_end(text: str, start: int) -> int:
    """The index just past the parenthesis that closes the call opened at text[start - 1]."""
    depth = 1
    i = start
    while i < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    return i


def registrations(text: str) -> list[tuple[str, int, list[int], list[int]]]:
    """(op, since version, host-memory inputs, host-memory outputs) of each CUDA kernel registered in text."""
    found = []
    text = text.replace("\\\n", "\n")  # a registration inside a #define continues its lines with backslashes
    for m in REGISTRATION.finditer(text):
        body = text[m.start():_call_end(text, m.end())]
        if "kCudaExecutionProvider" not in body:
            continue
        found.append((m.group(3), int(m.group(5)), sorted({int(x) for x in CPU_INPUT.findall(body)}),
                      sorted({int(x) for x in CPU_OUTPUT.findall(body)})))
    return found


def read(sources: list[str]) -> tuple[dict[str, dict], dict[str, list[int]], list[str]]:
    inputs: dict[str, dict] = {}
    outputs: dict[str, list[int]] = {}
    names = []
    for spec in sources:
        path_s, _, commit = spec.partition("@")
        path = Path(path_s)
        files = sorted(path.rglob("*.cc")) if path.is_dir() else [path]
        shown = path_s[path_s.find("onnxruntime/"):] if "onnxruntime/" in path_s else path_s  # from the checkout's root
        names.append(f"{shown}@{commit}" if commit else shown)
        for f in files:
            for op, since, ins, outs in registrations(f.read_text(errors="replace")):
                if ins:
                    spec_in = inputs.setdefault(op, {"inputs": []})
                    spec_in["inputs"] = sorted(set(spec_in["inputs"]) | set(ins))
                    spec_in["since"] = min(spec_in.get("since", since), since)
                if outs:
                    outputs[op] = sorted(set(outputs.get(op, [])) | set(outs))
    for spec_in in inputs.values():
        if spec_in.get("since") == 1:
            del spec_in["since"]  # every version
    return inputs, outputs, names


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sources", nargs="+")
    ap.add_argument("--merge", action="store_true", help="keep the table's ops the sources do not register")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    inputs, outputs, names = read(args.sources)
    if not inputs and not outputs:
        print(f"{', '.join(args.sources)}: no CUDA kernel registration with a host-memory input or output", file=sys.stderr)
        return 2
    table = json.loads(args.out.read_text()) if args.merge and args.out.exists() else {"_about": "", "cpu_outputs": {}, "cpu_inputs": {}}
    table["_about"] = ABOUT
    table["cpu_inputs"].update(inputs)
    table["cpu_outputs"].update(outputs)
    table["_sources"] = sorted(set(table.get("_sources", [])) | set(names))
    args.out.write_text(json.dumps(table, indent=1) + "\n")
    print(f"{args.out}: {len(inputs)} ops with host-memory inputs, {len(outputs)} with host-memory outputs from {', '.join(names)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
