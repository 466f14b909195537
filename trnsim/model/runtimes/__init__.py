"""What runtimes (NCCL, the Neuron runtime, XLA) expect or measure, next to trnsim's ideal schedules.

Each module here is a pure model of one runtime's own decisions; the engine maps a catalog system onto
it. :mod:`trnsim.model.runtimes.nccl` is NCCL's cost model and algorithm/protocol selection.
"""
