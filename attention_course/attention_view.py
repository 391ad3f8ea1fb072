"""Interactive attention views: point at a token and see where it looks, offline.

:func:`attention_view` turns attention weights into a Vega-Lite chart (written with Altair)
that a reader can explore in the browser: the query tokens in a column on the left, the key
tokens on the right, and a line from every query to every key, as opaque as its weight.
Pointing at a query token keeps its lines only and shows, beside every key, the weight it
gives that key (a bar and the number); pointing at a key token shows the weights it
receives from every query. Menus choose the example, the layer and the head.

Without a mouse, two menus below the chart (one of the query tokens, one of the key tokens)
choose a token with the keyboard: the chart shows its weights as if pointed at, a polite
live region says the largest three, and a table, behind a disclosure, lists them all for a
screen reader. Their words (``KEYBOARD_WORDS``) are translated with the view's others.

Nothing is loaded from the internet. The chart's data (weights rounded to ``decimals``
places) is in the output itself, and the JavaScript that draws it (Vega, Vega-Lite and
vega-embed, which the package ``vl-convert-python`` ships as one bundle) is either inlined
into the output, so that a notebook shows the view anywhere, or, in the built book, served
once from the site's ``_static/`` folder (``book_build/extensions/attention_views.py``) and
shared by every view: 0.9 MB once rather than once per view.

The colours follow the book's theme: when the page's ``<html>`` element has
``data-theme="dark"`` (pydata-sphinx-theme's dark mode) the chart is drawn light on dark,
and it is redrawn when the reader switches the theme.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from attention_course.progress import in_book_build

__all__ = ["AttentionView", "attention_view", "javascript_bundle", "translate_view",
           "BUNDLE_PATH", "MARKER"]

# Where the built book serves the shared bundle, relative to its _static/ folder.
BUNDLE_PATH = "attention-view/vega-bundle.js"
MARKER = "data-attention-view"
"""The attribute that marks a view's element in a page (what the book's build looks for)."""
# The Vega-Lite version of the bundle: the one Altair writes its specifications for.
VEGA_LITE_VERSION = "6.4"

# Layout of the chart, in pixels: [weights received | query tokens | lines | key tokens |
# weights given]. Token columns fit about 18 characters at 12 px; longer tokens end in "…".
_NUMBER_W, _TOKEN_W, _LINES_W, _ROW_H = 34, 118, 130, 19
_X_NUMBER_Q = _NUMBER_W                      # right edge of the received weights' numbers
_X_TOKEN_Q = _NUMBER_W + 6 + _TOKEN_W        # right edge of the query tokens
_X_LINES = (_X_TOKEN_Q + 6, _X_TOKEN_Q + 6 + _LINES_W)
_X_TOKEN_K = _X_LINES[1] + 6                 # left edge of the key tokens
_X_NUMBER_K = _X_TOKEN_K + _TOKEN_W + 6 + _NUMBER_W   # right edge of the given weights' numbers
_WIDTH = _X_NUMBER_K + 2

# Colours for the light and the dark theme: text, and the accent of lines and bars.
_TEXT = ("#1f2328", "#d8dee4")
_ACCENT = ("#c2410c", "#fb923c")
_MUTED = ("#6b7280", "#9ca3af")


def _dark(light: str, dark: str) -> dict[str, str]:
    """A Vega expression: ``dark`` in the theme's dark mode, else ``light``."""
    return {"expr": f"dark ? '{dark}' : '{light}'"}


def _to_numpy(x: Any) -> np.ndarray:
    """``x`` as a float NumPy array; torch tensors are detached and moved to the CPU."""
    if hasattr(x, "detach"):  # a torch.Tensor, without importing torch here
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=float)


def _as_4d(weights: Any) -> np.ndarray:
    """Weights of one example as (layers, heads, T, S); (T, S) is one layer of one head."""
    array = _to_numpy(weights)
    if array.ndim == 2:          # (T, S)
        array = array[None, None]
    elif array.ndim == 3:        # (heads, T, S): one layer
        array = array[None]
    if array.ndim != 4:
        raise ValueError(f"weights must be (T, S), (heads, T, S) or (layers, heads, T, S), "
                         f"got shape {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError("weights must be finite (a fully masked row has no weights to show)")
    return array


def _is_token_list(x: Any) -> bool:
    return isinstance(x, (list, tuple)) and all(isinstance(t, str) for t in x)


class AttentionView:
    """An interactive attention view, shown by Jupyter and MyST-NB as HTML.

    Attributes:
        spec: The Vega-Lite specification (a dict), data included.
        weights: One array of shape (layers, heads, T, S) per example, as given (unrounded).
        inline: Whether the HTML carries the JavaScript bundle itself.
    """

    def __init__(self, spec: dict, weights: list[np.ndarray], inline: bool,
                 words: dict[str, str] | None = None) -> None:
        self.spec, self.weights, self.inline = spec, weights, inline
        self.words = dict(KEYBOARD_WORDS) if words is None else words
        text = json.dumps(spec, sort_keys=True, separators=(",", ":"))
        self.element_id = "attention-view-" + hashlib.sha1(text.encode()).hexdigest()[:12]
        self._spec_json = text

    def _repr_html_(self) -> str:
        return self.to_html()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/html": self.to_html(), "text/plain": repr(self)}

    def __repr__(self) -> str:
        layers, heads = self.weights[0].shape[:2]
        return (f"<AttentionView: {len(self.weights)} example(s), {layers} layer(s) x "
                f"{heads} head(s); shown in a browser with JavaScript>")

    def to_html(self) -> str:
        """The HTML of the view: a container, the specification as JSON, the JavaScript
        that draws it (and, if ``inline``, the Vega bundle itself)."""
        spec = self._spec_json.replace("</", "<\\/")   # cannot close the script element
        bundle = f"<script>{javascript_bundle()}</script>\n" if self.inline else ""
        words = json.dumps(self.words, sort_keys=True).replace("</", "<\\/")
        return (
            f'<div class="attention-view" id="{self.element_id}" {MARKER}>\n'
            f"<style>{_STYLE}</style>\n"
            f'<div class="attention-view-chart"></div>\n'
            f"<noscript><p>{_NOSCRIPT}</p></noscript>\n"
            f'<script type="application/json" class="attention-view-spec">{spec}</script>\n'
            f'<script type="application/json" class="attention-view-words">{words}</script>\n'
            f"{bundle}<script>{_BOOTSTRAP % json.dumps(self.element_id)}</script>\n"
            f"</div>")


_NOSCRIPT = "The interactive attention view needs JavaScript; the figures show the same weights."
_SPEC_ELEMENT = re.compile(
    r'(<script type="application/json" class="attention-view-spec">)(.*?)(</script>)', re.S)
_WORDS_ELEMENT = re.compile(
    r'(<script type="application/json" class="attention-view-words">)(.*?)(</script>)', re.S)
# The words of the keyboard's menus below the chart and of the weights they show as text:
# ``{token}`` is a token, ``{tokens}`` the heading of a column (``queries`` and ``keys``,
# the view's own headings, are added per view), ``{weights}`` the largest three.
KEYBOARD_WORDS = {
    "choose": "Weights of one of the {tokens}:",
    "none": "none",
    "gives": "{token} gives the {tokens} these weights",
    "receives": "{token} receives these weights from the {tokens}",
    "largest": "(largest: {weights})",
    "table": "All the weights of {token} as a table",
    "weight": "weight",
}


def translate_view(html: str, translate: Callable[[str], str | None]
                   ) -> tuple[str, list[list[Any]]]:
    """The HTML of a view (:meth:`AttentionView.to_html`) with its words translated.

    The words are the menus' names (role ``"menu"``), their options -- the examples' names
    (``"menu option"``) --, the columns' headings (``"heading"``), the title (``"title"``)
    and the message shown without JavaScript (``"text"``); tokens and weights are data.

    Args:
        html: The view's HTML, as executed (English).
        translate: English string -> its translation, or None if there is none.

    Returns:
        The translated HTML (an untranslated string stays as it is), and the record
        ``[role, English string, translation or None]`` of every string.
    """
    record: list[list[Any]] = []

    def put(role: str, text: str) -> str:
        translation = translate(text)
        record.append([role, text, translation])
        return text if translation is None else translation

    found = _SPEC_ELEMENT.search(html)
    if found is None:
        return html, record
    spec = json.loads(found.group(2).replace("<\\/", "</"))
    for param in spec.get("params", []):
        bind = param.get("bind")
        if bind is not None:
            bind["name"] = put("menu", bind["name"].rstrip()) + " "
            if "labels" in bind:
                bind["labels"] = [put("menu option", label) for label in bind["labels"]]
    for layer in spec.get("layer", []):
        for row in layer.get("data", {}).get("values", []):
            if isinstance(row.get("t"), str):
                row["t"] = put("heading", row["t"])
    title = spec.get("title")
    if isinstance(title, dict) and isinstance(title.get("text"), str):
        title["text"] = put("title", title["text"])
    elif isinstance(title, str):
        spec["title"] = put("title", title)
    text = json.dumps(spec, sort_keys=True, separators=(",", ":")).replace("</", "<\\/")
    html = html[:found.start(2)] + text + html[found.end(2):]
    found = _WORDS_ELEMENT.search(html)
    if found is not None:
        words = json.loads(found.group(2).replace("<\\/", "</"))
        words = {key: put("heading" if key in ("queries", "keys") else "keyboard", text)
                 for key, text in sorted(words.items())}
        text = json.dumps(words, sort_keys=True).replace("</", "<\\/")
        html = html[:found.start(2)] + text + html[found.end(2):]
    html = html.replace(f"<noscript><p>{_NOSCRIPT}</p>",
                        f"<noscript><p>{put('text', _NOSCRIPT)}</p>")
    return html, record


# The menus above the chart, in the page's font and colours, each no wider than the column
# (a long example's name ends in an ellipsis in the closed menu, whole in the open one); the
# view scrolls inside its column rather than widening it, and is left out of print (the
# figures are printed).
_STYLE = (
    ".attention-view{max-width:100%;overflow-x:auto;margin:0.5em 0 1em}"
    ".attention-view .vega-embed{display:flex;flex-direction:column;align-items:flex-start;"
    "padding-right:0}"
    ".attention-view .vega-bindings{order:-1;display:flex;flex-wrap:wrap;gap:0.4em 1.4em;"
    "font-size:0.9em;margin-bottom:0.3em;max-width:100%}"
    ".attention-view .vega-bind,.attention-view .vega-bind label{display:flex;"
    "align-items:center;min-width:0;max-width:100%}"
    ".attention-view .vega-bind-name{margin-right:0.3em;flex:none}"
    ".attention-view select{font:inherit;color:inherit;background:transparent;max-width:30em;"
    "min-width:0;flex:0 1 auto;text-overflow:ellipsis;"
    "border:1px solid currentColor;border-radius:3px;padding:0 0.2em}"
    ".attention-view select option{color:#1f2328;background:#fff}"
    ".attention-view-keyboard{display:flex;flex-wrap:wrap;gap:0.4em 1.4em;font-size:0.9em;"
    "margin-top:0.3em}"
    ".attention-view-keyboard label{display:flex;align-items:center;gap:0.3em;max-width:100%}"
    ".attention-view-said{font-size:0.9em;margin:0.3em 0}"
    ".attention-view-said:empty{display:none}"
    ".attention-view-table{font-size:0.9em}"
    ".attention-view-table table{margin:0.3em 0;min-width:min(24em,100%)}"
    ".attention-view-table caption{text-align:start;caption-side:top}"
    ".attention-view-table td,.attention-view-table th{padding:0 0.8em 0 0}"
    "@media print{.attention-view{display:none}}"
)


@functools.cache
def javascript_bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one classic script (no module, no network) that
    defines ``window.vegaEmbed``, ``window.vega`` and ``window.vegaLite``: 0.9 MB.

    vl-convert bundles them as an ES module with top-level declarations; wrapped in a
    function, they stay out of the page's global scope, and the script also runs where
    module scripts cannot load (a page opened from disk)."""
    import vl_convert

    snippet = "window.vegaEmbed = vegaEmbed; window.vega = vega; window.vegaLite = vegaLite;"
    code = vl_convert.javascript_bundle(snippet=snippet, vl_version=VEGA_LITE_VERSION)
    return "(function () {\n" + code + "\n})();\n"


# Draws the view of the element whose id is %s once vegaEmbed is there (the book loads it
# deferred, after this inline script), exposes the Vega view as `element.attentionView`,
# and follows the theme: the `dark` signal is true while <html data-theme="dark">.
_BOOTSTRAP = r"""(function () {
  var script = document.currentScript;
  var element = (script && script.closest("[data-attention-view]")) ||
                document.getElementById(%s);
  if (!element || element.dataset.state) return;
  element.dataset.state = "loading";
  function isDark() { return document.documentElement.dataset.theme === "dark"; }
  function draw() {
    if (!window.vegaEmbed) {
      element.dataset.state = "no-javascript-bundle";
      element.querySelector(".attention-view-chart").textContent =
        "(The interactive view could not load its JavaScript: run the cell again.)";
      return;
    }
    var spec = JSON.parse(element.querySelector(".attention-view-spec").textContent);
    var dark = spec.params.filter(function (p) { return p.name === "dark"; })[0];
    dark.value = isDark();
    window.vegaEmbed(element.querySelector(".attention-view-chart"), spec,
                     {renderer: "svg", actions: false}).then(function (result) {
      element.attentionView = result.view;
      new MutationObserver(function () {
        if (result.view.signal("dark") !== isDark())
          result.view.signal("dark", isDark()).runAsync();
      }).observe(document.documentElement, {attributes: true,
                                             attributeFilter: ["data-theme"]});
      keyboard(element, result.view, spec);
      element.dataset.state = "ready";
    }).catch(function (error) {
      element.dataset.state = "error";
      console.error("attention view:", error);
    });
  }
  // Below the chart, a menu of the query tokens and one of the key tokens: choosing a token
  // with the keyboard shows its weights in the chart (the signals kq and kk), says them in a
  // polite live region and lists them all in a table.
  function keyboard(element, view, spec) {
    var words = JSON.parse(element.querySelector(".attention-view-words").textContent);
    var scale = Math.pow(10, spec.usermeta.decimals), data = spec.datasets;
    var panel = document.createElement("div"), said = document.createElement("p");
    var details = document.createElement("details"), summary = document.createElement("summary");
    panel.className = "attention-view-keyboard";
    said.className = "attention-view-said";
    said.setAttribute("aria-live", "polite");
    details.className = "attention-view-table";
    details.hidden = true;
    details.append(summary, document.createElement("table"));
    function put(template, token, tokens) {
      return template.split("{token}").join(token).split("{tokens}").join(tokens);
    }
    function tokens(side) {
      var example = view.signal("example");
      return data[side].filter(function (t) { return t.e === example; })
                       .map(function (t) { return t.t; });
    }
    function menu(side, signal) {
      var label = document.createElement("label"), select = document.createElement("select");
      label.append(put(words.choose, "", words[side]) + " ", select);
      select.addEventListener("change", function () { choose(side, +select.value); });
      panel.append(label);
      return {side: side, signal: signal, select: select};
    }
    var menus = [menu("queries", "kq"), menu("keys", "kk")];
    function fill() {
      menus.forEach(function (m) {
        m.select.replaceChildren(new Option(words.none, "-1"));
        tokens(m.side).forEach(function (token, i) {
          m.select.append(new Option((i + 1) + " · " + token, String(i)));
        });
      });
      choose(null, -1);
    }
    function choose(side, index) {
      menus.forEach(function (m) {
        var value = m.side === side ? index : -1;
        m.select.value = String(value);
        view.signal(m.signal, value);
      });
      view.runAsync();
      tell(side, index);
    }
    function tell(side, index) {
      if (side === null || index < 0) {
        said.textContent = "";
        details.hidden = true;
        return;
      }
      var e = view.signal("example"), l = view.signal("layer"), h = view.signal("head");
      var map = data.maps.filter(function (m) {
        return m.e === e && m.l === l && m.h === h; })[0];
      var queries = tokens("queries"), keys = tokens("keys"), S = map.S;
      var other = side === "queries" ? keys : queries;
      var weights = other.map(function (_, j) {
        return (side === "queries" ? map.w[index * S + j] : map.w[j * S + index]) / scale;
      });
      var token = (side === "queries" ? queries : keys)[index];
      var caption = put(side === "queries" ? words.gives : words.receives, "“" + token + "”",
                        words[side === "queries" ? "keys" : "queries"]);
      var order = weights.map(function (_, j) { return j; })
                         .sort(function (a, b) { return weights[b] - weights[a]; });
      said.textContent = caption + " " + words.largest.split("{weights}").join(
        order.slice(0, 3).map(function (j) {
          return other[j] + " " + weights[j].toFixed(spec.usermeta.decimals); }).join(", "));
      summary.textContent = put(words.table, "“" + token + "”", "");
      var table = document.createElement("table"), head = table.createTHead().insertRow();
      table.createCaption().textContent = caption;
      ["#", words[side === "queries" ? "keys" : "queries"], words.weight].forEach(
        function (text) {
          var th = document.createElement("th");
          th.scope = "col";
          th.textContent = text;
          head.append(th);
        });
      var body = table.createTBody();
      other.forEach(function (word, j) {
        var row = body.insertRow();
        row.insertCell().textContent = String(j + 1);
        row.insertCell().textContent = word;
        row.insertCell().textContent = weights[j].toFixed(spec.usermeta.decimals);
      });
      details.querySelector("table").replaceWith(table);
      details.hidden = false;
    }
    element.querySelector(".attention-view-chart").after(panel, said, details);
    view.addSignalListener("example", fill);
    ["layer", "head"].forEach(function (name) {
      view.addSignalListener(name, function () {
        var chosen = menus.filter(function (m) { return m.select.value !== "-1"; })[0];
        if (chosen) tell(chosen.side, +chosen.select.value);
      });
    });
    fill();
  }
  if (window.vegaEmbed || document.readyState !== "loading") draw();
  else document.addEventListener("DOMContentLoaded", draw);
})();"""


def attention_view(
    source: Sequence[str] | Sequence[Sequence[str]],
    target: Sequence[str] | Sequence[Sequence[str]] | None,
    weights: Any,
    *,
    names: Sequence[str] | None = None,
    source_title: str = "keys",
    target_title: str = "queries",
    title: str | None = None,
    decimals: int = 2,
    inline: bool | None = None,
) -> AttentionView:
    """An interactive view of attention weights: point at a token to see its weights.

    One example is a source sentence of ``S`` tokens (the keys), a target of ``T`` tokens
    (the queries; the source itself for self-attention) and its weights; several examples
    share one view, with a menu to choose among them.

    Args:
        source: The ``S`` key tokens, e.g. ``["drei", "hundert", ...]``; or, for several
            examples, one list of tokens per example.
        target: The ``T`` query tokens (output tokens of a decoder); ``None`` for
            self-attention, where the queries are the source tokens. For several examples,
            one list per example (or ``None``).
        weights: Attention weights as a NumPy array or torch tensor: ``(T, S)`` for one map,
            ``(heads, T, S)`` for one layer or ``(layers, heads, T, S)``; entry
            ``[l, h, i, j]`` is the weight that query ``i`` gives key ``j`` in head ``h``
            of layer ``l``. For several examples, a list of such arrays with the same
            numbers of layers and heads (``T`` and ``S`` may differ). A head's rows should
            sum to 1; every weight must be finite.
        names: One name per example, shown in its menu (default "example 1", ...).
        source_title: Heading of the key column.
        target_title: Heading of the query column.
        title: A title above the view.
        decimals: Places the weights are rounded to in the page (and shown with). With 2,
            the 72 heads of the seven sentences of *What real heads learn* (14 to 28
            tokens) take 0.37 MB of its page.
        inline: Put the 0.9 MB JavaScript bundle into the output (a notebook in Jupyter),
            or expect the page to load it (the built book, whose Sphinx extension
            ``book_build/extensions/attention_views.py`` adds it to every page with a view).
            Default: inline except while the book is built.

    Returns:
        An :class:`AttentionView`; a notebook cell that ends with it shows the view.

    Example::

        tokens, maps = pretrained.attention_maps(sentence)   # maps: (6, 12, n, n)
        attention_view(tokens, None, maps)
    """
    several = not _is_token_list(source)
    sources = [list(s) for s in source] if several else [list(source)]
    if target is None:
        targets = [list(s) for s in sources]
    elif several:
        if len(target) != len(sources):
            raise ValueError(f"got {len(sources)} sources and {len(target)} targets")
        targets = [list(t) if t is not None else list(s)
                   for t, s in zip(target, sources, strict=True)]
    else:
        targets = [list(target)]
    arrays = [_as_4d(w) for w in weights] if several else [_as_4d(weights)]
    if not (len(sources) == len(targets) == len(arrays)) or not arrays:
        raise ValueError(f"got {len(sources)} sources, {len(targets)} targets and "
                         f"{len(arrays)} weight arrays: one of each per example")
    layers, heads = arrays[0].shape[:2]
    for index, (src, tgt, array) in enumerate(zip(sources, targets, arrays,
                                                             strict=True)):
        if array.shape[:2] != (layers, heads):
            raise ValueError(f"example {index}: {array.shape[:2]} layers and heads, the first "
                             f"has {(layers, heads)}")
        if array.shape[2:] != (len(tgt), len(src)):
            raise ValueError(f"example {index}: weights of shape {array.shape} for "
                             f"{len(tgt)} query and {len(src)} key tokens")
    if names is None:
        names = [f"example {k + 1}" for k in range(len(arrays))]
    if len(names) != len(arrays):
        raise ValueError(f"got {len(names)} names for {len(arrays)} examples")
    if inline is None:
        inline = not in_book_build()
    spec = _spec(sources, targets, arrays, list(map(str, names)), source_title,
                 target_title, title, decimals)
    words = {**KEYBOARD_WORDS, "queries": target_title, "keys": source_title}
    return AttentionView(spec, arrays, inline, words)


def _pointed_or_chosen(selection: str, field: str, chosen: str) -> dict:
    """A Vega-Lite condition: true for the token under the pointer (the point ``selection``
    on ``field``) and for the token chosen with the keyboard (the signal ``chosen``)."""
    return {"test": {"or": [{"param": selection, "empty": False},
                            f"datum.{field} == {chosen}"]}}


def _spec(sources: list[list[str]], targets: list[list[str]], arrays: list[np.ndarray],
          names: list[str], source_title: str, target_title: str, title: str | None,
          decimals: int) -> dict:
    """The Vega-Lite specification of the view (see :func:`attention_view`)."""
    import altair as alt

    layers, heads = arrays[0].shape[:2]
    scale = 10 ** decimals
    # One row per example, layer and head, its (T, S) weights flattened row by row as
    # integers (weight * 10^decimals): the transforms below unpack only the chosen one.
    maps = [{"e": e, "l": lay + 1, "h": h + 1, "S": int(a.shape[3]),
             "w": np.rint(a[lay, h] * scale).astype(int).ravel().tolist()}
            for e, a in enumerate(arrays) for lay in range(layers) for h in range(heads)]
    queries = [{"e": e, "q": i, "t": tok} for e, toks in enumerate(targets)
               for i, tok in enumerate(toks)]
    keys = [{"e": e, "k": j, "t": tok} for e, toks in enumerate(sources)
            for j, tok in enumerate(toks)]

    def menu(name: str, count: int, labels: list[str] | None = None) -> alt.Parameter:
        options = list(range(count)) if labels else list(range(1, count + 1))
        binding = alt.binding_select(options=options, labels=labels or list(map(str, options)),
                                     name=name + " ")
        if count == 1:
            return alt.param(name=name, value=options[0])
        return alt.param(name=name, value=options[0], bind=binding)

    example = menu("example", len(arrays), names)
    layer, head = menu("layer", layers), menu("head", heads)
    dark = alt.param(name="dark", value=False)
    hq = alt.selection_point(name="hq", fields=["q"], on="pointerover", clear="pointerout",
                             empty=False, nearest=False)
    hk = alt.selection_point(name="hk", fields=["k"], on="pointerover", clear="pointerout",
                             empty=False, nearest=False)
    # The token chosen with the keyboard (the menus below the chart): -1 while none is.
    chosen_q, chosen_k = alt.param(name="kq", value=-1), alt.param(name="kk", value=-1)

    weights = (
        alt.Chart(alt.NamedData(name="maps"))
        .transform_filter("datum.e == example && datum.l == layer && datum.h == head")
        .transform_calculate(i="sequence(length(datum.w))")
        .transform_flatten(["w", "i"])
        .transform_calculate(q="floor(datum.i / datum.S)", k="datum.i % datum.S",
                             weight=f"datum.w / {scale}")
    )
    # One row per token of the chosen example (the longer of its two sides): the view is as
    # tall as the example it shows, not as the longest of them.
    rows = alt.Scale(type="band", paddingInner=0.1)
    y_q, y_k = alt.Y("q:O", axis=None, scale=rows), alt.Y("k:O", axis=None, scale=rows)
    text, accent = _dark(*_TEXT), _dark(*_ACCENT)
    given_by = _pointed_or_chosen("hq", "q", "kq")
    received_by = _pointed_or_chosen("hk", "k", "kk")
    pointing = {"test": {"or": [given_by["test"], received_by["test"]]}}
    # A line's opacity grows with the square root of its weight: a weight of 0.1 still shows.
    opacity = alt.Scale(type="sqrt", domain=[0, 1], range=[0, 1])

    lines = weights.mark_rule(stroke=accent, strokeWidth=2).encode(
        x=alt.value(_X_LINES[0]), x2=alt.value(_X_LINES[1]), y=y_q,
        y2=alt.Y2("k:O"),
        strokeOpacity=alt.condition(pointing, alt.StrokeOpacity("weight:Q", scale=opacity,
                                                                      legend=None),
                                    alt.value(0)),
    )
    # Before the reader points at a token, every line, faint; then only the token's own.
    faint = weights.mark_rule(stroke=accent, strokeWidth=1).encode(
        x=alt.value(_X_LINES[0]), x2=alt.value(_X_LINES[1]), y=y_q, y2=alt.Y2("k:O"),
        strokeOpacity=alt.condition(
            "isValid(hq.q) || isValid(hk.k) || kq >= 0 || kk >= 0", alt.value(0),
            alt.StrokeOpacity("weight:Q", legend=None, scale=alt.Scale(
                type="sqrt", domain=[0, 1], range=[0, 0.5]))),
    )
    # Bars and numbers: what the query under the pointer gives each key (right), what the
    # key under the pointer receives from each query (left).
    span = _TOKEN_W + 6
    bar_k = weights.transform_calculate(
        x1=f"{_X_TOKEN_K - 3}", x2=f"{_X_TOKEN_K - 3} + datum.weight * {span}",
    ).mark_bar(fill=accent, fillOpacity=0.28).encode(
        x=alt.X("x1:Q", scale=None), x2="x2:Q", y=y_k,
        opacity=alt.condition(given_by, alt.value(1), alt.value(0)),
    )
    bar_q = weights.transform_calculate(
        x1=f"{_X_TOKEN_Q + 3} - datum.weight * {span}", x2=f"{_X_TOKEN_Q + 3}",
    ).mark_bar(fill=accent, fillOpacity=0.28).encode(
        x=alt.X("x1:Q", scale=None), x2="x2:Q", y=y_q,
        opacity=alt.condition(received_by, alt.value(1), alt.value(0)),
    )
    fmt = f".{decimals}f"
    given = weights.mark_text(align="right", baseline="middle", fill=text, fontSize=11).encode(
        x=alt.value(_X_NUMBER_K), y=y_k, text=alt.Text("weight:Q", format=fmt),
        opacity=alt.condition(given_by, alt.value(1), alt.value(0)),
    ).properties(name="given")
    received = weights.mark_text(align="right", baseline="middle", fill=text, fontSize=11).encode(
        x=alt.value(_X_NUMBER_Q), y=y_q, text=alt.Text("weight:Q", format=fmt),
        opacity=alt.condition(received_by, alt.value(1), alt.value(0)),
    ).properties(name="received")

    def column(field: str, x_text: int, align: str, x_hit: tuple[int, int],
               selection: alt.Parameter, chosen: dict, name: str,
               data: str) -> list[alt.Chart]:
        base = alt.Chart(alt.NamedData(name=data)).transform_filter(
            "datum.e == example")
        y = alt.Y(f"{field}:O", axis=None, scale=rows)
        words = base.mark_text(align=align, baseline="middle", fill=text, fontSize=12,
                               limit=_TOKEN_W).encode(
            x=alt.value(x_text), y=y, text="t:N",
        ).properties(name=name)
        # Boxes over the tokens catch the pointer (they are drawn last): transparent, but
        # for a tint on the token under the pointer.
        hit = base.mark_rect(fill=accent, cursor="pointer").encode(
            x=alt.value(x_hit[0]), x2=alt.value(x_hit[1]), y=y,
            fillOpacity=alt.condition(chosen, alt.value(0.15), alt.value(0)),
        ).add_params(selection).properties(name=name + "_hit")
        return [words, hit]

    left = column("q", _X_TOKEN_Q, "right", (_X_NUMBER_Q + 2, _X_TOKEN_Q + 3), hq,
                  given_by, "query", "queries")
    right = column("k", _X_TOKEN_K, "left", (_X_TOKEN_K - 3, _X_NUMBER_K - _NUMBER_W),
                   hk, received_by, "key", "keys")
    def heading(x: int, align: str, label: str) -> alt.Chart:
        return alt.Chart(alt.Data(values=[{"t": label}])).mark_text(
            align=align, baseline="bottom", fill=_dark(*_MUTED), fontSize=11,
            fontStyle="italic", dy=-4,
        ).encode(x=alt.value(x), y=alt.value(0), text="t:N")

    headings = [heading(_X_TOKEN_Q, "right", target_title),
                heading(_X_TOKEN_K, "left", source_title)]

    chart = alt.layer(faint, lines, bar_q, bar_k, given, received, *headings, *left, *right)
    chart = chart.add_params(example, layer, head, dark, chosen_q, chosen_k).resolve_scale(
        strokeOpacity="independent").properties(
        width=_WIDTH, height=alt.Step(_ROW_H), padding={"top": 22, "left": 4, "right": 4,
                                                        "bottom": 4})
    if title:
        chart = chart.properties(title=alt.Title(title, color=text, anchor="start"))
    chart = chart.configure(background="transparent").configure_view(stroke=None)
    # The data goes in after validation, which would check each of its rows.
    spec = chart.to_dict(validate=True)
    spec["datasets"] = {"maps": maps, "queries": queries, "keys": keys}
    spec["usermeta"] = {"decimals": decimals}       # for the weights the keyboard shows as text
    return spec
