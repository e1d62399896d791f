"""Hostile report.json documents, every string field seeded, and the check that a rendering of one is inert.

A report is written by code the pull request controls (docs/reports.md): these are what a fork
would upload. `assert_inert` renders the markdown with a CommonMark parser (tables on, raw HTML
passed through, as GitHub passes it to its sanitizer) and looks at what a reader would get.
"""

from __future__ import annotations

import html
import re

from markdown_it import MarkdownIt

from bot.cells import BACKENDS, SHAPES
from bot.diff.hints import default_hints
from bot.diff.proposal import MAX_WALK

REPOSITORY = "https://github.com/o/r"
CELL = "BertModel::test_onnx_export_static"
# What an attacker writes into a string field, one idea each.
PAYLOADS = (
    "@victim-user please look",
    "<!-- export-bot:run 99999999999 -->",
    "<img src=x onerror=alert(1)>",
    "<b>bold</b> <details open><summary>x",
    "[click](https://evil.example/phish)",
    "![pixel](https://evil.example/p.png)",
    "[ref]: https://evil.example\n[ref]",
    "`` ` ``` code ` @victim`",
    "| pipe | table |\n|---|---|\n| x | y |",
    "line one\nline two\r\n# heading\n> quote",
    "javascript:alert(1)",
    "https://evil.example/x www.evil.example see #12 and o/r#34",
    "\\[escaped\\](https://evil.example) \\`",
    "&#64;victim &lt;b&gt; &amp;",
    "x" * 5_000 + "@victim",
    "--> <!-- -->",
)
_MD = MarkdownIt("commonmark", {"html": True}).enable("table")
# Tags the renderers' own markdown becomes; anything else came from a report.
_TAGS = {
    "p",
    "h1",
    "h2",
    "h3",
    "ul",
    "ol",
    "li",
    "strong",
    "em",
    "code",
    "pre",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
}
_TAGS |= {"blockquote", "a", "details", "summary", "hr", "br"}
_MENTION = re.compile(r"(?:^|[^\w@/`])@[A-Za-z0-9]")
_AUTOLINK = re.compile(r"(?i)\b(?:https?|ftp)://|\bwww\.|(?:^|\s|\w/\w+)#\d")


PROPOSAL_TEXT = 2000  # characters a proposal's string may hold (bot/diff/proposal.py)


def hostile_document(payload: str, *, run_url: str | None = None) -> dict:
    """A report.json with `payload` in every string field the reader accepts any string in."""
    p = payload
    line = {
        "cell": p,
        "status": "failed",
        "stage": p,
        "kind": p,
        "message": p,
        "skip_scope": p,
        "exactness_scope": p,
        "base_status": p,
        "covered_by": p,
        "setup_module": p,
    }
    known = dict(line, cell=CELL, status="error", kind="crash")
    names = ("newly_broken", "new_failing", "flaky", "still_failing", "broken_trunk")
    categories = {name: [line, known] for name in names}
    categories["flaky"] = [dict(line, flips=3), known]  # flaky on main: its flip count is shown
    categories |= {name: [dict(line, status="passed"), known] for name in ("newly_passing", "obsolete_skip")}
    categories |= {name: [line] for name in ("new_passing", "newly_skipped", "not_run", "not_buildable")}
    categories["missing"] = [dict(line, status="missing"), dict(known, status="missing")]
    group = {
        "stage": p,
        "signature": p,
        "cells": [p, CELL],
        "excerpt": p,
        "culprit": {"path": p, "line": 1, "source": p, "changed": True, "url": run_url or p},
        "repro": p,
        "hint": {"id": p, "text": p, "link": p},
    }
    # The proposal's scopes, classes and files are checked against their grammar when read
    # (bot/diff/proposal.py): the payload goes where any string is accepted.
    entry = {
        "action": "add",
        "file": "export_skips.toml",
        "scope": "onnx.dynamic",
        "model_class": "BertModel",
        "reason": p,
        "evidence": [p],
        "still_failing": [p],
    }
    document = {
        "schema": "export-bot/report@1",
        "verdict": "failure",
        "headline": p,
        "baseline": True,
        "base_sha": "a" * 40,
        "head_sha": "b" * 40,
        "run_url": run_url or p,
        "repository_url": REPOSITORY,
        "versions": {p: p, "torch": p},
        "provenance": {
            "transformers_version": p,
            "transformers_location": p,
            "transformers_sha": p,
            "shards_disagree": [p],
        },
        "problems": [{"file": p, "line": 3, "what": p, "todo": p}],
        "counts": {f"{b}/{s}": {"failed": 1, "passed": 2} for b in BACKENDS for s in SHAPES},
        "categories": categories,
        "infrastructure": [p],
        "needs_rerun": [CELL],
        "files": {"head": [p]},
        "proposal": {
            "entries": [entry, dict(entry, action="narrow", new_scopes=["onnx.dynamic"]), dict(entry, action="remove")],
            "uncoverable": [{"cell": p, "finest_scope": p, "would_skip": [p]}],
            "patch": f"+{p}\n-{p}\n",
            "walk": p[:MAX_WALK],  # the proposal.walk bound; past it the report is refused
        },
        "selection": p,
        "selection_notes": [p],
        # The head against its selection (docs/outcomes.md): foreign names are a fork's test names, bounded.
        "selected": 12,
        "missing_shards": ["2/3"],
        "duplicates": [CELL],
        "non_cells": 3,
        "foreign": [p, p],
        "no_cells": True,
        # Drift lines are numbers on a checked cell id: no payload fits, but the section renders.
        "drift": [{"cell": CELL, "figure": "max_abs_error", "base": 1e-6, "head": 1e-3}],
        "drift_fails": True,
        "setup_problems": [{"origin": p, "message": p, "modules": [p], "cells": 2}],
        "groups": [group, dict(group, hint={"id": "data-dependent-guard", "text": p, "link": p})],
        "created": p,
        "families": {p: p},
        # Its fields are SHAs and numbers, checked when read: present so the age line is rendered.
        "baseline_age": {"newest": "c" * 40, "behind": 2, "old_cells": 5, "stale_days": 7, "merge_base": "d" * 40}
        | {"merge_base_known": True, "flaky_window": 10},
        "cells": [line, known, dict(line, cell=f"{p}::test_onnx_export_static")],
    }
    return within_proposal_schema(document)


def within_proposal_schema(document: dict) -> dict:
    """`document` with its proposal's free-text strings cut to what the reader accepts (bounded,
    an added entry's reason non-empty): a proposal past its bounds is refused, not rendered."""
    proposal = document.get("proposal")
    if not isinstance(proposal, dict):
        return document

    def cut(value):
        if isinstance(value, str):
            return value[:PROPOSAL_TEXT]
        return [cut(v) for v in value] if isinstance(value, list) else value

    for entry in proposal.get("entries", []):
        for key in ("reason", "evidence", "still_failing"):
            if key in entry:
                entry[key] = cut(entry[key])
        if "reason" in entry and not str(entry["reason"]).strip():
            entry["reason"] = "a reason"
    for item in proposal.get("uncoverable", []):
        for key in ("cell", "finest_scope", "would_skip"):
            if key in item:
                item[key] = cut(item[key])
    if isinstance(proposal.get("walk"), str):
        proposal["walk"] = proposal["walk"][:MAX_WALK]
    return document


def allowed_links(repository: str | None) -> tuple[str, ...]:
    """Where a link may point: into the repository, or a hint's page the bot ships."""
    own = tuple(rule.hint.link for rule in default_hints() if rule.hint.link)
    return ((repository.rstrip("/") + "/",) if repository else ()) + own


def assert_inert(markdown: str, repository: str | None = REPOSITORY, *, marker: bool = False) -> None:
    """No live mention, reference or autolink, no HTML but the bot's own, no link out of the repository."""
    # The raw body too: a reader of the comment's source finds no comment but the bot's marker.
    assert markdown.count("<!--") == int(marker), "an HTML comment the bot did not write"
    rendered = _MD.render(markdown)
    tags = set(re.findall(r"<([A-Za-z][\w-]*)", rendered))
    assert tags <= _TAGS, f"raw HTML from a report: {sorted(tags - _TAGS)}"
    allowed = allowed_links(repository)
    for href in re.findall(r'<a href="([^"]*)"', rendered):
        assert html.unescape(href).startswith(allowed), f"a link out of the repository: {href[:200]}"
    assert "<img" not in rendered
    # GitHub links mentions, references and bare URLs in text, never in code or in a link's target.
    text = re.sub(r"<(code|pre)>.*?</\1>", " ", rendered, flags=re.S)
    text = html.unescape(re.sub(r"<[^>]*>", " ", text))
    assert not _MENTION.search(text), f"a live mention: {_context(text, _MENTION)}"
    assert not _AUTOLINK.search(text), f"a live autolink or reference: {_context(text, _AUTOLINK)}"


def _context(text: str, pattern: re.Pattern) -> str:
    found = pattern.search(text)
    return text[max(found.start() - 60, 0) : found.end() + 60] if found else ""
