"""Parity: upstream's pytest and export-bot on the same cells of one checkout; every cell must agree, and what each costs.

    python benchmarks/parity.py CHECKOUT --models BertModel,LlamaForCausalLM --backends dynamo [-n 2] [--skiplists DIR]

Upstream's side is plain `pytest` over the checkout's test modules (`RUN_SLOW=1`, `-k` on the
export test names), with a reporting plugin that only records each report, subTests included.
A cell's upstream verdict is read from the test method's reports for that model class: the
first failing `subTest` labelled `ModelClass/…` (failed, at that component, with that
assertion), every such `subTest` passed (passed), the method's own skip (skipped, with its
reason), or a method that ran no `subTest` for the class (skipped by the module's tables).
export-bot's side is `export-bot run` on the same checkout and cells, read from its JUnit.
Prints cells, agreements, each difference with both verdicts, and wall / CPU time side by side.
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
import re  # noqa: E402
import tempfile  # noqa: E402
import xml.etree.ElementTree as ET  # noqa: E402
from dataclasses import dataclass  # noqa: E402

from benchmarks.timing import timed  # noqa: E402

REPORTER = "export_bot_parity_reporter"
REPORTER_SOURCE = '''"""Records every test report (subTests included) as one JSON line in $PARITY_OUT; decides nothing."""
import json
import os


def _message(report):
    if report.skipped and isinstance(report.longrepr, tuple):
        return report.longrepr[2].removeprefix("Skipped: ")
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    if crash is not None:
        return crash.message.strip().splitlines()[0]
    text = report.longreprtext.strip()
    return text.splitlines()[-1] if text else ""


def pytest_runtest_logreport(report):
    context = getattr(report, "context", None)
    record = {
        "nodeid": report.nodeid,
        "when": report.when,
        "outcome": report.outcome,
        "subtest": getattr(context, "msg", None) if context is not None else None,
        "message": _message(report) if report.outcome != "passed" else "",
    }
    with open(os.environ["PARITY_OUT"], "a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\\n")
'''


@dataclass(frozen=True)
class Verdict:
    """One side's word on one cell: passed, failed (component, assertion), skipped (reason), or absent."""

    outcome: str
    component: str | None = None
    message: str = ""  # the assertion of a failure, or the reason of a skip ("" when a table skipped it)

    def describe(self) -> str:
        where = f" at {self.component}" if self.component else ""
        return f"{self.outcome}{where}" + (f": {self.message}" if self.message else "")


@dataclass(frozen=True)
class Side:
    verdicts: dict[str, Verdict]
    wall: float
    cpu: float
    stages: tuple[tuple[str, float], ...] = ()  # seconds per stage summed over cells (export-bot's JUnit)


def plain(message: str) -> str:
    """`torch._dynamo.exc.UserError: …` (pytest's crash line) and `UserError: …` (export-bot's) read alike."""
    return re.sub(r"^(?:[A-Za-z_]\w*\.)+(?=[A-Za-z_]\w*(?::|$))", "", message.strip())


def test_classes(checkout: Path, cells: list[str]) -> dict[str, str]:
    """Model class → the pytest node id of the test class that covers it (as export-bot resolves it)."""
    sys.path.insert(0, str(ROOT))
    from bot.cells import Cell
    from bot.models.sources import get_source

    source = get_source(f"transformers-tests:{checkout}")
    found = {}
    for cell in map(Cell.parse, cells):
        if cell.model_class not in found:
            try:
                test_class, _ = source.test_class_for(cell.model_class, generate=cell.generate)
            except Exception as exc:  # the source's NotBuildable / SetupProblem: a class this checkout cannot run
                raise SystemExit(
                    f"parity: {cell.model_class}: {exc} (--models takes model classes: BertModel)"
                ) from None
            module = test_class.__module__.replace(".", "/") + ".py"
            found[cell.model_class] = f"{module}::{test_class.__name__}"
    return found


def run_upstream(checkout: Path, cells: list[str], workers: int, work: Path) -> Side:
    """Plain pytest over the test modules that hold these cells, `-k` on their test names."""
    classes = test_classes(checkout, cells)
    (work / f"{REPORTER}.py").write_text(REPORTER_SOURCE, encoding="utf-8")
    out = work / "upstream.jsonl"
    out.unlink(missing_ok=True)
    env = {**os.environ, "RUN_SLOW": "1", "PARITY_OUT": str(out), "PYTHONPATH": str(work)}
    files = sorted({node.split("::")[0] for node in classes.values()})
    names = sorted({cell.split("::")[1] for cell in cells})
    command = [sys.executable, "-m", "pytest", "-p", REPORTER, "-p", "no:cacheprovider", "-q", *files]
    command += ["-k", " or ".join(names), "-n", str(workers)] if workers else ["-k", " or ".join(names)]
    result, wall, cpu = timed(command, cwd=checkout, env=env)
    if not out.is_file():
        raise SystemExit(f"upstream's pytest reported nothing:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return Side({cell: upstream_verdict(cell, classes, records) for cell in cells}, wall, cpu)


def upstream_verdict(cell: str, classes: dict[str, str], records: list[dict]) -> Verdict:
    model_class, name = cell.split("::")
    node = f"{classes[model_class]}::{name}"
    own = [r for r in records if r["nodeid"] == node]
    if not own:
        return Verdict("absent")
    method = [r for r in own if r["subtest"] is None]
    skipped = next((r for r in method if r["outcome"] == "skipped"), None)
    if skipped:
        return Verdict("skipped", message=skipped["message"])
    mine = [r for r in own if r["subtest"] and r["subtest"].startswith(f"{model_class}/")]
    failed = next((r for r in mine if r["outcome"] == "failed"), None)
    if failed:
        return Verdict("failed", failed["subtest"], plain(failed["message"]))
    error = next((r for r in method if r["outcome"] == "failed"), None)
    if error and not any(r["subtest"] for r in own if r["outcome"] == "failed"):
        return Verdict("failed", None, plain(error["message"]))
    return Verdict("passed") if mine else Verdict("skipped")


def run_bot(checkout: Path, cells: list[str], workers: int, skiplists: Path, work: Path) -> Side:
    junit = work / "bot.xml"
    # The checkout's own sources first, as its conftest puts them first for upstream's pytest: the
    # run then tests the checkout's code without installing it into this environment.
    src = checkout / "src"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src)] * (src / "transformers").is_dir() + [str(ROOT)])}
    command = [sys.executable, "-m", "bot", "run", "--source", f"transformers-tests:{checkout}"]
    command += ["--skiplists", str(skiplists), "--cells", ",".join(cells), "-n", str(workers), "--junit", str(junit)]
    result, wall, cpu = timed(command, cwd=work, env=env)
    if not junit.is_file():
        raise SystemExit(f"export-bot wrote no JUnit (exit {result.returncode}):\n{result.stderr[-3000:]}")
    return Side(bot_verdicts(junit), wall, cpu, stage_seconds(junit))


def stage_seconds(junit: Path) -> tuple[tuple[str, float], ...]:
    """The cells' `time.<stage>` properties summed per stage: import (`build`), tester `setup`, the `test` itself."""
    totals: dict[str, float] = {}
    for prop in ET.parse(junit).getroot().iter("property"):
        name = prop.get("name") or ""
        if name.startswith("time."):
            try:
                totals[name[5:]] = totals.get(name[5:], 0.0) + float(prop.get("value") or 0)
            except ValueError:
                continue
    return tuple(totals.items())


def bot_verdicts(junit: Path) -> dict[str, Verdict]:
    verdicts = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        cell = f"{case.get('classname')}::{case.get('name')}"
        failure = case.find("failure") if case.find("failure") is not None else case.find("error")
        skipped = case.find("skipped")
        if failure is not None:
            verdicts[cell] = Verdict("failed", props.get("failed_component"), plain(failure.get("message", "")))
        elif skipped is not None and "has no test method" in skipped.get("message", ""):
            verdicts[cell] = Verdict("absent")
        elif skipped is not None:
            table = skipped.get("message", "").startswith(("EXPORT_SKIPS[", "ONNX_DISABLE_OPTIMIZE[", "the checkout"))
            verdicts[cell] = Verdict("skipped", message="" if table else skipped.get("message", ""))
        else:
            verdicts[cell] = Verdict("passed")
    return verdicts


def differences(upstream: dict[str, Verdict], bot: dict[str, Verdict]) -> list[tuple[str, Verdict, Verdict | None]]:
    """Cells whose verdicts differ: outcome, failing component and assertion, skip reason."""
    return [(cell, verdict, bot.get(cell)) for cell, verdict in upstream.items() if bot.get(cell) != verdict]


def table(upstream: Side, bot: Side, workers: int) -> str:
    diffs = differences(upstream.verdicts, bot.verdicts)
    lines = [
        f"cells: {len(upstream.verdicts)}  agreements: {len(upstream.verdicts) - len(diffs)}  differences: {len(diffs)}",
        *(f"  {cell}: upstream {u.describe()} | export-bot {b.describe() if b else 'missing'}" for cell, u, b in diffs),
        f"{'':12}{'wall s':>10}{'CPU s':>10}   (-n {workers})",
        f"{'pytest':12}{upstream.wall:>10.1f}{upstream.cpu:>10.1f}",
        f"{'export-bot':12}{bot.wall:>10.1f}{bot.cpu:>10.1f}",
        f"{'ratio':12}{bot.wall / upstream.wall:>10.2f}{bot.cpu / max(upstream.cpu, 1e-9):>10.2f}",
    ]
    if bot.stages:
        # Summed over cells, so with workers the sum exceeds the wall time; the rest of the wall time
        # (serial only) is the process: interpreter and torch import, collection, the run's own bookkeeping.
        summed = sum(seconds for _, seconds in bot.stages)
        parts = ", ".join(f"{stage} {seconds:.1f}" for stage, seconds in bot.stages)
        rest = f"; outside cells {bot.wall - summed:.1f}" if not workers else ""
        lines.append(f"export-bot seconds by stage, summed over cells: {parts}{rest}")
    return "\n".join(lines)


def select_cells(checkout: Path, models: str, backends: str, shapes: str) -> list[str]:
    sys.path.insert(0, str(ROOT))
    from bot.models.sources import get_source
    from bot.run.selection import CellRequest, select_from_source, split_names

    selection = CellRequest(
        models=split_names([models]), backends=split_names([backends]), shapes=split_names([shapes])
    )
    return [cell.id for cell in select_from_source(selection, get_source(f"transformers-tests:{checkout}"))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path)
    parser.add_argument("--models", required=True)
    parser.add_argument("--backends", default="dynamo")
    parser.add_argument("--shapes", default="static,dynamic")
    parser.add_argument(
        "--skiplists", type=Path, help="TOML skiplists (default: none, so the module's own tables decide on both sides)"
    )
    parser.add_argument("-n", type=int, default=0, dest="workers", help="workers for both sides (0: serial)")
    parser.add_argument(
        "--json", type=Path, help="also write both sides' verdicts here (cell → outcome, component, message)"
    )
    args = parser.parse_args(argv)
    checkout = args.checkout.resolve()
    cells = select_cells(checkout, args.models, args.backends, args.shapes)
    with tempfile.TemporaryDirectory(prefix="parity-") as tmp:
        work = Path(tmp)
        skiplists = args.skiplists or work / "skiplists"
        skiplists.mkdir(exist_ok=True)
        upstream = run_upstream(checkout, cells, args.workers, work)
        bot = run_bot(checkout, cells, args.workers, skiplists.resolve(), work)
    print(table(upstream, bot, args.workers))
    if args.json:
        sides = {"upstream": upstream.verdicts, "bot": bot.verdicts}
        data = {side: {cell: vars(v) for cell, v in verdicts.items()} for side, verdicts in sides.items()}
        args.json.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return 0 if not differences(upstream.verdicts, bot.verdicts) else 1


if __name__ == "__main__":
    raise SystemExit(main())
