"""The skiplist jobs: lint files, and import a module's skip tables as checked skiplist documents."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from bot import toml
from bot.errors import BotError
from bot.files import NotText, read_text
from bot.models.index import installed_index
from bot.results import read_results
from bot.results.recorded_walk import recorded_walk
from bot.scopes import ScopeWalk
from bot.skiplist.checkout_walk import read_walk
from bot.skiplist.document import SkiplistDocument
from bot.skiplist.importer import ImportedTable, read_skip_dict, read_tables, table_comments, to_toml
from bot.skiplist.lint import ERROR, Finding, LintResult, lint_text
from bot.skiplist.model import SkiplistError, load_skiplist
from bot.skiplist.tables import TableCheck, compare_tables

EXPORT_MODULE = Path("tests") / "exporters" / "test_export.py"


def lint_files(paths: Iterable[Path], walk: ScopeWalk | None = None) -> list:
    """One `LintResult` per file (a folder stands for its *.toml), each read once and checked against `walk`
    (None: the bot's own); a file that cannot be read is an error finding."""
    files = _toml_files(paths)
    classes = installed_index().classes or None  # no Transformers installed: skip that check
    results = []
    for path in files:
        try:
            text = read_text(path)
        except (OSError, NotText) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else str(exc).partition(": ")[2]
            results.append(LintResult(str(path), (Finding(str(path), 1, 1, ERROR, f"cannot read: {reason}"),)))
            continue
        results.append(lint_text(text, str(path), known_classes=classes, walk=walk))
    return results


def _toml_files(paths: Iterable[Path]) -> list[Path]:
    files = []
    for path in paths:
        if path.is_dir():
            found = sorted(path.glob("*.toml"))
            if not found:
                raise BotError(f"{path}: no *.toml skiplists in this folder")
            files += found
        elif path.exists():
            files.append(path)
        else:
            raise BotError(f"{path}: no such file or folder")
    return files


def import_file(file: Path, name: str) -> tuple[str, int, int]:
    """The skiplist TOML of `file`'s `name = {...}` literal, checked, with its entries and scopes (never runs the module).

    The importer refuses what the TOML could not hold (a duplicate key, a non-string) at its
    line in `file`, so the generated text is checked under the file's name before anything is written.
    """
    source = read_text(file)
    table = ImportedTable(name, 0, tuple(read_skip_dict(source, name, str(file))), table_comments(source, name))
    text = to_toml(table.scopes, table.comments)
    _check(text, table, f"the TOML generated from {file}")
    return text, sum(len(s.entries) for s in table.scopes), len(table.scopes)


def _check(text: str, table, where: str) -> None:
    """Parse the generated text back: a table of reasons as a skiplist document, one of names as plain TOML."""
    if all(isinstance(value, str) for scope in table.scopes for _, value in scope.entries):
        SkiplistDocument.parse(text, where)
    elif toml.loads(text) != {s.name: {c: _plain(v) for c, v in s.entries} for s in table.scopes}:
        raise BotError(f"{where}: does not read back as written; report this with the module")


@dataclass(frozen=True)
class ImportedTables:
    """Every table of a module as TOML text keyed by the file the checkout's run reads, and those refused."""

    texts: dict[str, str]  # `export_skips.toml` → its text, in the module's order
    entries: dict[str, tuple[int, int]]  # file → (entries, scopes)
    refused: tuple[str, ...]  # `NAME not imported: file:line:column: why`, one line each


def import_tables(file: Path) -> ImportedTables:
    """Convert every upper-case table of `file` (through the AST), each checked by parsing its TOML back.

    Exit 2 (a BotError) only when no table could be converted; the others are named with why.
    """
    found = read_tables(read_text(file), str(file))
    texts, entries = {}, {}
    for table in found.tables:
        text = to_toml(table.scopes, table.comments)
        _check(text, table, f"the TOML generated from {file}'s {table.name}")
        texts[table.file_name] = text
        entries[table.file_name] = (sum(len(s.entries) for s in table.scopes), len(table.scopes))
    refused = tuple(f"{r.name} not imported: {r.why}" for r in found.refused)
    if not texts:
        reasons = "; ".join(refused) or "it has no upper-case dict or set literal at module level"
        raise BotError(f"{file}: no skip table could be imported ({reasons})")
    return ImportedTables(texts, entries, refused)


def _plain(value):
    return value if isinstance(value, str) else list(value)


def walk_for_source(spec: str | None):
    """The scope walk the skiplist commands follow for a model source (docs/skiplists.md, "Whose walk").

    None (the bot's own walk) for the zoo, and for a checkout without `tests/exporters/test_export.py`,
    whose cells the bot's rules judge. A checkout that holds the module gets its own walk, read from
    it; a BotError saying what to do when that walk cannot be read, never a guess.
    """
    kind, sep, where = (spec or "").partition(":")
    if kind != "transformers-tests" or not sep:
        return None
    root = Path(where)
    if not root.is_dir():
        raise BotError(f"--source {spec}: {root} is not a folder; pass the checkout's root, or --source zoo")
    return read_walk(root, f"--source {spec}: {root / 'tests' / 'exporters' / 'test_export.py'}")


def followed_walk(spec: str | None, recorded=None, *, where: str = "--recorded-walk"):
    """The walk to follow: what a run recorded per cell (`recorded`, its cell results), else the source's walk.

    A checkout's own test records the scopes its module really looked up (bot/run/observed_walk.py):
    those cells follow that record, every other cell the module's walk read from its text (the
    fallback), else the bot's own. Where the text cannot be read, the record alone is followed;
    with neither, a BotError says what to do. Results that recorded nothing are refused when they
    were asked for by name (`where`), since following them would silently fall back.
    """
    try:
        walk, unreadable = walk_for_source(spec), None
    except BotError as exc:
        walk, unreadable = None, exc
    found = recorded_walk(recorded, walk) if recorded is not None else None
    if found is not None:
        return found
    if unreadable is not None:
        raise unreadable
    if recorded is not None and where:
        raise BotError(
            f"{where}: no cell in these results recorded the checkout's walk (runs of a checkout's own "
            "export tests, --source transformers-tests:PATH, record it); pass such a run's JUnit, or leave it out"
        )
    return walk


def recorded_results(paths):
    """The cell results of JUnit files or folders, for `--recorded-walk`; a BotError when they cannot be read."""
    results = read_results(list(paths))
    if results.problems:
        raise BotError(f"{results.problems[0]} (--recorded-walk); pass the JUnit files a run wrote")
    return list(results.results.values())


def check_tables(checkout: Path, skiplists_dir: Path | None = None) -> TableCheck:
    """Compare the checkout's skip tables (tests/exporters/test_export.py, read, never run) with its TOML skiplists.

    The TOML folder is `skiplists_dir`, else the `[tool.export-bot] skiplists` of the checkout's
    pyproject.toml; a BotError (exit 2) when the module, the folder or a file cannot be read.
    """
    from bot.settings import load_settings

    module = checkout / EXPORT_MODULE
    if not module.is_file():
        raise BotError(f"--checkout {checkout}: no {EXPORT_MODULE.as_posix()}; pass a Transformers checkout's root")
    if skiplists_dir is None:
        settings = load_settings(checkout / "pyproject.toml")
        if "skiplists" not in settings.configured:
            raise BotError(f"{checkout / 'pyproject.toml'}: no [tool.export-bot] skiplists; pass --skiplists DIR")
        skiplists_dir = settings.skiplists
    if not skiplists_dir.is_dir():
        raise BotError(f"{skiplists_dir}: no such skiplist folder; pass --skiplists DIR")
    files = sorted(skiplists_dir.glob("*.toml"))
    if not files:
        raise BotError(f"{skiplists_dir}: no *.toml skiplists in this folder")
    try:
        toml_tables = {path.name: load_skiplist(path, names=True).scopes for path in files}
    except (OSError, NotText) as exc:
        raise SkiplistError(f"{skiplists_dir}: cannot read a skiplist ({exc})") from None
    source = read_text(module)
    return compare_tables(read_tables(source, str(module)), source, toml_tables)
