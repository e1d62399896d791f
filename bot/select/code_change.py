"""Whether a Python file's code changed between two versions: its syntax trees without docstrings compared, pure.

Comments and formatting never reach the syntax tree, and a docstring is dropped from it, so an
edit of only those leaves the code, and every export of it, as it was (docs/selection.md).
"""

from __future__ import annotations

import ast

# The nodes whose body may open with a docstring (Python's own `ast.get_docstring` list).
_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def same_code(before: str, after: str) -> bool:
    """True when both versions parse and differ only in comments, docstrings or formatting.

    A version that does not parse counts as changed code: nothing can be said of it.
    """
    try:
        trees = [ast.parse(text) for text in (before, after)]
    except (SyntaxError, ValueError):  # ValueError: a NUL byte in the source
        return False
    # Without line and column attributes, two trees of the same code dump alike however it is laid out.
    return ast.dump(_undocumented(trees[0])) == ast.dump(_undocumented(trees[1]))


def _undocumented(tree: ast.Module) -> ast.Module:
    """The tree with the docstring of the module, of each class and of each function removed (in place)."""
    for node in ast.walk(tree):
        if isinstance(node, _DOCUMENTED) and node.body and _is_docstring(node.body[0]):
            node.body = node.body[1:]
    return tree


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )
