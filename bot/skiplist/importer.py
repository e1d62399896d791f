"""Import a Python `dict[str, dict[str, str]]` skip literal (the seed's `EXPORT_SKIPS`) as skiplist TOML, never executing it."""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass

from bot.skiplist.document import format_entry, format_header
from bot.skiplist.model import SkiplistError


class SkiplistImportError(SkiplistError):
    """The module has no usable dict of that name; the message names file, line and what is wrong."""


@dataclass(frozen=True)
class ImportedScope:
    """One scope of the literal with the comment lines written above its key (without `#`)."""

    name: str
    entries: tuple[tuple[str, str], ...]
    comments: tuple[str, ...] = ()


def read_skip_dict(source: str, name: str = "EXPORT_SKIPS", filename: str = "<string>") -> list[ImportedScope]:
    """The scopes of the module-level `name = {...}` literal, in the author's order.

    The AST joins implicit string concatenation and drops parentheses for us; comments are
    not in the AST, so `tokenize` supplies the comment block directly above each scope key.
    """
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        raise SkiplistImportError(f"{filename}:{exc.lineno}:{exc.offset}: not valid Python: {exc.msg}") from None
    except (RecursionError, MemoryError):
        raise SkiplistImportError(f"{filename}: nested too deeply to read; a skip dict is two levels deep") from None
    node = _find_assignment(tree, name)
    if node is None:
        raise SkiplistImportError(f"{filename}: no module-level assignment to {name!r}; pass --name NAME")
    if not isinstance(node, ast.Dict):
        raise SkiplistImportError(f"{filename}:{node.lineno}:{node.col_offset + 1}: {name} is not a dict literal")
    comments = _comment_lines(source)
    scopes = []
    seen_scopes: dict[str, ast.expr] = {}
    for key, value in zip(node.keys, node.values):
        scope = _string(key, filename, f"a scope key of {name}")
        _refuse_duplicate(seen_scopes, scope, key, filename, f"scope {scope!r} of {name}")
        if not isinstance(value, ast.Dict):
            raise SkiplistImportError(f"{_where(filename, value)}: the value of scope {scope!r} is not a dict literal")
        entries, seen_classes = [], {}
        for k, v in zip(value.keys, value.values):
            model_class = _string(k, filename, f"a model class in {scope!r}")
            _refuse_duplicate(seen_classes, model_class, k, filename, f"model class {model_class!r} in {scope!r}")
            entries.append((model_class, _string(v, filename, f"a reason in {scope!r}")))
        scopes.append(ImportedScope(scope, tuple(entries), _block_above(comments, key.lineno)))
    return scopes


def _refuse_duplicate(seen: dict[str, ast.expr], key: str, node: ast.expr, filename: str, what: str) -> None:
    # Python keeps the last of two equal keys without a word, and TOML refuses them: which
    # entry the author meant is theirs to say, at the line they wrote.
    first = seen.setdefault(key, node)
    if first is not node:
        raise SkiplistImportError(
            f"{_where(filename, node)}: duplicate {what} (first at line {first.lineno}); "
            "Python would silently keep only the last one: remove or merge one of them"
        )


def to_toml(scopes: list[ImportedScope]) -> str:
    """Skiplist TOML: one table per scope, its comment block above it, entries in order."""
    blocks = []
    for scope in scopes:
        lines = [f"#{c}" if c.startswith(" ") or not c else f"# {c}" for c in scope.comments]
        lines.append(format_header(scope.name))
        lines += [format_entry(model_class, reason) for model_class, reason in scope.entries]
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def import_skiplist(source: str, name: str = "EXPORT_SKIPS", filename: str = "<string>") -> str:
    return to_toml(read_skip_dict(source, name, filename))


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
