"""Lowering patterns of ``tile-to-llvm``, one module per source dialect family.

- :mod:`~tilec.passes.lowering.types`: the type conversion (``index`` → ``i64``)
  and the in-place retyping of values;
- :mod:`~tilec.passes.lowering.arith`: ``arith``, ``math``, ``vector`` (1-D,
  static positions) and ``cf`` → ``llvm``;
- :mod:`~tilec.passes.lowering.gpu`: the tile dialect's structure ops and every
  ``frag`` op → the NVVM builders of :mod:`~tilec.passes.lowering.nvvm`.

The builders the patterns use sit here too: :mod:`~tilec.passes.lowering.nvvm`
(the GPU's own operations), :mod:`~tilec.passes.lowering.llvm_build` (plain
``llvm`` ops) and :mod:`~tilec.passes.lowering.kernel` (kernels and shared
memory). They make every op with the constructors of :mod:`tilec.ir.fast`
and insert it through the ``Builder`` they are given (the rule, and its two
exceptions, are in :mod:`tilec.ir.fast`).

Every pattern assumes the values it reads are already retyped (no ``index``
left): the pass retypes the whole module first, so each op is rewritten on
its own, in any order, into llvm ops whose types are final.
"""
