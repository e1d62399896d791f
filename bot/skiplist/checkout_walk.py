"""The scope walk of a checkout's export test module, read through the AST and never run: the scopes its version knows.

When a checkout's own `tests/exporters/test_export.py` judges the cells (docs/runner.md), its
walk decides which skiplist scopes apply, not bot/scopes.py. The walk is a function of its own
(`_export_scopes`, the seed's), or written inline in `_should_skip` (upstream's newer modules):
there, the statements that build `scopes` are the walk, up to the first that reads anything else
(the table lookup, `next(...)`, a helper). Its body is evaluated here by a small interpreter that
knows only what a walk is made of (lists, `append`, `if`, f-strings, comparisons), so reading a
checkout a pull request controls runs none of its code. A walk written with anything else is
unreadable: the caller says so and refuses rather than guess.

This reading is the fallback of light jobs: where the runner imported the module, it recorded
the walk the module really took per cell (bot/run/observed_walk.py), and that record is used.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from bot import registry
from bot.cells import BACKENDS, TARGETS, Cell
from bot.errors import BotError
from bot.files import read_text

EXPORT_MODULE = Path("tests") / "exporters" / "test_export.py"
WALK_FUNCTION = "_export_scopes"
INLINE_FUNCTION = "_should_skip"  # where newer modules write the walk inline
WALK_LIST = "scopes"  # the list an inline walk builds
# A `_should_skip` parameter that, when true, walks the scopes gating only the generate drive (the
# export itself still runs): upstream's `generate.runtime…` scopes.
GATE_PARAMETER = "runtime"
_MAX_STEPS = 20_000  # statements and expressions per evaluation: a walk is a dozen lines
_MAX_SIZE = 10_000  # characters of a string, items of a list: a walk's scopes are a few short names
_MAX_FLAGS = 6  # boolean parameters enumerated for the vocabulary (2**6 walks per backend)


class WalkUnreadable(BotError):
    """The checkout's export module holds no walk the bot can read; the message says what to do."""


class _Unsupported(Exception):
    def __init__(self, node: ast.AST, what: str) -> None:
        super().__init__(f"line {getattr(node, 'lineno', '?')}: {what}")


@dataclass(frozen=True)
class CheckoutWalk:
    """The checkout's `_export_scopes` (and the walks its module derives from it, such as `.exactness`)."""

    name: str  # `checkout:tests/exporters/test_export.py`, as the cells' `judge` property says
    function: str  # the walk's source text
    derived: tuple[str, ...] = ()  # `[... for scope in scopes]` comprehensions over a walk's result

    @cached_property
    def _tree(self) -> tuple[ast.FunctionDef, list[ast.ListComp]]:
        function = ast.parse(self.function).body[0]
        comps = [ast.parse(text, mode="eval").body for text in self.derived]
        return function, comps  # type: ignore[return-value]

    @property
    def describe(self) -> str:
        """Which walk this is, for every explanation and proposal that follows it."""
        return f"the checkout's {self.name.removeprefix('checkout:')}, read without running it"

    @cached_property
    def parameters(self) -> dict[str, object]:
        """Parameter → default, `self` left out."""
        function = self._tree[0]
        args = function.args.args
        defaults = [None] * (len(args) - len(function.args.defaults)) + list(function.args.defaults)
        values = {a.arg: _literal(d) for a, d in zip(args, defaults)}
        values.pop("self", None)
        return values

    @cached_property
    def _walks(self) -> dict[tuple, tuple[str, ...]]:
        return {}  # arguments → scopes: a proposal asks for the same few dozen walks thousands of times

    def walk(self, **arguments: object) -> list[str]:
        """The scopes `_export_scopes(**arguments)` returns, broad to specific."""
        env = {**self.parameters, **{k: v for k, v in arguments.items() if k in self.parameters}}
        key = tuple(sorted(env.items(), key=lambda item: item[0]))
        if key not in self._walks:
            result = _Interpreter(env).run(self._tree[0].body)
            if not isinstance(result, list) or not all(isinstance(s, str) for s in result):
                raise WalkUnreadable(f"{self.name}: {WALK_FUNCTION} did not return a list of scope names")
            self._walks[key] = tuple(result)
        return list(self._walks[key])

    def _arguments(self, cell: Cell, backend: str | None) -> dict[str, object]:
        axes = f"_{cell.axes}_"
        known = {"generate": cell.generate, "dynamic": cell.dynamic, "static_cache": cell.static_cache}
        arguments: dict[str, object] = {"backend": backend}
        for name, default in self.parameters.items():
            if name in known:
                arguments[name] = known[name]
            elif isinstance(default, bool) and f"_{name}_" in axes:  # a newer axis named like the parameter
                arguments[name] = True
        return arguments

    def skip(self, cell: Cell) -> list[str]:
        """The cell's scopes; a targeted backend's cells (ExecuTorch's) walk its name and then their target, as upstream's tests call it."""
        backends = _walked(cell)
        walks = [s for backend in backends for s in self.walk(**self._arguments(cell, backend))]
        return list(dict.fromkeys(walks))

    def gate(self, cell: Cell) -> list[str]:
        """Scopes that gate only part of the cell (its generate drive): those a `runtime=True` call adds to its walk."""
        if GATE_PARAMETER not in self.parameters or not cell.generate:
            return []
        backends = _walked(cell)
        skip = set(self.skip(cell))
        arguments = [{**self._arguments(cell, backend), GATE_PARAMETER: True} for backend in backends]
        walks = [s for argument in arguments for s in self.walk(**argument)]
        return [s for s in dict.fromkeys(walks) if s not in skip]

    def exactness(self, cell: Cell) -> list[str] | None:
        """The derived walk (`.exactness` twins) when the module has one, else None: no scope drops a comparison."""
        if not self.derived:
            return None
        return [s for scope in self.skip(cell) for s in self._twins(scope)]

    @cached_property
    def _derived_of(self) -> dict[str, tuple[str, ...]]:
        return {}

    def _twins(self, scope: str) -> tuple[str, ...]:
        if scope not in self._derived_of:
            self._derived_of[scope] = tuple(self._derive([scope]))
        return self._derived_of[scope]

    def _derive(self, scopes: list[str]) -> list[str]:
        out: list[str] = []
        for comp in self._tree[1]:
            name = comp.generators[0].iter.id  # type: ignore[attr-defined]
            value = _Interpreter({name: scopes}).expr(comp)
            out += [s for s in value if isinstance(s, str)]
        return out

    def _all_walks(self) -> Iterator[list[str]]:
        flags = [n for n, d in self.parameters.items() if isinstance(d, bool)][:_MAX_FLAGS]
        backends = (None, *BACKENDS, *TARGETS) if "backend" in self.parameters else (None,)
        for backend in backends:
            for values in itertools.product((False, True), repeat=len(flags)):
                arguments = {"backend": backend, **dict(zip(flags, values))}
                if backend is None and not self._takes_no_backend(arguments):
                    continue  # a walk every test calls with a backend (`[backend, f"{backend}.static"]`)
                yield self.walk(**arguments)

    def _takes_no_backend(self, arguments: dict[str, object]) -> bool:
        env = {**self.parameters, **arguments}
        result = _Interpreter(env).run(self._tree[0].body)
        return isinstance(result, list) and all(isinstance(s, str) and not s.startswith("None") for s in result)

    @cached_property
    def known(self) -> tuple[str, ...]:
        """Every scope some call of the walk returns, broad to specific, each followed by its derived twin."""
        position: dict[str, int] = {}
        for walk in self._all_walks():
            for index, scope in enumerate(walk):
                position.setdefault(scope, index)
                position[scope] = min(position[scope], index)
        ordered = sorted(position, key=lambda s: position[s])  # stable: first seen among equal depths
        return tuple(dict.fromkeys(s for scope in ordered for s in (scope, *self._twins(scope))))

    def rank(self, scope: str) -> tuple[int, str]:
        order = self.known
        return (order.index(scope), "") if scope in order else (len(order), scope)


def read_walk(root: Path | str, name: str = "") -> CheckoutWalk | None:
    """The walk of the checkout at `root`; None when it holds no export test module (the bot's own rules judge).

    Raises WalkUnreadable, one line saying what to do, when the module is there but its walk is not readable.
    """
    path = Path(root) / EXPORT_MODULE
    if not path.is_file():
        return None
    label = name or f"{path}"
    try:
        tree = ast.parse(read_text(path), filename=str(path))
    except (SyntaxError, RecursionError, MemoryError, ValueError) as exc:
        raise WalkUnreadable(f"{label}: not readable Python ({exc}); fix the module, or pass --source zoo") from None
    function = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == WALK_FUNCTION), None)
    function = function or _inline_walk(tree)
    if function is None:
        raise WalkUnreadable(
            f"{label}: no {WALK_FUNCTION} function and no `{WALK_LIST}` list built in {INLINE_FUNCTION}, so the bot "
            "cannot tell which scopes this version walks; pass --recorded-walk with the JUnit of a run of these tests "
            "(it records the walk they took), or pass --source zoo for the bot's own walk"
        )
    walk = CheckoutWalk(f"checkout:{EXPORT_MODULE.as_posix()}", ast.unparse(function), _derived(tree))
    try:
        walk.known  # noqa: B018 - evaluates every call once: an unreadable walk is refused here, not mid-proposal
    except _Unsupported as exc:
        raise WalkUnreadable(
            f"{label}: {WALK_FUNCTION} is not readable without running it ({exc}); write it with lists, `if` and "
            "f-strings only, pass --recorded-walk with the JUnit of a run of these tests, or pass --source zoo for the bot's own walk"
        ) from None
    return walk


def _inline_walk(tree: ast.Module) -> ast.FunctionDef | None:
    """`_should_skip`'s walk as a function of its own: its parameters, the statements that build `scopes`, `return scopes`.

    The walk starts at `scopes = [...]` and runs while each statement reads only the parameters,
    the names the walk set and `scopes` (calling nothing but `scopes.append`/`.extend`); the first
    statement that reads anything else (`EXPORT_SKIPS`, `next(...)`) ends it.
    """
    function = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == INLINE_FUNCTION), None)
    body = _walk_body(function) if function is not None else []
    if not body:
        return None
    fields = {"type_params": []} if "type_params" in ast.FunctionDef._fields else {}  # Python 3.12+
    walk = ast.FunctionDef(
        name=WALK_FUNCTION,
        args=function.args,
        body=[*body, ast.Return(ast.Name(WALK_LIST, ast.Load()))],
        decorator_list=[],
        returns=None,
        **fields,
    )
    return ast.fix_missing_locations(walk)


def _walk_body(function: ast.FunctionDef) -> list[ast.stmt]:
    """The statements from `scopes = [...]` on while each is a walk statement (`_walk_statement`)."""
    known = {a.arg for a in function.args.args}
    body: list[ast.stmt] = []
    for statement in function.body:
        starts = isinstance(statement, ast.Assign) and _assigns(statement) == WALK_LIST
        if not body and not starts:
            continue
        if not _walk_statement(statement, known | {WALK_LIST}):
            break
        body.append(statement)
        known |= {t.id for t in ast.walk(statement) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
    return body


def _assigns(statement: ast.Assign) -> str | None:
    target = statement.targets[0] if len(statement.targets) == 1 else None
    return target.id if isinstance(target, ast.Name) else None


def _walk_statement(statement: ast.stmt, known: set[str]) -> bool:
    """A statement of the walk: reads only `known` names, calls only `scopes.append`/`.extend`."""
    for node in ast.walk(statement):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in known:
            if not _bound_in_comprehension(statement, node.id):
                return False
        if isinstance(node, ast.Call):
            func = node.func
            if not (isinstance(func, ast.Attribute) and func.attr in ("append", "extend")):
                return False
            if not (isinstance(func.value, ast.Name) and func.value.id == WALK_LIST):
                return False
    return True


def _bound_in_comprehension(statement: ast.stmt, name: str) -> bool:
    return any(
        isinstance(target, ast.Name) and target.id == name
        for comp in ast.walk(statement)
        if isinstance(comp, (ast.ListComp, ast.GeneratorExp))
        for generator in comp.generators
        for target in ast.walk(generator.target)
    )


def _derived(tree: ast.Module) -> tuple[str, ...]:
    """Comprehensions that map a walk's result to other scopes: `[f"{s}.exactness" for s in scopes]`."""
    found = []
    for function in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name != WALK_FUNCTION):
        walked: set[str] = set()
        for node in ast.walk(function):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                call = node.value
                if isinstance(call, ast.Call) and getattr(call.func, "attr", None) == WALK_FUNCTION:
                    walked.add(node.targets[0].id)
                elif isinstance(call, ast.ListComp) and _over(call, walked):
                    found.append(ast.unparse(call))
    return tuple(dict.fromkeys(found))


def _over(comp: ast.ListComp, names: set[str]) -> bool:
    generators = comp.generators
    return len(generators) == 1 and isinstance(generators[0].iter, ast.Name) and generators[0].iter.id in names


def _literal(node: ast.expr | None) -> object:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError):
        raise _Unsupported(node, "a parameter default that is not a literal") from None


class _Return(Exception):
    def __init__(self, value: object) -> None:
        self.value = value


_COMPARE = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Is: lambda a, b: a is b,
    ast.IsNot: lambda a, b: a is not b,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


def _bounded(node: ast.AST, value: object) -> object:
    """`value`, unless it grew past what a walk holds: `s += s` forty times would exhaust the memory."""
    if isinstance(value, (str, list, tuple)) and len(value) > _MAX_SIZE:
        raise _Unsupported(node, f"a value of more than {_MAX_SIZE:,} items")
    return value


class _Interpreter:
    """Evaluates the statements and expressions a scope walk is made of; anything else is `_Unsupported`."""

    def __init__(self, env: dict[str, object]) -> None:
        self.env = dict(env)
        self.steps = 0

    def _step(self, node: ast.AST) -> None:
        self.steps += 1
        if self.steps > _MAX_STEPS:
            raise _Unsupported(node, f"more than {_MAX_STEPS} steps")

    def run(self, body: list[ast.stmt]) -> object:
        try:
            self.block(body)
        except _Return as result:
            return result.value
        return None

    def block(self, body: list[ast.stmt]) -> None:
        for statement in body:
            self.statement(statement)

    def statement(self, node: ast.stmt) -> None:
        self._step(node)
        handler = _STATEMENTS.get(type(node))
        if handler is None or not handler(self, node):
            raise _Unsupported(node, f"a `{type(node).__name__}` statement")

    def _return(self, node: ast.Return) -> bool:
        raise _Return(self.expr(node.value) if node.value else None)

    def _expression_statement(self, node: ast.Expr) -> bool:
        if isinstance(node.value, ast.Call):
            self._method_call(node.value)
        return isinstance(node.value, (ast.Constant, ast.Call))  # a constant: a docstring

    def _assign(self, node: ast.Assign) -> bool:
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            return False
        self.env[node.targets[0].id] = self.expr(node.value)
        return True

    def _augmented(self, node: ast.AugAssign) -> bool:
        if not (isinstance(node.target, ast.Name) and isinstance(node.op, ast.Add)):
            return False
        total = self._name(node.target) + self.expr(node.value)  # type: ignore[operator]
        self.env[node.target.id] = _bounded(node, total)
        return True

    def _if(self, node: ast.If) -> bool:
        self.block(node.body if self.expr(node.test) else node.orelse)
        return True

    def _for(self, node: ast.For) -> bool:
        if not isinstance(node.target, ast.Name) or node.orelse:
            return False
        for value in self._iterable(node.iter):
            self.env[node.target.id] = value
            self.block(node.body)
        return True

    def _method_call(self, call: ast.Call) -> None:
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and not call.keywords):
            raise _Unsupported(call, "a call other than `scopes.append(...)` / `scopes.extend(...)`")
        target = self._name(func.value)
        if not isinstance(target, list) or func.attr not in ("append", "extend") or len(call.args) != 1:
            raise _Unsupported(call, f"`.{func.attr}(...)`")
        value = self.expr(call.args[0])
        target.append(value) if func.attr == "append" else target.extend(self._checked_iterable(call, value))
        _bounded(call, target)

    def _name(self, node: ast.Name) -> object:
        if node.id not in self.env:
            raise _Unsupported(node, f"the name `{node.id}`, which the walk does not define")
        return self.env[node.id]

    def _iterable(self, node: ast.expr) -> list:
        return self._checked_iterable(node, self.expr(node))

    def _checked_iterable(self, node: ast.AST, value: object) -> list:
        if not isinstance(value, (list, tuple, str)):
            raise _Unsupported(node, "iterating over something that is not a list or tuple")
        return list(value)

    def expr(self, node: ast.expr) -> object:
        self._step(node)
        handler = _EXPRESSIONS.get(type(node))
        value = _UNREADABLE if handler is None else handler(self, node)
        if value is _UNREADABLE:
            raise _Unsupported(node, f"a `{type(node).__name__}` expression")
        return value

    def _sequence(self, node: ast.List | ast.Tuple) -> object:
        items = [self.expr(e) for e in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)

    def _choice(self, node: ast.IfExp) -> object:
        return self.expr(node.body) if self.expr(node.test) else self.expr(node.orelse)

    def _not(self, node: ast.UnaryOp) -> object:
        return not self.expr(node.operand) if isinstance(node.op, ast.Not) else _UNREADABLE

    def _compare(self, node: ast.Compare) -> object:
        if len(node.ops) != 1 or type(node.ops[0]) not in _COMPARE:
            return _UNREADABLE
        return _COMPARE[type(node.ops[0])](self.expr(node.left), self.expr(node.comparators[0]))

    def _concatenation(self, node: ast.BinOp) -> object:
        if not isinstance(node.op, ast.Add):
            return _UNREADABLE
        left, right = self.expr(node.left), self.expr(node.right)
        if type(left) is type(right) and isinstance(left, (str, list, tuple)):
            return _bounded(node, left + right)  # type: ignore[operator]
        return _UNREADABLE

    def _joined(self, node: ast.JoinedStr) -> object:
        return _bounded(node, "".join(self._formatted(value) for value in node.values))

    def _formatted(self, node: ast.expr) -> str:
        if isinstance(node, ast.Constant):
            return str(node.value)
        if isinstance(node, ast.FormattedValue) and node.conversion == -1 and node.format_spec is None:
            return str(self.expr(node.value))
        raise _Unsupported(node, "an f-string with a conversion or format spec")

    def _boolean(self, node: ast.BoolOp) -> object:
        value: object = None
        for operand in node.values:
            value = self.expr(operand)
            if isinstance(node.op, ast.And) != bool(value):
                return value
        return value

    def _comprehension(self, node: ast.ListComp) -> object:
        if len(node.generators) != 1:
            return _UNREADABLE
        generator = node.generators[0]
        if not isinstance(generator.target, ast.Name) or generator.is_async:
            raise _Unsupported(node, "a comprehension with more than one name")
        out, saved = [], dict(self.env)
        for value in self._iterable(generator.iter):
            self.env[generator.target.id] = value
            if all(self.expr(test) for test in generator.ifs):
                out.append(self.expr(node.elt))
        self.env = saved
        return out


_UNREADABLE = object()  # what an expression handler returns for a shape the walk does not allow

# Node type → its handler; a type not listed, or a handler that declines, is `_Unsupported`.
_STATEMENTS = {
    ast.Return: _Interpreter._return,
    ast.Expr: _Interpreter._expression_statement,
    ast.Assign: _Interpreter._assign,
    ast.AugAssign: _Interpreter._augmented,
    ast.If: _Interpreter._if,
    ast.For: _Interpreter._for,
    ast.Pass: lambda interpreter, node: True,
}
_EXPRESSIONS = {
    ast.Constant: lambda interpreter, node: node.value,
    ast.Name: _Interpreter._name,
    ast.JoinedStr: _Interpreter._joined,
    ast.List: _Interpreter._sequence,
    ast.Tuple: _Interpreter._sequence,
    ast.IfExp: _Interpreter._choice,
    ast.BoolOp: _Interpreter._boolean,
    ast.UnaryOp: _Interpreter._not,
    ast.Compare: _Interpreter._compare,
    ast.BinOp: _Interpreter._concatenation,
    ast.ListComp: _Interpreter._comprehension,
}


def _walked(cell: Cell) -> tuple[str | None, ...]:
    """The `backend=` values upstream's test passes for the cell; a backend the bot does not know, its name alone."""
    declared = registry.BY_NAME.get(cell.backend)
    return declared.skip_walk(cell.target) if declared is not None else (cell.backend,)
