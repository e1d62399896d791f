"""Do a checkout's Python skip tables and its TOML skiplists agree? One source of truth, checked (docs/skiplists.md).

The module's tables are read through the AST (bot/skiplist/importer.py), never run. Each table
the module spells as a literal is compared, entry by entry, with the TOML file of its name in
lower case (`EXPORT_SKIPS` ↔ `export_skips.toml`); a module that reads a table from that file
instead (the lines docs/skiplists.md shows) agrees by construction. Pure: texts in, differences out.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass

from bot.skiplist.importer import ModuleTables

Value = str | tuple[str, ...]
Tables = Mapping[str, Mapping[str, Mapping[str, Value]]]  # scope → model class → reason (or names)


@dataclass(frozen=True)
class Difference:
    """One entry the two sides disagree on: `module` or `toml` is None where that side lacks it."""

    table: str  # `EXPORT_SKIPS`
    scope: str
    model_class: str
    module: Value | None
    toml: Value | None

    def __str__(self) -> str:
        where = f"{self.table}[{self.scope!r}] {self.model_class}"
        if self.toml is None:
            return f"{where}: only in the module: {_show(self.module)}"
        if self.module is None:
            return f"{where}: only in {self.table.lower()}.toml: {_show(self.toml)}"
        return f"{where}: the reasons differ: module {_show(self.module)}, TOML {_show(self.toml)}"


@dataclass(frozen=True)
class TableCheck:
    """What was compared, what the module reads from the TOML itself, and every difference."""

    compared: tuple[str, ...]  # table names compared entry by entry
    read_from_toml: tuple[str, ...]  # tables the module assigns from something else than a literal
    differences: tuple[Difference, ...]
    missing: tuple[str, ...] = ()  # TOML files whose table the module does not define at all


def compare_tables(module: ModuleTables, source: str, toml: Mapping[str, Tables]) -> TableCheck:
    """Compare each literal table of the module with the TOML file of its name (`toml`: file name → its scopes).

    `source` is the module's text: a table it assigns from a call (reading the TOML) is not a
    literal and agrees by construction. A module table with no TOML file drives the run as it is
    (docs/runner.md), so it is not compared; a TOML file with no table of its name is `missing`.
    """
    literal = {table.name: table for table in module.tables}
    assigned = _assigned_names(source)
    compared, differences = [], []
    for table in module.tables:
        if table.file_name not in toml:
            continue
        compared.append(table.name)
        ours = {scope.name: dict(scope.entries) for scope in table.scopes}
        differences += _differences(table.name, ours, toml[table.file_name])
    names = {file.removesuffix(".toml").upper(): file for file in toml}
    read_from_toml = tuple(sorted(n for n in names if n not in literal and n in assigned))
    missing = tuple(sorted(file for n, file in names.items() if n not in literal and n not in assigned))
    return TableCheck(tuple(compared), read_from_toml, tuple(differences), missing)


def _differences(name: str, module: Tables, toml: Tables) -> list[Difference]:
    found = []
    for scope in dict.fromkeys([*module, *toml]):  # the module's order, then what only the TOML has
        ours, theirs = module.get(scope, {}), toml.get(scope, {})
        for model_class in dict.fromkeys([*ours, *theirs]):
            a, b = ours.get(model_class), theirs.get(model_class)
            if a != b:
                found.append(Difference(name, scope, model_class, a, b))
    return found


def _assigned_names(source: str) -> frozenset[str]:
    """Upper-case names the module assigns at its top level, from whatever expression."""
    names = set()
    for stmt in ast.parse(source).body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
        names |= {t.id for t in targets if isinstance(t, ast.Name) and t.id.isupper()}
    return frozenset(names)


def _show(value: Value | None) -> str:
    """Whole: two reasons that differ may differ at their end."""
    return repr(list(value)) if isinstance(value, tuple) else f'"{value}"'
