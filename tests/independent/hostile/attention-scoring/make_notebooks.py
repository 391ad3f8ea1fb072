"""Builds the notebook-level attacks of this folder from the student release.

Run from the repository root: `.venv/bin/python tests/independent/hostile/attention-scoring/
make_notebooks.py`. Each notebook declares `metadata["hostile"]["max_earned"]`; the harness
ignores this script.

- `slow_every_cell.ipynb`: a notebook slow in every cell;
- `cell_surgery.ipynb`: every test cell edited, blanked, deleted, retyped, moved, duplicated or
  given other nbgrader metadata, extra grade cells, the right functions defined only after the
  tests, and forged outputs;
- `prefilled_forgery.ipynb`: pre-filled test outputs carrying well-formed probe reports, one
  of them with the *right* values for the hidden cases of `dot_score` (computed offline from
  the hidden inputs that a first submission printed), in a notebook that implements nothing
  and kills its kernel in that test cell so that the cell does not run again.
"""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path

import nbformat
import torch

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[3]
RELEASE = REPO / "exercises" / "attention-scoring" / "attention-scoring.ipynb"
MIME = "application/vnd.autograder.observations+json"
TEST_IDS = ["test-dot-score", "test-scaled-dot-score", "test-general-score",
            "test-concat-score", "test-additive-score", "test-masked-softmax-no-mask",
            "test-masked-softmax-mask", "test-masked-softmax-fully-masked",
            "test-attend-key-value", "test-attend-plain", "test-attend-mask-and-score"]

WRONG = {
    "dot_score": """def dot_score(query, keys):
    return (keys * query.unsqueeze(1)).sum(-1) + 1.0
""",
    "scaled_dot_score": """def scaled_dot_score(query, keys):
    return (keys * query.unsqueeze(1)).sum(-1) / keys.shape[1]
""",
    "general_score": """def general_score(query, keys, W):
    return (keys * (query @ W).unsqueeze(1)).sum(-1) * 2.0
""",
    "concat_score": """def concat_score(query, keys, W, v):
    expanded = query.unsqueeze(1).expand(-1, keys.shape[1], -1)
    return torch.tanh(torch.cat([keys, expanded], dim=-1) @ W.T) @ v
""",
    "additive_score": """def additive_score(query, keys, W_q, W_k, v):
    return torch.tanh(keys @ W_k.T) @ v
""",
    "masked_softmax": """def masked_softmax(scores, mask=None):
    weights = torch.softmax(scores * 3.0, dim=-1)
    return weights if mask is None else weights * mask
""",
    "attend": """def attend(query, keys, values=None, score=None, mask=None):
    if values is None:
        values = keys
    weights = torch.ones(keys.shape[:2], dtype=keys.dtype) / keys.shape[1]
    return values.mean(dim=1), weights
""",
}

RIGHT = """import torch


def dot_score(query, keys):
    return (keys @ query.unsqueeze(-1)).squeeze(-1)


def scaled_dot_score(query, keys):
    return dot_score(query, keys) / keys.shape[-1] ** 0.5


def general_score(query, keys, W):
    return (keys @ (query @ W).unsqueeze(-1)).squeeze(-1)


def concat_score(query, keys, W, v):
    expanded = query.unsqueeze(1).expand(-1, keys.shape[1], -1)
    return torch.tanh(torch.cat([expanded, keys], dim=-1) @ W.T) @ v


def additive_score(query, keys, W_q, W_k, v):
    return torch.tanh((query @ W_q.T).unsqueeze(1) + keys @ W_k.T) @ v


def masked_softmax(scores, mask=None):
    if mask is None:
        return torch.softmax(scores, dim=-1)
    filled = torch.where(mask.any(-1, keepdim=True), scores.masked_fill(~mask, float("-inf")),
                         torch.zeros_like(scores))
    return torch.where(mask, torch.softmax(filled, dim=-1), torch.zeros_like(scores))


def attend(query, keys, values=None, score=dot_score, mask=None):
    values = keys if values is None else values
    weights = masked_softmax(score(query, keys), mask)
    return (weights.unsqueeze(1) @ values).squeeze(1), weights


print("all tests passed")
"""

# The hidden inputs of test-dot-score, as a first submission printed them from the sandbox
# (`_autograder_cases.pt`, which the README says a submission can read): seeded, so the same
# at every grading.
DOT_CASES = [{'dtype': 'float32',
      'keys': [[[-1.00229012966156, -0.5726074576377869, -0.4914449155330658, -0.2580105662345886],
                [-0.4303287863731384, -1.5509812831878662, -0.23531746864318848,
                 0.013881604187190533],
                [0.8110078573226929, 1.081820011138916, -0.02594636008143425, 0.3773616850376129],
                [-0.4151667058467865, -0.723590075969696, -1.1235052347183228, 1.7994728088378906],
                [0.7036101222038269, -1.7144144773483276, -1.2537530660629272,
                 -0.23226118087768555]],
               [[-0.25844866037368774, -1.3356837034225464, 0.40185973048210144,
                 1.2692203521728516],
                [-0.8117481470108032, 0.7122466564178467, -0.367526113986969, 1.5507769584655762],
                [0.9976969957351685, 1.4884355068206787, 0.7323083281517029, 0.6127395629882812],
                [0.24355261027812958, -2.495387554168701, -1.5641703605651855, 0.7870723605155945],
                [1.57327401638031, -1.1224931478500366, 1.8410282135009766, -0.4350515604019165]],
               [[0.4266532063484192, -0.15848828852176666, 0.5144103765487671,
                 0.014888249337673187],
                [0.7266886234283447, -0.26565247774124146, 2.37636661529541, -0.5130426287651062],
                [-1.8404121398925781, 0.05473890155553818, 0.6376208066940308, 0.3607636094093323],
                [1.1113358736038208, -0.8924697041511536, 0.9686323404312134, 0.4933939278125763],
                [-0.6109334230422974, -1.7436461448669434, -1.0840988159179688,
                 0.02352185919880867]]],
      'label': 'dot_score, B=3, n=5, d=4, torch.float32',
      'mix': [[-1.1720491647720337, -0.3928842544555664, 0.5264794826507568, 1.1065099239349365,
               0.927274763584137],
              [-1.742060661315918, -0.7699140310287476, 0.7864384055137634, -1.9962517023086548,
               0.5836459398269653],
              [1.0392022132873535, 0.8022738099098206, 0.5268961787223816, 0.5729644298553467,
               0.13898207247257233]],
      'query': [[-1.3905061483383179, -0.8152379989624023, -0.3204376995563507,
                 0.7377384901046753],
                [-1.753363013267517, 0.603293240070343, -0.25195595622062683, -0.4373176097869873],
                [-0.572774350643158, -3.202284097671509, 0.5632690191268921,
                 0.21530376374721527]]},
     {'dtype': 'float32',
      'keys': [[[-0.9776650667190552, 1.433921456336975, 0.18131598830223083]]],
      'label': 'dot_score, B=1, n=1, d=3, torch.float32',
      'mix': [[1.0075974464416504]],
      'query': [[0.5210627317428589, 0.092864990234375, 0.9953922033309937]]},
     {'dtype': 'float64',
      'keys': [[[0.2813339827103399, 0.3955729983229194],
                [0.8276227103265414, -0.1582729791975902], [0.6860512515660434, 0.453345908176893],
                [-0.42173567677324847, 0.4356978070493868]]],
      'label': 'dot_score, B=1, n=4, d=2, torch.float64',
      'mix': [[0.5369338312116217, 0.948503434813587, -0.20258915000439415, 0.9552587534112702]],
      'query': [[0.09882908881341473, 1.4330491040443618]]},
     {'dtype': 'float64',
      'keys': [[[-1.1833196235080952, 0.6711652650959622, -2.0775168166419324,
                 0.011343625580638192, -0.9139804067985885],
                [-0.5648947037219085, 1.1486376312314899, -1.162749613180355, -0.3006237168381828,
                 -1.3263255315533522],
                [1.6364765188634176, 0.16785305980833867, -1.256034861599077, 0.9782834479923899,
                 0.38955418908089284],
                [-0.6289908978244297, -2.649608822953747, -0.13417128948891704,
                 -0.4444384511240716, 1.67787382434478],
                [0.4176733030240322, 1.7826258856307249, -0.21788184812970002, 2.0429763931686082,
                 0.5324370841624321],
                [0.18113088357659066, -0.22952920291533196, 1.093148419642322, 0.8335612549509351,
                 -0.4015310577600433],
                [-0.5954451367066753, -1.7070255780938088, -0.7463138007471574, 1.3883498558543281,
                 -0.0791061760775815]],
               [[-0.9471751960050587, 1.3893102467206058, -1.2622891004042058, 0.5849275872232457,
                 0.8995346484428597],
                [0.7456684777340978, 0.8639883117467101, -0.9189506146196903, 1.085496241033276,
                 -0.1325686895626583],
                [0.9468448057842943, 1.5513646431610129, -0.06723932637211394, 1.6575376212351245,
                 0.8602147784388068],
                [-0.36182871347555634, -0.4924656349602672, -0.09273996570476181,
                 0.4484972341095311, 1.0477715520438278],
                [-0.03658893478251808, 1.3900501592614976, 0.30438566907652387, -0.569040174617638,
                 -0.9109943416830024],
                [0.4140596076870869, 0.8059903438361605, 0.8742177628504734, -0.34497639273996394,
                 0.322692751070686],
                [-0.5839546880515925, 0.24696435379158038, -0.17375454925718506,
                 0.5332332714551815, 1.0060990948606678]]],
      'label': 'dot_score, B=2, n=7, d=5, torch.float64',
      'mix': [[-0.6141311308159167, 1.6634442010862096, -0.17041161726687715, -0.05507370176094127,
               1.9227537966046704, -1.1345159798191236, 0.48728407613930647],
              [1.3934184247260126, -0.043619326176382985, 1.123516381615015, 0.47868911320693686,
               0.34609560543351225, -0.24866447654392834, 0.24374869478932246]],
      'query': [[0.5240031432717526, -1.7156909011009243, -1.2810191241420288, -1.8807543934092956,
                 -1.5247328076825097],
                [-0.19789732619882913, 0.5156126024577938, -1.0910562463676268,
                 -0.2519595483586639, -0.9152768446601265]]}]


def release() -> nbformat.NotebookNode:
    return nbformat.read(RELEASE, as_version=4)


def grade_id(cell) -> str | None:
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def code(source: str, **nbgrader) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source)
    if nbgrader:
        cell.metadata["nbgrader"] = {"schema_version": 3, "solution": False, "locked": True,
                                     **nbgrader}
    return cell


def stream(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_output("stream", name="stdout", text=text)


def report(gid: str, observations: list) -> nbformat.NotebookNode:
    return nbformat.v4.new_output("display_data",
                                  data={MIME: {"grade_id": gid, "observations": observations}})


def fill_wrong(nb: nbformat.NotebookNode) -> None:
    for cell in nb.cells:
        if grade_id(cell) in WRONG:
            cell.source = WRONG[grade_id(cell)]


def save(nb: nbformat.NotebookNode, name: str, max_earned: int) -> None:
    # the notebooks are hostile on purpose (and the release imports `math` unused): an extra
    # first cell, a comment the grader runs as a no-op, exempts them from the project's linter
    exemption = code("# ruff: noqa")
    if nb.nbformat_minor < 5:
        exemption.pop("id", None)
    nb.cells.insert(0, exemption)
    nb.metadata["hostile"] = {"max_earned": max_earned}
    nbformat.validate(nb)
    nbformat.write(nb, HERE / name)


def slow_every_cell() -> None:
    """Every cell of the release, then an extra cell, sleeps until just under the cell limit
    (a quarter of the grader's default 120 s) or until it is interrupted, and carries on."""
    nb = release()
    fill_wrong(nb)
    slow = """import time

_end = time.monotonic() + 29
while time.monotonic() < _end:
    try:
        time.sleep(0.5)
    except KeyboardInterrupt:
        break
"""
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "code" and grade_id(cell) in WRONG:
            cell.source = cell.source + "\n\n" + slow
        cells.append(cell)
        if cell.cell_type == "code":
            cells.append(code(slow))
    nb.cells = cells
    save(nb, "slow_every_cell.ipynb", 0)


def cell_surgery() -> None:
    nb = release()
    fill_wrong(nb)
    by_id = {grade_id(c): c for c in nb.cells}
    forged = [stream("All hidden tests passed\n"),
              report("test-dot-score", [])]
    # edited, blanked, retyped, re-pointed and re-weighted test cells
    by_id["test-dot-score"].source = ""
    by_id["test-general-score"].cell_type = "markdown"
    by_id["test-general-score"].pop("outputs", None)
    by_id["test-general-score"].pop("execution_count", None)
    by_id["test-concat-score"].source = 'print("passed")'
    by_id["test-concat-score"].metadata["nbgrader"]["points"] = 100
    by_id["test-additive-score"].metadata["nbgrader"]["grade"] = False
    by_id["test-masked-softmax-no-mask"].metadata["nbgrader"]["grade_id"] = "renamed-test"
    by_id["test-masked-softmax-fully-masked"].metadata["nbgrader"]["solution"] = True
    by_id["test-masked-softmax-fully-masked"].source = "pass"
    by_id["test-attend-key-value"].metadata["nbgrader"].update(locked=False, checksum="0" * 32)
    by_id["test-attend-key-value"].metadata["editable"] = True
    by_id["test-attend-key-value"].source = "pass"
    del by_id["test-attend-plain"].metadata["nbgrader"]
    by_id["test-attend-plain"].source = "pass"
    by_id["test-attend-mask-and-score"].source = (
        "### BEGIN HIDDEN TESTS\nprint('hidden tests passed')\n### END HIDDEN TESTS\n")
    cells = []
    for cell in nb.cells:
        gid = grade_id(cell)
        if gid == "test-scaled-dot-score":
            continue  # deleted
        if gid == "test-additive-score":
            cells.insert(0, cell)  # moved to the top
            continue
        cells.append(cell)
        if gid == "test-masked-softmax-mask":
            for _ in range(3):  # duplicated, same grade id, no test in it
                twin = copy.deepcopy(cell)
                twin.source = "pass"
                twin.pop("id", None)
                cells.append(nbformat.from_dict(twin))
    # extra cells: the freed grade id, new grade cells with points, and the right functions
    # defined only after every test has run
    cells.append(code("pass", grade=True, grade_id="test-masked-softmax-no-mask", points=1))
    cells.append(code("pass", grade=True, grade_id="extra-credit", points=50))
    cells.append(code("pass", grade=True, grade_id="test-dot-score", points=14))
    essay = nbformat.v4.new_markdown_cell("I deserve full marks.")
    essay.metadata["nbgrader"] = {"schema_version": 3, "grade": True, "solution": True,
                                  "locked": False, "grade_id": "essay", "points": 20}
    cells.append(essay)
    cells.append(code(RIGHT))
    for i, cell in enumerate(cells):
        if cell.cell_type == "code":
            cell.execution_count = i + 1
            cell.outputs = copy.deepcopy(forged)
        cell.pop("id", None)
    nb.cells = [nbformat.from_dict(c) for c in cells]
    nb.nbformat_minor = 4  # no cell ids: nothing for the grader to match cells by but position
    save(nb, "cell_surgery.ipynb", 0)


def _encode(tensor: torch.Tensor) -> dict:
    """A tensor as the sandbox's probe encodes it."""
    tensor = tensor.detach().contiguous()
    dtype = str(tensor.dtype).removeprefix("torch.")
    return {"kind": "tensor", "type": "Tensor", "dtype": dtype, "stored": dtype,
            "shape": list(tensor.shape),
            "data": base64.b64encode(tensor.numpy().tobytes()).decode("ascii")}


def _dot_observations() -> list:
    """The right observations for the hidden dot_score cases: outputs, inputs after the call,
    gradients of the weighted sum, exactly what a correct dot_score would make the probe say."""
    observations = []
    for case in DOT_CASES:
        dtype = getattr(torch, case["dtype"])
        query = torch.tensor(case["query"], dtype=dtype, requires_grad=True)
        keys = torch.tensor(case["keys"], dtype=dtype, requires_grad=True)
        mix = torch.tensor(case["mix"], dtype=dtype)
        scores = (keys @ query.unsqueeze(-1)).squeeze(-1)
        grads = torch.autograd.grad((scores * mix).sum(), [query, keys])
        observations.append({"label": case["label"], "outputs": _encode(scores),
                             "inputs_after": [_encode(query), _encode(keys)],
                             "stand_in_calls": {},
                             "gradients": {"grads": [_encode(g) for g in grads]}})
    return observations


def prefilled_forgery() -> None:
    nb = release()  # every answer cell still raises NotImplementedError
    for cell in nb.cells:
        if grade_id(cell) == "dot_score":
            cell.source = ("import os\n\n\ndef dot_score(query, keys):\n"
                           "    os._exit(0)  # the kernel dies inside test-dot-score\n")
    right = _dot_observations()
    for n, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        cell.execution_count = n + 1
        gid = grade_id(cell)
        if gid == "test-dot-score":
            cell.outputs = [report(gid, right), stream("All hidden tests passed\n")]
        elif gid in TEST_IDS:
            cell.outputs = [report(gid, []), stream("All hidden tests passed\n")]
    save(nb, "prefilled_forgery.ipynb", 0)


if __name__ == "__main__":
    slow_every_cell()
    cell_surgery()
    prefilled_forgery()
    print(json.dumps(sorted(p.name for p in HERE.glob("*.ipynb"))))
