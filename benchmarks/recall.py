"""Recall of the PR gate: do real breaking changes outside model folders get a failing verdict?

    python benchmarks/recall.py --list
    python benchmarks/recall.py [--checkout /work/up] [--work /tmp/recall] [--mutations a,b] [--full] \
        [--footprints BASELINE.json] [--json recall.json] [--markdown recall.md]

`--footprints`: main's baseline.json from a sweep run with `export-bot run --footprints` on the
clone's main (`baseline merge --junit main.xml --source sweep --full`), passed to `select` as the
PR gate passes it.

Each mutation of `benchmarks/recall_mutations.py` (shared modules and test files, never a model
folder) is replayed as a pull request on one clone of the assembled Transformers checkout
(`--checkout`, built by `assemble.sh` from the 5.23.0 sdist and upstream's testers):

1. the clone's main adopts export-bot once, as README.md "Adopting it" says: `[tool.export-bot]`
   in its pyproject.toml (`source = "transformers-tests:."`, `backends = ["dynamo", "onnx"]`: the
   backends the benchmark gates on, to keep the machine time in bounds) and the bot's skiplists;
2. one branch per mutation, from main, with the edit committed;
3. `export-bot select --repo CLONE --base main --head BRANCH --json selection.json`;
4. the branch checked out, `export-bot run --selection selection.json -n 1` with
   `PYTHONPATH=CLONE/src` (the run's CPU time is the PR's cost);
5. `export-bot diff --base MAIN --head head.xml --selection selection.json`: the verdict, against
   main's results for the same cells (run once on main, cached per main commit under
   `WORK/main-<sha>/`, reused by every mutation and every rerun). `diff` is `report` without its
   confirming re-run of newly broken cells: the mutations are deterministic, so the re-run would
   only double the cost of every break.

Ground truth: the cells the mutation really breaks (failed or error on the branch, not on main),
among the mutation's target classes (`targets`, dynamo and ONNX cells), or among the checkout's
whole dynamo + ONNX sweep with `--full`. A cell already run for the PR is not run again. "main's
sweep names it" is whether that ground truth holds a broken cell: the full sweep after the merge
would have caught what the PR gate let through.

Prints one markdown table (file, kind, cells selected, failing selected cells, verdict, CPU
minutes, share of the full sweep, recall) and `recall: K/N`; `--json` writes the figures.
Cells take seconds to a minute each: the first run on main fills the cache (about half an hour
for the 192 dynamo + ONNX cells on two shared cores), each mutation then costs its selection
plus its targets.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# Run as a script, this folder comes first on sys.path, and its select.py would shadow the stdlib's.
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != HERE]

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import xml.etree.ElementTree as ET  # noqa: E402
from dataclasses import asdict, dataclass, field  # noqa: E402

from benchmarks.recall_mutations import Mutation, by_name  # noqa: E402
from benchmarks.timing import timed  # noqa: E402

BACKENDS = ("dynamo", "onnx")
ADOPTION = f'\n[tool.export-bot]\nsource = "transformers-tests:."\nbackends = {json.dumps(list(BACKENDS))}\n'
BROKEN = ("failed", "error")
GIT = ["git", "-c", "user.name=recall", "-c", "user.email=recall@export-bot.invalid"]

LIST_CELLS = """
import json, sys
sys.path.insert(0, sys.argv[1])
from bot.models.sources import get_source
from bot.run.selection import CellRequest, select_from_source, split_names
models = split_names([sys.argv[3]]) if sys.argv[3] else ()
request = CellRequest(models=models, preset=None if models else "all", backends=tuple(sys.argv[4].split(",")))
print(json.dumps([c.id for c in select_from_source(request, get_source("transformers-tests:" + sys.argv[2]))]))
"""


@dataclass
class Result:
    """One mutation's figures."""

    name: str
    path: str
    kind: str
    selected: int = 0
    selected_classes: list[str] = field(default_factory=list)
    failing_selected: list[str] = field(default_factory=list)
    verdict: str = ""
    cpu_minutes: float = 0.0
    wall_minutes: float = 0.0
    share_of_full_sweep: float = 0.0  # the selection's own figure: selected / full_sweep_cells (every catalogued class)
    full_sweep_cells: int = 0
    share_of_checkout_sweep: float = 0.0  # selected cells the checkout can run / its dynamo + ONNX cells
    ground_truth_scope: str = ""
    ground_truth_cells: int = 0  # the targets' cells (or the sweep's)
    judged_cells: int = 0  # cells run on the branch: the ground truth and the selected cells the checkout has
    broken: list[str] = field(default_factory=list)

    @property
    def recall(self) -> bool:
        return self.verdict == "failure" and bool(self.failing_selected)

    @property
    def sweep_names_it(self) -> bool:
        return bool(self.broken)


def git(repo: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()


def bot(clone: Path, *args: str, with_checkout: bool = False) -> tuple[subprocess.CompletedProcess, float, float]:
    """`export-bot ARGS` from inside the clone; `with_checkout` puts its src first, as a run needs."""
    paths = [str(clone / "src")] * with_checkout + [str(ROOT)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    return timed([sys.executable, "-m", "bot", *args], cwd=clone, env=env)


def prepare_clone(checkout: Path, work: Path) -> Path:
    """The clone, its main adopting export-bot (once): the base every mutation branches from."""
    clone = work / "transformers"
    if not (clone / ".git").is_dir():
        subprocess.run(["git", "clone", "-q", str(checkout), str(clone)], check=True)
        git(clone, "checkout", "-q", "-B", "main", "origin/HEAD")
        with (clone / "pyproject.toml").open("a", encoding="utf-8") as out:
            out.write(ADOPTION)
        shutil.copytree(ROOT / "skiplists", clone / "skiplists")
        git(clone, "add", "-A")
        git(clone, "commit", "-q", "-m", "Adopt export-bot: [tool.export-bot] and the skiplists")
    git(clone, "checkout", "-q", "-f", "main")
    return clone


def make_branch(clone: Path, mutation: Mutation) -> str:
    """The mutation's branch from main, its edit committed (recreated each time, so a changed mutation is picked up)."""
    branch = f"recall/{mutation.name}"
    git(clone, "checkout", "-q", "-f", "-B", branch, "main")
    target = clone / mutation.path
    target.write_text(mutation.apply(target.read_text(encoding="utf-8")), encoding="utf-8")
    git(clone, "commit", "-q", "-am", f"{mutation.path}: {mutation.summary}")
    git(clone, "checkout", "-q", "-f", "main")
    return branch


def list_cells(clone: Path, models: tuple[str, ...]) -> list[str]:
    """The checkout's dynamo + ONNX cells for these classes (all classes when none), as its own tests name them."""
    env = {**os.environ, "PYTHONPATH": str(clone / "src")}
    command = [sys.executable, "-c", LIST_CELLS, str(ROOT), str(clone), ",".join(models), ",".join(BACKENDS)]
    done = subprocess.run(command, cwd=clone, env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"listing the checkout's cells failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def outcomes(junit: Path) -> dict[str, str]:
    """cell id → passed, failed, error or skipped, from one JUnit file."""
    found = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        cell = f"{case.get('classname')}::{case.get('name')}"
        kind = next((tag for tag in ("failure", "error", "skipped") if case.find(tag) is not None), None)
        found[cell] = {"failure": "failed", None: "passed"}.get(kind, kind)
    return found


def folder_outcomes(folder: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for junit in sorted(folder.glob("*.xml")):
        found.update(outcomes(junit))
    return found


def run_cells(clone: Path, ref: str, cells: list[str], junit: Path) -> tuple[float, float]:
    """Run these cells on `ref` (checked out), -n 1; wall and CPU seconds."""
    git(clone, "checkout", "-q", "-f", ref)
    ids = ",".join(cells)
    done, wall, cpu = bot(clone, "run", "--source", f"transformers-tests:{clone}", "--cells", ids, "-n", "1",
                          "--junit", str(junit), with_checkout=True)  # fmt: skip
    if not junit.is_file():
        raise SystemExit(f"export-bot run wrote no JUnit on {ref} (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return wall, cpu


def main_results(clone: Path, work: Path, cells: list[str]) -> Path:
    """The folder of main's JUnit, holding at least these cells: the missing ones are run once on main and kept.

    `requested.json` lists every cell ever asked for, so a cell the checkout cannot collect (a core
    class it has no tester for) is asked for once, not on every mutation.
    """
    folder = work / f"main-{git(clone, 'rev-parse', '--short=12', 'main')}"
    folder.mkdir(parents=True, exist_ok=True)
    asked = folder / "requested.json"
    requested = set(json.loads(asked.read_text(encoding="utf-8"))) if asked.is_file() else set()
    missing = sorted(set(cells) - requested - set(folder_outcomes(folder)))
    if missing:
        print(f"  main: running {len(missing)} cells not cached yet", flush=True)
        run_cells(clone, "main", missing, folder / f"main-{len(list(folder.glob('*.xml'))) + 1:03d}.xml")
        asked.write_text(json.dumps(sorted(requested | set(missing))), encoding="utf-8")
    return folder


def base_for(folder: Path, cells: list[str], out: Path) -> Path:
    """Main's JUnit narrowed to these cells, one file per cached file: the base a PR with this selection diffs against.

    The diff lists a base cell the head lacks as not run; main's cache holds far more than one selection.
    """
    out.mkdir(parents=True, exist_ok=True)
    wanted = set(cells)
    for junit in sorted(folder.glob("*.xml")):
        tree = ET.parse(junit)
        for suite in tree.getroot().iter("testsuite"):
            for case in list(suite.findall("testcase")):
                if f"{case.get('classname')}::{case.get('name')}" not in wanted:
                    suite.remove(case)
        tree.write(out / junit.name, encoding="utf-8", xml_declaration=True)
    return out


def measure(
    mutation: Mutation, clone: Path, work: Path, full: bool, sweep: list[str], footprints: Path | None = None
) -> Result:
    out = work / mutation.name
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    result = Result(mutation.name, mutation.path, mutation.kind)
    branch = make_branch(clone, mutation)
    selection_file = out / "selection.json"
    # With main's footprints (a sweep's baseline.json, `run --footprints`), as the PR gate selects.
    recorded = ("--footprints", str(footprints)) if footprints else ()
    done, _, _ = bot(clone, "select", "--repo", str(clone), "--base", "main", "--head", branch,
                     "--json", str(selection_file), *recorded)  # fmt: skip
    if done.returncode:
        raise SystemExit(f"export-bot select failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    selection = json.loads(selection_file.read_text(encoding="utf-8"))
    selected = list(selection.get("cells", []))
    counts = selection.get("counts", {})
    result.selected, result.selected_classes = len(selected), sorted(selection.get("classes", {}))
    result.full_sweep_cells = counts.get("full_sweep_cells", 0)
    result.share_of_full_sweep = counts.get("share_of_full_sweep", 0.0)
    result.share_of_checkout_sweep = len(set(selected) & set(sweep)) / len(sweep)
    truth = sweep if full else list_cells(clone, mutation.targets)
    result.ground_truth_scope = "full dynamo + ONNX sweep" if full else "targets: " + ", ".join(mutation.targets)
    # Only cells the checkout has: `run --cells` refuses a class no tester builds (the zoo's core has some).
    base = main_results(clone, work, sorted((set(selected) & set(sweep)) | set(truth)))
    head = out / "head.xml"
    if selected:
        wall, cpu = run_cells_from_selection(clone, branch, selection_file, head)
        result.wall_minutes, result.cpu_minutes = wall / 60, cpu / 60
    narrowed = base_for(base, selected, out / "base")
    diff = ["diff", "--base", str(narrowed), "--selection", str(selection_file), "--json", str(out / "report.json")]
    diff += ["--markdown", str(out / "comment.md")] + (["--head", str(head)] * bool(selected))
    bot(clone, *diff)
    result.verdict = json.loads((out / "report.json").read_text(encoding="utf-8"))["verdict"]
    main = folder_outcomes(base)
    branch_outcomes = outcomes(head) if selected else {}
    result.failing_selected = sorted(c for c, o in branch_outcomes.items() if o in BROKEN and main.get(c) not in BROKEN)
    extra = sorted(set(truth) - set(branch_outcomes))
    if extra:
        run_cells(clone, branch, extra, out / "truth.xml")
        branch_outcomes.update(outcomes(out / "truth.xml"))
    judged = set(truth) | (set(selected) & set(sweep))
    result.ground_truth_cells, result.judged_cells = len(set(truth)), len(judged)
    result.broken = sorted(c for c in judged if branch_outcomes.get(c) in BROKEN and main.get(c) not in BROKEN)
    git(clone, "checkout", "-q", "-f", "main")
    (out / "result.json").write_text(json.dumps(asdict(result), indent=1), encoding="utf-8")
    return result


def run_cells_from_selection(clone: Path, branch: str, selection: Path, junit: Path) -> tuple[float, float]:
    """`export-bot run --selection FILE` on the branch, as a shard job runs it; wall and CPU seconds."""
    git(clone, "checkout", "-q", "-f", branch)
    done, wall, cpu = bot(clone, "run", "--selection", str(selection), "--source", f"transformers-tests:{clone}",
                          "-n", "1", "--junit", str(junit), with_checkout=True)  # fmt: skip
    if not junit.is_file():
        raise SystemExit(f"export-bot run wrote no JUnit on {branch} (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return wall, cpu


def table(results: list[Result], sweep_size: int) -> str:
    lines = [
        "| mutation | file | kind | cells selected | failing selected | verdict | CPU min | share of full sweep "
        f"| of the checkout's {sweep_size} | recall | broken (of the cells run on the branch) | main's sweep names it |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        failing = f"{len(r.failing_selected)}" + (
            f" ({', '.join(r.failing_selected[:3])}{', …' * (len(r.failing_selected) > 3)})"
            if r.failing_selected
            else ""
        )
        lines.append(
            f"| {r.name} | `{r.path.removeprefix('src/transformers/')}` | {r.kind} | {r.selected} | {failing} | {r.verdict} "
            f"| {r.cpu_minutes:.1f} | {r.share_of_full_sweep:.2%} | {r.share_of_checkout_sweep:.0%} "
            f"| {'yes' if r.recall else 'no'} | {len(r.broken)} of {r.judged_cells or r.ground_truth_cells} | {'yes' if r.sweep_names_it else 'no'} |"
        )
    caught = sum(r.recall for r in results)
    breaking = sum(r.sweep_names_it for r in results)
    lines += ["", f"recall: {caught}/{len(results)} ({breaking} of them break a cell of their ground truth)"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", type=Path, default=Path("/work/up"), help="the assembled Transformers checkout")
    parser.add_argument("--work", type=Path, default=Path("/tmp/recall"), help="the clone, main's cache and the runs")
    parser.add_argument("--mutations", help="comma-separated names (default: all; --list shows them)")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    parser.add_argument("--full", action="store_true", help="ground truth on the whole dynamo + ONNX sweep")
    parser.add_argument("--resume", action="store_true", help="reuse a mutation's figures measured before (WORK/NAME)")
    parser.add_argument("--footprints", type=Path, help="main's baseline.json with footprints, for select")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--markdown", type=Path, help="write the table here")
    args = parser.parse_args(argv)
    mutations = by_name(args.mutations)
    if args.list:
        for m in mutations:
            print(f"{m.name:30} {m.kind:22} {m.path}\n{'':30} {m.summary}")
        return 0
    args.work.mkdir(parents=True, exist_ok=True)
    clone = prepare_clone(args.checkout.resolve(), args.work.resolve())
    sweep = list_cells(clone, ())
    # Main's side of every ground truth in one run (one interpreter and torch import, not one per mutation).
    truths = sweep if args.full else list_cells(clone, tuple(sorted({t for m in mutations for t in m.targets})))
    main_results(clone, args.work.resolve(), truths)
    results = []
    for mutation in mutations:
        print(f"{mutation.name}: {mutation.summary}", flush=True)
        kept = args.work / mutation.name / "result.json"
        if args.resume and kept.is_file():
            results.append(Result(**json.loads(kept.read_text(encoding="utf-8"))))
        else:
            results.append(measure(mutation, clone, args.work.resolve(), args.full, sweep, args.footprints))
        r = results[-1]
        print(f"  selected {r.selected}, failing {len(r.failing_selected)}, verdict {r.verdict}, "
              f"broken {len(r.broken)} of {r.ground_truth_cells}", flush=True)  # fmt: skip
        write(results, len(sweep), args)  # after each mutation: a long run interrupted keeps what it measured
    print(table(results, len(sweep)))
    return 0


def write(results: list[Result], sweep_size: int, args: argparse.Namespace) -> None:
    if args.markdown:
        args.markdown.write_text(table(results, sweep_size) + "\n", encoding="utf-8")
    if args.json:
        figures = [{**asdict(r), "recall": r.recall, "sweep_names_it": r.sweep_names_it} for r in results]
        summary = {"recall": sum(r.recall for r in results), "mutations": len(results), "sweep_cells": sweep_size}
        args.json.write_text(json.dumps({"summary": summary, "mutations": figures}, indent=1), encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
