"""The interactive attention views of the built site, in Chromium, opened from disk, offline.

Every page with a view (``attention_course.attention_view``) is opened as a ``file://`` URL
with every request that is not a file of the site aborted and recorded: the view must draw,
with its JavaScript from the site's own ``_static/``. Pointing at a token must show that
token's weights, read back from the drawn marks and compared with the numbers the notebook
computed (MiniLM's weights recomputed here; the encoder-decoder's against the row its page
prints), in the theme's light and dark modes, within the page's column.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.book.test_accessibility import AXE, RUN_AXE, TAGS
from tests.conftest import READING_BOOK_GROUP, SCREENSHOTS, visible_text

pytestmark = pytest.mark.xdist_group(READING_BOOK_GROUP)  # once the site is built

VIEWPORT = {"width": 1280, "height": 800}
PATIENCE_MS = 180_000          # a loaded machine may take long to load a page: not timed here
REAL_HEADS = "book/encoder/real-heads"
ENCODER_DECODER = "book/traditional/encoder-decoder"
TRANSFORMER = "book/encoder/transformer"
VIEW_PAGES = [REAL_HEADS, ENCODER_DECODER, TRANSFORMER]
ROUNDING = 0.005 + 1e-9        # the view shows weights rounded to two decimals


@pytest.fixture
def offline(browser):
    """A browser context whose pages reach nothing but files; what else they asked for is
    recorded in ``context.left_the_site`` (and aborted)."""
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(PATIENCE_MS)
    context.set_default_navigation_timeout(PATIENCE_MS)
    context.left_the_site = []

    def only_files(route):
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            context.left_the_site.append(route.request.url)
            route.abort()

    context.route("**/*", only_files)
    yield context
    context.close()


def open_view(context, site: Path, page_name: str, dark: bool = False):
    """Open a page from disk; return it, its console errors and the view's specification."""
    if dark:   # the theme reads the reader's choice from localStorage as the page starts
        context.add_init_script("localStorage.setItem('mode', 'dark');")
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
            if m.type in ("error", "assert") else None)
    page.on("pageerror", lambda error: problems.append(f"uncaught: {error}"))
    page.on("request", lambda r: problems.append(f"request left the site: {r.url}")
            if not r.url.startswith(("file://", "data:", "blob:")) else None)
    page.goto((site / f"{page_name}.html").as_uri(), wait_until="load")
    page.wait_for_selector("[data-attention-view][data-state=ready]")
    spec = json.loads(page.locator(".attention-view-spec").first.text_content())
    assert page.evaluate("document.documentElement.dataset.theme") == \
        ("dark" if dark else "light")
    return page, problems, spec


def marks(page, group: str) -> list[dict]:
    """The text marks of one layer of the view (``query``, ``key``, ``given``,
    ``received``): their text, whether they are shown, their centre on the page."""
    return page.evaluate("""group => [...document.querySelectorAll(
        '[data-attention-view] svg g.' + group + '_marks text')].map(t => {
          const box = t.getBoundingClientRect();
          return {text: t.textContent, shown: t.getAttribute('opacity') !== '0'
                    && getComputedStyle(t).opacity !== '0',
                  x: box.x + box.width / 2, y: box.y + box.height / 2,
                  fill: getComputedStyle(t).fill};
        })""", group)


def point_at(page, group: str, index: int) -> None:
    """Move the mouse onto token ``index`` of the ``query`` or ``key`` column."""
    page.evaluate("""([group, index]) => document.querySelectorAll(
        '[data-attention-view] svg g.' + group + '_marks text')[index]
        .scrollIntoView({block: 'center'})""", [group, index])
    token = marks(page, group)[index]
    numbers = "given" if group == "query" else "received"
    for x, y, shown in ((1, 1, "false"), (token["x"], token["y"], "true")):
        page.mouse.move(x, y)   # off the view first: what was shown goes away
        page.wait_for_function("""([group, shown]) => String([...document.querySelectorAll(
            '[data-attention-view] svg g.' + group + '_marks text')].some(
              t => t.getAttribute('opacity') !== '0')) === shown""", arg=[numbers, shown])


def shown_weights(page, numbers: str, tokens: str) -> list[float]:
    """The weights shown beside the tokens of a column, in the tokens' order."""
    rows = marks(page, tokens)
    values = [None] * len(rows)
    for number in (m for m in marks(page, numbers) if m["shown"]):
        nearest = min(range(len(rows)), key=lambda i: abs(rows[i]["y"] - number["y"]))
        assert abs(rows[nearest]["y"] - number["y"]) < 4, (number, rows[nearest])
        assert values[nearest] is None, f"two weights beside token {nearest}"
        values[nearest] = float(number["text"])
    assert None not in values, f"no weight beside some tokens: {values}"
    return values


def choose(page, menu: str, value: int) -> None:
    """Pick ``value`` (the option's value) in the view's menu named ``menu``."""
    select = page.locator(f"[data-attention-view] .vega-bind:has-text('{menu}') select")
    select.select_option(str(value))


def relative_luminance(css: str) -> float:
    channels = [int(c) / 255 for c in re.findall(r"\d+", css)[:3]]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    """WCAG's contrast ratio of two CSS colours ``rgb(r, g, b)``."""
    la, lb = sorted([relative_luminance(a), relative_luminance(b)], reverse=True)
    return (la + 0.05) / (lb + 0.05)


def page_background(page) -> str:
    return page.evaluate("""() => {
        for (let el = document.querySelector('[data-attention-view]'); el;
             el = el.parentElement) {
          const bg = getComputedStyle(el).backgroundColor;
          if (bg && !bg.startsWith('rgba(0, 0, 0, 0)') && bg !== 'transparent') return bg;
        }
        return 'rgb(255, 255, 255)';
      }""")


def check_readable_and_within_the_column(page) -> None:
    background = page_background(page)
    for group in ("query", "key"):
        for token in marks(page, group):
            assert contrast(token["fill"], background) >= 4.5, (token, background)
    lines = page.evaluate("""() => [...document.querySelectorAll(
        '[data-attention-view] svg g.mark-rule path, [data-attention-view] svg g.mark-rule line')]
        .map(l => getComputedStyle(l).stroke).filter(s => s && s !== 'none')""")
    assert lines and contrast(lines[0], background) >= 3, (lines[:1], background)
    boxes = page.evaluate("""() => {
        const view = document.querySelector('[data-attention-view]');
        const column = view.closest('article') || view.closest('main');
        const box = view.getBoundingClientRect(), svg = view.querySelector('svg')
              .getBoundingClientRect(), col = column.getBoundingClientRect();
        return {view: [box.left, box.right], svg: [svg.left, svg.right],
                column: [col.left, col.right], scroll: view.scrollWidth - view.clientWidth};
      }""")
    left, right = boxes["column"]
    for name in ("view", "svg"):
        assert left - 1 <= boxes[name][0] and boxes[name][1] <= right + 1, boxes
    assert boxes["scroll"] <= 1, boxes


def finish(page, problems, context, name: str, dark: bool) -> None:
    """The checks every view ends with: readable and within the column, a screenshot for
    review, no console error, no request that left the site."""
    check_readable_and_within_the_column(page)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("[data-attention-view]").screenshot(
        path=SCREENSHOTS / f"attention-view-{name}-{'dark' if dark else 'light'}.png")
    assert not problems, "\n".join(problems)
    assert not context.left_the_site, context.left_the_site


def example_names(spec: dict) -> list[str]:
    """The names of the view's examples, as its menu lists them."""
    return [p for p in spec["params"] if p["name"] == "example"][0]["bind"]["labels"]


@pytest.fixture(scope="module")
def minilm():
    from attention_course import pretrained

    if not pretrained.available():
        pytest.fail("the pretrained encoder is not installed (requirements.txt)")
    return pretrained


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_real_heads_view_shows_the_weights_minilm_computes(site, offline, minilm, dark):
    page, problems, spec = open_view(offline, site, REAL_HEADS, dark)
    sentences = example_names(spec)
    assert len(sentences) >= 5
    spirit = next(i for i, s in enumerate(sentences) if s.startswith("It is in this spirit"))
    words, maps = minilm.attention_maps(sentences[spirit])       # (6, 12, n, n)
    choose(page, "example", spirit)
    choose(page, "layer", 3)
    choose(page, "head", 2)
    assert [m["text"] for m in marks(page, "query")] == words
    assert [m["text"] for m in marks(page, "key")] == words
    assert not [m for m in marks(page, "given") if m["shown"]], "nothing shown before pointing"

    making = words.index("making")
    for query in (making, words.index("spirit")):       # the weights a token gives
        point_at(page, "query", query)
        shown = shown_weights(page, "given", "key")
        expected = maps[2, 1, query].tolist()
        assert max(abs(a - b) for a, b in zip(shown, expected, strict=True)) <= ROUNDING, \
            (words[query], shown, expected)

    key = words.index("[CLS]")                          # the weights a token receives
    point_at(page, "key", key)
    shown = shown_weights(page, "received", "query")
    expected = maps[2, 1, :, key].tolist()
    assert max(abs(a - b) for a, b in zip(shown, expected, strict=True)) <= ROUNDING

    finish(page, problems, offline, "real-heads", dark)


PRINTED_ROW = re.compile(r"the model: tensor\(\[([^\]]+)\]\)")


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_encoder_decoder_view_shows_the_alignments_the_page_computed(site, offline, dark):
    page, problems, spec = open_view(offline, site, ENCODER_DECODER, dark)
    names = example_names(spec)
    maps = spec["datasets"]["maps"]
    assert len(names) == len(maps) >= 3
    # The page prints the first row for 324, recomputed by hand from the trained model.
    printed = [float(x) for x in
               PRINTED_ROW.search(visible_text(page.content())).group(1).split(",")]
    first = names.index("324 (German)")
    choose(page, "example", first)
    assert [m["text"] for m in marks(page, "key")] == ["drei", "hundert", "vier", "und",
                                                       "zwanzig"]
    point_at(page, "query", 0)
    shown = shown_weights(page, "given", "key")
    assert max(abs(a - b) for a, b in zip(shown, printed, strict=True)) <= ROUNDING + 0.0005

    for example, name in enumerate(names):              # every number, every output step
        choose(page, "example", example)
        rows = maps[example]
        n_keys, weights = rows["S"], [w / 100 for w in rows["w"]]
        queries = [m["text"] for m in marks(page, "query")]
        assert queries[-1] == "<eos>", (name, queries)
        for query in range(len(queries)):
            point_at(page, "query", query)
            shown = shown_weights(page, "given", "key")
            assert shown == pytest.approx(weights[query * n_keys:(query + 1) * n_keys],
                                          abs=1e-9), (name, queries[query])
            assert sum(shown) == pytest.approx(1, abs=n_keys * ROUNDING)
        point_at(page, "key", 0)
        shown = shown_weights(page, "received", "query")
        assert shown == pytest.approx(weights[0::n_keys], abs=1e-9), name

    finish(page, problems, offline, "encoder-decoder", dark)


PRINTED_HEAD_ROW = re.compile(r"324, layer 2, head 4, output '2':\s+((?:[^\s\d]+ [\d.]+\s?)+)")


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_transformer_view_shows_the_cross_attention_the_page_computed(site, offline, dark):
    page, problems, spec = open_view(offline, site, TRANSFORMER, dark)
    names = example_names(spec)
    assert names[0] == "324" and len(names) >= 4
    printed = PRINTED_HEAD_ROW.search(visible_text(page.content())).group(1).split()
    words, expected = printed[0::2], [float(w) for w in printed[1::2]]
    choose(page, "example", 0)
    choose(page, "layer", 2)
    choose(page, "head", 4)
    assert [m["text"] for m in marks(page, "key")] == words
    assert [m["text"] for m in marks(page, "query")] == ["3", "2", "4", "<eos>"]
    point_at(page, "query", 1)
    shown = shown_weights(page, "given", "key")
    assert max(abs(a - b) for a, b in zip(shown, expected, strict=True)) <= 2 * ROUNDING

    # every input, both layers, two heads: what is shown is the page's data
    maps = {(m["e"], m["l"], m["h"]): m for m in spec["datasets"]["maps"]}
    assert len(maps) == len(names) * 2 * 4
    for example, name in enumerate(names):
        choose(page, "example", example)
        for layer in (1, 2):
            choose(page, "layer", layer)
            for head in (1, 4):
                choose(page, "head", head)
                rows = maps[example, layer, head]
                n_keys, weights = rows["S"], [w / 100 for w in rows["w"]]
                point_at(page, "query", 0)
                given = shown_weights(page, "given", "key")
                assert given == pytest.approx(weights[:n_keys], abs=1e-9), name
                assert sum(given) == pytest.approx(1, abs=n_keys * ROUNDING), name
                point_at(page, "key", 0)
                received = shown_weights(page, "received", "query")
                assert received == pytest.approx(weights[0::n_keys], abs=1e-9), name

    finish(page, problems, offline, "transformer", dark)


@pytest.mark.parametrize("page_name", VIEW_PAGES)
def test_view_follows_the_theme_switch(site, offline, page_name):
    """The reader switches to dark mode with the theme's button: the view is redrawn light
    on dark, and stays readable."""
    page, problems, _ = open_view(offline, site, page_name)
    light_fill = marks(page, "query")[0]["fill"]
    for _ in range(3):
        if page.evaluate("document.documentElement.dataset.theme") == "dark":
            break
        page.locator(".theme-switch-button").first.click()
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    page.wait_for_function("""fill => { const t = document.querySelector(
        '[data-attention-view] svg g.query_marks text');
        return getComputedStyle(t).fill !== fill; }""", arg=light_fill)
    check_readable_and_within_the_column(page)
    assert not problems, "\n".join(problems)
    assert not offline.left_the_site, offline.left_the_site


@pytest.mark.parametrize("page_name", VIEW_PAGES)
def test_without_javascript_or_in_print_the_figures_stand_in(site, browser, page_name):
    context = browser.new_context(viewport=VIEWPORT, java_script_enabled=False)
    page = context.new_page()
    page.goto((site / f"{page_name}.html").as_uri())
    assert page.locator("[data-attention-view] noscript").count() == 1
    assert not page.locator("[data-attention-view] svg").count()
    figures = page.evaluate("[...document.querySelectorAll('main img')].filter("
                            "i => i.src.endsWith('.png')).length")
    assert figures >= 3, "the static heatmaps stay on the page"
    context.close()

    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.goto((site / f"{page_name}.html").as_uri())
    page.wait_for_selector("[data-attention-view][data-state=ready]")
    page.emulate_media(media="print")
    assert page.locator("[data-attention-view]").is_hidden()
    context.close()


def test_the_bundle_is_served_once_and_only_to_pages_with_a_view(site):
    bundle = site / "_static" / "attention-view" / "vega-bundle.js"
    assert bundle.exists() and bundle.stat().st_size > 500_000
    text = bundle.read_text()
    assert "window.vegaEmbed" in text and not re.search(r"^\s*(import|export)\s", text, re.M)
    for page in site.rglob("*.html"):
        html = page.read_text(errors="replace")
        has_view = "data-attention-view" in html
        loads = "attention-view/vega-bundle.js" in html
        assert has_view == loads, page.relative_to(site)
        assert not re.search(r'<script[^>]+src="(https?:)?//', html), page.relative_to(site)
    for page_name in VIEW_PAGES:
        html = (site / f"{page_name}.html").read_text()
        assert html.count("data-attention-view>") == 1, page_name
        assert len(html) < len(text), "the bundle is not inlined into the page"


def focused(page) -> str:
    """What has the keyboard's focus: its tag and its label's text."""
    return page.evaluate("""() => { const e = document.activeElement;
        return e.tagName + ' ' + (e.closest('label') ? e.closest('label').textContent : '')
               + (e.tagName === 'SUMMARY' ? e.textContent : ''); }""")


def tab_to(page, tag: str, label: str, presses: int = 12) -> None:
    """Press Tab until the element ``tag`` whose label starts with ``label`` has the focus."""
    for _ in range(presses):
        page.keyboard.press("Tab")
        if focused(page).startswith(f"{tag} {label}"):
            return
    raise AssertionError(f"{tag} {label!r} not reached with Tab; the focus is on "
                         f"{focused(page)!r}")


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_token_chosen_with_the_keyboard_shows_its_weights_in_the_chart_and_as_text(
        site, offline, language):
    """No mouse: Tab reaches a menu of the query tokens and one of the key tokens; a token
    chosen with the arrow keys shows its weights in the chart, says the largest in a live
    region and lists them all in a table that opens with the keyboard, in the page's
    language."""
    root = site / "zh" if language == "zh" else site
    page, problems, spec = open_view(offline, root, ENCODER_DECODER)
    words = json.loads(page.locator(".attention-view-words").text_content())
    if language == "zh":
        assert re.search(r"[\u4e00-\u9fff]", words["choose"] + words["gives"]), words
    rows = next(m for m in spec["datasets"]["maps"] if (m["e"], m["l"], m["h"]) == (0, 1, 1))
    n_keys, weights = rows["S"], [w / 100 for w in rows["w"]]
    keys = [m["text"] for m in marks(page, "key")]
    queries = [m["text"] for m in marks(page, "query")]
    menus = {side: words["choose"].replace("{token}", "").replace("{tokens}", words[side])
             for side in ("queries", "keys")}

    page.locator("[data-attention-view] .vega-bind select").first.focus()
    tab_to(page, "SELECT", menus["queries"])
    page.keyboard.press("ArrowDown")                       # query token 1
    page.keyboard.press("ArrowDown")                       # query token 2
    page.wait_for_function("""() => [...document.querySelectorAll(
        '[data-attention-view] svg g.given_marks text')].some(
          t => t.getAttribute('opacity') !== '0')""")
    expected = weights[1 * n_keys:2 * n_keys]
    assert shown_weights(page, "given", "key") == pytest.approx(expected, abs=1e-9)
    said = page.locator(".attention-view-said").text_content()
    assert f"“{queries[1]}”" in said, said
    largest = max(range(n_keys), key=lambda j: expected[j])
    assert f"{keys[largest]} {expected[largest]:.2f}" in said, said
    assert page.locator(".attention-view-said").get_attribute("aria-live") == "polite"

    tab_to(page, "SELECT", menus["keys"])
    tab_to(page, "SUMMARY", "")
    page.keyboard.press("Enter")                            # the table opens
    table = page.locator(".attention-view-table table")
    assert table.is_visible()
    cells = [r.locator("td").all_text_contents() for r in table.locator("tbody tr").all()]
    assert [c[1] for c in cells] == keys
    assert [float(c[2]) for c in cells] == pytest.approx(expected, abs=1e-9)
    assert table.locator("th[scope=col]").count() == 3
    page.add_script_tag(path=str(AXE))                      # the view, opened, is WCAG 2.1 AA
    violations = page.evaluate(RUN_AXE, [TAGS, None, "[data-attention-view]", False])
    assert not violations, violations

    page.keyboard.press("Shift+Tab")                        # back to the key tokens' menu
    assert focused(page).startswith("SELECT")
    page.keyboard.press("ArrowDown")                       # key token 1: what it receives
    page.wait_for_function("""() => [...document.querySelectorAll(
        '[data-attention-view] svg g.received_marks text')].some(
          t => t.getAttribute('opacity') !== '0')""")
    assert shown_weights(page, "received", "query") == pytest.approx(weights[0::n_keys],
                                                                     abs=1e-9)
    assert not [m for m in marks(page, "given") if m["shown"]], "the query's weights stay"
    assert page.locator("[data-attention-view] select").nth(-2).input_value() == "-1"
    assert f"“{keys[0]}”" in page.locator(".attention-view-said").text_content()
    finish(page, problems, offline, f"keyboard-{language}", False)
