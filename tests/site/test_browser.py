"""The dashboard in Debian's headless Chromium, built from 30 synthetic nights of 30,000 cells each.

Screenshots go to test-output/site/ (override with EXPORT_BOT_TEST_OUTPUT) for a person to look at.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from bot.cli import main
from tests.site import browser
from tests.site.factory import family, nightly_reports

ROOT = Path(__file__).resolve().parents[2]
OUTPUT = Path(os.environ.get("EXPORT_BOT_TEST_OUTPUT", ROOT / "test-output")) / "site"
NIGHTS, CELLS = 30, 30_000

_missing = browser.missing()
if _missing and os.environ.get("CI"):
    raise RuntimeError(f"the browser tests cannot run in CI: {_missing}")
pytestmark = pytest.mark.skipif(bool(_missing), reason=_missing or "")


@pytest.fixture
def site(tmp_path) -> Path:
    folder = tmp_path / "nights"
    nightly_reports(folder, runs=NIGHTS, cells=CELLS)
    out = folder / "site"
    args = ["site", "--reports", str(folder), "--out", str(out), "--skiplists", str(folder / "skiplists")]
    args += ["--repo-url", "https://github.com/huggingface/transformers"]
    args += ["--skiplist-url", "https://github.com/huggingface/transformers/blob/main/skiplists"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert f"{NIGHTS} runs, {CELLS:,} cells" in result.output
    return out


def load(driver):
    driver.get(driver.base_url)
    assert driver.execute_script("return document.body.dataset.ready") == "true"
    return driver


def js(driver, script: str):
    return driver.execute_script(script)


def select(driver, element_id: str, value: str) -> None:
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element("id", element_id)).select_by_value(value)


def frames(driver) -> None:
    """Wait until the page has drawn (two animation frames: the scroll handler draws in the first)."""
    js(driver, "return new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(1))))")


def shown(driver) -> dict:
    """What the grid shows right now: the count line, row names, column labels, the DOM size."""
    return js(
        driver,
        """return {
          count: document.getElementById('count').textContent,
          rows: [...document.querySelectorAll('#grid-rows .row .name')].map(e => e.firstChild.textContent),
          heads: [...document.querySelectorAll('#grid-head .h')].map(e => e.textContent),
          cells: document.querySelectorAll('#grid-rows .c[data-c]').length,
          nodes: document.getElementsByTagName('*').length,
        };""",
    )


def check_the_grid_renders_a_window_of_rows(driver):
    load(driver)
    now = shown(driver)
    assert now["count"] == f"1,500 classes × 24 columns · {CELLS:,} cells"
    assert 10 < len(now["rows"]) < 100 and now["cells"] > 200
    assert now["nodes"] < 5_000  # virtualized: never one element per cell of the 30,000
    assert now["rows"][:3] == ["Synth0ForCausalLM", "Synth1ForCausalLM", "Synth2ForCausalLM"]
    # Scrolling to the end draws the last classes, and the header stays in view (sticky).
    js(driver, "const g = document.getElementById('grid'); g.scrollTop = g.scrollHeight;")
    frames(driver)
    end = shown(driver)
    assert "Synth1499Model" in end["rows"]
    head = js(
        driver,
        "const h = document.getElementById('grid-head').getBoundingClientRect(); const g = document.getElementById('grid').getBoundingClientRect(); return [h.top, g.top]",
    )
    assert abs(head[0] - head[1]) < 2
    assert browser.console_errors(driver) == []


def check_filters_and_search_change_what_is_shown(driver):
    load(driver)
    select(driver, "f-backend", "onnx")
    now = shown(driver)
    assert len(now["heads"]) == 6 and all(h.startswith("onnx") for h in now["heads"])
    select(driver, "f-path", "generate")
    select(driver, "f-cache", "static")
    now = shown(driver)
    assert now["heads"] == ["onnxgen st sc", "onnxgen dyn sc"]
    assert all(name.endswith("ForCausalLM") for name in now["rows"])  # encoders have no generate cells
    select(driver, "f-backend", "")
    select(driver, "f-path", "")
    select(driver, "f-cache", "")

    select(driver, "f-family", "vision")
    families = js(driver, "return [...document.querySelectorAll('#grid-rows .name small')].map(e => e.textContent)")
    assert families and set(families) == {"vision"}
    vision = [f"Synth{i}Model" for i in range(1500) if family(f"Synth{i}Model") == "vision" and i % 4 == 3]
    assert shown(driver)["count"].startswith(f"{len(vision)} classes")
    select(driver, "f-family", "")

    select(driver, "f-status", "failing")
    failing = shown(driver)
    assert int(failing["count"].split()[0].replace(",", "")) < 1_500
    # Every row shown has a failing mark; marks that do not match are dimmed.
    undimmed = js(
        driver,
        "return [...document.querySelectorAll('#grid-rows .row')].map(r => r.querySelectorAll('.c[data-c]:not(.dim)').length)",
    )
    assert undimmed and min(undimmed) >= 1
    assert js(
        driver,
        "return [...document.querySelectorAll('#grid-rows .c[data-c]:not(.dim)')].every(c => /\\b[FXHK]\\b/.test(c.className))",
    )
    select(driver, "f-status", "")

    # The comment's marks: weak passes (☑️) and classes the source cannot build (🚧) have their own filters.
    options = js(driver, "return [...document.querySelectorAll('#f-status option')].map(o => o.value)")
    assert {"weak", "not-buildable", "passing", "failing", "skipped"} <= set(options)
    legend = driver.find_element("id", "legend").text
    assert "☑️ passed on a weak check" in legend and "🚧 not buildable by this source" in legend
    for status, letter in (("weak", "W"), ("not-buildable", "B")):
        select(driver, "f-status", status)
        assert int(shown(driver)["count"].split()[0].replace(",", "")) < 1_500
        assert js(
            driver,
            f"const c = [...document.querySelectorAll('#grid-rows .c[data-c]:not(.dim)')];"
            f"return c.length > 0 && c.every(e => /\\b{letter}\\b/.test(e.className))",
        )
    select(driver, "f-status", "")

    search = driver.find_element("id", "search")
    search.send_keys("synth14")
    js(driver, "return new Promise(r => setTimeout(r, 400))")  # the search waits for typing to pause
    found = shown(driver)
    expected = [f"Synth{i}{'Model' if i % 4 == 3 else 'ForCausalLM'}" for i in range(1500) if str(i).startswith("14")]
    assert found["count"].startswith(f"{len(expected)} classes")
    assert found["rows"] == expected[: len(found["rows"])]
    assert browser.console_errors(driver) == []


def check_history_strips_the_plot_and_a_cells_panel(driver, site):
    load(driver)
    assert (
        js(driver, "return document.querySelectorAll('#grid-rows .c[data-c] .strip').length") == shown(driver)["cells"]
    )
    assert js(driver, "return document.querySelectorAll('#rates polyline.series').length") == 4
    points = js(
        driver,
        "return [...document.querySelectorAll('#rates polyline.series')].map(p => p.getAttribute('points').split(' ').length)",
    )
    assert points == [NIGHTS] * 4
    OUTPUT.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(OUTPUT / "dashboard.png"))

    # A cell that changed: its panel shows the whole history, the change, and the commit.
    select(driver, "f-status", "failing")
    driver.find_element("css selector", "#grid-rows .c.F:not(.dim)").click()
    panel = driver.find_element("id", "panel")
    assert panel.is_displayed()
    assert js(driver, "return document.querySelectorAll('#history-strip span').length") == NIGHTS
    assert "stage" in panel.text and "failed" in panel.text
    commits = js(driver, "return [...document.querySelectorAll('#changes a')].map(a => a.href)")
    assert any(re.fullmatch(r"https://github.com/huggingface/transformers/commit/[0-9a-f]{40}", h) for h in commits)
    driver.save_screenshot(str(OUTPUT / "dashboard-panel.png"))

    # A value-compared pass, every night: each figure's history, one point per night, as a line plot.
    select(driver, "f-status", "passing")
    for cell in js(driver, "return [...document.querySelectorAll('#grid-rows .c.P:not(.dim)')].map(e => e.dataset.c)"):
        driver.find_element("css selector", f"#grid-rows .c[data-c='{cell}']").click()
        if js(driver, "return document.querySelectorAll('#history-strip span.P').length") == NIGHTS:
            break
    # figures.js loads when the first panel opens: the grid never waits for it.
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 10).until(lambda d: d.find_elements("css selector", "#figure-history svg"))
    plotted = js(
        driver,
        "return [...document.querySelectorAll('#figure-history svg')].map(s => [s.dataset.figure, "
        "s.querySelector('polyline').getAttribute('points').split(' ').length])",
    )
    assert plotted == [["max_abs_error", NIGHTS], ["tolerance_ratio", NIGHTS], ["artifact_bytes", NIGHTS]], plotted
    assert "max abs error: " in driver.find_element("id", "figure-history").text
    # One whose export became ten times less exact, still passing: its plot steps up.
    for cell in js(driver, "return [...document.querySelectorAll('#grid-rows .c.P:not(.dim)')].map(e => e.dataset.c)"):
        driver.find_element("css selector", f"#grid-rows .c[data-c='{cell}']").click()
        ys = js(
            driver,
            "const p = document.querySelector('#figure-history svg[data-figure=max_abs_error] polyline');"
            "return p ? p.getAttribute('points').split(' ').map(xy => Number(xy.split(',')[1])) : [];",
        )
        if len(set(ys)) > 1:
            break
    assert ys == sorted(ys, reverse=True) and ys[0] > ys[-1], ys  # steps up (higher on the page), never down
    driver.save_screenshot(str(OUTPUT / "dashboard-figures.png"))

    # A skipped cell: its scope, reason and the link to its line in the TOML.
    select(driver, "f-status", "skipped")
    driver.find_element("css selector", "#grid-rows .c.S:not(.dim)").click()
    text = driver.find_element("id", "panel").text
    assert "skip scope" in text and "detach_(alias(...))" in text and "<b>" in text  # shown as text, not markup
    link = js(
        driver,
        "return [...document.querySelectorAll('#panel a')].map(a => a.href).find(h => h.includes('export_skips.toml'))",
    )
    line = int(link.rpartition("#L")[2])
    toml = (site.parent / "skiplists" / "export_skips.toml").read_text(encoding="utf-8").splitlines()
    name = driver.find_element("css selector", "#panel h2").text.partition("::")[0]
    assert toml[line - 1].startswith(f"{name} = ")

    # A weak pass says what it compared; a class the source cannot build says why.
    for status, letter in (("weak", "W"), ("not-buildable", "B")):
        driver.find_element("id", "panel-close").click()  # the panel would cover the cells on the right
        select(driver, "f-status", status)
        driver.find_element("css selector", f"#grid-rows .c.{letter}:not(.dim)").click()
        text = driver.find_element("id", "panel").text
        if letter == "W":
            assert "☑️ passed on a weak check" in text
            assert re.search(r"compared\s+(output names only|the output count only)", text), text
        else:
            assert "🚧 not buildable by this source" in text and "no zoo recipe builds Synth" in text
    assert browser.console_errors(driver) == []


def check_an_older_run_can_be_shown(driver):
    load(driver)
    latest = shown(driver)["count"]
    select(driver, "f-status", "changed")
    changed_latest = shown(driver)["count"]
    select(driver, "f-run", "13")  # inside the synthetic OpenVINO regression
    changed_then = shown(driver)["count"]
    assert latest != changed_latest and changed_latest != changed_then
    assert browser.console_errors(driver) == []


def check_a_link_restores_the_view(driver):
    load(driver)
    select(driver, "f-backend", "openvino")
    driver.find_element("css selector", "#grid-rows .c[data-c]").click()
    link = driver.current_url
    assert "backend=openvino" in link and "cell=" in link
    title = driver.find_element("css selector", "#panel h2").text
    driver.get("about:blank")
    driver.get(link)
    assert driver.find_element("css selector", "#panel h2").text == title
    assert all(h.startswith("ov") for h in shown(driver)["heads"])
    assert browser.console_errors(driver) == []


def test_the_dashboard_in_chromium(site):
    # One test, one site, one browser: under pytest-xdist, separate tests would each build the
    # 30 x 30,000-cell site on their own worker.
    with browser.serve(site) as url, browser.chromium() as driver:
        driver.base_url = url
        check_the_grid_renders_a_window_of_rows(driver)
        check_filters_and_search_change_what_is_shown(driver)
        check_history_strips_the_plot_and_a_cells_panel(driver, site)
        check_an_older_run_can_be_shown(driver)
        check_a_link_restores_the_view(driver)
        # data.js is a script, not fetched JSON: the page also works opened from disk.
        driver.base_url = (site / "index.html").as_uri()
        check_the_grid_renders_a_window_of_rows(driver)


def test_the_page_links_no_url_that_is_not_https(tmp_path):
    # data.js written by a tampered builder: the page itself refuses every other scheme.
    from bot.diff.model import CellLine, Report, write_report

    for night, status in enumerate(("passed", "failed")):
        lines = (CellLine("BertModel::test_onnx_export_static", status),)
        sha = ("a", "b")[night] * 40
        report = Report(verdict="success", headline="", baseline=False, cells=lines, head_sha=sha)
        (tmp_path / f"n{night}").mkdir()
        write_report(report, tmp_path / f"n{night}" / "report.json")
    out = tmp_path / "site"
    result = CliRunner().invoke(main, ["site", "--reports", str(tmp_path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    data = out / "data.js"
    hostile = (
        data.read_text(encoding="utf-8")
        .replace('"repo_url":null', '"repo_url":"javascript:alert(1)//"')
        .replace('"url":null', '"url":"javascript:alert(2)"')
    )
    assert hostile.count("javascript:") == 3
    data.write_text(hostile, encoding="utf-8")
    with browser.serve(out) as url, browser.chromium() as driver:
        driver.base_url = url
        load(driver)
        driver.find_element("css selector", "#grid-rows .c[data-c]").click()
        hrefs = js(driver, "return [...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href'))")
        assert "workflow run" not in driver.find_element("id", "panel").text
        assert all(h.startswith(("https:", "#")) for h in hrefs), hrefs
        assert browser.console_errors(driver) == []
