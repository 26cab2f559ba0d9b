"""User-level kernels: a family's entry points, configurations and its part in autotuning.

``gemm`` (``tilec.matmul``, ``tilec.matmul_kernel``, ``tilec.autotune``) is the first;
softmax, norms and attention join it. Each family builds the kernel's IR,
compiles it through :func:`tilec.compile` with its configuration (a pass
object), and hands the shared tuner (:mod:`tilec.kernels.autotune`) its
candidates, a way to measure them and a key. Nothing is imported here:
``import tilec.kernels.gemm`` loads what it needs.
"""
