#!/usr/bin/env python3
"""Export models the way the users of other producers make them: TensorFlow/Keras and TFLite through tf2onnx,
Hugging Face TF models, scikit-learn / LightGBM / XGBoost through skl2onnx and onnxmltools, ORT's quantization
tool, diffusers with both torch exporters, the newest opsets (20-23) through dynamo and onnxscript, paddle2onnx.

Why: the CNN and transformer sets (make_exports.py, make_transformer_exports.py) are torch exports; ORT CUDA and
TensorRT users also deploy these producers' graphs (NHWC Transposes, ai.onnx.ml ops, QLinear/QDQ/16-bit/int4
quantization, MatMulNBits, Attention-23, float8), whose placement and parser behaviour issue 41 measures.
Random weights from small configs, nothing downloaded from a model hub.

Stages (each needs its own venv, see benchmarks/README.md; every stage skips what exists unless --force):
  keras      tf.keras.applications (weights=None) via tf2onnx.convert.from_keras and small Keras text models via
             `python -m tf2onnx.convert --saved-model`, opsets 13/15/17, dynamic batch  -> tf2onnx-keras/
  tflite     TFLite float / float16 / dynamic-range / full-integer int8 (float and int8 I/O) via
             `python -m tf2onnx.convert --tflite`                                       -> tflite/
  hftf       transformers TF models from small configs via tf2onnx.convert.from_function -> hf-tf/
  sklearn    skl2onnx pipelines and onnxmltools LightGBM / XGBoost                      -> skl2onnx/, onnxmltools/
  diffusers  diffusers UNet / VAE encoder / VAE decoder / CLIP text encoder: TorchScript, dynamo, optimum
                                                              -> diffusers-torchscript/, diffusers-dynamo/, diffusers-optimum/
  newops     dynamo exports at opsets 20-23 and onnxscript-built models of the opset 20-23 ops   -> opset20-23/
  quant      onnxruntime.quantization on float models (keras, torch CNN / transformer): static QDQ per-tensor
             and per-channel, QOperator, 16-bit QDQ (com.microsoft), dynamic, MatMulNBits 4/8 bits, int4 QDQ
                                                                                        -> ort-quant/
  paddle     paddle.vision / paddle.nn models via paddle.jit.save + paddle2onnx         -> paddle2onnx/
  layout     --dest DIR: symlinks DIR/ort/<source>__<name>/model.onnx and DIR/trt/<name>/model.onnx, the folders
             the ORT CUDA and TensorRT truth harnesses read

usage:
  VENV/bin/python benchmarks/make_producer_exports.py STAGE [--only NAME ...] [--force] [-v]

A model's manifest name is unique over the whole set (the TensorRT truth is keyed by it); the ORT truth's test
name is `<source>__<name>`.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from export_manifest import OUT, merge_manifest  # noqa: E402
from make_transformer_exports import run_jobs  # noqa: E402

LOG_NAME = "make_producer_exports.log"
SCRATCH = Path(os.environ.get("PRODUCER_SCRATCH", "/tmp/producer-exports"))


def vers(*pkgs: str) -> str:
    """'pkg x.y.z ...' of the installed packages (the manifest's exporter column)."""
    out = []
    for p in pkgs:
        try:
            out.append(f"{p} {version(p)}")
        except Exception:  # noqa: BLE001
            pass
    return " ".join(out)


def run(cmd: list[str], **kw) -> None:
    """A converter's command line; its last error lines become the failure text."""
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode:
        lines = [ln for ln in (p.stderr + p.stdout).splitlines() if ln.strip()]
        errs = [ln for ln in lines if "Error" in ln or "error" in ln or "Exception" in ln]
        raise RuntimeError(" | ".join((errs or lines)[-3:]) or f"exit {p.returncode}")


def jobs_run(a, jobs, export) -> None:
    run_jobs(a, jobs, export, log_name=LOG_NAME)


# ----------------------------------------------------------------------------------------------- stage keras

KERAS_APPS = {  # application -> opsets (weights=None, 224x224x3, the applications' own preprocessing layers)
    "MobileNetV2": (13, 17), "MobileNetV3Small": (13, 17), "ResNet50": (13, 17), "EfficientNetB0": (13, 17),
    "DenseNet121": (15,), "InceptionV3": (15,), "NASNetMobile": (13,),
}
KERAS_TEXT = ("embed_lstm", "embed_bigru", "embed_conv1d", "transformer_block")
TEXT_OPSETS = (13, 15, 17)


def keras_text_model(kind: str):
    import tensorflow as tf
    from tensorflow import keras
    L = keras.layers
    tf.random.set_seed(0)
    ids = keras.Input(shape=(None,), dtype="int32", name="input_ids")
    x = L.Embedding(1000, 64)(ids)
    if kind == "embed_lstm":
        x = L.LSTM(64)(x)
    elif kind == "embed_bigru":
        x = L.Bidirectional(L.GRU(32, return_sequences=True))(x)
        x = L.GlobalMaxPooling1D()(x)
    elif kind == "embed_conv1d":
        x = L.Conv1D(64, 5, padding="same", activation="relu")(x)
        x = L.MaxPooling1D(2)(x)
        x = L.Conv1D(64, 3, padding="same", activation="relu")(x)
        x = L.GlobalMaxPooling1D()(x)
        x = L.Dropout(0.2)(x)
    else:  # one encoder block of the Keras text-classification tutorial
        att = L.MultiHeadAttention(num_heads=4, key_dim=16)(x, x)
        x = L.LayerNormalization(epsilon=1e-6)(x + L.Dropout(0.1)(att))
        ff = L.Dense(64)(L.Dense(128, activation="relu")(x))
        x = L.LayerNormalization(epsilon=1e-6)(x + L.Dropout(0.1)(ff))
        x = L.GlobalAveragePooling1D()(x)
    out = L.Dense(2, activation="softmax")(L.Dense(32, activation="relu")(x))
    return keras.Model(ids, out)


def stage_keras(a) -> None:
    import tensorflow as tf
    jobs = [(f"keras_{app.lower()}_op{op}", "tf2onnx-keras", app, op, "app") for app, ops in KERAS_APPS.items()
            for op in ops]
    jobs += [(f"keras_{kind}_op{op}", "tf2onnx-keras", kind, op, "text") for kind in KERAS_TEXT for op in TEXT_OPSETS]
    jobs.append(("keras_mobilenetv2_nchw_op13", "tf2onnx-keras", "MobileNetV2", 13, "nchw"))
    ver = vers("tf2onnx", "tensorflow-cpu")

    def export(job, path: Path) -> str:
        name, _, fam, opset, kind = job
        tf.keras.backend.clear_session()
        tf.random.set_seed(0)
        if kind in ("app", "nchw"):
            model = getattr(tf.keras.applications, fam)(weights=None)
            if kind == "app":
                import tf2onnx
                spec = (tf.TensorSpec((None, *model.input_shape[1:]), tf.float32, name="input"),)
                tf2onnx.convert.from_keras(model, input_signature=spec, opset=opset, output_path=str(path))
                return f"tf2onnx.convert.from_keras(opset={opset}) {ver}"
        else:
            model = keras_text_model(fam)
        with tempfile.TemporaryDirectory(dir=SCRATCH) as tmp:  # the command line users run on a SavedModel
            model.save(tmp + "/saved", save_format="tf")
            cmd = [sys.executable, "-m", "tf2onnx.convert", "--saved-model", tmp + "/saved", "--output", str(path),
                   "--opset", str(opset)]
            if kind == "nchw":
                cmd += ["--inputs-as-nchw", model.input_names[0]] if hasattr(model, "input_names") else []
            run(cmd)
        return f"python -m tf2onnx.convert --saved-model{' --inputs-as-nchw' if kind == 'nchw' else ''} --opset {opset} {ver}"

    jobs_run(a, jobs, export)


# ----------------------------------------------------------------------------------------------- stage tflite

TFLITE_MODELS = ("mobilenet_v2", "small_cnn", "embed_conv1d")
TFLITE_MODES = ("float", "fp16", "drq", "int8", "int8io")


def tflite_model(kind: str):
    import tensorflow as tf
    from tensorflow import keras
    L = keras.layers
    tf.random.set_seed(0)
    if kind == "mobilenet_v2":
        return keras.applications.MobileNetV2(input_shape=(96, 96, 3), alpha=0.35, weights=None, classes=10)
    if kind == "small_cnn":
        i = keras.Input((64, 64, 3))
        x = L.Conv2D(16, 3, padding="same")(i)
        x = L.ReLU(6.0)(L.BatchNormalization()(x))
        x = L.DepthwiseConv2D(3, padding="same", activation="relu")(L.MaxPooling2D()(x))
        x = L.Conv2D(32, 1, activation="relu")(x)
        x = L.Concatenate()([x, L.AveragePooling2D(1)(x)])
        x = L.Reshape((-1,))(L.GlobalAveragePooling2D()(x))
        return keras.Model(i, L.Softmax()(L.Dense(10)(x)))
    m = keras_text_model("embed_conv1d")
    i = keras.Input((32,), dtype="int32")  # TFLite wants a fixed sequence length
    return keras.Model(i, m(i))


def stage_tflite(a) -> None:
    import numpy as np
    import tensorflow as tf
    jobs = [(f"tflite_{m}_{mode}", "tflite", m, 13, mode) for m in TFLITE_MODELS for mode in TFLITE_MODES
            if not (m == "embed_conv1d" and mode in ("fp16", "int8io"))]
    ver = vers("tf2onnx", "tensorflow-cpu")

    def export(job, path: Path) -> str:
        name, _, fam, opset, mode = job
        tf.keras.backend.clear_session()
        model = tflite_model(fam)
        conv = tf.lite.TFLiteConverter.from_keras_model(model)
        shape = [1, *model.input_shape[1:]]
        rng = np.random.default_rng(0)

        def rep():
            for _ in range(8):
                if fam == "embed_conv1d":
                    yield [rng.integers(0, 1000, shape).astype(np.int32)]
                else:
                    yield [rng.random(shape, dtype=np.float32)]
        if mode == "fp16":
            conv.optimizations = [tf.lite.Optimize.DEFAULT]
            conv.target_spec.supported_types = [tf.float16]
        elif mode == "drq":
            conv.optimizations = [tf.lite.Optimize.DEFAULT]
        elif mode in ("int8", "int8io"):
            conv.optimizations = [tf.lite.Optimize.DEFAULT]
            conv.representative_dataset = rep
            conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
            if mode == "int8io":
                conv.inference_input_type = tf.int8
                conv.inference_output_type = tf.int8
        with tempfile.TemporaryDirectory(dir=SCRATCH) as tmp:
            tfl = Path(tmp) / f"{name}.tflite"
            tfl.write_bytes(conv.convert())
            run([sys.executable, "-m", "tf2onnx.convert", "--tflite", str(tfl), "--output", str(path),
                 "--opset", str(opset)])
        return f"TFLiteConverter ({mode}) + python -m tf2onnx.convert --tflite --opset {opset} {ver}"

    jobs_run(a, jobs, export)


# ----------------------------------------------------------------------------------------------- stage hftf

HF_TEXT = dict(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
               max_position_embeddings=128)


def hftf_specs():
    import transformers as t
    vision = dict(image_size=64, num_channels=3, patch_size=16)
    return {  # family -> (model from config, "text" | "image", opsets)
        "bert": (lambda: t.TFBertModel(t.BertConfig(**HF_TEXT)), "text", (13, 17)),
        "distilbert": (lambda: t.TFDistilBertForSequenceClassification(t.DistilBertConfig(
            vocab_size=1000, dim=64, n_layers=2, n_heads=4, hidden_dim=128)), "text", (15,)),
        "roberta": (lambda: t.TFRobertaModel(t.RobertaConfig(**{**HF_TEXT, "max_position_embeddings": 130})), "text", (15,)),
        "albert": (lambda: t.TFAlbertModel(t.AlbertConfig(**HF_TEXT, embedding_size=32)), "text", (15,)),
        "electra": (lambda: t.TFElectraForSequenceClassification(t.ElectraConfig(**HF_TEXT, embedding_size=32)), "text", (15,)),
        "mobilebert": (lambda: t.TFMobileBertModel(t.MobileBertConfig(
            vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
            embedding_size=32, intra_bottleneck_size=32, true_hidden_size=32)), "text", (15,)),
        "gpt2": (lambda: t.TFGPT2LMHeadModel(t.GPT2Config(vocab_size=1000, n_embd=64, n_layer=2, n_head=4,
                                                          n_positions=128, use_cache=False)), "text", (13, 17)),
        "vit": (lambda: t.TFViTModel(t.ViTConfig(**HF_TEXT, **vision)), "image", (15,)),
        "convnext": (lambda: t.TFConvNextForImageClassification(t.ConvNextConfig(
            hidden_sizes=[16, 32, 64, 128], depths=[1, 1, 2, 1], image_size=64)), "image", (15,)),
    }


def stage_hftf(a) -> None:
    import tensorflow as tf
    import tf2onnx
    specs = hftf_specs()
    jobs = [(f"tf_{fam}_op{op}", "hf-tf", fam, op) for fam, (_, _, ops) in specs.items() for op in ops]
    ver = vers("transformers", "tf2onnx", "tensorflow-cpu")

    def export(job, path: Path) -> str:
        _, _, fam, opset = job
        tf.keras.backend.clear_session()
        tf.random.set_seed(0)
        make, kind, _ = specs[fam]
        model = make()
        if kind == "text":
            sig = [tf.TensorSpec((None, None), tf.int32, name="input_ids"),
                   tf.TensorSpec((None, None), tf.int32, name="attention_mask")]
            fn = tf.function(lambda input_ids, attention_mask: model(input_ids=input_ids, attention_mask=attention_mask))
        else:
            sig = [tf.TensorSpec((None, 3, 64, 64), tf.float32, name="pixel_values")]
            fn = tf.function(lambda pixel_values: model(pixel_values=pixel_values))
        tf2onnx.convert.from_function(fn, input_signature=sig, opset=opset, output_path=str(path))
        return f"tf2onnx.convert.from_function(opset={opset}) {ver}"

    jobs_run(a, jobs, export)


# ----------------------------------------------------------------------------------------------- stage sklearn

def sklearn_specs():
    """name -> (estimator factory, data kind, convert options). Data: 'num' 200x8 floats, 'text' strings,
    'mixed' numeric + categorical columns."""
    from sklearn import (
        cluster,
        compose,
        decomposition,
        ensemble,
        impute,
        linear_model,
        naive_bayes,
        neighbors,
        neural_network,
        pipeline,
        preprocessing,
        svm,
        tree,
    )
    from sklearn.feature_extraction import text
    P = pipeline.make_pipeline
    S = preprocessing.StandardScaler
    nozip = {"zipmap": False}
    return {
        "scaler_logreg": (lambda: P(S(), linear_model.LogisticRegression(max_iter=200)), "num", None),
        "scaler_logreg_nozipmap": (lambda: P(S(), linear_model.LogisticRegression(max_iter=200)), "num", nozip),
        "minmax_linreg": (lambda: P(preprocessing.MinMaxScaler(), linear_model.LinearRegression()), "reg", None),
        "ridge": (lambda: linear_model.Ridge(), "reg", None),
        "imputer_scaler_sgd": (lambda: P(impute.SimpleImputer(), S(), linear_model.SGDClassifier(loss="log_loss")), "num", None),
        "decision_tree": (lambda: tree.DecisionTreeClassifier(max_depth=6), "num", None),
        "random_forest_clf": (lambda: ensemble.RandomForestClassifier(n_estimators=20, max_depth=6), "num", None),
        "random_forest_reg": (lambda: ensemble.RandomForestRegressor(n_estimators=20, max_depth=6), "reg", None),
        "extra_trees_reg": (lambda: ensemble.ExtraTreesRegressor(n_estimators=10, max_depth=6), "reg", None),
        "gradient_boosting_clf": (lambda: ensemble.GradientBoostingClassifier(n_estimators=20), "num", None),
        "hist_gradient_boosting_clf": (lambda: ensemble.HistGradientBoostingClassifier(max_iter=20), "num", nozip),
        "isolation_forest": (lambda: ensemble.IsolationForest(n_estimators=20), "num", "ml3"),
        "svc_rbf": (lambda: P(S(), svm.SVC(probability=True)), "num", None),
        "linear_svc": (lambda: svm.LinearSVC(), "num", None),  # in a pipeline skl2onnx 1.20 asks it for zipmap
        "svr": (lambda: P(S(), svm.SVR()), "reg", None),
        "kmeans": (lambda: P(S(), cluster.KMeans(n_clusters=4, n_init=2)), "num", None),
        "pca_logreg": (lambda: P(S(), decomposition.PCA(4), linear_model.LogisticRegression()), "num", None),
        "knn_clf": (lambda: neighbors.KNeighborsClassifier(5), "num", None),
        "mlp_clf": (lambda: P(S(), neural_network.MLPClassifier((32,), max_iter=50)), "num", None),
        "gaussian_nb": (lambda: naive_bayes.GaussianNB(), "num", None),
        "tfidf_logreg": (lambda: P(text.TfidfVectorizer(), linear_model.LogisticRegression()), "text", None),
        "count_multinomial_nb": (lambda: P(text.CountVectorizer(ngram_range=(1, 2)), naive_bayes.MultinomialNB()), "text", None),
        "column_transformer_rf": (lambda: P(compose.ColumnTransformer([
            ("num", S(), [0, 1, 2]), ("cat", preprocessing.OneHotEncoder(handle_unknown="ignore"), [3])]),
            ensemble.RandomForestClassifier(n_estimators=10, max_depth=5)), "mixed", None),
    }


def sklearn_data(kind: str):
    import numpy as np
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 8)).astype(np.float32)
    y = (X[:, 0] + X[:, 1] > 0).astype(np.int64) + (X[:, 2] > 1)
    if kind == "reg":
        return X, X[:, 0] * 2 + X[:, 3]
    if kind == "text":
        words = ["gpu", "cuda", "kernel", "onnx", "model", "fast", "slow", "cpu", "tensor", "graph"]
        docs = [" ".join(rng.choice(words, 6)) for _ in range(200)]
        return np.array(docs), np.array([("cuda" in d) + ("cpu" in d) for d in docs])
    if kind == "mixed":
        cat = rng.choice(["a", "b", "c"], 200)
        Xm = np.empty((200, 4), dtype=object)
        Xm[:, :3] = X[:, :3]
        Xm[:, 3] = cat
        return Xm, y
    return X, y


def stage_sklearn(a) -> None:
    import numpy as np
    from skl2onnx import convert_sklearn, to_onnx
    from skl2onnx.common.data_types import FloatTensorType, StringTensorType
    specs = sklearn_specs()
    jobs = [(f"skl_{n}", "skl2onnx", n, 0, "skl") for n in specs]
    jobs += [(f"{lib}_{task}", "onnxmltools", lib, 0, task) for lib in ("lgbm", "xgb") for task in ("clf", "reg")]
    jobs.append(("skl_scaler_lgbm_clf", "onnxmltools", "lgbm", 0, "pipeline"))
    skl_ver = vers("skl2onnx", "scikit-learn")
    ml_ver = vers("onnxmltools", "lightgbm", "xgboost")

    def export(job, path: Path) -> str:
        name, src, fam, _, kind = job
        if kind == "skl":
            make, data, options = specs[fam]
            X, y = sklearn_data(data)
            est = make().fit(X, y) if fam != "isolation_forest" else make().fit(X)
            if data == "text":
                onx = convert_sklearn(est, initial_types=[("text", StringTensorType([None]))],
                                      options={id(est): options} if options else None)
            elif data == "mixed":
                onx = _mixed(est, FloatTensorType, StringTensorType)
            elif options == "ml3":  # the error message tells users to do this (ai.onnx.ml 4 not supported yet)
                onx = to_onnx(est, X[:1].astype(np.float32), target_opset={"": 17, "ai.onnx.ml": 3})
            else:
                opts = {type(est.steps[-1][1] if hasattr(est, "steps") else est): options} if options else None
                onx = to_onnx(est, X[:1].astype(np.float32), options=opts)
            path.write_bytes(onx.SerializeToString())
            return f"skl2onnx {'convert_sklearn' if data in ('text', 'mixed') else 'to_onnx'} {skl_ver}" + \
                (f"\toptions {options}" if options else "")
        X, y = sklearn_data("reg" if kind == "reg" else "num")
        import onnxmltools
        init = [("input", onnxmltools.convert.common.data_types.FloatTensorType([None, X.shape[1]]))]
        if fam == "lgbm":
            import lightgbm as lgb
            if kind == "pipeline":  # a LightGBM model inside a scikit-learn pipeline: skl2onnx + its converter
                from onnxmltools.convert.lightgbm.operator_converters.LightGbm import convert_lightgbm
                from skl2onnx import update_registered_converter
                from skl2onnx.common.shape_calculator import calculate_linear_classifier_output_shapes
                from sklearn.pipeline import make_pipeline
                from sklearn.preprocessing import StandardScaler
                update_registered_converter(lgb.LGBMClassifier, "LightGbmLGBMClassifier",
                                            calculate_linear_classifier_output_shapes, convert_lightgbm,
                                            options={"nocl": [True, False], "zipmap": [True, False, "columns"]})
                pipe = make_pipeline(StandardScaler(), lgb.LGBMClassifier(n_estimators=20, verbose=-1)).fit(X, y)
                onx = convert_sklearn(pipe, initial_types=[("input", FloatTensorType([None, X.shape[1]]))],
                                      target_opset={"": 17, "ai.onnx.ml": 3})
                path.write_bytes(onx.SerializeToString())
                return f"skl2onnx convert_sklearn + update_registered_converter(LGBMClassifier) {skl_ver} {ml_ver}"
            est = (lgb.LGBMRegressor if kind == "reg" else lgb.LGBMClassifier)(n_estimators=20, verbose=-1).fit(X, y)
            onx = onnxmltools.convert_lightgbm(est, initial_types=init)
        else:
            import xgboost as xgb
            est = (xgb.XGBRegressor if kind == "reg" else xgb.XGBClassifier)(n_estimators=20, max_depth=4).fit(X, y)
            onx = onnxmltools.convert_xgboost(est, initial_types=init)
        onnxmltools.utils.save_model(onx, str(path))
        return f"onnxmltools.convert_{'lightgbm' if fam == 'lgbm' else 'xgboost'} {ml_ver}"

    jobs_run(a, jobs, export)


def _mixed(est, F, S):
    """A ColumnTransformer pipeline: numeric columns as one float input, the categorical column as a string one."""
    from skl2onnx import convert_sklearn
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline
    # rebuild the transformer on named inputs: skl2onnx maps ColumnTransformer columns to graph inputs by name
    ct: ColumnTransformer = est.steps[0][1]
    import numpy as np
    X, y = sklearn_data("mixed")
    import pandas as pd
    df = pd.DataFrame({"f0": X[:, 0].astype(np.float32), "f1": X[:, 1].astype(np.float32),
                       "f2": X[:, 2].astype(np.float32), "cat": X[:, 3].astype(str)})
    ct2 = ColumnTransformer([(n, t, ["f0", "f1", "f2"] if n == "num" else ["cat"]) for n, t, _ in ct.transformers])
    pipe = Pipeline([("prep", ct2), ("clf", est.steps[1][1].__class__(**est.steps[1][1].get_params()))]).fit(df, y)
    return convert_sklearn(pipe, initial_types=[("f0", F([None, 1])), ("f1", F([None, 1])), ("f2", F([None, 1])),
                                                ("cat", S([None, 1]))])


# ----------------------------------------------------------------------------------------------- stage paddle

PADDLE = {  # name -> (factory, input spec shape, dtype, opsets)
    "resnet18": ("vision", (None, 3, 224, 224), "float32", (11, 13)),
    "mobilenet_v2": ("vision", (None, 3, 224, 224), "float32", (13,)),
    "mobilenet_v3_small": ("vision", (None, 3, 224, 224), "float32", (13,)),
    "shufflenet_v2_x0_25": ("vision", (None, 3, 224, 224), "float32", (13,)),
    "lstm_text": ("text", (None, 32), "int64", (13,)),
    "transformer_encoder": ("text", (None, 32), "int64", (13, 16)),
}


def paddle_model(name: str):
    import paddle
    paddle.seed(0)
    if PADDLE[name][0] == "vision":
        return getattr(paddle.vision.models, name)(pretrained=False)
    nn = paddle.nn

    class Text(nn.Layer):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(1000, 64)
            if name == "lstm_text":
                self.enc = nn.LSTM(64, 64, num_layers=1, direction="bidirect")
            else:
                self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(64, 4, 128, dropout=0.1), 2)
            self.fc = nn.Linear(128 if name == "lstm_text" else 64, 2)

        def forward(self, ids):
            x = self.emb(ids)
            x = self.enc(x)[0] if name == "lstm_text" else self.enc(x)
            return nn.functional.softmax(self.fc(x.mean(axis=1)), axis=-1)
    return Text()


def stage_paddle(a) -> None:
    import paddle
    jobs = [(f"paddle_{n}_op{op}", "paddle2onnx", n, op) for n, spec in PADDLE.items() for op in spec[3]]
    ver = vers("paddle2onnx", "paddlepaddle")

    def export(job, path: Path) -> str:
        _, _, fam, opset = job
        m = paddle_model(fam)
        m.eval()
        _, shape, dtype, _ = PADDLE[fam]
        with tempfile.TemporaryDirectory(dir=SCRATCH) as tmp:
            prefix = Path(tmp) / "inference"
            paddle.jit.save(m, str(prefix), input_spec=[paddle.static.InputSpec(list(shape), dtype, "x")])
            model_file = next(p for p in (Path(tmp) / "inference.json", Path(tmp) / "inference.pdmodel") if p.exists())
            run(["paddle2onnx", "--model_dir", tmp, "--model_filename", model_file.name,
                 "--params_filename", "inference.pdiparams", "--save_file", str(path), "--opset_version", str(opset)],
                env={**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"})
        return f"paddle.jit.save + paddle2onnx --opset_version {opset} {ver}"

    jobs_run(a, jobs, export)


# ----------------------------------------------------------------------------------------------- stage diffusers

def tiny_sd():
    """A tiny Stable Diffusion's parts from configs: UNet2DConditionModel, AutoencoderKL, CLIPTextModel."""
    import torch
    import transformers as t
    from diffusers import AutoencoderKL, UNet2DConditionModel
    torch.manual_seed(0)
    unet = UNet2DConditionModel(sample_size=16, in_channels=4, out_channels=4, layers_per_block=1,
                                block_out_channels=(32, 64), down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
                                up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"), cross_attention_dim=32,
                                attention_head_dim=8, norm_num_groups=8)
    vae = AutoencoderKL(in_channels=3, out_channels=3, latent_channels=4, block_out_channels=(32, 64),
                        down_block_types=("DownEncoderBlock2D",) * 2, up_block_types=("UpDecoderBlock2D",) * 2,
                        norm_num_groups=8, sample_size=32)
    text = t.CLIPTextModel(t.CLIPTextConfig(vocab_size=1000, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                            num_attention_heads=4, max_position_embeddings=77, projection_dim=32))
    return unet.eval(), vae.eval(), text.eval()


def sd_parts():
    """part -> (module taking tensors, example inputs, input names, dynamic axes)."""
    import torch
    unet, vae, text = tiny_sd()

    class Unet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = unet

        def forward(self, sample, timestep, encoder_hidden_states):
            return self.m(sample, timestep, encoder_hidden_states, return_dict=False)[0]

    class VaeEncoder(torch.nn.Module):  # what a pipeline's img2img path runs: the latent distribution's mean
        def __init__(self):
            super().__init__()
            self.m = vae

        def forward(self, sample):
            return self.m.encode(sample).latent_dist.mode()

    class VaeDecoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = vae

        def forward(self, latent_sample):
            return self.m.decode(latent_sample).sample

    class TextEncoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = text

        def forward(self, input_ids):
            out = self.m(input_ids, return_dict=False)
            return out[0], out[1]

    b, hw = {0: "batch"}, {0: "batch", 2: "height", 3: "width"}
    return {
        "unet": (Unet(), (torch.randn(2, 4, 16, 16), torch.tensor([10, 10]), torch.randn(2, 77, 32)),
                 ["sample", "timestep", "encoder_hidden_states"], {"sample": hw, "timestep": b, "encoder_hidden_states": b}),
        "vae_encoder": (VaeEncoder(), (torch.randn(1, 3, 32, 32),), ["sample"], {"sample": hw}),
        "vae_decoder": (VaeDecoder(), (torch.randn(1, 4, 16, 16),), ["latent_sample"], {"latent_sample": hw}),
        "text_encoder": (TextEncoder(), (torch.randint(0, 1000, (1, 77)),), ["input_ids"], {"input_ids": b}),
    }


def write_clip_tokenizer(d: Path) -> None:
    """A word-level CLIP tokenizer of the config's 1000 ids (the pipeline folder optimum reads needs one)."""
    import json
    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
    vocab.update({f"w{i}</w>": i for i in range(2, 1000)})
    d.mkdir(parents=True, exist_ok=True)
    (d / "vocab.json").write_text(json.dumps(vocab))
    (d / "merges.txt").write_text("#version: 0.2\n")
    from transformers import CLIPTokenizer
    CLIPTokenizer(str(d / "vocab.json"), str(d / "merges.txt")).save_pretrained(str(d))


def stage_diffusers(a) -> None:
    import torch
    parts = list(sd_parts())
    jobs = [(f"sd_{p}_ts_op{op}", "diffusers-torchscript", p, op, "ts") for p in parts for op in (14, 17)]
    jobs += [(f"sd_{p}_dy_op18", "diffusers-dynamo", p, 18, "dy") for p in parts]
    jobs.append(("sd_optimum", "diffusers-optimum", "sd", 0, "optimum"))
    ver = vers("torch", "diffusers", "transformers")

    def export(job, path: Path) -> str:
        name, _, part, opset, how = job
        if how == "optimum":
            return export_optimum(path)
        m, args, names, dyn = sd_parts()[part]
        outs = ["out_sample"] if part != "text_encoder" else ["last_hidden_state", "pooler_output"]
        if how == "ts":
            torch.onnx.export(m, args, str(path), dynamo=False, opset_version=opset, input_names=names,
                              output_names=outs, dynamic_axes=dyn)
            return f"torch.onnx.export(dynamo=False) {ver}"
        from torch.export import Dim
        dims: dict = {}
        ds = tuple({ax: dims.setdefault(d, Dim(d, min=1 if d == "batch" else 8)) for ax, d in dyn.get(n, {}).items()}
                   or None for n in names)
        note = ""
        try:
            prog = torch.onnx.export(m, args, dynamo=True, opset_version=opset, input_names=names, output_names=outs,
                                     dynamic_shapes=ds, external_data=False)
        except Exception:  # noqa: BLE001 - users retry without dynamic shapes; so do we, and say so
            prog = torch.onnx.export(m, args, dynamo=True, opset_version=opset, input_names=names, output_names=outs,
                                     external_data=False)
            note = "static shapes (dynamic_shapes export failed)"
        prog.save(str(path), external_data=False)
        return f"torch.onnx.export(dynamo=True) {ver}" + (f"\t{note}" if note else "")

    def export_optimum(path: Path) -> str:
        from diffusers import DDIMScheduler, StableDiffusionPipeline
        from optimum.exporters.onnx import main_export
        unet, vae, text = tiny_sd()
        d = path.with_suffix("")
        with tempfile.TemporaryDirectory(dir=SCRATCH) as tmp:
            tok = Path(tmp) / "tok"
            write_clip_tokenizer(tok)
            from transformers import CLIPTokenizer
            pipe = StableDiffusionPipeline(unet=unet, vae=vae, text_encoder=text, tokenizer=CLIPTokenizer.from_pretrained(str(tok)),
                                           scheduler=DDIMScheduler(), safety_checker=None, feature_extractor=None,
                                           requires_safety_checker=False)
            pipe.save_pretrained(tmp + "/pipe")
            out = Path(tmp) / "onnx"
            main_export(tmp + "/pipe", output=str(out), task="text-to-image", do_validation=False)
            shutil.rmtree(d, ignore_errors=True)
            d.mkdir(parents=True)
            for f in sorted(out.glob("*/model.onnx")):
                shutil.copy(f, d / f"{f.parent.name}.onnx")
                for data in f.parent.glob("model.onnx*data"):
                    raise RuntimeError(f"external data {data.name}: not expected for a tiny pipeline")
            if not any(d.glob("*.onnx")):
                raise RuntimeError("optimum wrote no .onnx")
        return f"optimum main_export(task=text-to-image) {vers('optimum-onnx')} {ver}"

    jobs_run(a, [j for j in jobs if j[4] != "optimum"], export)
    run_jobs(a, [j for j in jobs if j[4] == "optimum"], export, folder=True, log_name=LOG_NAME)


# ----------------------------------------------------------------------------------------------- stage newops

def newops_torch():
    """name -> (module, inputs, input names, dynamic axes, opset): dynamo exports at opsets 20-23."""
    import torch
    from torch import nn
    F = nn.functional

    class LlamaBlock(nn.Module):  # RMSNorm + rotary + SDPA (GQA) + SwiGLU: Attention-23 / RMSNormalization-23 at 23
        def __init__(self, d=64, heads=4, kv=2):
            super().__init__()
            self.h, self.kv, self.hd = heads, kv, d // heads
            self.n1, self.n2 = nn.RMSNorm(d, eps=1e-6), nn.RMSNorm(d, eps=1e-6)
            self.q = nn.Linear(d, d, bias=False)
            self.k, self.v = nn.Linear(d, kv * self.hd, bias=False), nn.Linear(d, kv * self.hd, bias=False)
            self.o = nn.Linear(d, d, bias=False)
            self.g, self.u, self.dn = nn.Linear(d, 128, bias=False), nn.Linear(d, 128, bias=False), nn.Linear(128, d, bias=False)

        def rope(self, x, pos):
            inv = 1.0 / (10000 ** (torch.arange(0, self.hd, 2, dtype=torch.float32) / self.hd))
            f = pos[..., None].float() * inv
            cos, sin = torch.cat([f, f], -1).cos()[:, None], torch.cat([f, f], -1).sin()[:, None]
            x1, x2 = x[..., : self.hd // 2], x[..., self.hd // 2:]
            return x * cos + torch.cat([-x2, x1], -1) * sin

        def forward(self, x, pos):
            b, s, _ = x.shape
            h = self.n1(x)
            q = self.q(h).view(b, s, self.h, self.hd).transpose(1, 2)
            k = self.k(h).view(b, s, self.kv, self.hd).transpose(1, 2)
            v = self.v(h).view(b, s, self.kv, self.hd).transpose(1, 2)
            q, k = self.rope(q, pos), self.rope(k, pos)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            x = x + self.o(a.transpose(1, 2).reshape(b, s, -1))
            h = self.n2(x)
            return x + self.dn(F.silu(self.g(h)) * self.u(h))

    class VisionBlock(nn.Module):  # Conv + GroupNorm + exact GELU + affine_grid/grid_sample (AffineGrid/GridSample/Gelu-20)
        def __init__(self):
            super().__init__()
            self.c1, self.gn, self.c2 = nn.Conv2d(3, 16, 3, padding=1), nn.GroupNorm(4, 16), nn.Conv2d(16, 8, 3, padding=1)
            self.theta = nn.Parameter(torch.tensor([[1.0, 0.1, 0.0], [-0.1, 1.0, 0.0]]))

        def forward(self, x):
            y = F.gelu(self.gn(self.c1(x)))
            grid = F.affine_grid(self.theta.expand(x.shape[0], 2, 3), [x.shape[0], 16, 32, 32], align_corners=False)
            y = F.grid_sample(y, grid, mode="bilinear", padding_mode="border", align_corners=False)
            return F.gelu(self.c2(y), approximate="tanh")

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(1000, 64)
            self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(64, 4, 128, batch_first=True, activation="gelu"), 2)

        def forward(self, ids):
            return self.enc(self.emb(ids))

    seq = {0: "batch", 1: "sequence"}
    llama = (lambda: LlamaBlock(), lambda: (torch.randn(2, 16, 64), torch.arange(16).expand(2, 16)), ["x", "position_ids"],
             {"x": seq, "position_ids": seq})
    vision = (lambda: VisionBlock(), lambda: (torch.randn(2, 3, 32, 32),), ["image"], {"image": {0: "batch"}})
    enc = (lambda: Encoder(), lambda: (torch.randint(0, 1000, (2, 16)),), ["input_ids"], {"input_ids": seq})
    out = {}
    for op in (20, 21, 22, 23):
        out[f"llama_block_dy_op{op}"] = (*llama, op)
        out[f"transformer_encoder_dy_op{op}"] = (*enc, op)
    for op in (20, 23):
        out[f"vision_block_dy_op{op}"] = (*vision, op)
    out["vision_block_ts_op20"] = (*vision, 20)  # TorchScript: aten::affine_grid_generator -> AffineGrid-20
    return out


def newops_script():
    """name -> (ModelProto factory, how it was made): models of the opset 20-23 ops no exporter above emits."""
    import numpy as np
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh
    rng = np.random.default_rng(0)

    def model(nodes, inputs, outputs, inits=(), opset=23, name="g"):
        g = h.make_graph(nodes, name, inputs, outputs, list(inits))
        m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], producer_name="onnx.helper")
        m.ir_version = 10 if opset <= 22 else 11
        onnx.checker.check_model(m, full_check=True)
        return m

    vi = h.make_tensor_value_info
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731

    def int4_block_matmul(dtype=T.INT4, opset=21):  # onnx.helper: block-wise DequantizeLinear-21 of int4 weights
        w = nh.from_array(rng.integers(-8, 8, (64, 32)).astype(np.int8), "w_q")
        w = h.make_tensor("w_q", dtype, [64, 32], (rng.integers(-8, 8, 64 * 32) if dtype == T.INT4
                                                    else rng.integers(0, 16, 64 * 32)).tolist())
        sc = nh.from_array(np.abs(f32(2, 32)) + 0.01, "w_scale")
        nodes = [h.make_node("DequantizeLinear", ["w_q", "w_scale"], ["w"], axis=0, block_size=32),
                 h.make_node("MatMul", ["a", "w"], ["y"])]
        return model(nodes, [vi("a", T.FLOAT, ["B", 64])], [vi("y", T.FLOAT, ["B", 32])], [w, sc], opset)

    def qdq_int4_act(opset=21):  # onnx.helper: QuantizeLinear-21 to int4 with output_dtype, then back
        nodes = [h.make_node("QuantizeLinear", ["x", "s"], ["q"], output_dtype=T.INT4),
                 h.make_node("DequantizeLinear", ["q", "s"], ["y"])]
        return model(nodes, [vi("x", T.FLOAT, ["B", 16])], [vi("y", T.FLOAT, ["B", 16])],
                     [nh.from_array(np.array(0.1, np.float32), "s")], opset)

    def fp8_qdq(opset=22, with_conv=True):  # onnx.helper: float8 e4m3fn Q/DQ (QuantizeLinear/DequantizeLinear-21)
        zp = h.make_tensor("zp", T.FLOAT8E4M3FN, [], [0.0])
        wq = h.make_tensor("w_q", T.FLOAT8E4M3FN, [8, 3, 3, 3], (rng.standard_normal(8 * 27)).tolist())
        inits = [nh.from_array(np.array(0.05, np.float32), "s"), zp, wq, nh.from_array(np.full(8, 0.02, np.float32), "ws"),
                 h.make_tensor("wzp", T.FLOAT8E4M3FN, [8], [0.0] * 8)]
        nodes = [h.make_node("QuantizeLinear", ["x", "s", "zp"], ["xq"]),
                 h.make_node("DequantizeLinear", ["xq", "s", "zp"], ["xd"]),
                 h.make_node("DequantizeLinear", ["w_q", "ws", "wzp"], ["w"], axis=0),
                 h.make_node("Conv", ["xd", "w"], ["y"], pads=[1, 1, 1, 1])]
        return model(nodes, [vi("x", T.FLOAT, ["N", 3, 16, 16])], [vi("y", T.FLOAT, ["N", 8, 16, 16])], inits, opset)

    def fp4_dq():  # onnx.helper: DequantizeLinear-23 of float4 e2m1 block-quantized weights
        w = h.make_tensor("w_q", T.FLOAT4E2M1, [64, 32], (rng.standard_normal(64 * 32)).clip(-6, 6).tolist())
        sc = nh.from_array(np.abs(f32(4, 32)) + 0.01, "w_scale")
        nodes = [h.make_node("DequantizeLinear", ["w_q", "w_scale"], ["w"], axis=0, block_size=16),
                 h.make_node("MatMul", ["a", "w"], ["y"])]
        return model(nodes, [vi("a", T.FLOAT, ["B", 64])], [vi("y", T.FLOAT, ["B", 32])], [w, sc], 23)

    def affine_grid_sample(mode="linear", opset=20):  # onnx.helper: AffineGrid-20 + GridSample-20 (cubic, 'linear')
        nodes = [h.make_node("Shape", ["x"], ["shp"]),
                 h.make_node("AffineGrid", ["theta", "shp"], ["grid"], align_corners=0),
                 h.make_node("GridSample", ["x", "grid"], ["y"], mode=mode, padding_mode="reflection")]
        return model(nodes, [vi("x", T.FLOAT, ["N", 3, 32, 32]), vi("theta", T.FLOAT, ["N", 2, 3])],
                     [vi("y", T.FLOAT, ["N", 3, 32, 32])], (), opset)

    def grid_sample_3d(opset=20):  # GridSample-20 on a 5-D volume (new in 20)
        nodes = [h.make_node("GridSample", ["x", "grid"], ["y"], mode="linear")]
        return model(nodes, [vi("x", T.FLOAT, ["N", 2, 8, 8, 8]), vi("grid", T.FLOAT, ["N", 4, 4, 4, 3])],
                     [vi("y", T.FLOAT, ["N", 2, 4, 4, 4])], (), opset)

    def dft20():  # DFT-20: axis as an input, onesided real FFT
        nodes = [h.make_node("Unsqueeze", ["x", "ax"], ["x3"]), h.make_node("DFT", ["x3", "", "axis"], ["y"], onesided=1)]
        return model(nodes, [vi("x", T.FLOAT, ["N", 64])], [vi("y", T.FLOAT, ["N", 33, 2])],
                     [nh.from_array(np.array([-1], np.int64), "ax"), nh.from_array(np.array(1, np.int64), "axis")], 20)

    def strings20():  # StringSplit-20, RegexFullMatch-20, StringConcat-20
        nodes = [h.make_node("RegexFullMatch", ["s"], ["is_num"], pattern="[0-9]+"),
                 h.make_node("StringConcat", ["s", "suffix"], ["sc"]),
                 h.make_node("StringSplit", ["sc"], ["parts", "n"], delimiter=" ", maxsplit=2)]
        return model(nodes, [vi("s", T.STRING, ["N"])],
                     [vi("is_num", T.BOOL, ["N"]), vi("parts", T.STRING, ["N", None]), vi("n", T.INT64, ["N"])],
                     [h.make_tensor("suffix", T.STRING, [], [b" x y"])], 20)

    def bf16_reduce_isnan(opset=20):  # ReduceMax-20 on bool, IsNaN-20 and Gelu-20 on bfloat16
        nodes = [h.make_node("Cast", ["x"], ["xb"], to=T.BFLOAT16), h.make_node("Gelu", ["xb"], ["g"]),
                 h.make_node("IsNaN", ["g"], ["nan"]), h.make_node("ReduceMax", ["nan", "ax"], ["any_nan"], keepdims=0),
                 h.make_node("Cast", ["g"], ["y"], to=T.FLOAT)]
        return model(nodes, [vi("x", T.FLOAT, ["N", 16])], [vi("y", T.FLOAT, ["N", 16]), vi("any_nan", T.BOOL, ["N"])],
                     [nh.from_array(np.array([1], np.int64), "ax")], opset)

    def int4_ops21():  # int4 through the opset-21 shape ops (Cast, Reshape, Transpose) between Q and DQ
        nodes = [h.make_node("QuantizeLinear", ["x", "s"], ["q"], output_dtype=T.INT4),
                 h.make_node("Reshape", ["q", "shp"], ["r"]), h.make_node("Transpose", ["r"], ["t"], perm=[1, 0]),
                 h.make_node("DequantizeLinear", ["t", "s"], ["y"])]
        return model(nodes, [vi("x", T.FLOAT, [8, 16])], [vi("y", T.FLOAT, [32, 4])],
                     [nh.from_array(np.array(0.1, np.float32), "s"), nh.from_array(np.array([4, 32], np.int64), "shp")], 21)

    return {
        **{name: (lambda f=f: f.to_model_proto(), "onnxscript @script(default_opset=opset23)")
           for name, f in _script_models().items()},
        "dq21_int4_block_matmul": (lambda: int4_block_matmul(T.INT4, 21), "onnx.helper"),
        "dq21_uint4_block_matmul_op23": (lambda: int4_block_matmul(T.UINT4, 23), "onnx.helper"),
        "qdq21_int4_activation": (qdq_int4_act, "onnx.helper"),
        "int4_shape_ops21": (int4_ops21, "onnx.helper"),
        "qdq_fp8e4m3_conv_op22": (lambda: fp8_qdq(22), "onnx.helper"),
        "qdq_fp8e4m3_conv_op21": (lambda: fp8_qdq(21), "onnx.helper"),
        "dq23_fp4e2m1_block_matmul": (fp4_dq, "onnx.helper"),
        "affinegrid20_gridsample_linear": (lambda: affine_grid_sample("linear"), "onnx.helper"),
        "affinegrid20_gridsample_cubic": (lambda: affine_grid_sample("cubic"), "onnx.helper"),
        "gridsample20_3d": (grid_sample_3d, "onnx.helper"),
        "dft20_onesided": (dft20, "onnx.helper"),
        "strings20": (strings20, "onnx.helper"),
        "bf16_gelu20_isnan_reducemax": (bf16_reduce_isnan, "onnx.helper"),
    }


def _script_models() -> dict:
    import opset23_script_models  # benchmarks/ is sys.path[0]
    return opset23_script_models.MODELS


def stage_newops(a) -> None:
    import onnx
    import torch
    tmods, smods = newops_torch(), newops_script()
    jobs = [(n, "opset20-23", n.rsplit("_dy_", 1)[0].rsplit("_ts_", 1)[0], spec[4], "ts" if "_ts_" in n else "dy")
            for n, spec in tmods.items()]
    jobs += [(n, "opset20-23", n, 0, "script") for n in smods]
    ver = vers("torch", "onnxscript")

    def export(job, path: Path) -> str:
        name, _, fam, opset, how = job
        if how == "script":
            make, made = smods[name]
            m = make()
            onnx.checker.check_model(m, full_check=True)
            onnx.save(m, str(path))
            return f"{made} ({vers('onnxscript', 'onnx')})"
        make, inputs, names, dyn, opset = tmods[name]
        torch.manual_seed(0)
        m, args = make().eval(), inputs()
        if how == "ts":
            torch.onnx.export(m, args, str(path), dynamo=False, opset_version=opset, input_names=names, dynamic_axes=dyn)
            return f"torch.onnx.export(dynamo=False, opset_version={opset}) {ver}"
        from torch.export import Dim
        dims: dict = {}
        ds = tuple({ax: dims.setdefault(d, Dim(d, min=2)) for ax, d in dyn.get(n, {}).items()} or None for n in names)
        note = ""
        try:
            prog = torch.onnx.export(m, args, dynamo=True, opset_version=opset, input_names=names, dynamic_shapes=ds,
                                     external_data=False)
        except Exception:  # noqa: BLE001
            prog = torch.onnx.export(m, args, dynamo=True, opset_version=opset, input_names=names, external_data=False)
            note = "static shapes (dynamic_shapes export failed)"
        prog.save(str(path), external_data=False)
        return f"torch.onnx.export(dynamo=True, opset_version={opset}) {ver}" + (f"\t{note}" if note else "")

    jobs_run(a, jobs, export)


# ----------------------------------------------------------------------------------------------- stage quant

QUANT_FLOAT = {  # float source -> where it comes from (torch ones are exported here, into SCRATCH)
    "keras_mobilenetv2_op13": "tf2onnx-keras/keras_mobilenetv2_op13.onnx",
    "torch_cnn_op17": "torch",
    "torch_bert_op17": "torch",
}
QUANT_MODES = {  # mode -> which sources get it
    "qdq_pertensor": ("keras_mobilenetv2_op13", "torch_cnn_op17", "torch_bert_op17"),
    "qdq_perchannel": ("keras_mobilenetv2_op13", "torch_cnn_op17", "torch_bert_op17"),
    "qoperator": ("keras_mobilenetv2_op13", "torch_cnn_op17", "torch_bert_op17"),
    "qdq_a16w8_contrib": ("torch_cnn_op17", "torch_bert_op17"),
    "qdq_a16w16": ("torch_cnn_op17",),
    "dynamic": ("keras_mobilenetv2_op13", "torch_cnn_op17", "torch_bert_op17"),
    "matmulnbits4": ("torch_bert_op17",),
    "matmulnbits8": ("torch_bert_op17",),
    "int4_qdq": ("torch_bert_op17",),
}


def quant_float_source(name: str) -> Path:
    """The float model to quantize: from the set, or a small torch model exported TorchScript opset 17."""
    src = QUANT_FLOAT[name]
    if src != "torch":
        p = OUT / src
        if not p.exists():
            raise FileNotFoundError(f"{src} (run the stage that makes it first)")
        return p
    p = SCRATCH / f"{name}.onnx"
    if p.exists():
        return p
    import torch
    from torch import nn
    torch.manual_seed(0)
    if name == "torch_cnn_op17":
        def blk(i, o, s):
            return nn.Sequential(nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU(),
                                 nn.Conv2d(o, o, 3, 1, 1, groups=o), nn.ReLU6(), nn.Conv2d(o, o, 1))
        m = nn.Sequential(blk(3, 16, 2), blk(16, 32, 2), nn.MaxPool2d(2), blk(32, 64, 1), nn.AdaptiveAvgPool2d(1),
                          nn.Flatten(), nn.Linear(64, 10)).eval()
        torch.onnx.export(m, (torch.randn(1, 3, 64, 64),), str(p), dynamo=False, opset_version=17,
                          input_names=["input"], dynamic_axes={"input": {0: "batch"}})
    else:
        import transformers as t
        bert = t.BertModel(t.BertConfig(vocab_size=1000, hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                                        intermediate_size=256, max_position_embeddings=128)).eval()

        class W(nn.Module):
            def __init__(self):
                super().__init__()
                self.m = bert

            def forward(self, input_ids, attention_mask):
                return self.m(input_ids=input_ids, attention_mask=attention_mask, return_dict=False)[0]
        seq = {0: "batch", 1: "sequence"}
        torch.onnx.export(W(), (torch.randint(0, 1000, (1, 16)), torch.ones(1, 16, dtype=torch.long)), str(p),
                          dynamo=False, opset_version=17, input_names=["input_ids", "attention_mask"],
                          dynamic_axes={"input_ids": seq, "attention_mask": seq})
    return p


class _Calib:
    """Random calibration batches shaped like the model's inputs (symbolic dims: batch 1, sequence 16)."""

    def __init__(self, path: Path, n: int = 4):
        import numpy as np
        import onnx
        m = onnx.load(str(path), load_external_data=False)
        inits = {i.name for i in m.graph.initializer}
        rng = np.random.default_rng(0)
        self.batches = []
        for _ in range(n):
            feed = {}
            for i in m.graph.input:
                if i.name in inits:
                    continue
                tt = i.type.tensor_type
                shape = [d.dim_value if d.dim_value > 0 else (1 if k == 0 else 16) for k, d in enumerate(tt.shape.dim)]
                if tt.elem_type == onnx.TensorProto.INT64:
                    feed[i.name] = (np.ones(shape, np.int64) if "mask" in i.name else rng.integers(0, 1000, shape))
                else:
                    feed[i.name] = rng.random(shape, dtype=np.float32)
            self.batches.append(feed)
        self.it = iter(self.batches)

    def get_next(self):
        return next(self.it, None)


def stage_quant(a) -> None:
    import onnx
    import onnxruntime
    from onnxruntime import quantization as q
    jobs = [(f"{src}_{mode}", "ort-quant", src, 0, mode) for mode, srcs in QUANT_MODES.items() for src in srcs]
    ver = f"onnxruntime {onnxruntime.__version__} quantization"

    def export(job, path: Path) -> str:
        _, _, src, _, mode = job
        fp = quant_float_source(src)
        with tempfile.TemporaryDirectory(dir=SCRATCH) as tmp:
            pre = Path(tmp) / "pre.onnx"
            note = ""
            try:  # the documented first step: symbolic shape inference + ORT's basic optimizations
                from onnxruntime.quantization.shape_inference import quant_pre_process
                quant_pre_process(str(fp), str(pre))
            except Exception as e:  # noqa: BLE001
                shutil.copy(fp, pre)
                note = f"quant_pre_process failed ({type(e).__name__}); quantized the unprocessed model"
            if mode.startswith("qdq") or mode == "qoperator":
                kw: dict = dict(quant_format=q.QuantFormat.QOperator if mode == "qoperator" else q.QuantFormat.QDQ,
                                per_channel=mode != "qdq_pertensor", activation_type=q.QuantType.QUInt8,
                                weight_type=q.QuantType.QInt8)
                if mode == "qdq_a16w8_contrib":
                    kw.update(activation_type=q.QuantType.QUInt16, weight_type=q.QuantType.QUInt8,
                              extra_options={"UseQDQContribOps": True})
                elif mode == "qdq_a16w16":
                    kw.update(activation_type=q.QuantType.QUInt16, weight_type=q.QuantType.QInt16)
                q.quantize_static(str(pre), str(path), _Calib(pre), **kw)
                args = ", ".join(f"{k}={getattr(v, 'name', v)}" for k, v in kw.items())
                how = f"quantize_static({args})"
            elif mode == "dynamic":
                q.quantize_dynamic(str(pre), str(path), weight_type=q.QuantType.QInt8)
                how = "quantize_dynamic(weight_type=QInt8)"
            else:
                from onnxruntime.quantization.matmul_nbits_quantizer import DefaultWeightOnlyQuantConfig, MatMulNBitsQuantizer
                bits = 8 if mode == "matmulnbits8" else 4
                fmt = q.QuantFormat.QDQ if mode == "int4_qdq" else q.QuantFormat.QOperator
                cfg = DefaultWeightOnlyQuantConfig(block_size=32, is_symmetric=True, quant_format=fmt, bits=bits)
                qz = MatMulNBitsQuantizer(onnx.load(str(pre)), algo_config=cfg)
                qz.process()
                qz.model.save_model_to_file(str(path), False)
                how = ("MatMulNBitsQuantizer(DefaultWeightOnlyQuantConfig(block_size=32, is_symmetric=True, "
                       f"bits={bits}, quant_format={fmt.name}))")
        return f"{ver} {how}" + (f"\t{note}" if note else "")

    jobs_run(a, jobs, export)


# ----------------------------------------------------------------------------------------------- stage layout

SOURCES = ("tf2onnx-keras", "tflite", "hf-tf", "skl2onnx", "onnxmltools", "ort-quant", "diffusers-torchscript",
           "diffusers-dynamo", "diffusers-optimum", "opset20-23", "paddle2onnx")


def stage_layout(a) -> None:
    """The set as the truth harnesses read it (folders of <test>/model.onnx, symlinks; any venv):
    DEST/ort/<source>__<name>/ (the ORT truth's test names) and DEST/trt/<name>/ (the TensorRT truth's)."""
    from export_manifest import read_part
    if not a.dest:
        raise SystemExit("layout needs --dest DIR")
    n = 0
    for src in SOURCES:
        for name, row in sorted(read_part(OUT / src / "_manifest.part.tsv").items()):
            model = OUT / row[1]
            if not model.exists():
                continue
            flat = name.replace("/", "__")
            for d in (a.dest / "ort" / f"{src}__{flat}", a.dest / "trt" / flat):
                d.mkdir(parents=True, exist_ok=True)
                link = d / "model.onnx"
                if link.is_symlink() or link.exists():
                    link.unlink()
                link.symlink_to(model.resolve())
            n += 1
    print(f"{n} models laid out under {a.dest}/ort and {a.dest}/trt")


# ----------------------------------------------------------------------------------------------- main

STAGES = {"keras": stage_keras, "tflite": stage_tflite, "hftf": stage_hftf, "sklearn": stage_sklearn,
          "diffusers": stage_diffusers, "newops": stage_newops, "quant": stage_quant, "paddle": stage_paddle,
          "layout": stage_layout}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stage", choices=sorted(STAGES))
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--force", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--dest", type=Path, help="layout: where to lay the set out for the truth harnesses")
    a = ap.parse_args()
    SCRATCH.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    STAGES[a.stage](a)
    if a.stage != "layout":
        merge_manifest()
    print(f"done in {time.time() - t0:.0f}s")


if __name__ == "__main__":
    main()
