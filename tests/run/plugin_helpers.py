"""Helpers for the harness tests: run a plan through the real pytest session and read its JUnit back."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from bot.cells import Cell
from bot.run.plan import RunPlan
from bot.run.session import SessionOptions, run_session

FIXTURES = Path(__file__).parent / "fixtures"
MISBEHAVING = f"transformers-tests:{FIXTURES / 'misbehaving_checkout'}"


@dataclass(frozen=True)
class Case:
    """One testcase of the JUnit, as the tests look at it."""

    classname: str
    name: str
    outcome: str  # passed, failure, error, skipped
    message: str | None
    text: str
    properties: dict[str, str]
    kind: str | None = None  # the outcome element's `type` attribute

    @property
    def cell(self) -> Cell:
        return Cell.from_testcase(self.classname, self.name)


@dataclass(frozen=True)
class Junit:
    suite: dict[str, str]
    cases: dict[str, Case]  # by cell id


def read_junit(path: Path) -> Junit:
    root = ET.parse(path).getroot()
    suite = root.find("testsuite")
    suite_props = {p.get("name"): p.get("value") for p in suite.findall("properties/property")}
    cases = {}
    for element in suite.findall("testcase"):
        outcome, message, text, kind = "passed", None, "", None
        for tag in ("failure", "error", "skipped"):
            child = element.find(tag)
            if child is not None:
                outcome, message, text, kind = tag, child.get("message"), child.text or "", child.get("type")
        props = {p.get("name"): p.get("value") for p in element.findall("properties/property")}
        case = Case(element.get("classname"), element.get("name"), outcome, message, text, props, kind)
        cases[f"{case.classname}::{case.name}"] = case
    return Junit(suite_props, cases)


def write_skiplists(folder: Path, skips: str = "", disable_optimize: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "export_skips.toml").write_text(skips, encoding="utf-8")
    (folder / "onnx_disable_optimize.toml").write_text(disable_optimize, encoding="utf-8")
    return folder


def run_cells(
    tmp_path: Path,
    cell_ids: list[str],
    *,
    source: str = "zoo",
    workers: int | str = 0,
    cell_timeout: float = 600,
    probe: bool = False,
    skips: str = "",
    shard: str | None = None,
    in_process: bool = False,
) -> tuple[int, Junit]:
    plan = RunPlan(
        cells=tuple(Cell.parse(cell_id) for cell_id in cell_ids),
        source=source,
        skiplists=str(write_skiplists(tmp_path / "skiplists", skips)),
        probe=probe,
        shard=shard,
        cell_timeout=cell_timeout,
    )
    junit = tmp_path / "out.xml"
    code = run_session(
        plan,
        SessionOptions(junit=junit, workers=workers, progress=False),
        folder=tmp_path / "session",
        in_process=in_process,
    )
    return code, read_junit(junit)
