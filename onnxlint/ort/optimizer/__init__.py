"""ORT's Level-1 graph transformers, the ones that run BEFORE partitioning, statically: one module per
transformer, the state they share (state.OptimizerState), the Level-1 list in ORT's order
(graph_transformer_utils) and the manager that repeats it until nothing changes (graph_transformer_mgr.optimize,
the entry point). What they did is an Optimized (optimized), which the partitioner reads.
"""
