"""JUnit text the way the bot's runner writes it (docs/outcomes.md), built from plain tuples for tests and benchmarks."""

from __future__ import annotations

from dataclasses import dataclass, field
from xml.sax.saxutils import escape, quoteattr


@dataclass(frozen=True)
class Case:
    """One testcase: `status` is passed, uncompared, failed, error or skipped."""

    cell: str  # `ModelClass::test_name`
    status: str = "passed"
    message: str = ""
    details: str = ""
    stage: str | None = None
    kind: str | None = None
    skip_scope: str | None = None
    exactness: str | None = None
    probe: bool = False
    time: str | None = "1.5"
    extra: dict = field(default_factory=dict)


def testcase(case: Case) -> str:
    classname, _, name = case.cell.partition("::")
    props = dict(case.extra)
    for key in ("stage", "kind", "skip_scope", "exactness"):
        if getattr(case, key):
            props[key] = getattr(case, key)
    props["probe"] = "true" if case.probe else "false"
    if case.status == "uncompared" and "exactness" not in props:
        props["exactness"] = "exactness"
    props.setdefault("time.export", "0.500")
    time = f" time={quoteattr(case.time)}" if case.time is not None else ""
    out = [f"<testcase classname={quoteattr(classname)} name={quoteattr(name)}{time}>"]
    if props:
        out.append(
            "<properties>"
            + "".join(f"<property name={quoteattr(k)} value={quoteattr(v)}/>" for k, v in props.items())
            + "</properties>"
        )
    if case.status in ("failed", "error"):
        tag = "failure" if case.status == "failed" else "error"
        out.append(f"<{tag} message={quoteattr(case.message)}>{escape(case.details)}</{tag}>")
    elif case.status == "skipped":
        out.append(f"<skipped message={quoteattr(case.message)}/>")
    out.append("</testcase>")
    return "".join(out)


def junit(
    cases,
    *,
    shard: str | None = None,
    sha: str | None = "abc123",
    versions: dict | None = None,
    name: str = "export-bot",
) -> str:
    """One `<testsuites>` with one suite holding `cases` and the runner's suite properties."""
    versions = {"transformers": "5.23.0", "torch": "2.13.0"} if versions is None else versions
    props = {f"version.{name}": value for name, value in versions.items()}  # as bot/run/junit.py writes them
    if sha:
        props["git_sha"] = sha
    if shard:
        props["shard"] = shard
    props["source"] = "zoo"
    suite_props = "".join(f"<property name={quoteattr(k)} value={quoteattr(v)}/>" for k, v in props.items())
    body = "\n".join(testcase(c) for c in cases)
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<testsuites>'
        f'<testsuite name={quoteattr(name)} tests="{len(cases)}">'
        f"<properties>{suite_props}</properties>\n{body}\n</testsuite></testsuites>\n"
    )
