"""The commands of the CLI, one module each: what runs once the arguments are parsed (cli.py parses only).

    lint        `onnxlint [PATHS]`: configs per folder, the rules in force, fixing, the cache, the report, the exit code
    rules       `--list-rules`, `--explain ID`
    placement   `onnxlint placement`: per node, the execution provider ORT assigns
    verify      `onnxlint verify`: a real ORT session per model against the prediction (the work is onnxlint.verify)
    doctor      `onnxlint doctor`: can this environment run a CUDA session?
    clean       `onnxlint clean`: remove the result cache folder
"""
