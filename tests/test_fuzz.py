"""Fuzzing every input the bot reads: valid input keeps its meaning, anything else is exit 2 (or a reported problem), never a traceback.

Inputs: JUnit files, TOML skiplists, pyproject settings, report.json (its shape, and hostile
strings in every field: they reach the comment, the summary and the dashboard inert),
selection.json, webhook payloads, `/export-check` comment bodies and command-line values. Each test drives the real
readers, and the command line in-process through click's CliRunner. Every test counts the cases
it tried; tests/conftest.py adds them up in the terminal summary (also under pytest-xdist).
`FUZZ_EXAMPLES=N` scales the number of cases (default: about 40 s for all on two cores).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import tomlkit
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from bot.cells import BACKENDS, Cell, CellIdError, cells_for
from bot.cli import main
from bot.diff.model import Report, load_report, write_report
from bot.errors import BotError
from bot.profiles import PROFILES
from bot.publish.command import Invalid, Request, parse_command
from bot.publish.events import CommentEvent, RunEvent
from bot.report import render_comment, render_summary
from bot.results import read_results
from bot.run.shard import ShardError, parse_shard
from bot.select.request import parse_request
from bot.select.selection_file import read_selection, read_selection_document, write_selection
from bot.settings import SCHEMA, Settings, load_settings
from bot.site import NightlyReport, build_data
from bot.skiplist.document import SkiplistDocument
from bot.skiplist.importer import ImportedScope, to_toml
from bot.skiplist.model import load_skiplists
from tests.conftest import NPM, SKIPLISTS
from tests.report.hostile import PAYLOADS, REPOSITORY, assert_inert, hostile_document, within_proposal_schema
from tests.results.factory import Case, junit

SCALE = float(os.environ.get("FUZZ_EXAMPLES", "1"))


def fuzz(examples: int):
    """Hypothesis settings for one fuzz test: `examples` cases (times FUZZ_EXAMPLES), no deadline, no database."""
    return settings(
        max_examples=max(1, int(examples * SCALE)),
        deadline=None,
        database=None,
        # The counter and the temporary folder are meant to outlive one example.
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


@pytest.fixture
def count(request):
    """`count()` once per case; the total goes into the test's report for the terminal summary."""
    tried = [0]

    def add() -> None:
        tried[0] += 1

    yield add
    request.node.user_properties.append(("fuzz_cases", tried[0]))


def invoke(*args, cwd: Path | None = None, env: dict | None = None):
    with pytest.MonkeyPatch.context() as mp:
        if cwd is not None:
            mp.chdir(cwd)
        return CliRunner().invoke(main, [str(a) for a in args], env=env)


def assert_clean(result, allowed=(0, 1, 2), one_line=True) -> None:
    """No traceback, an allowed exit code, and exit 2 said in one line (ours, or click's usage error).

    `one_line=False`: the command reports findings of its own (`skiplist lint`), one per line.
    """
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"traceback for {result.output!r}") from result.exception
    assert result.exit_code in allowed, result.output
    if result.exit_code == 2 and one_line:
        ours = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
        clicks = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
        assert len(ours) + len(clicks) == 1, result.stderr


# ── building blocks ───────────────────────────────────────────────────────────────────────────

POOL = [
    *cells_for("BertModel", generative=False),
    *cells_for("GPT2LMHeadModel", generative=True),
    *cells_for("GroundingDinoModel", generative=False, backends=("onnx",)),
]
SCOPES = ("all", "dynamic", "generate", "exactness", "onnx", "onnx.dynamic", "executorch.generate", "openvino.static")
# Text XML 1.0 and TOML can carry: no surrogates, no control characters but tab and newline.
TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Cn")) | st.sampled_from("\t\n"), max_size=30)
LINE = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Cn", "Zl", "Zp")), max_size=30)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
TOML_VALUE = st.recursive(
    st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)
# Nesting deeper than a recursive parser follows, in JSON and TOML.
DEEP = st.sampled_from((b"[" * 100_000, b"a = " + b"[" * 100_000, b'{"a":' * 100_000, b"x = {a = " * 5_000))
JUNK = st.binary(max_size=200) | TEXT.map(str.encode) | DEEP


@st.composite
def outcomes(draw, min_size=0):
    """Distinct cells, each with a status and what the runner writes beside it."""
    cells = draw(st.lists(st.sampled_from(POOL), unique=True, min_size=min_size, max_size=12))
    cases = []
    for cell in cells:
        status = draw(st.sampled_from(("passed", "uncompared", "failed", "error", "skipped")))
        message = draw(LINE).strip() if status in ("failed", "error", "skipped") else ""
        cases.append(
            Case(
                cell.id,
                status,
                message,
                details=draw(TEXT) if status in ("failed", "error") else "",
                stage=draw(st.sampled_from(("export", "run", "compare"))) if status == "failed" else None,
                kind=draw(st.sampled_from(("crash", "timeout", "harness"))) if status == "error" else None,
                skip_scope=draw(st.sampled_from(SCOPES)) if status == "skipped" else None,
                probe=draw(st.booleans()),
            )
        )
    return cases


@st.composite
def mutated(draw, document, focus=()):
    """`document` with a few values replaced by random JSON, or removed.

    `focus`: paths the reader looks at (prefixes of them count too), chosen half of the time,
    so that a large payload's few read fields are hit as often as the many others.
    """
    document = json.loads(json.dumps(document))
    for _ in range(draw(st.integers(1, 3))):
        paths = list(_paths(document))
        if not paths:
            break
        read = [p for p in paths if any(f[: len(p)] == p for f in focus)]
        *parents, last = draw(st.sampled_from(read if read and draw(st.booleans()) else paths))
        holder = document
        for key in parents:
            holder = holder[key]
        if draw(st.booleans()) and isinstance(holder, dict):
            del holder[last]
        else:
            holder[last] = draw(JSON)
    return document


def _paths(value, prefix=()):
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value[:4])
    else:
        return
    for key, item in items:
        yield (*prefix, key)
        yield from _paths(item, (*prefix, key))


# ── JUnit files ──────────────────────────────────────────────────────────────────────────────


@fuzz(120)
@given(cases=outcomes())
def test_junit_valid_files_read_back_as_written(tmp_path, count, cases):
    count()
    path = tmp_path / "head.xml"
    path.write_text(junit(cases), encoding="utf-8")
    results = read_results([path]).results
    status = {"uncompared": "passed-uncompared"}
    assert {c.id: r.status.value for c, r in results.items()} == {c.cell: status.get(c.status, c.status) for c in cases}
    for case in cases:
        result = results[Cell.parse(case.cell)]
        # The message is the outcome's `message`, else the first line of its text (bot/results/junit.py).
        message = case.message or case.details.strip().partition("\n")[0]
        assert (result.message, result.probe, result.skip_scope) == (message, case.probe, case.skip_scope)
        assert result.stage == case.stage and (result.kind == case.kind or case.status != "error")
    assert_clean(invoke("diff", "--skiplists", SKIPLISTS, "--head", path), allowed=(0, 1))


@fuzz(120)
@given(cases=outcomes(min_size=1), data=st.data())
def test_junit_broken_files_are_problems_not_tracebacks(tmp_path, count, cases, data):
    count()
    text = junit(cases).encode()
    cut = data.draw(st.integers(0, len(text)))
    text = data.draw(st.sampled_from((text[:cut], text[:cut] + data.draw(JUNK) + text[cut:], data.draw(JUNK))))
    path = tmp_path / "head.xml"
    path.write_bytes(text)
    read_results([path])  # never raises: a broken file is a Problem in the results
    result = invoke("diff", "--skiplists", SKIPLISTS, "--head", path, "--expect-shards", "1")
    assert_clean(result, allowed=(0, 1))


# ── TOML skiplists ───────────────────────────────────────────────────────────────────────────

CLASS = st.from_regex(r"[A-Z][A-Za-z0-9_]{0,15}", fullmatch=True)
REASON = LINE.filter(lambda r: r.strip())


@fuzz(100)
@given(
    table=st.dictionaries(
        st.sampled_from(SCOPES), st.dictionaries(CLASS, REASON, min_size=1, max_size=4), min_size=1, max_size=4
    )
)
def test_skiplists_valid_files_keep_every_entry(tmp_path, count, table):
    count()
    text = to_toml([ImportedScope(scope, tuple(entries.items())) for scope, entries in table.items()])
    (tmp_path / "export_skips.toml").write_text(text, encoding="utf-8")
    assert SkiplistDocument.parse(text, "x.toml").scopes() == table
    assert load_skiplists(tmp_path).skips.scopes == table
    assert_clean(invoke("skiplist", "lint", tmp_path / "export_skips.toml"), allowed=(0,))
    result = invoke("skiplist", "explain", "--json", "--skiplists", tmp_path, POOL[0].id)
    assert_clean(result, allowed=(0,))


@fuzz(150)
@given(data=st.data())
def test_skiplists_any_other_text_is_exit_2_or_a_lint_finding(tmp_path, count, data):
    count()
    valid = to_toml([ImportedScope("onnx.dynamic", (("BertModel", "reason"),)), ImportedScope("all", ())])
    cut = data.draw(st.integers(0, len(valid)))
    junk = data.draw(JUNK)
    text = data.draw(st.sampled_from((valid[:cut].encode() + junk + valid[cut:].encode(), junk)))
    (tmp_path / "export_skips.toml").write_bytes(text)
    try:
        load_skiplists(tmp_path)
    except BotError:
        pass
    assert_clean(invoke("skiplist", "lint", tmp_path / "export_skips.toml"), allowed=(0, 2), one_line=False)
    assert_clean(invoke("skiplist", "explain", "--skiplists", tmp_path, POOL[0].id), allowed=(0, 2))


@fuzz(100)
@given(
    table=st.dictionaries(
        st.sampled_from(SCOPES), st.dictionaries(CLASS, REASON, min_size=1, max_size=3), min_size=1, max_size=3
    ),
    data=st.data(),
)
def test_skiplist_import_of_a_python_dict(tmp_path, count, table, data):
    count()
    source = tmp_path / "skips.py"
    source.write_text(f"import nothing_here\nEXPORT_SKIPS = {table!r}\n", encoding="utf-8")
    out = tmp_path / "out"
    assert_clean(invoke("skiplist", "import", source, "-o", out), allowed=(0,))
    assert load_skiplists(out).skips.scopes == table
    # Anything else: spliced into the source, the module becomes another one, or not Python.
    text = source.read_bytes()
    cut = data.draw(st.integers(0, len(text)))
    source.write_bytes(text[:cut] + data.draw(JUNK) + text[cut:])
    assert_clean(invoke("skiplist", "import", source), allowed=(0, 2))


# ── pyproject settings ───────────────────────────────────────────────────────────────────────


def _in_range(name: str):
    key = SCHEMA[name]
    if key.kind == "bool":
        return st.booleans()
    if key.kind == "strings":
        return st.lists(st.text(min_size=1, max_size=10), max_size=3)
    if key.kind == "backends":
        return st.lists(st.sampled_from(("dynamo", "onnx", "openvino", "executorch")), max_size=4, unique=True)
    if key.kind == "path":
        return st.from_regex(r"[a-z]{1,8}", fullmatch=True)
    if key.kind == "source":
        return st.just("zoo")
    if key.kind == "rules":
        return st.sampled_from(PROFILES)
    low, high = key.low or 0, key.high
    if key.kind == "int":
        return st.integers(int(low), int(high))
    return st.floats(low, high, exclude_min=key.above)


@fuzz(100)
@given(data=st.data())
def test_settings_valid_values_are_kept(tmp_path, count, data):
    count()
    names = data.draw(st.lists(st.sampled_from(sorted(SCHEMA)), unique=True))
    values = {name: data.draw(_in_range(name)) for name in names}
    path = tmp_path / "pyproject.toml"
    path.write_text(tomlkit.dumps({"tool": {"export-bot": {n.replace("_", "-"): v for n, v in values.items()}}}))
    loaded = load_settings(path)
    for name, value in values.items():
        as_tuple = tuple(value) if isinstance(value, list) else value
        expected = {"path": tmp_path / str(value), "strings": as_tuple, "backends": as_tuple}
        assert getattr(loaded, name) == expected.get(SCHEMA[name].kind, value)
    assert loaded.configured == set(values)


@fuzz(150)
@given(
    table=st.dictionaries(
        st.sampled_from(sorted(k.replace("_", "-") for k in SCHEMA)) | st.text(max_size=8), TOML_VALUE, max_size=4
    ),
    raw=st.none() | JUNK,
)
def test_settings_any_other_value_is_exit_2_in_one_line(tmp_path, count, table, raw):
    count()
    path = tmp_path / "pyproject.toml"
    if raw is None:
        path.write_text(tomlkit.dumps({"tool": {"export-bot": table}}), encoding="utf-8")
    else:
        path.write_bytes(raw)
    try:
        assert isinstance(load_settings(path), Settings)
    except BotError:
        pass
    assert_clean(invoke("skiplist", "explain", POOL[0].id, cwd=tmp_path), allowed=(0, 2))
    # The nightly job reads its settings first; without a token it then stops before GitHub.
    env = {"GITHUB_REPOSITORY": None, "GITHUB_TOKEN": None}
    assert_clean(invoke("github", "--config", path, "obsolete-skips", env=env), allowed=(2,))


# ── report.json ──────────────────────────────────────────────────────────────────────────────


def _report(tmp_path: Path, base, head) -> Report:
    from bot.diff import diff

    (tmp_path / "base.xml").write_text(junit(base), encoding="utf-8")
    (tmp_path / "head.xml").write_text(junit(head), encoding="utf-8")
    return diff(read_results([tmp_path / "base.xml"]), read_results([tmp_path / "head.xml"]), load_skiplists(SKIPLISTS))


@fuzz(80)
@given(base=outcomes(), head=outcomes(), summary=st.none() | LINE)
def test_report_valid_files_round_trip(tmp_path, count, base, head, summary):
    count()
    report = _report(tmp_path, base, head).with_selection(summary)
    write_report(report, tmp_path / "report.json")
    assert load_report(tmp_path / "report.json") == report
    result = invoke("propose", "--report", tmp_path / "report.json", "--skiplists", SKIPLISTS)
    assert_clean(result, allowed=(0,))


@fuzz(150)
@given(head=outcomes(min_size=1), data=st.data())
def test_report_any_other_file_is_exit_2_in_one_line(tmp_path, count, head, data):
    count()
    document = data.draw(mutated(_report(tmp_path, head, head).to_json()))
    path = tmp_path / "report.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    try:
        load_report(path)
    except BotError:
        pass
    assert_clean(invoke("propose", "--report", path, "--skiplists", SKIPLISTS), allowed=(0, 2))
    # The comment job renders the job summary from the report before it needs GitHub.
    env = {"GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "GITHUB_OUTPUT": str(tmp_path / "out.txt")}
    assert_clean(invoke("github", "comment", "--report", path, "--pr", "1", env=env), allowed=(2,))


# ── hostile report strings ─────────────────────────────────────────────────────────────────

# Pieces of markup an attacker combines: every string field of a report gets its own mix.
MARKUP = st.sampled_from(
    ["@", "@victim", "@org/team", "<", ">", "<!--", "-->", "<!-- export-bot:run 99999999999 -->", "<img src=x>"]
    + ["[", "]", "(", ")", "![", "](", "`", "``", "```", "|", "\n", "\r\n", "\\", "&", "&#64;", "&lt;", "#", "#12"]
    + ["javascript:alert(1)", "https://evil.example/", "http://", "www.evil.example", "o/r#3", " ", "x", "-", "*"]
)
HOSTILE = st.lists(MARKUP | LINE, max_size=10).map("".join) | st.sampled_from(PAYLOADS)
RUN_URLS = st.sampled_from(
    ["javascript:alert(1)", "https://evil.example/o/r/actions/runs/1", f"{REPOSITORY}/actions/runs/1"]
    + [f"{REPOSITORY}/../evil", f"{REPOSITORY}/x) [y](https://evil.example", "data:text/html,<b>"]
)
_MARK = "\x00field\x00"


def _seeded(value, pool: list[str], turn: list[int]):
    """`value` with the fields that held the mark given the pool's strings in turn (neighbours differ)."""
    if isinstance(value, dict):
        return {_seeded(k, pool, turn): _seeded(v, pool, turn) for k, v in value.items()}
    if isinstance(value, list):
        return [_seeded(v, pool, turn) for v in value]
    if isinstance(value, str) and _MARK in value:
        turn[0] += 1
        return value.replace(_MARK, pool[turn[0] % len(pool)])
    return value


@fuzz(100)
@given(
    pool=st.lists(HOSTILE, min_size=1, max_size=7),
    run_url=RUN_URLS,
    limit=st.sampled_from((65_536, 8_000, 1_500, 300)),
)
def test_report_hostile_strings_never_reach_the_markdown(count, pool, run_url, limit):
    count()
    document = within_proposal_schema(_seeded(hostile_document(_MARK, run_url=run_url), pool, [0]))
    document["run_url"] = run_url
    report = Report.from_json(document)
    comment = render_comment(report, max_chars=limit)
    assert len(comment) <= limit
    assert_inert(comment, marker=comment.startswith("<!-- export-bot:conformance -->"))
    assert_inert(render_summary(report))
    page = build_data([NightlyReport(report, "report.json")])
    assert page["runs"][0]["url"] is None or page["runs"][0]["url"].startswith("https://")


# ── selection.json ───────────────────────────────────────────────────────────────────────────


@fuzz(100)
@given(cells=st.lists(st.sampled_from(POOL), unique=True, max_size=10), summary=st.none() | LINE)
def test_selection_valid_files_read_back_as_written(tmp_path, count, cells, summary):
    count()
    path = tmp_path / "selection.json"
    write_selection(path, cells, summary=summary, shards=[[c.id for c in cells]], probe=False)
    assert read_selection(path) == cells
    assert read_selection_document(path)[1]["summary"] == summary
    head = tmp_path / "head.xml"
    head.write_text(junit([Case(c.id) for c in cells]), encoding="utf-8")
    assert_clean(invoke("diff", "--skiplists", SKIPLISTS, "--head", head, "--selection", path), allowed=(0,))


@fuzz(150)
@given(cells=st.lists(st.sampled_from(POOL), unique=True, min_size=1, max_size=4), data=st.data())
def test_selection_any_other_file_is_exit_2_in_one_line(tmp_path, count, cells, data):
    count()
    document = {"schema": 1, "summary": "s", "probe": False, "shards": [[c.id for c in cells]]}
    document["cells"] = [c.id for c in cells]
    path = tmp_path / "selection.json"
    if data.draw(st.booleans()):
        path.write_text(json.dumps(data.draw(mutated(document))), encoding="utf-8")
    else:
        path.write_bytes(data.draw(JUNK))
    try:
        read_selection(path)
    except BotError:
        pass
    head = tmp_path / "head.xml"
    head.write_text(junit([Case(c.id) for c in cells]), encoding="utf-8")
    assert_clean(invoke("diff", "--skiplists", SKIPLISTS, "--head", head, "--selection", path), allowed=(0, 1, 2))


# ── webhook payloads ─────────────────────────────────────────────────────────────────────────


@pytest.fixture
def payloads():
    if not (NPM / "@octokit" / "webhooks-examples").is_dir():
        pytest.skip("webhook examples not installed: run scripts/npm-deps.sh")
    from tests.github.payloads import example

    return {
        "comment": example("issue_comment", "created"),
        "run": example("workflow_run", "completed"),
        "pull": example("pull_request", "opened"),
    }


# The fields bot/publish/events.py reads from each payload.
READ = {
    "comment": [
        ("action",),
        ("issue", "number"),
        ("issue", "pull_request"),
        ("comment", "id"),
        ("comment", "body"),
        ("comment", "user", "login"),
        ("comment", "user", "type"),
        ("repository", "default_branch"),
    ],
    "run": [
        ("workflow_run", "pull_requests", 0, "number"),
        ("workflow_run", "head_sha"),
        ("workflow_run", "html_url"),
        ("workflow_run", "event"),
        ("workflow_run", "display_title"),
    ],
    "pull": [("pull_request", "number"), ("pull_request", "head", "sha")],
}


@fuzz(60)
@given(body=TEXT, login=st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True), number=st.integers(1, 10**6))
def test_webhook_valid_payloads_keep_their_fields(tmp_path, count, payloads, body, login, number):
    count()
    payload = json.loads(json.dumps(payloads["comment"]))
    payload["comment"].update(body=body, user={**payload["comment"]["user"], "login": login, "type": "User"})
    payload["issue"]["number"] = number
    event = CommentEvent.from_payload(payload)
    assert (event.number, event.comment_id, event.body, event.author) == (
        number,
        payload["comment"]["id"],
        body,
        login,
    )
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    env = {"GITHUB_REPOSITORY": None, "GITHUB_TOKEN": None, "GITHUB_OUTPUT": str(tmp_path / "out.txt")}
    result = invoke("github", "--event", path, "command", env=env)
    # A new comment on a PR by a person is read; only then does the command need a token.
    if event.ignored_because() is None:
        assert_clean(result, allowed=(2,))
        assert "no repository or token" in result.stderr
    else:
        assert_clean(result, allowed=(0,))
    run = RunEvent.from_payload(payloads["run"])
    assert run.head_sha == payloads["run"]["workflow_run"]["head_sha"]
    assert RunEvent.from_payload(payloads["pull"]).pr_numbers == (payloads["pull"]["number"],)


@fuzz(120)
@given(data=st.data())
def test_webhook_any_other_payload_is_exit_2_in_one_line(tmp_path, count, payloads, data):
    count()
    kind = data.draw(st.sampled_from(sorted(payloads)))
    payload = data.draw(mutated(payloads[kind], focus=READ[kind]))
    for parse in (CommentEvent.from_payload, RunEvent.from_payload):
        try:
            parse(payload)
        except BotError:
            pass
    path = tmp_path / "event.json"
    path.write_text(json.dumps(payload), encoding="utf-8")
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"schema": "export-bot/report@1", "verdict": "success"}), encoding="utf-8")
    env = {
        "GITHUB_REPOSITORY": None,
        "GITHUB_TOKEN": None,
        "GITHUB_OUTPUT": str(tmp_path / "out.txt"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
    }
    # Without a token the commands stop before GitHub: exit 0 (ignored) or 2 (no token, bad event).
    assert_clean(invoke("github", "--event", path, "command", env=env), allowed=(0, 2))
    assert_clean(invoke("github", "--event", path, "apply", env=env), allowed=(0, 2))
    assert_clean(invoke("github", "--event", path, "comment", "--report", report, env=env), allowed=(2,))


# ── /export-check comment bodies ─────────────────────────────────────────────────────────────

MODELS = frozenset({"BertModel", "GPT2LMHeadModel", "LlamaForCausalLM"})
TYPES = frozenset({"bert", "gpt2", "llama"})


@fuzz(300)
@given(
    models=st.lists(st.sampled_from(sorted(MODELS | TYPES)), min_size=1, max_size=4),
    backends=st.lists(st.sampled_from(BACKENDS), max_size=3),
    shapes=st.lists(st.sampled_from(("--static", "--dynamic")), max_size=2),
    generate=st.booleans(),
    rest=TEXT,
)
def test_command_valid_bodies_mean_what_they_say(count, models, backends, shapes, generate, rest):
    count()
    words = ["/export-check", *models, *(f"--backend={b}" for b in backends), *shapes]
    words += ["--generate"] if generate else []
    request = parse_command(" ".join(words) + "\n" + rest, model_classes=MODELS, model_types=TYPES)
    assert request == Request(
        "models",
        models=tuple(dict.fromkeys(models)),
        backends=tuple(dict.fromkeys(backends)),
        shapes=tuple(dict.fromkeys(s[2:] for s in shapes)),
        generate=generate,
    )


@fuzz(300)
@given(
    body=TEXT
    | st.lists(st.sampled_from(("/export-check", "--backend", "onnx", "full", "bert", "-x", "=", ",")) | TEXT).map(
        " ".join
    )
)
def test_command_any_other_body_is_a_reply_never_an_exception(count, body):
    count()
    parsed = parse_command(body, model_classes=MODELS, model_types=TYPES)
    assert parsed is None or isinstance(parsed, (Request, Invalid))
    if isinstance(parsed, Invalid):
        assert parsed.problems and parsed.message.startswith("I could not read this command")


# ── command-line values ──────────────────────────────────────────────────────────────────────


@fuzz(300)
@given(value=st.text(max_size=60) | st.sampled_from(POOL).map(lambda c: c.id))
def test_cli_cell_ids(count, value):
    count()
    try:
        cell = Cell.parse(value)
    except CellIdError:
        cell = None
    if cell is not None:
        assert Cell.parse(cell.id) == cell and cell.id == value
    assume("\x00" not in value)  # no operating system passes NUL in argv
    assert_clean(invoke("skiplist", "explain", "--skiplists", SKIPLISTS, "--", value), allowed=(0, 2))


@fuzz(200)
@given(
    value=st.text(max_size=12)
    | st.from_regex(r"[0-9]{1,3}/[0-9]{1,3}", fullmatch=True)
    # Digits of other scripts and superscripts: str.isdigit() says yes to them, int() may not.
    | st.text(st.characters(whitelist_categories=("Nd", "No")) | st.sampled_from("/0123456789"), max_size=6)
)
def test_cli_numbers_and_shards(tmp_path, count, value):
    count()
    try:
        index, total = parse_shard(value)
        assert (index, total) == tuple(int(part) for part in value.split("/")) and 1 <= index <= total
    except ShardError:
        pass
    assume("\x00" not in value)
    assert_clean(invoke("check", "-n", value, "--base", "main", "--models", "BertModel"), allowed=(2,))
    assert_clean(invoke("diff", "--expect-shards", value, "--head", tmp_path / "none.xml"), allowed=(2,))


@fuzz(200)
@given(
    value=JSON.map(json.dumps)
    | st.text(max_size=40)
    | st.fixed_dictionaries(
        {"kind": st.sampled_from(("rerun", "models", "full", "probe", "failed", "apply")) | JSON},
        optional={
            "models": JSON,
            "backends": JSON,
            "shapes": JSON,
            "generate": JSON,
            "cells": JSON | st.lists(st.text(max_size=60) | st.just("BertModel::test_onnx_export_static")),
        },
    ).map(json.dumps)
)
def test_cli_request_json(count, value):
    count()
    try:
        request = parse_request(value)
    except BotError:
        return
    assert all(isinstance(m, str) for m in request.models + request.backends + request.shapes)
    assert all(isinstance(c, Cell) for c in request.cells) and (request.kind == "failed") == bool(request.cells)
