"""attention_view: what a view holds (its tokens and weights, rounded) and its HTML.

Drawing and pointing are tested in Chromium on the built book
(tests/book/test_attention_views.py); these tests need no browser.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch

from attention_course.attention_view import AttentionView, attention_view, javascript_bundle
from attention_course.progress import BUILD_VARIABLE


def decoded(view: AttentionView, example: int, layer: int, head: int) -> np.ndarray:
    """The (T, S) weights of one head as the view's data holds them (1-based layer, head)."""
    row = next(r for r in view.spec["datasets"]["maps"]
               if (r["e"], r["l"], r["h"]) == (example, layer, head))
    return np.array(row["w"]).reshape(-1, row["S"]) / 100


def softmax_rows(shape, seed=0) -> np.ndarray:
    scores = np.random.default_rng(seed).normal(size=shape) * 3
    weights = np.exp(scores)
    return weights / weights.sum(-1, keepdims=True)


def test_every_head_of_every_example_is_held_rounded_to_two_decimals():
    first, second = softmax_rows((2, 3, 4, 4)), softmax_rows((2, 3, 2, 5), seed=1)
    view = attention_view([list("abcd"), list("vwxyz")], [None, ["1", "2"]], [first, second],
                          names=["one", "two"], inline=False)
    for example, weights in enumerate([first, second]):
        for layer in range(2):
            for head in range(3):
                held = decoded(view, example, layer + 1, head + 1)
                assert held.shape == weights[layer, head].shape
                assert np.abs(held - weights[layer, head]).max() <= 0.005 + 1e-12
    tokens = view.spec["datasets"]
    assert [t["t"] for t in tokens["queries"] if t["e"] == 0] == list("abcd")  # self-attention
    assert [t["t"] for t in tokens["queries"] if t["e"] == 1] == ["1", "2"]
    assert [t["t"] for t in tokens["keys"] if t["e"] == 1] == list("vwxyz")
    menus = {p["name"]: p.get("bind") for p in view.spec["params"]}
    assert menus["example"]["labels"] == ["one", "two"]
    assert menus["layer"]["options"] == [1, 2] and menus["head"]["options"] == [1, 2, 3]


def test_one_map_from_a_torch_tensor_has_no_menus():
    weights = torch.softmax(torch.randn(3, 4), dim=-1)            # (T, S)
    view = attention_view(["a", "b", "c", "d"], ["x", "y", "z"], weights, inline=False)
    assert np.abs(decoded(view, 0, 1, 1) - weights.numpy()).max() <= 0.005
    assert not any(p.get("bind") for p in view.spec["params"])
    assert "1 example(s), 1 layer(s) x 1 head(s)" in repr(view)


@pytest.mark.parametrize("weights, message", [
    (np.ones((2, 3)) / 3, "3 query and 2 key tokens"),           # T and S swapped
    (np.ones((1, 1, 1, 3, 2)), "must be"),                        # 5-D
    (np.full((3, 2), np.nan), "finite"),
])
def test_weights_that_do_not_fit_the_tokens_are_refused(weights, message):
    with pytest.raises(ValueError, match=message):
        attention_view(["a", "b"], ["x", "y", "z"], weights)


def test_examples_must_agree_on_layers_and_heads():
    with pytest.raises(ValueError, match="layers and heads"):
        attention_view([["a"], ["b"]], None, [np.ones((2, 1, 1, 1)), np.ones((1, 1, 1, 1))])
    with pytest.raises(ValueError, match="names"):
        attention_view([["a"], ["b"]], None, [np.ones((1, 1)), np.ones((1, 1))], names=["x"])


def test_html_keeps_a_token_from_closing_its_script_and_is_the_same_each_time():
    tokens = ["</script><b>", "x"]
    view = attention_view(tokens, None, np.eye(2), inline=False)
    html = view.to_html()
    spec = re.search(r'class="attention-view-spec">(.*?)</script>', html, re.S).group(1)
    assert json.loads(spec)["datasets"]["keys"][0]["t"] == tokens[0]
    assert "<noscript>" in html and "data-attention-view" in html
    assert attention_view(tokens, None, np.eye(2), inline=False).to_html() == html


def test_the_bundle_is_inlined_in_a_notebook_and_left_to_the_page_in_the_book(monkeypatch):
    monkeypatch.delenv(BUILD_VARIABLE, raising=False)
    inline = attention_view(["a"], None, np.ones((1, 1))).to_html()
    assert javascript_bundle() in inline and len(inline) > 800_000
    monkeypatch.setenv(BUILD_VARIABLE, "1")
    page = attention_view(["a"], None, np.ones((1, 1))).to_html()
    assert "window.vegaEmbed=" not in page and len(page) < 20_000


def test_the_bundle_is_a_classic_script_that_defines_vega_embed():
    code = javascript_bundle()
    assert code.startswith("(function () {") and code.rstrip().endswith("})();")
    assert "window.vegaEmbed=" in code.replace(" ", "")
    assert not re.search(r"^\s*(import|export)\s", code, re.M)
    assert not re.search(r"\bimport\(", code), "no module loaded at run time"
