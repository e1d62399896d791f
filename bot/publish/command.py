"""`/export-check` commands: the first line of a PR comment parsed into a request, and the help text (pure)."""

from __future__ import annotations

import difflib
import json
from dataclasses import asdict, dataclass, field

from bot.cells import BACKENDS

PREFIX = "/export-check"
KINDS = ("rerun", "models", "full", "probe", "apply", "help")
ALLOWED_PERMISSIONS = frozenset({"admin", "maintain", "write"})

HELP_TEXT = f"""\
**`/export-check` commands** (first line of a PR comment; write, maintain or admin permission needed)

| command | does |
|---|---|
| `/export-check` | re-run this PR's selection of conformance cells |
| `/export-check <ModelClass or model_type> … [--backend {"|".join(BACKENDS)} …] [--static\\|--dynamic] [--generate]` | run the cells of the named models (all backends and shapes unless narrowed; `--generate` adds the generate cells) |
| `/export-check full` | run every cell of every model class |
| `/export-check probe` | run the skiplisted cells too, to find obsolete skips |
| `/export-check apply` | commit the proposed skiplist patch of the latest report to this PR's branch (same-repository PRs only) |
| `/export-check help` | show this text |
"""


@dataclass(frozen=True)
class Request:
    """What the run job does; `head_sha` is pinned when the command is accepted."""

    kind: str
    models: tuple[str, ...] = ()
    backends: tuple[str, ...] = ()
    shapes: tuple[str, ...] = ()
    generate: bool = False
    pr: int | None = None
    head_sha: str | None = None
    comment_id: int | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Request:
        data = json.loads(text)
        for key in ("models", "backends", "shapes"):
            data[key] = tuple(data.get(key, ()))
        return cls(**data)


@dataclass(frozen=True)
class Invalid:
    """A command the bot cannot run; `message` is the reply (help text included where useful)."""

    message: str
    problems: tuple[str, ...] = field(default=())


def first_line(body: str) -> str:
    for line in body.splitlines():
        if line.strip():
            return line.strip()
    return ""


def parse_command(body: str, *, model_classes: frozenset[str], model_types: frozenset[str]) -> Request | Invalid | None:
    """The request in a comment's first non-blank line; None when it is not an `/export-check` comment."""
    words = first_line(body).split()
    if not words or words[0] != PREFIX:
        return None
    args = words[1:]
    if not args:
        return Request("rerun")
    if len(args) == 1 and args[0] in ("full", "probe", "apply", "help"):
        return Request(args[0])
    models, backends, shapes, generate, problems = [], [], [], False, []
    it = iter(args)
    for word in it:
        if word == "--backend" or word.startswith("--backend="):
            value = word.partition("=")[2] or next(it, "")
            for backend in filter(None, value.split(",")):
                if backend in BACKENDS:
                    backends.append(backend)
                else:
                    problems.append(f"unknown backend `{backend}` (known: {', '.join(BACKENDS)})")
            if not value:
                problems.append("`--backend` needs a value")
        elif word in ("--static", "--dynamic"):
            shapes.append(word[2:])
        elif word == "--generate":
            generate = True
        elif word.startswith("-") or word in ("full", "probe", "apply", "help"):
            problems.append(f"`{word}` is not understood here")
        elif word in model_classes or word in model_types:
            models.append(word)
        else:
            near = difflib.get_close_matches(word, sorted(model_classes | model_types), n=3)
            hint = f" (did you mean {', '.join(f'`{n}`' for n in near)}?)" if near else ""
            problems.append(f"`{word}` is not a model class or model type of the installed Transformers{hint}")
    if not models and not problems:
        problems.append("options need at least one model class or model type")
    if problems:
        listing = "\n".join(f"- {p}" for p in problems)
        return Invalid(f"I could not read this command:\n\n{listing}\n\n{HELP_TEXT}", tuple(problems))
    return Request(
        "models",
        models=tuple(dict.fromkeys(models)),
        backends=tuple(dict.fromkeys(backends)),
        shapes=tuple(dict.fromkeys(shapes)),
        generate=generate,
    )


def refusal(user: str, permission: str) -> str:
    return (
        f"Sorry @{user}, `/export-check` commands can only be run by people with write, maintain or admin "
        f"permission on this repository (yours: `{permission}`). A maintainer can run it for you."
    )


def fork_refusal(head_repo: str) -> str:
    return (
        f"`/export-check apply` only commits to branches of this repository, and this PR's branch lives in "
        f"`{head_repo}`: the bot's token cannot push there. Apply the patch from the conformance comment "
        "locally (`export-bot propose --report report.json --apply`) and push it to your branch."
    )
