"""The `${{ }}` expressions the workflows use, evaluated as GitHub Actions does; anything else is refused."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+(?:\.\d+)?)|(?P<str>'(?:[^']|'')*')|(?P<op>\|\||&&|==|!=|!|\(|\)|,|\.|\[|\])"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_-]*))"
)
CONTEXTS = {"github", "inputs", "secrets", "needs", "steps", "matrix", "strategy", "env", "job"}


class ExpressionError(AssertionError):
    """An expression (or a part of one) the rehearsal's step runner does not know: refused loudly."""


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match or match.end() == pos:
            raise ExpressionError(f"cannot read the expression {text!r} at {text[pos:]!r}")
        kind = match.lastgroup
        out.append((kind, match.group(kind)))
        pos = match.end()
    return out


def _truthy(value: Any) -> bool:
    return value not in (None, False, 0, "", 0.0)


def _loose_equal(a: Any, b: Any) -> bool:
    # GitHub compares strings case-insensitively and coerces a number against a string.
    if isinstance(a, str) and isinstance(b, str):
        return a.lower() == b.lower()
    if isinstance(a, (int, float)) and isinstance(b, str) or isinstance(b, (int, float)) and isinstance(a, str):
        try:
            return float(a) == float(b)
        except ValueError:
            return False
    return a == b


def _format(fmt: str, *args: Any) -> str:
    def arg(match: re.Match) -> str:
        value = args[int(match.group(1))]
        return _to_string(value)

    return re.sub(r"\{(\d+)\}", arg, fmt)


def _to_string(value: Any) -> str:
    if value is None:
        return ""
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


class Evaluator:
    """Evaluates against `contexts` (github, inputs, needs, …) and `status` (success/failure/cancelled of the job)."""

    def __init__(self, contexts: Mapping[str, Any], status: Callable[[str], bool] | None = None):
        self.contexts = contexts
        self.status = status or (lambda name: name in ("success", "always"))
        self.functions = {
            "format": _format,
            "fromJSON": lambda text: json.loads(text),
            "toJSON": lambda value: json.dumps(value),
            "startsWith": lambda s, p: _to_string(s).lower().startswith(_to_string(p).lower()),
            "contains": lambda s, p: _to_string(p).lower() in _to_string(s).lower(),
            "always": lambda: True,
            "success": lambda: self.status("success"),
            "failure": lambda: self.status("failure"),
            "cancelled": lambda: self.status("cancelled"),
        }

    def evaluate(self, text: str) -> Any:
        self._tokens, self._pos = _tokens(text), 0
        value = self._or()
        if self._pos != len(self._tokens):
            raise ExpressionError(f"unexpected {self._tokens[self._pos][1]!r} in {text!r}")
        return value

    def render(self, template: Any) -> Any:
        """A workflow value: one whole `${{ x }}` keeps x's type; text with expressions becomes a string."""
        if isinstance(template, dict):
            return {k: self.render(v) for k, v in template.items()}
        if isinstance(template, list):
            return [self.render(v) for v in template]
        if not isinstance(template, str) or "${{" not in template:
            return template
        whole = re.fullmatch(r"\s*\$\{\{(.*?)\}\}\s*", template, re.S)
        if whole and "${{" not in whole.group(1):
            return self.evaluate(whole.group(1))
        return re.sub(r"\$\{\{(.*?)\}\}", lambda m: _to_string(self.evaluate(m.group(1))), template, flags=re.S)

    def condition(self, text: Any) -> bool:
        """A job's or step's `if:`: without a status function it means `success() && (if)`."""
        if text is None:
            return self.status("success")
        if isinstance(text, bool):
            return text and self.status("success")
        body = text.strip()
        if body.startswith("${{"):
            body = body[3:].rstrip()[:-2]
        value = _truthy(self.evaluate(body))
        if not re.search(r"\b(always|success|failure|cancelled)\(\)", body):
            value = value and self.status("success")
        return value

    # --- recursive descent --------------------------------------------------------------------
    def _peek(self) -> tuple[str, str] | None:
        return self._tokens[self._pos] if self._pos < len(self._tokens) else None

    def _take(self, value: str | None = None) -> tuple[str, str]:
        token = self._peek()
        if token is None or (value is not None and token[1] != value):
            raise ExpressionError(f"expected {value!r}, found {token and token[1]!r}")
        self._pos += 1
        return token

    # GitHub's runner evaluates `&&` and `||` lazily: the operand that cannot change the result is
    # parsed but not evaluated (a guard like `event_name == 'workflow_dispatch' && fromJSON(inputs.x)`
    # never calls fromJSON on a push). `_dry` parses without calling functions.
    _dry = False

    def _skipped(self, parse) -> None:
        dry, self._dry = self._dry, True
        try:
            parse()
        finally:
            self._dry = dry

    def _or(self) -> Any:
        left = self._and()
        while self._peek() == ("op", "||"):
            self._take()
            if _truthy(left):
                self._skipped(self._and)
            else:
                left = self._and()
        return left

    def _and(self) -> Any:
        left = self._compare()
        while self._peek() == ("op", "&&"):
            self._take()
            if _truthy(left):
                left = self._compare()
            else:
                self._skipped(self._compare)
        return left

    def _compare(self) -> Any:
        left = self._unary()
        while self._peek() in (("op", "=="), ("op", "!=")):
            op = self._take()[1]
            right = self._unary()
            left = _loose_equal(left, right) if op == "==" else not _loose_equal(left, right)
        return left

    def _unary(self) -> Any:
        if self._peek() == ("op", "!"):
            self._take()
            return not _truthy(self._unary())
        return self._primary()

    def _primary(self) -> Any:
        kind, value = self._take()
        if kind == "num":
            return float(value) if "." in value else int(value)
        if kind == "str":
            return value[1:-1].replace("''", "'")
        if value == "(":
            inner = self._or()
            self._take(")")
            return inner
        if kind != "name":
            raise ExpressionError(f"unexpected {value!r}")
        if value in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[value]
        if self._peek() == ("op", "("):
            if value not in self.functions:
                raise ExpressionError(f"the step runner does not know the function {value}()")
            self._take("(")
            args = []
            while self._peek() != ("op", ")"):
                args.append(self._or())
                if self._peek() == ("op", ","):
                    self._take()
            self._take(")")
            result = None if self._dry else self.functions[value](*args)
            return self._properties(result)
        if value not in CONTEXTS or value not in self.contexts:
            raise ExpressionError(f"the step runner does not know the context {value!r}")
        return self._properties(self.contexts[value])

    def _properties(self, current: Any) -> Any:
        while self._peek() in (("op", "."), ("op", "[")):
            if self._take()[1] == ".":
                name = self._take()[1]
            else:
                name = self._or()
                self._take("]")
            # A missing property is null, as on GitHub (e.g. `github.event.pull_request` on a dispatch).
            current = current.get(name) if isinstance(current, dict) else None
        return current
