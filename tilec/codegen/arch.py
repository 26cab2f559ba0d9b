"""The GPU architectures tilec generates code for, checked in one place.

Both PTX emission (LLVM's NVPTX `cpu`) and assembly (`ptxas -arch`) take an
`sm_XY` name; keeping the list here means both reject the same names with
the same message.
"""

ACCEPTED_ARCHS: tuple[str, ...] = ("sm_80", "sm_86", "sm_89", "sm_90")
"""Ampere (sm_80, sm_86), Ada (sm_89) and Hopper (sm_90): every arch with
mma.sync m16n8k16, ldmatrix and cp.async, which the code generator relies on."""


ARCH_SPECIFIC: tuple[str, ...] = ("sm_90a",)
"""Targets with architecture-specific instructions (sm_90a: the warpgroup MMA
``wgmma``): their code runs on that GPU only, so they are chosen explicitly,
never as the default for a GPU."""


def check_arch(arch: str) -> str:
    """Return `arch` if tilec supports it, else raise ValueError naming it."""
    if arch not in ACCEPTED_ARCHS and arch not in ARCH_SPECIFIC:
        raise ValueError(
            f"unsupported GPU architecture {arch!r}: "
            f"expected one of {', '.join(ACCEPTED_ARCHS + ARCH_SPECIFIC)}"
        )
    return arch
