"""Import a module's skip tables (`EXPORT_SKIPS`, `ONNX_DISABLE_OPTIMIZE`, …) as skiplist TOML, never executing it."""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass

from bot.skiplist.document import format_entry, format_header, format_names
from bot.skiplist.model import SkiplistError


class SkiplistImportError(SkiplistError):
    """The module has no usable dict of that name; the message names file, line and what is wrong."""


Value = str | tuple[str, ...]  # a reason, or names (`EXECUTORCH_PARTITION_EXCLUDE`'s partitioner configs)


@dataclass(frozen=True)
class ImportedScope:
    """One scope of the literal with the comment lines written above its key (without `#`).

    `notes` holds, per entry, the comment lines written above it: where a table's values are
    not reasons (a tuple of config names), its comments are the only reasons it has.
    """

    name: str
    entries: tuple[tuple[str, Value], ...]
    comments: tuple[str, ...] = ()
    notes: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True)
class ImportedTable:
    """One upper-case table of the module: its name, the comment block above it, its scopes."""

    name: str
    line: int
    scopes: tuple[ImportedScope, ...]
    comments: tuple[str, ...] = ()

    @property
    def file_name(self) -> str:
        """The TOML file the checkout's run-time replacement reads for this table (bot/run/checkout_tests.py)."""
        return f"{self.name.lower()}.toml"


@dataclass(frozen=True)
class Refused:
    """An upper-case table the importer could not convert, and why (one line)."""

    name: str
    line: int
    why: str


@dataclass(frozen=True)
class ModuleTables:
    """Every upper-case dict or set literal at the module's top level: converted, or refused with why."""

    tables: tuple[ImportedTable, ...]
    refused: tuple[Refused, ...]


def read_skip_dict(source: str, name: str = "EXPORT_SKIPS", filename: str = "<string>") -> list[ImportedScope]:
    """The scopes of the module-level `name = {...}` literal, in the author's order.

    The AST joins implicit string concatenation and drops parentheses for us; comments are
    not in the AST, so `tokenize` supplies the comment block directly above each scope key.
    """
    tree = _parse(source, filename)
    node = _find_assignment(tree, name)
    if node is None:
        raise SkiplistImportError(f"{filename}: no module-level assignment to {name!r}; pass --name NAME")
    return _scopes(node, name, filename, _comment_lines(source))


def _parse(source: str, filename: str) -> ast.Module:
    try:
        return ast.parse(source, filename=filename)
    except SyntaxError as exc:
        raise SkiplistImportError(f"{filename}:{exc.lineno}:{exc.offset}: not valid Python: {exc.msg}") from None
    except (RecursionError, MemoryError):
        raise SkiplistImportError(f"{filename}: nested too deeply to read; a skip dict is two levels deep") from None


def read_tables(source: str, filename: str = "<string>") -> ModuleTables:
    """Every module-level upper-case dict or set literal, each converted or refused with its reason.

    A table is what the checkout's run-time replacement can drive: scope → model class → reason
    (or → a tuple of names). Other upper-case assignments (a call, a number) are not tables.
    """
    tree = _parse(source, filename)
    comments = _comment_lines(source)
    tables, refused = [], []
    for stmt, name, node in _upper_case_literals(tree):
        if isinstance(node, ast.Set):
            why = f"{_where(filename, node)}: a set, not scope → model class tables; write it as a dict of scopes"
            refused.append(Refused(name, stmt.lineno, why))
            continue
        try:
            scopes = _scopes(node, name, filename, comments)
        except SkiplistImportError as exc:
            refused.append(Refused(name, stmt.lineno, str(exc)))
            continue
        tables.append(ImportedTable(name, stmt.lineno, tuple(scopes), _block_above(comments, stmt.lineno)))
    return ModuleTables(tuple(tables), tuple(refused))


def _upper_case_literals(tree: ast.Module):
    for stmt in tree.body:
        targets = (
            stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
        )
        value = getattr(stmt, "value", None)
        if len(targets) != 1 or not isinstance(targets[0], ast.Name) or not isinstance(value, (ast.Dict, ast.Set)):
            continue
        name = targets[0].id
        if name.isupper() and not name.startswith("_"):
            yield stmt, name, value


def _scopes(node: ast.expr, name: str, filename: str, comments: dict[int, str]) -> list[ImportedScope]:
    if not isinstance(node, ast.Dict):
        raise SkiplistImportError(f"{filename}:{node.lineno}:{node.col_offset + 1}: {name} is not a dict literal")
    scopes = []
    seen_scopes: dict[str, ast.expr] = {}
    for key, value in zip(node.keys, node.values):
        scope = _string(key, filename, f"a scope key of {name}")
        _refuse_duplicate(seen_scopes, scope, key, filename, f"scope {scope!r} of {name}")
        if not isinstance(value, ast.Dict):
            raise SkiplistImportError(f"{_where(filename, value)}: the value of scope {scope!r} is not a dict literal")
        entries, notes, seen_classes = [], [], {}
        for k, v in zip(value.keys, value.values):
            model_class = _string(k, filename, f"a model class in {scope!r}")
            _refuse_duplicate(seen_classes, model_class, k, filename, f"model class {model_class!r} in {scope!r}")
            entries.append((model_class, _value(v, filename, f"a reason in {scope!r}")))
            notes.append(_block_above(comments, k.lineno) if k is not None and k.lineno > value.lineno else ())
        # A comment on the line that opens the dict is the table's (or scope's), not this key's.
        above = _block_above(comments, key.lineno) if key.lineno > node.lineno else ()
        scopes.append(ImportedScope(scope, tuple(entries), above, tuple(notes)))
    return scopes


def _value(node: ast.expr, filename: str, what: str) -> Value:
    """A reason string, or a tuple/list of string literals (names the table feeds to an exporter config)."""
    if isinstance(node, (ast.Tuple, ast.List)) and node.elts:
        return tuple(_string(element, filename, what.replace("a reason", "a name")) for element in node.elts)
    return _string(node, filename, what)


def _refuse_duplicate(seen: dict[str, ast.expr], key: str, node: ast.expr, filename: str, what: str) -> None:
    # Python keeps the last of two equal keys without a word, and TOML refuses them: which
    # entry the author meant is theirs to say, at the line they wrote.
    first = seen.setdefault(key, node)
    if first is not node:
        raise SkiplistImportError(
            f"{_where(filename, node)}: duplicate {what} (first at line {first.lineno}); "
            "Python would silently keep only the last one: remove or merge one of them"
        )


def to_toml(scopes: list[ImportedScope] | tuple[ImportedScope, ...], comments: tuple[str, ...] = ()) -> str:
    """Skiplist TOML: the table's own comment block first, then one table per scope, its comments above it."""
    blocks = ["\n".join(_comment(c) for c in comments) + "\n"] if comments else []
    for scope in scopes:
        lines = [_comment(c) for c in scope.comments]
        lines.append(format_header(scope.name))
        notes = scope.notes or ((),) * len(scope.entries)
        for (model_class, value), note in zip(scope.entries, notes):
            lines += [_comment(c) for c in note]
            lines.append(
                format_entry(model_class, value) if isinstance(value, str) else format_names(model_class, value)
            )
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def _comment(text: str) -> str:
    return f"#{text}" if text.startswith(" ") or not text else f"# {text}"


def import_skiplist(source: str, name: str = "EXPORT_SKIPS", filename: str = "<string>") -> str:
    """One table's TOML, with the comment block written above its assignment."""
    return to_toml(read_skip_dict(source, name, filename), table_comments(source, name))


def table_comments(source: str, name: str) -> tuple[str, ...]:
    """The comment block right above the module-level assignment to `name` (call after read_skip_dict accepted it)."""
    node = _find_assignment(ast.parse(source), name)
    return _block_above(_comment_lines(source), node.lineno) if node is not None else ()


def _find_assignment(tree: ast.Module, name: str) -> ast.expr | None:
    for stmt in tree.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == name:
            return stmt.value
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
            return stmt.value
    return None


def _string(node: ast.expr | None, filename: str, what: str) -> str:
    # `None` keys are `**spread` entries: the literal would need executing to know them.
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if node is None:
        raise SkiplistImportError(f"{filename}: {what} is a `**` spread; write the entries out")
    raise SkiplistImportError(f"{_where(filename, node)}: {what} must be a string literal, not {_show(node)}")


def _show(node: ast.expr) -> str:
    """The node as written, shortened; a deeply nested literal is named by its kind (unparsing it would recurse)."""
    if isinstance(node, (ast.Dict, ast.List, ast.Tuple, ast.Set)):
        nested = any(
            isinstance(child, (ast.Dict, ast.List, ast.Tuple, ast.Set)) for child in ast.iter_child_nodes(node)
        )
        if nested:
            return f"a nested {type(node).__name__.lower()} literal"
    try:
        text = ast.unparse(node)
    except RecursionError:
        return f"a deeply nested {type(node).__name__} expression"
    return f"`{text}`" if len(text) <= 60 else f"`{text[:57]}...`"


def _where(filename: str, node: ast.AST) -> str:
    return f"{filename}:{node.lineno}:{node.col_offset + 1}"


def _comment_lines(source: str) -> dict[int, str]:
    """line number → comment text, for lines that hold nothing but a comment."""
    found: dict[int, str] = {}
    code_lines: set[int] = set()
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            found[tok.start[0]] = tok.string[1:]
        elif tok.type not in skip:
            code_lines.update(range(tok.start[0], tok.end[0] + 1))
    return {line: text for line, text in found.items() if line not in code_lines}


def _block_above(comments: dict[int, str], line: int) -> tuple[str, ...]:
    block = []
    line -= 1
    while line in comments:
        block.append(comments[line].rstrip())
        line -= 1
    return tuple(reversed(block))
