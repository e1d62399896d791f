"""Layers: selection and the models package sit below the runner and never import it.

Selection runs in light jobs (no torch), and `bot.models` (catalogue, index, sources) is the one
place both selection and the runner read; an import of `bot.run` from either would tie them back
together, and selection importing the sources would pull model building into the light jobs.
Checked on the source with the AST, so an import inside a function counts too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BELOW_THE_RUNNER = sorted((ROOT / "bot" / "select").rglob("*.py")) + sorted((ROOT / "bot" / "models").rglob("*.py"))
FORBIDDEN = "bot.run"
# Selection reads the catalogue and the index, never the sources (they build models).
LIGHT_READERS = sorted((ROOT / "bot" / "select").rglob("*.py")) + [
    ROOT / "bot" / "models" / "catalog.py",
    ROOT / "bot" / "models" / "index.py",
]
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


def _is_forbidden(module: str) -> bool:
    return module == FORBIDDEN or module.startswith(FORBIDDEN + ".")


def test_the_scan_sees_every_import_spelling():
    probe = ROOT / "bot" / "select" / "_layering_probe.py"  # never written: only its path is used
    text = (
        "import bot.run.plan\n"
        "from bot.run import shard\n"
        "from bot import run\n"
        "def f():\n    from ..run.plan import x\n"
        "from bot.runner_notes import x\n"
    )
    modules = [m for _, m in imported_modules(probe, text)]
    assert [m for m in modules if _is_forbidden(m)] == [
        "bot.run.plan",
        "bot.run",
        "bot.run.shard",
        "bot.run",
        "bot.run.plan",
        "bot.run.plan.x",
    ]
    assert "bot.runner_notes" in modules  # a sibling named like it is not the runner


@pytest.mark.parametrize("path", BELOW_THE_RUNNER, ids=lambda p: str(p.relative_to(ROOT)))
def test_selection_and_the_catalogue_do_not_import_the_runner(path):
    bad = [f"line {line}: {module}" for line, module in imported_modules(path) if _is_forbidden(module)]
    assert bad == [], f"{path.relative_to(ROOT)} imports the runner"


@pytest.mark.parametrize("path", LIGHT_READERS, ids=lambda p: str(p.relative_to(ROOT)))
def test_selection_reads_the_catalogue_not_the_sources(path):
    bad = [
        f"line {line}: {module}"
        for line, module in imported_modules(path)
        if module == SOURCES or module.startswith(SOURCES + ".")
    ]
    assert bad == [], f"{path.relative_to(ROOT)} imports the model sources"
