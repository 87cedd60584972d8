"""A model as onnxlint reads it: the graph index, the files a command names, loading, and where a run may write."""
