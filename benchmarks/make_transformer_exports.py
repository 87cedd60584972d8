#!/usr/bin/env python3
"""Export transformer / LLM models to ONNX the way their users do, with random weights from small configs.

Why: most models deployed on ONNX Runtime CUDA are transformers prepared with Hugging Face and ONNX Runtime tools
(issue 31); the CNN-heavy set (make_exports.py, make_torchvision_exports.py) does not show their ops (contrib
fusions, SimplifiedLayerNormalization, GroupQueryAttention, MatMulNBits, merged KV-cache decoders with If).
Nothing is downloaded from a model hub: every model is `from_config` with torch.manual_seed(0).

Stages (each needs its own venv, see benchmarks/README.md; every stage skips what exists unless --force):
  hf       transformers from_config -> torch.onnx.export TorchScript opset 14 and 17, dynamo opset 18
           -> bench-out/models/hf-torchscript/<family>_ts_op<N>.onnx, hf-dynamo/<family>_dy_op18.onnx
  optimum  optimum's exporter with KV cache (merged decoder with If)       -> optimum/<family>/*.onnx
  ortopt   python -m onnxruntime.transformers.optimizer, fused fp32 and --float16 of hf / optimum exports
           -> ort-optimizer/<model>_ortopt_<fp32|fp16>.onnx
  fp16     onnxconverter_common.float16.convert_float_to_float16 (keep_io_types) -> fp16-converter/<model>_fp16.onnx
  genai    onnxruntime_genai.models.builder: int4/fp16 cuda, fp32/int4 cpu    -> genai-builder/<family>_<prec>_<ep>/
  timm     timm.create_model(pretrained=False), TorchScript opset 17         -> timm/<model>_ts_op17.onnx
  yolo     ultralytics YOLO(<yaml>).export (YOLO_OFFLINE=1): default, dynamic, opset 12, nms -> ultralytics/*.onnx

usage:
  VENV/bin/python benchmarks/make_transformer_exports.py STAGE [--only NAME ...] [--force]

Exporters' stack traces (dynamo node metadata, doc strings) carry absolute paths of this checkout and the venv:
they are scrubbed to `<checkout>` / `<venv>` so the models do not depend on where they were made.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

from export_manifest import OUT, first_error_line, merge_manifest, quiet, read_part, write_part
from export_manifest import log_fail as _log_fail

LOG_NAME = "make_transformer_exports.log"
ROOT = Path(__file__).resolve().parents[1]

# hidden 64, 2 layers, 4 heads: small and fast, yet every block and fusion pattern of the architecture is there
TEXT = dict(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
            max_position_embeddings=128)
DECODER = dict(TEXT, num_key_value_heads=2, pad_token_id=0, bos_token_id=1, eos_token_id=2)


def log_fail(msg: str) -> None:
    _log_fail(msg, LOG_NAME)


def scrub(path: Path) -> None:
    """Absolute paths in node metadata / doc strings -> placeholders (dynamo exports embed stack traces)."""
    import onnx
    venv = sys.prefix
    m = onnx.load(str(path), load_external_data=False)
    changed = False

    def fix(s: str) -> str:
        return s.replace(str(ROOT), "<checkout>").replace(venv, "<venv>").replace(str(Path.home()), "<home>")

    def walk(g):
        nonlocal changed
        for n in g.node:
            for p in n.metadata_props:
                v = fix(p.value)
                if v != p.value:
                    p.value, changed = v, True
            if n.doc_string and fix(n.doc_string) != n.doc_string:
                n.doc_string, changed = fix(n.doc_string), True
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
                for sg in a.graphs:
                    walk(sg)
    walk(m.graph)
    for f in m.functions:
        walk(f)
    if fix(m.doc_string) != m.doc_string:
        m.doc_string, changed = fix(m.doc_string), True
    if changed:
        onnx.save(m, str(path))


# ----------------------------------------------------------------------------------------------- stage hf

def hf_specs():
    """family -> (make_model, make_inputs, input names, dynamic axes). Imported lazily: each stage has its venv."""
    import torch
    import transformers as tf

    ids = lambda b=2, s=16: torch.randint(3, 1000, (b, s))  # noqa: E731
    mask = lambda b=2, s=16: torch.ones(b, s, dtype=torch.long)  # noqa: E731
    seq = {0: "batch", 1: "sequence"}
    img = {0: "batch"}
    text_in = (lambda: (ids(), mask()), ["input_ids", "attention_mask"], {"input_ids": seq, "attention_mask": seq})
    pix = lambda s=64: (torch.randn(2, 3, s, s),)  # noqa: E731
    vision = dict(image_size=64, num_channels=3)
    s2s_in = (lambda: (ids(), mask(), ids(2, 8)), ["input_ids", "attention_mask", "decoder_input_ids"],
              {"input_ids": seq, "attention_mask": seq, "decoder_input_ids": {0: "batch", 1: "decoder_sequence"}})

    def llm(cls, cfg_cls, **kw):
        return lambda: cls(cfg_cls(**{**DECODER, **kw}))

    specs = {
        "bert": (lambda: tf.BertModel(tf.BertConfig(**TEXT)), *text_in),
        "roberta": (lambda: tf.RobertaModel(tf.RobertaConfig(**{**TEXT, "max_position_embeddings": 130,
                                                                  "pad_token_id": 1})), *text_in),
        "distilbert": (lambda: tf.DistilBertModel(tf.DistilBertConfig(vocab_size=1000, dim=64, n_layers=2, n_heads=4,
                                                                      hidden_dim=128, max_position_embeddings=128)),
                       *text_in),
        "gpt2": (lambda: tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=1000, n_embd=64, n_layer=2, n_head=4,
                                                          n_positions=128, use_cache=False)), *text_in),
        "llama": (llm(tf.LlamaForCausalLM, tf.LlamaConfig, use_cache=False), *text_in),
        "mistral": (llm(tf.MistralForCausalLM, tf.MistralConfig, use_cache=False, sliding_window=None), *text_in),
        "qwen2": (llm(tf.Qwen2ForCausalLM, tf.Qwen2Config, use_cache=False), *text_in),
        "phi3": (llm(tf.Phi3ForCausalLM, tf.Phi3Config, use_cache=False, pad_token_id=0,  # short RoPE: the
                     original_max_position_embeddings=128), *text_in),  # GenAI builder's LongRoPE needs factors
        "gemma": (llm(tf.GemmaForCausalLM, tf.GemmaConfig, use_cache=False, head_dim=16), *text_in),
        "t5": (lambda: tf.T5ForConditionalGeneration(tf.T5Config(vocab_size=1000, d_model=64, d_kv=16, d_ff=128,
                                                                 num_layers=2, num_heads=4, use_cache=False,
                                                                 decoder_start_token_id=0)), *s2s_in),
        "bart": (lambda: tf.BartForConditionalGeneration(tf.BartConfig(
            vocab_size=1000, d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
            decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128, max_position_embeddings=128,
            use_cache=False)), *s2s_in),
        "whisper": (lambda: tf.WhisperForConditionalGeneration(tf.WhisperConfig(
            vocab_size=1000, d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
            decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128, num_mel_bins=80,
            max_source_positions=50, max_target_positions=64, use_cache=False, pad_token_id=0,
            decoder_start_token_id=1)),
            lambda: (torch.randn(2, 80, 100), ids(2, 8)), ["input_features", "decoder_input_ids"],
            {"input_features": {0: "batch"}, "decoder_input_ids": {0: "batch", 1: "decoder_sequence"}}),
        "vit": (lambda: tf.ViTForImageClassification(tf.ViTConfig(**TEXT, **vision, patch_size=16)), pix,
                ["pixel_values"], {"pixel_values": img}),
        "deit": (lambda: tf.DeiTForImageClassification(tf.DeiTConfig(**TEXT, **vision, patch_size=16)), pix,
                 ["pixel_values"], {"pixel_values": img}),
        "swin": (lambda: tf.SwinForImageClassification(tf.SwinConfig(image_size=64, patch_size=4, embed_dim=32,
                                                                     depths=[2, 2], num_heads=[2, 4], window_size=4)),
                 pix, ["pixel_values"], {"pixel_values": img}),
        "convnext": (lambda: tf.ConvNextForImageClassification(tf.ConvNextConfig(hidden_sizes=[16, 32, 64, 128],
                                                                                 depths=[1, 1, 2, 1])),
                     pix, ["pixel_values"], {"pixel_values": img}),
        "segformer": (lambda: tf.SegformerForSemanticSegmentation(tf.SegformerConfig(
            hidden_sizes=[16, 32, 64, 128], depths=[1, 1, 1, 1], num_attention_heads=[1, 2, 4, 8],
            decoder_hidden_size=64)), pix, ["pixel_values"], {"pixel_values": {0: "batch", 2: "height", 3: "width"}}),
        "clip": (lambda: tf.CLIPModel(tf.CLIPConfig(
            text_config=dict(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                             intermediate_size=128, max_position_embeddings=32),
            vision_config=dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                               image_size=64, patch_size=16), projection_dim=32)),
            lambda: (ids(), pix()[0], mask()), ["input_ids", "pixel_values", "attention_mask"],
            {"input_ids": seq, "pixel_values": img, "attention_mask": seq}),
        "wav2vec2": (lambda: tf.Wav2Vec2ForCTC(tf.Wav2Vec2Config(
            vocab_size=32, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
            conv_dim=(32, 32, 32), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3), num_conv_pos_embeddings=16,
            num_conv_pos_embedding_groups=4)),
            lambda: (torch.randn(2, 4000),), ["input_values"], {"input_values": {0: "batch", 1: "samples"}}),
    }
    return specs


def _wrapped(model, names):
    """forward(*tensors) -> the model's output tensors (return_dict off), so both exporters see plain tensors."""
    import torch

    class W(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = model

        def forward(self, *args):
            out = self.m(**dict(zip(names, args)), return_dict=False)
            return tuple(o for o in out if isinstance(o, torch.Tensor))
    return W().eval()


def _vmap_free_masks():
    """transformers >= 4.53 builds causal masks with vmap, which TorchScript cannot trace: use optimum's masks."""
    import transformers.masking_utils as mu
    from optimum.exporters.onnx.model_patcher import eager_mask_without_vmap, find_packed_sequence_indices_patched, sdpa_mask_without_vmap
    mu.ALL_MASK_ATTENTION_FUNCTIONS.register("sdpa", sdpa_mask_without_vmap)
    mu.ALL_MASK_ATTENTION_FUNCTIONS.register("eager", eager_mask_without_vmap)
    mu.find_packed_sequence_indices = find_packed_sequence_indices_patched


def stage_hf(a) -> None:
    import torch
    import transformers
    _vmap_free_masks()
    jobs = []
    for fam, (make, inputs, names, dyn) in hf_specs().items():
        for tag, opset, src in (("ts", 14, "hf-torchscript"), ("ts", 17, "hf-torchscript"), ("dy", 18, "hf-dynamo")):
            jobs.append((f"{fam}_{tag}_op{opset}", src, fam, opset, tag, make, inputs, names, dyn))
    ver = f"torch {torch.__version__} transformers {transformers.__version__}"

    def export(job, path):
        name, src, fam, opset, tag, make, inputs, names, dyn = job
        torch.manual_seed(0)
        m = _wrapped(make().eval(), names)
        args = inputs()
        if tag == "ts":
            torch.onnx.export(m, args, str(path), dynamo=False, opset_version=opset, input_names=names,
                              dynamic_axes=dyn)
            return f"torch.onnx.export(dynamo=False) {ver}"
        from torch.export import Dim
        dims: dict = {}
        ds = tuple({ax: dims.setdefault(d, Dim(d)) for ax, d in dyn.get(n, {}).items()} or None for n in names)
        try:
            prog = torch.onnx.export(m, args, dynamo=True, opset_version=opset, input_names=names,
                                     dynamic_shapes=(ds,), external_data=False)
            note = ""
        except Exception:  # noqa: BLE001 - users retry without dynamic shapes; so do we, and say so
            prog = torch.onnx.export(m, args, dynamo=True, opset_version=opset, input_names=names,
                                     external_data=False)
            note = "static shapes (dynamic_shapes export failed)"
        prog.save(str(path), external_data=False)
        return f"torch.onnx.export(dynamo=True) {ver}" + (f"\t{note}" if note else "")

    run_jobs(a, jobs, export)


def run_jobs(a, jobs, export, folder: bool = False, log_name: str = LOG_NAME) -> None:
    """Run (name, source, family, opset, ...) jobs through export(job, path) -> exporter[\tnote]; keep part files.

    folder: the job writes a folder <name>/ (optimum, GenAI builder: several .onnx, external data, genai_config)
    and every .onnx in it becomes a manifest row <name>/<file>. log_name: the failure log (bench-out/logs/) of the
    calling script."""
    ok = fail = skip = 0
    parts: dict[str, dict] = {}
    for job in jobs:
        name, src, fam, opset = job[:4]
        if a.only and name not in a.only and fam not in a.only:
            continue
        d = OUT / src
        d.mkdir(parents=True, exist_ok=True)
        rows = parts.setdefault(src, read_part(d / "_manifest.part.tsv"))
        path = d / f"{name}.onnx"
        mine = [k for k in rows if k == name or k.startswith(name + "/")]
        if (path.with_suffix("").is_dir() if folder else path.exists()) and not a.force and mine:
            skip += 1
            continue
        for k in mine:
            rows.pop(k)
        t0 = time.time()
        try:
            with quiet():
                exporter = export(job, path)
            exporter, _, note = exporter.partition("\t")
            files = sorted(path.with_suffix("").glob("*.onnx")) if folder else [path]
            size = 0
            for f in files:
                scrub(f)
                size += sum(q.stat().st_size for q in f.parent.glob(f.name + "*"))
                key = f"{name}/{f.stem}" if folder else name
                rows[key] = (key, f.relative_to(OUT).as_posix(), src, str(opset or ""), exporter, fam, note)
            ok += 1
            print(f"ok   {src}/{name} ({time.time() - t0:.1f}s, {len(files)} file(s), {size / 1e6:.1f} MB)",
                  flush=True)
        except Exception as e:  # noqa: BLE001
            path.unlink(missing_ok=True)
            if folder:
                shutil.rmtree(path.with_suffix(""), ignore_errors=True)
            fail += 1
            msg = f"FAIL {src}/{name} ({time.time() - t0:.0f}s): {first_error_line(e)}"
            print(msg, flush=True)
            _log_fail(msg, log_name)
            if a.verbose:
                traceback.print_exc()
        write_part(d / "_manifest.part.tsv", rows.values())
    print(f"ok={ok} skipped(existing)={skip} failed={fail}")


# ----------------------------------------------------------------------------------------------- stage optimum

OPTIMUM = {  # family -> optimum task (the -with-past tasks give KV-cache decoders; seq2seq ones are merged with If)
    "gpt2": "text-generation-with-past", "llama": "text-generation-with-past", "qwen2": "text-generation-with-past",
    "phi3": "text-generation-with-past", "t5": "text2text-generation-with-past",
    "bart": "text2text-generation-with-past", "whisper": "automatic-speech-recognition-with-past",
    "bert": "feature-extraction", "vit": "image-classification",
}

OPTIMUM_SHAPES = {"whisper": {"nb_max_frames": 100}}  # dummy-input shapes that fit the small configs


def save_pretrained(fam: str, d: Path, tokenizer: bool = False) -> None:
    """A from_config model with random weights, saved as a user's local model folder (config + safetensors);
    tokenizer: also a word-level fast tokenizer of the config's vocabulary (the GenAI builder saves one)."""
    import torch
    torch.manual_seed(0)
    model = hf_specs()[fam][0]()
    model.config.use_cache = True
    model.save_pretrained(str(d))
    if tokenizer:
        from tokenizers import Tokenizer, models, pre_tokenizers
        from transformers import PreTrainedTokenizerFast
        vocab = {"<pad>": 0, "<s>": 1, "</s>": 2, "<unk>": 3}
        vocab.update({f"w{i}": i for i in range(4, model.config.vocab_size)})
        tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
                                unk_token="<unk>").save_pretrained(str(d))


def stage_optimum(a) -> None:
    from importlib.metadata import version

    import optimum.exporters.onnx as oe
    import transformers
    ver = f"optimum-onnx {version('optimum-onnx')} transformers {transformers.__version__}"
    jobs = [(fam, "optimum", fam, 0, task) for fam, task in OPTIMUM.items()]
    os.environ["HF_HUB_OFFLINE"] = "1"

    def export(job, path: Path) -> str:
        fam, _, _, _, task = job
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "model"
            save_pretrained(fam, src)
            out = Path(tmp) / "onnx"
            oe.main_export(str(src), output=str(out), task=task, do_validation=False,
                           **OPTIMUM_SHAPES.get(fam, {}))
            files = sorted(out.glob("*.onnx"))
            if not files:
                raise RuntimeError("optimum wrote no .onnx")
            d = path.with_suffix("")
            shutil.rmtree(d, ignore_errors=True)
            d.mkdir(parents=True)
            for f in files:
                shutil.copy(f, d / f.name)
                for data in out.glob(f.name + "*data"):
                    shutil.copy(data, d / data.name)
        return f"optimum main_export(task={task}) {ver}"

    run_jobs(a, jobs, export, folder=True)


# ----------------------------------------------------------------------------------------------- stage ortopt

ORTOPT = {  # hf family -> onnxruntime.transformers.optimizer --model_type (decoders with RMSNorm: bert's fusions)
    "bert": "bert", "roberta": "bert", "distilbert": "bert", "gpt2": "gpt2", "bart": "bart", "t5": "t5",
    "vit": "vit", "swin": "swin", "clip": "clip", "llama": "bert", "phi3": "bert", "qwen2": "bert",
}


def stage_ortopt(a) -> None:
    import onnxruntime
    jobs = []
    for fam, mtype in ORTOPT.items():
        for prec in ("fp32", "fp16"):
            src_model = OUT / "hf-torchscript" / f"{fam}_ts_op17.onnx"
            jobs.append((f"{fam}_ts_op17_ortopt_{prec}", "ort-optimizer", fam, 17, mtype, prec, src_model))
    for fam in ("gpt2", "llama"):
        for prec in ("fp32", "fp16"):
            src_model = OUT / "optimum" / fam / "model.onnx"
            jobs.append((f"{fam}_optimum_kv_ortopt_{prec}", "ort-optimizer", fam, 0, ORTOPT[fam], prec, src_model))

    def export(job, path: Path) -> str:
        _, _, fam, _, mtype, prec, src_model = job
        if not src_model.exists():
            raise FileNotFoundError(f"{src_model.relative_to(OUT)} (run the stage that makes it first)")
        cmd = [sys.executable, "-m", "onnxruntime.transformers.optimizer", "--input", str(src_model),
               "--output", str(path), "--model_type", mtype, "--num_heads", "4", "--hidden_size", "64"]
        if prec == "fp16":
            cmd += ["--float16", "--use_gpu"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode or not path.exists():
            raise RuntimeError((p.stderr or p.stdout).strip().splitlines()[-1] if (p.stderr or p.stdout) else "failed")
        return f"onnxruntime.transformers.optimizer --model_type {mtype}" + \
            (" --float16 --use_gpu" if prec == "fp16" else "") + f" (onnxruntime {onnxruntime.__version__})"

    run_jobs(a, jobs, export)


# ----------------------------------------------------------------------------------------------- stage fp16

def stage_fp16(a) -> None:
    from importlib.metadata import version

    import onnx
    from onnxconverter_common import float16
    jobs = [(f"{fam}_ts_op17_fp16", "fp16-converter", fam, 17) for fam in
            ("bert", "gpt2", "llama", "t5", "whisper", "vit", "clip", "segformer", "wav2vec2")]

    def export(job, path: Path) -> str:
        fam = job[2]
        m = onnx.load(str(OUT / "hf-torchscript" / f"{fam}_ts_op17.onnx"))
        onnx.save(float16.convert_float_to_float16(m, keep_io_types=True), str(path))
        return f"onnxconverter_common.float16.convert_float_to_float16(keep_io_types=True) {version('onnxconverter-common')}"

    run_jobs(a, jobs, export)


# ----------------------------------------------------------------------------------------------- stage genai

GENAI = ("llama", "mistral", "qwen2", "phi3", "gemma")
GENAI_BUILDS = (("int4", "cuda"), ("fp16", "cuda"), ("fp32", "cpu"), ("int4", "cpu"))


def stage_genai(a) -> None:
    from importlib.metadata import version
    ver = f"onnxruntime-genai {version('onnxruntime-genai')} builder, transformers {version('transformers')}"
    jobs = [(f"{fam}_{prec}_{ep}", "genai-builder", fam, 0, prec, ep) for fam in GENAI for prec, ep in GENAI_BUILDS]
    os.environ["HF_HUB_OFFLINE"] = "1"

    def export(job, path: Path) -> str:
        name, _, fam, _, prec, ep = job
        d = path.with_suffix("")
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "model"
            save_pretrained(fam, src, tokenizer=True)
            shutil.rmtree(d, ignore_errors=True)
            cmd = [sys.executable, "-m", "onnxruntime_genai.models.builder", "-i", str(src), "-o", str(d),
                   "-p", prec, "-e", ep, "-c", str(Path(tmp) / "cache")]
            p = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
            if p.returncode or not (d / "model.onnx").exists():
                lines = [ln for ln in (p.stderr + p.stdout).splitlines() if ln.strip()]
                errors = [ln for ln in lines if "Error" in ln or "Exception" in ln]
                raise RuntimeError(" | ".join(errors[-2:] or lines[-3:]) or "builder failed")
        return f"{ver} -p {prec} -e {ep}"

    run_jobs(a, jobs, export, folder=True)


# ----------------------------------------------------------------------------------------------- stage timm

TIMM = ("resnet18", "efficientnet_b0", "mobilenetv3_small_100", "convnext_atto", "vit_tiny_patch16_224",
        "deit_tiny_patch16_224", "swin_tiny_patch4_window7_224", "regnety_002", "levit_128s", "mobilevit_xxs")


def stage_timm(a) -> None:
    import timm
    import torch
    jobs = [(f"{name}_ts_op17", "timm", name, 17) for name in TIMM]

    def export(job, path: Path) -> str:
        torch.manual_seed(0)
        m = timm.create_model(job[2], pretrained=False).eval()
        size = m.default_cfg.get("input_size", (3, 224, 224))
        torch.onnx.export(m, (torch.randn(1, *size),), str(path), dynamo=False, opset_version=17,
                          input_names=["input"], dynamic_axes={"input": {0: "batch"}})
        return f"torch.onnx.export(dynamo=False) torch {torch.__version__} timm {timm.__version__}"

    run_jobs(a, jobs, export)


# ----------------------------------------------------------------------------------------------- stage yolo

YOLO = {"default": {}, "dynamic": {"dynamic": True}, "opset12": {"opset": 12}, "nms": {"nms": True}}


def stage_yolo(a) -> None:
    os.environ["YOLO_OFFLINE"] = "1"
    import torch
    import ultralytics
    jobs = [(f"{arch}_{variant}", "ultralytics", arch, kw.get("opset", 0), kw) for arch in ("yolov8n", "yolo11n")
            for variant, kw in YOLO.items()]

    def export(job, path: Path) -> str:
        arch, kw = job[2], job[4]
        with tempfile.TemporaryDirectory() as tmp:
            cwd = os.getcwd()
            os.chdir(tmp)
            try:
                torch.manual_seed(0)
                out = ultralytics.YOLO(f"{arch}.yaml").export(format="onnx", **kw)
            finally:
                os.chdir(cwd)
            shutil.move(str(Path(tmp) / out), path)  # ultralytics answers a path relative to its cwd
        args = ", ".join(f"{k}={v}" for k, v in kw.items())
        return f"ultralytics {ultralytics.__version__} YOLO('{arch}.yaml').export(format=onnx{', ' if args else ''}{args})" \
            f" torch {torch.__version__}"

    run_jobs(a, jobs, export)


# ----------------------------------------------------------------------------------------------- main

STAGES = {"hf": stage_hf, "optimum": stage_optimum, "ortopt": stage_ortopt, "fp16": stage_fp16, "genai": stage_genai,
          "timm": stage_timm, "yolo": stage_yolo}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stage", choices=sorted(STAGES))
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--force", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    t0 = time.time()
    STAGES[a.stage](a)
    merge_manifest()
    print(f"done in {time.time() - t0:.0f}s")


if __name__ == "__main__":
    main()
