"""Fuzz campaigns against tile-opt: mutated lit tests and examples, run in
worker processes, outcomes counted per mode, crashes grouped and minimized.

    python bench/fuzz.py --seed 1 --inputs 2000 --modes parse,ptx,llvm --timeout 20 --out /tmp/fuzz
    python bench/fuzz.py --seed 1 --inputs 5000 --budget 1500 --out /tmp/fuzz   # stop after 25 min
    python bench/fuzz.py --replay /work/shared/fuzz-found/*.mlir                 # known reproducers

Each input (a mutant of one seed, deterministic in --seed and its number) runs
in every mode: ``parse`` (parse, verify, print), ``ptx`` (``-p tile-to-ptx -t
ptx``) and ``llvm`` (``-p tile-to-llvm -t llvm``), some runs with mutated
pass or target options. Outcomes (see ``tilec.tools.fuzz.classify``):
accepted, located diagnostic, unlocated diagnostic, internal error, hang.

The output folder gets one sub-folder per group of internal errors, hangs and
unlocated diagnostics (``internal/03-IndexError-...``) holding a few inputs
(``case-<number>-<mode>.mlir``), their command, message and stderr
(``.txt``), and a minimized reproducer (``min.mlir``, ``min.txt``);
``summary.md`` and ``summary.json`` list everything.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tilec.tools import fuzz  # noqa: E402

COLUMNS = ("runs", *fuzz.KINDS)
REPORTED = ("internal", "hang", "unlocated")


# --------------------------------------------------------------------------
# Bookkeeping
# --------------------------------------------------------------------------


@dataclass
class Example:
    number: int
    case: fuzz.Case
    outcome: fuzz.Outcome


@dataclass
class Group:
    """All runs with one crash signature."""

    kind: str
    signature: str
    count: int = 0
    modes: Counter[str] = field(default_factory=Counter[str])
    examples: list[Example] = field(default_factory=list[Example])
    minimized: str | None = None

    def add(self, example: Example, keep: int) -> None:
        """Count the run; keep the ``keep`` smallest inputs."""
        self.count += 1
        self.modes[example.case.mode] += 1
        self.examples.append(example)
        self.examples.sort(key=lambda e: (len(e.case.text), e.number))
        del self.examples[keep:]


@dataclass
class Tally:
    """Outcome counts per mode, and the groups."""

    counts: dict[str, Counter[str]] = field(default_factory=dict[str, Counter[str]])
    groups: dict[str, Group] = field(default_factory=dict[str, Group])
    seconds: Counter[str] = field(default_factory=Counter[str])

    def add(self, example: Example, keep: int) -> None:
        mode, outcome = example.case.mode, example.outcome
        counts = self.counts.setdefault(mode, Counter())
        counts["runs"] += 1
        counts[outcome.kind] += 1
        self.seconds[mode] += outcome.seconds
        if outcome.kind in REPORTED:
            group = self.groups.setdefault(outcome.signature, Group(outcome.kind, outcome.signature))
            group.add(example, keep)

    def ordered_groups(self) -> list[Group]:
        """Internal errors, then hangs, then unlocated diagnostics; most frequent first."""
        return sorted(self.groups.values(), key=lambda g: (REPORTED.index(g.kind), -g.count, g.signature))


# --------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------


def table(tally: Tally, modes: Sequence[str]) -> str:
    """The outcome counts per mode as a Markdown table, with a total row."""
    header = ["mode", *COLUMNS, "cpu s"]
    rows = [header, ["---"] * len(header)]
    total: Counter[str] = Counter()
    for mode in modes:
        counts = tally.counts.get(mode, Counter())
        total.update(counts)
        rows.append([mode, *(str(counts[c]) for c in COLUMNS), f"{tally.seconds[mode]:.0f}"])
    rows.append(["total", *(str(total[c]) for c in COLUMNS), f"{sum(tally.seconds.values()):.0f}"])
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    return "\n".join("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |" for r in rows)


def slug(index: int, signature: str) -> str:
    """A folder name for a group: its rank and a readable, safe signature."""
    text = re.sub(r"[^A-Za-z0-9]+", "-", signature).strip("-")[:70]
    return f"{index:02d}-{text}"


def case_report(example: Example, path: Path) -> str:
    """The .txt beside an input: how to run it and what it did."""
    case, outcome = example.case, example.outcome
    return (
        f"command:   {case.command(str(path))}\n"
        f"number:    {example.number}\n"
        f"seed file: {case.origin}\n"
        f"mutations: {', '.join(case.mutations) or '(none)'}\n"
        f"outcome:   {outcome.kind} (status {outcome.status}, {outcome.seconds:.2f} s)\n"
        f"signature: {outcome.signature}\n"
        f"message:   {outcome.message}\n"
        f"frame:     {outcome.frame}\n"
        f"\n--- stderr ---\n{outcome.stderr}"
    )


def write_group(directory: Path, group: Group) -> None:
    """The group's inputs and reports, and its minimized reproducer."""
    directory.mkdir(parents=True, exist_ok=True)
    for example in group.examples:
        path = directory / f"case-{example.number}-{example.case.mode}.mlir"
        path.write_text(example.case.text, errors="surrogateescape")
        path.with_suffix(".txt").write_text(case_report(example, path))
    if group.minimized is not None:
        first = group.examples[0]
        path = directory / "min.mlir"
        path.write_text(group.minimized, errors="surrogateescape")
        path.with_suffix(".txt").write_text(
            f"command:   {first.case.command(str(path))}\n"
            f"signature: {group.signature}\n"
            f"message:   {first.outcome.message}\n"
            f"frame:     {first.outcome.frame}\n"
        )


def reproducer(directory: Path, group: Group) -> Path:
    """The file to give a developer: the minimized input, else the smallest."""
    if group.minimized is not None:
        return directory / "min.mlir"
    first = group.examples[0]
    return directory / f"case-{first.number}-{first.case.mode}.mlir"


def write_summary(out: Path, tally: Tally, modes: Sequence[str], settings: dict[str, object]) -> str:
    """summary.md and summary.json; return the Markdown."""
    lines = [f"# tile-opt fuzz campaign\n\nsettings: {json.dumps(settings)}\n", table(tally, modes), ""]
    records = []
    for i, group in enumerate(tally.ordered_groups()):
        directory = out / group.kind / slug(i, group.signature)
        write_group(directory, group)
        first = group.examples[0]
        path = reproducer(directory, group)
        modes_text = ", ".join(f"{m} {n}" for m, n in sorted(group.modes.items()))
        lines += [
            f"## [{group.kind}] {group.signature}",
            f"- runs: {group.count} ({modes_text})",
            f"- message: {first.outcome.message}",
            f"- frame: {first.outcome.frame or '-'}",
            f"- reproducer: {path}  (`{first.case.command(str(path))}`)",
            "",
        ]
        records.append({
            "kind": group.kind, "signature": group.signature, "count": group.count,
            "modes": dict(group.modes), "message": first.outcome.message, "frame": first.outcome.frame,
            "reproducer": str(path.relative_to(out)), "args": list(first.case.args),
        })  # fmt: skip
    text = "\n".join(lines)
    (out / "summary.md").write_text(text)
    summary = {"settings": settings, "counts": {m: dict(c) for m, c in tally.counts.items()}, "groups": records}
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    return text


# --------------------------------------------------------------------------
# Campaign
# --------------------------------------------------------------------------


def campaign_cases(seeds: Sequence[fuzz.Seed], seed: int, inputs: int, modes: Sequence[str]) -> Iterator[fuzz.Case]:
    """Input 0 in every mode, then input 1 ..., so a budget cut keeps modes even."""
    for index in range(inputs):
        for mode in modes:
            yield fuzz.make_case(seeds, seed, index, mode)


def progress(done: int, tally: Tally, start: float) -> None:
    bad = {k: sum(c[k] for c in tally.counts.values()) for k in REPORTED}
    print(f"  {done} runs, {time.monotonic() - start:.0f} s, {bad}, {len(tally.groups)} groups",
          file=sys.stderr, flush=True)  # fmt: skip


def run_campaign(pool: fuzz.WorkerPool, cases: Iterator[fuzz.Case], deadline: float | None, keep: int) -> Tally:
    """Run the cases; count every outcome and group the reported ones."""
    tally = Tally()
    start = last = time.monotonic()
    done = 0
    for number, case, outcome in pool.run(cases, deadline):
        tally.add(Example(number, case, outcome), keep)
        done += 1
        if time.monotonic() - last > 30:
            progress(done, tally, start)
            last = time.monotonic()
    return tally


def minimize_groups(pool: fuzz.WorkerPool, tally: Tally, budget: float) -> None:
    """Shrink the smallest input of each internal-error group, and with a
    quarter of the time each unlocated one (hangs are left whole: each try
    would cost a timeout)."""
    for group in tally.ordered_groups():
        seconds = {"internal": budget, "unlocated": budget / 4}.get(group.kind, 0)
        if seconds <= 0:
            continue
        first = group.examples[0]
        check = fuzz.same_failure(pool, first.case, group.signature)
        group.minimized = fuzz.minimize(first.case.text, check, seconds)
        print(f"  minimized {group.signature[:80]}: {len(first.case.text)} -> {len(group.minimized)} chars",
              file=sys.stderr, flush=True)  # fmt: skip


# --------------------------------------------------------------------------
# Replaying files
# --------------------------------------------------------------------------


def replay(pool: fuzz.WorkerPool, files: Sequence[str], modes: Sequence[str]) -> int:
    """Run each file unmutated in each mode; print one line per run. Exit
    status 1 if any run is an internal error or a hang."""
    cases = [fuzz.Case(Path(f).read_text(errors="replace"), fuzz.MODES[m], m, f) for f in files for m in modes]
    results = sorted(pool.run(cases), key=lambda r: r[0])
    bad = 0
    for _, case, outcome in results:
        what = outcome.signature or outcome.message
        print(f"{case.origin}  [{case.mode}]  {outcome.kind}: {what[:160]}")
        bad += outcome.kind in ("internal", "hang")
    return 1 if bad else 0


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--seed", type=int, default=1, help="campaign seed (default 1)")
    p.add_argument("--inputs", type=int, default=2000, help="mutated inputs, each run in every mode (default 2000)")
    p.add_argument("--modes", default="parse,ptx,llvm", help="comma-separated: parse, ptx, llvm")
    p.add_argument("--timeout", type=float, default=20.0, help="seconds per run before it counts as a hang")
    p.add_argument("--budget", type=float, default=None, help="stop starting runs after this many seconds")
    p.add_argument("--out", type=Path, default=Path("fuzz-out"), help="folder for groups and summaries")
    p.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    p.add_argument("--memory-gb", type=float, default=4.0, help="address-space cap per worker (default 4)")
    p.add_argument("--keep", type=int, default=3, help="inputs kept per group (the smallest; default 3)")
    p.add_argument("--minimize", type=float, default=60.0, help="seconds to minimize each group (0: off)")
    p.add_argument("--replay", nargs="+", metavar="FILE", help="run these files unmutated instead of a campaign")
    args = p.parse_args(argv)
    args.modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in args.modes if m not in fuzz.MODES]
    if unknown:
        p.error(f"unknown mode(s) {unknown}; choose from {list(fuzz.MODES)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    fuzz.warm_up()
    pool = fuzz.WorkerPool(args.workers, args.timeout, int(args.memory_gb * (1 << 30)))
    with pool:
        if args.replay:
            return replay(pool, args.replay, args.modes)
        seeds = fuzz.collect_seeds(ROOT)
        start = time.monotonic()
        deadline = start + args.budget if args.budget else None
        print(f"{len(seeds)} seeds; {args.inputs} inputs x {args.modes}", file=sys.stderr, flush=True)
        tally = run_campaign(pool, campaign_cases(seeds, args.seed, args.inputs, args.modes), deadline, args.keep)
        elapsed = time.monotonic() - start
        minimize_groups(pool, tally, args.minimize)
    args.out.mkdir(parents=True, exist_ok=True)
    settings = {k: v for k, v in vars(args).items() if k not in ("out", "replay")}
    settings["wall_s"] = round(elapsed)
    print(write_summary(args.out, tally, args.modes, settings))
    print(f"wrote {args.out / 'summary.md'} ({elapsed:.0f} s of runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
