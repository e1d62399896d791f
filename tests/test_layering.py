"""Layers: the pipeline reads off the packages (docs/README.md), and no import runs back up it.

From the bottom: the shared root modules (cells, outcomes, scopes, errors, files, settings, toml,
skiplist, setup_problems, profiles, registry, footprints, data), then `bot.models` (catalogue, index, sources: what selection and the
runner both read), then the stages select → run → results → diff → report → propose → publish,
then the dashboard (`bot.site`, a reader of reports). The command line (`bot.cli`, `bot.jobs`,
`__main__`) sits on top and may import anything; inside it, `bot.jobs` composes the stages and never
imports `bot.cli`, which parses options and calls a job. A module may import its own layer
and the layers below it, never one above; and no chain of imports comes back to where it started.
Checked on the source with the AST, so an import inside a function counts too.
"""

from __future__ import annotations

import ast
import itertools
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BOT = ROOT / "bot"
# Bottom to top. A root entry is a module (`cells`) or a package (`skiplist`) directly under bot/.
ROOT_MODULES = ("cells", "outcomes", "scopes", "errors", "files", "settings", "toml", "skiplist", "setup_problems")
ROOT_MODULES += ("profiles",)  # the rules profiles: settings choose one, the runner judges by it
ROOT_MODULES += ("registry",)  # the backends, one declaration each: every stage reads them
ROOT_MODULES += (
    "footprints",
)  # which functions a cell executed: the runner records, the baseline keeps, selection reads
ROOT_MODULES += ("data",)  # package data (the default skiplists, pins, cell times): no code to speak of
LAYERS = ("root", "models", "select", "run", "results", "diff", "report", "propose", "publish", "site")
TOP = ("cli", "jobs", "__main__")  # the command line and the jobs it calls: they compose the stages
# Selection reads the catalogue and the index, never the sources (they build models).
LIGHT_READERS = sorted((BOT / "select").rglob("*.py")) + [BOT / "models" / "catalog.py", BOT / "models" / "index.py"]
SOURCES = "bot.models.sources"


def _package(path: Path) -> list[str]:
    """The package a module's relative imports start from: its folder (for `__init__.py` too)."""
    return list(path.relative_to(ROOT).parent.parts)


def imported_modules(path: Path, text: str | None = None) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in the file (or `text`, as if at `path`), relative ones resolved."""
    found = []
    source = path.read_text(encoding="utf-8") if text is None else text
    for node in ast.walk(ast.parse(source, filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = _package(path)
                base = package[: len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            # `from bot import run` names the package in the imported names, not in the module.
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def bot_modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(BOT.rglob("*.py"))}


def resolve(module: str) -> str | None:
    """The bot module an imported name lives in (`bot.diff.model.Report` → `bot.diff.model`); None outside bot."""
    modules = bot_modules()
    while module and module not in modules:
        module = module.rpartition(".")[0]
    return module or None


def dependencies(path: Path) -> dict[str, int]:
    """Bot modules `path` imports → the first line that does.

    `from bot.select import changes` depends on `bot.select.changes`, not on the package's
    `__init__`: Python runs the package first either way, so that edge says nothing.
    """
    found: dict[str, int] = {}
    names = {(line, name) for line, name in imported_modules(path)}
    for line, name in sorted(names):
        target = resolve(name)
        if target is None or target == module_name(path):
            continue
        # The `from A import B` pair gives A and A.B: keep A only when B is no module of its own.
        if any(other.startswith(target + ".") and resolve(other) != target for ln, other in names if ln == line):
            continue
        found.setdefault(target, line)
    return found


def layer_of(module: str) -> str:
    """The layer a bot module belongs to: its package directly under bot/, or `root`."""
    part = module.split(".")[1] if module.count(".") else ""
    if module == "bot" or part in ROOT_MODULES:
        return "root"
    if part in LAYERS or part in TOP:
        return "top" if part in TOP else part
    raise AssertionError(f"{module} is in no layer: add its package to LAYERS, ROOT_MODULES or TOP in this test")


def _rank(layer: str) -> int:
    return len(LAYERS) if layer == "top" else LAYERS.index(layer)


def _files(layer: str) -> list[Path]:
    return [path for module, path in bot_modules().items() if layer_of(module) == layer]


def test_every_module_is_in_a_layer_and_every_layer_has_modules():
    layers = {layer_of(module) for module in bot_modules()}
    assert layers == {*LAYERS, "top"}


def test_every_name_the_layers_list_exists():
    """A deleted module left in the lists would hide a new one of the same name in the wrong layer."""
    present = {path.stem if path.suffix == ".py" else path.name for path in BOT.iterdir() if path.name != "__pycache__"}
    assert sorted(set(ROOT_MODULES + LAYERS + TOP) - {"root"} - present) == []
    assert sorted(present - set(ROOT_MODULES + LAYERS + TOP) - {"__init__"}) == []


def test_every_module_this_file_names_exists():
    """The docstring, the root list and the light readers name real modules: a renamed one must be renamed here."""
    text = Path(__file__).read_text(encoding="utf-8")
    named = set(re.findall(r"`(bot(?:\.[a-z_]+)+)`", text)) | {SOURCES}
    assert sorted(name for name in named if name not in bot_modules()) == []
    listed = re.search(r"shared root modules \(([^)]*)\)", __doc__).group(1).replace("\n", " ").split(", ")
    assert sorted(listed) == sorted(ROOT_MODULES)
    assert [path for path in LIGHT_READERS if not path.is_file()] == []


def test_jobs_never_import_the_command_line():
    """Jobs compose the stages for the CLI and for tests alike: a job that parsed options would tie them to click."""
    bad = [
        f"{path.relative_to(ROOT)}:{line}: {module}"
        for module_, path in bot_modules().items()
        if module_.startswith("bot.jobs")
        for module, line in dependencies(path).items()
        if module.startswith(("bot.cli", "bot.__main__"))
    ]
    assert bad == []


def test_every_job_is_composed_in_bot_jobs():
    """One package composes jobs: a `…_job` function (what a command calls) anywhere else is a second place."""
    elsewhere = [
        f"{path.relative_to(ROOT)}:{node.lineno}: {node.name}"
        for module, path in bot_modules().items()
        if not module.startswith("bot.jobs")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef) and node.name.endswith("_job")
    ]
    assert elsewhere == []


def test_the_scan_sees_every_import_spelling():
    probe = BOT / "select" / "_layering_probe.py"  # never written: only its path is used
    text = (
        "import bot.run.plan\n"
        "from bot.run import shard\n"
        "from bot import run\n"
        "def f():\n    from ..run.plan import x\n"
        "from bot.runner_notes import x\n"
        "from bot.diff.model import Report\n"
    )
    modules = [m for _, m in imported_modules(probe, text)]
    assert [m for m in modules if m == "bot.run" or m.startswith("bot.run.")] == [
        "bot.run.plan",
        "bot.run",
        "bot.run.shard",
        "bot.run",
        "bot.run.plan",
        "bot.run.plan.x",
    ]
    assert "bot.runner_notes" in modules  # a sibling named like it is not the runner
    path = probe.with_name("pipeline.py")  # a real module, read as if it held `text`
    found = {resolve(m) for _, m in imported_modules(path, text)} - {None}
    assert found == {"bot", "bot.run", "bot.run.plan", "bot.run.shard", "bot.diff.model"}
    assert {layer_of(m) for m in found} == {"root", "run", "diff"}


@pytest.mark.parametrize("lower, upper", list(itertools.combinations(LAYERS, 2)), ids=str)
def test_no_layer_imports_a_later_one(lower, upper):
    bad = [
        f"{path.relative_to(ROOT)}:{line}: {module}"
        for path in _files(lower)
        for module, line in dependencies(path).items()
        if layer_of(module) == upper
    ]
    assert bad == [], f"`{lower}` comes before `{upper}` in the pipeline, but imports it"


@pytest.mark.parametrize("layer", LAYERS)
def test_nothing_but_the_command_line_imports_it(layer):
    """The top may import any layer; no layer imports the top (`bot.cli`, `bot.jobs`)."""
    bad = [
        f"{path.relative_to(ROOT)}:{line}: {module}"
        for path in _files(layer)
        for module, line in dependencies(path).items()
        if layer_of(module) == "top"
    ]
    assert bad == []


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other round a loop (Tarjan's strongly connected components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in graph[module]:
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = []
            while not group or group[-1] != module:
                group.append(stack.pop())
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_no_import_cycles():
    """Imports inside functions included: a lazy import round a loop is still a loop."""
    assert cycles({module: set(dependencies(path)) for module, path in bot_modules().items()}) == []


def test_the_checks_would_see_a_cycle_and_an_import_back_up():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    probe = BOT / "diff" / "compare.py"
    found = {resolve(m) for _, m in imported_modules(probe, "def f():\n    from bot.report.comment import x\n")}
    assert {layer_of(m) for m in found if m} == {"report"} and _rank("report") > _rank("diff")


@pytest.mark.parametrize("path", LIGHT_READERS, ids=lambda p: str(p.relative_to(ROOT)))
def test_selection_reads_the_catalogue_not_the_sources(path):
    bad = [
        f"line {line}: {module}"
        for line, module in imported_modules(path)
        if module == SOURCES or module.startswith(SOURCES + ".")
    ]
    assert bad == [], f"{path.relative_to(ROOT)} imports the model sources"


def test_no_command_line_module_is_over_250_lines():
    """A command module parses options and calls a job: past 250 lines it holds what belongs elsewhere."""
    long = {path.name: n for path in (BOT / "cli").glob("*.py") if (n := len(path.read_text().splitlines())) > 250}
    assert long == {}, long


# PyGithub (`github`) and the HTTP stack under it have one home: the GitHub adapter's package
# (docs/github.md). Its modules import each other; everything else imports the package itself.
GITHUB_HOME = "bot.publish.github_api"
HTTP_LIBRARIES = ("github", "requests", "urllib3")


def test_pygithub_requests_and_urllib3_are_imported_only_by_the_github_adapter():
    inside = [path for module, path in bot_modules().items() if module.startswith(GITHUB_HOME + ".")]
    assert inside, f"{GITHUB_HOME} is a package of modules"
    assert {m for path in inside for _, m in imported_modules(path)} & set(HTTP_LIBRARIES)
    bad = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for module, path in bot_modules().items()
        if not (module == GITHUB_HOME or module.startswith(GITHUB_HOME + "."))
        for line, name in imported_modules(path)
        if name.split(".")[0] in HTTP_LIBRARIES or (resolve(name) or "").startswith(GITHUB_HOME + ".")
    ]
    assert bad == [], f"only {GITHUB_HOME} imports {', '.join(HTTP_LIBRARIES)}; callers import the package"
