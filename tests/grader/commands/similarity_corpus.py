"""A class of `attention-scoring` submissions for the similarity tests: who wrote what alone,
who copied whom, and how.

**Independent work.** Each independent student's code is a whole implementation written
apart from the others: the catalogue's variants that implement every function
(``autograder/proving/mutants_and_variants/attention-scoring/variants/``), the
implementations written from the contract alone (``tests/independent/attention-scoring/
variants/``) and the reference solution. Correct implementations of ``dot_score`` or
``masked_softmax`` are *supposed* to look alike, and several of these share lines (``return
torch.bmm(keys, query.unsqueeze(-1)).squeeze(-1)``): that is what the class discount must
absorb. Their written answers (:data:`ENGLISH`, :data:`CHINESE`) were written one by one,
each in its own words, to the two questions of the notebook: they share the numbers and
terms every correct answer has (1024, 16, 32; variance, softmax, gradient; 方差, 梯度).

**Copies.** Each copy takes one independent student's work and changes it as a copier
would: renamed variables (:func:`rename`), reordered definitions and a helper moved to
another cell (:func:`reorder`), comments and docstrings changed (:func:`recomment`),
reformatted (:func:`reformat`), dead code inserted (:func:`insert_dead_code`), all of those
at once, one function copied into otherwise own work, and written answers copied and
lightly edited or paraphrased, in English and in Chinese (by students who wrote no code:
their code is the starter's). Three students share one source (a cluster).

:func:`build` writes the class into a course's ``submitted/`` and returns the copied pairs.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Callable
from pathlib import Path

import nbformat

from autograder.proving.fill import defined_names, fill_release, solution_text
from tests.conftest import INDEPENDENT, submit

ASSIGNMENT = "attention-scoring"
CATALOGUE = (Path(__file__).resolve().parents[3] / "autograder" / "proving"
             / "mutants_and_variants" / ASSIGNMENT / "variants")
GRADED = ["dot_score", "scaled_dot_score", "general_score", "concat_score", "additive_score",
          "masked_softmax", "attend"]
SCALING, LINEAR = "written-scaling", "written-linear-concat"

# --------------------------------------------------------------------------- written answers
# (written-scaling, written-linear-concat) of each independent student, in their own words.

ENGLISH = [
    ("Each term q_j k_j has variance 4 x 4 = 16 and there are 64 independent terms, so "
     "Var(q.k) = 64 * 16 = 1024. Dividing by 8 gives variance 1024/64 = 16, not 1. To get "
     "unit variance I would divide by 32 = sigma^2 sqrt(d_k). With 10 keys the softmax will "
     "be very peaked, close to one-hot, and its gradient nearly vanishes, so learning stalls.",
     "Dot scores (2, 0, 2) give weights (0.468, 0.063, 0.468). Times ten the scores become "
     "(20, 0, 20) and the weights (0.5, 0.0, 0.5): the distribution sharpens like a lower "
     "temperature, but the two tied keys stay tied. For additive scoring tanh saturates, the "
     "score is bounded by the sum of |v|, so it can never get that sharp; it goes uniform."),
    ("The variance of a sum of independent products: d_k sigma^4 = 64 * 16 = 1024 (std 32). "
     "Our scaled score divides by sqrt(64) = 8 so the variance is still 16. We should divide "
     "by 32 instead. Softmax over ten keys with std 4 scores puts most mass on the maximum "
     "key; the weights saturate and the gradients through the softmax are tiny.",
     "First run: weights about 0.47, 0.06, 0.47. Second run with 10q: about 0.5, 0, 0.5, "
     "because multiplying all scores by 10 is like dividing the temperature by 10. The "
     "additive score v^T tanh(W_q q + W_k k) cannot grow past sum |v_l|; when q is huge "
     "every tanh unit saturates to the same sign for all keys and the weights become equal."),
    ("q^T k sums 64 products whose variance is E[q^2]E[k^2] = 16, hence variance 1024. After "
     "scaling by 1/8 we still have variance 16 — the factor sqrt(d_k) assumes unit-variance "
     "inputs. Dividing by 32 restores variance one. Prediction: nearly one-hot attention "
     "weights, which hurt training because the softmax Jacobian a_i(delta_ij - a_j) is ~0.",
     "With the worked example the weights are [0.468, 0.063, 0.468]; scaling the query by 10 "
     "makes them [0.5, 1e-9, 0.5]. Larger queries make dot-product attention sharper without "
     "limit. Bahdanau's score is a bounded function (tanh in [-1, 1]) so for a growing query "
     "all keys receive the same score and attention flattens to uniform instead."),
    ("Var = 64 · 4 · 4 = 1024. Scaled: 1024 / 8^2 = 16. Need to divide by 8 · 4 = 32. The "
     "softmax would almost always pick a single key (max weight around 0.7 or more), and a "
     "saturated softmax has vanishing gradients, which slows or blocks learning of W.",
     "The plain attend gives 0.4683 / 0.0634 / 0.4683 and ten times the query gives "
     "0.5 / 4.5e-9 / 0.5. Scores scale linearly with the query, so the softmax becomes "
     "harder. The concat/additive form is capped: |score| <= ||v||_1. As ||q|| grows the "
     "hidden units all saturate identically, scores converge, weights tend to 1/n each."),
    ("I computed it: the product of two independent zero-mean entries with variance 4 has "
     "variance 16; summing 64 gives 1024. Scaling with sqrt(d_k)=8 divides the variance by "
     "64, leaving 16. The right divisor is 32. Expect attention that collapses onto one key "
     "and tiny gradients for the other keys; training becomes unstable or slow.",
     "Weights go from roughly (0.47, 0.06, 0.47) to (0.50, 0.00, 0.50). The key with score "
     "0 is suppressed exponentially more, the equal keys share. Because tanh is bounded, "
     "additive attention scores live in [-sum|v|, sum|v|]; it cannot become arbitrarily "
     "peaked, and in the limit all keys look the same to it, so it becomes uniform."),
    ("Expected squared dot product: sum over 64 dims of Var(q_i) Var(k_i) = 64 × 16 = 1024. "
     "The code's division by sqrt(d_k) only reduces this to 16. A variance of one requires "
     "dividing by sqrt(1024) = 32. Then with ten keys the largest weight dominates (about "
     "three quarters on average), and small softmax derivatives make learning slow.",
     "Original weights 0.468, 0.063, 0.468. After 10x: 0.5, ~0, 0.5. Multiplying the query "
     "multiplies each score, which is equivalent to lowering the softmax temperature, so "
     "the weights concentrate on the top keys. Additive attention saturates: every tanh "
     "tends to ±1 with the sign set by W_q q, scores become equal, attention is uniform."),
    ("Each coordinate contributes variance sigma^4 = 16; over d_k = 64 coordinates that is "
     "1024. Dividing by 8 leaves 16. Using 32 (sigma squared times root d_k) normalises "
     "it. The softmax over 10 such scores is sharp and almost argmax-like; gradients of a "
     "saturated softmax are small so the model learns its attention slowly.",
     "I get (0.468, 0.063, 0.468) and then (0.500, 0.000, 0.500): sharper, ties preserved. "
     "Query norm acts as an inverse temperature in dot attention. In the additive score the "
     "query only enters through tanh, which saturates, so its score is bounded and for very "
     "large queries converges to the same value for every key: the weights are uniform."),
    ("Using independence, Var(sum q_i k_i) = sum Var(q_i)Var(k_i) = 64*16 = 1024. The scaled "
     "version has variance 1024/64 = 16, standard deviation 4. Divide by 32 to get 1. A "
     "softmax with such spread-out scores is dominated by one or two keys, the gradient "
     "signal to the other keys is nearly zero, and training is slower.",
     "Query x1: weights ≈ 0.47, 0.06, 0.47. Query x10: ≈ 0.5, 0, 0.5. The scores grow ten "
     "times so differences explode inside exp. For additive_score the magnitude is limited "
     "by the v vector because tanh lies between -1 and 1; growing q saturates the tanh the "
     "same way for all keys so the scores tie and the weights go to uniform."),
]

CHINESE = [
    ("每一项 q_j k_j 的方差是 4 乘 4 等于 16，64 维相加，方差为 1024。除以 8 以后方差仍然是 "
     "16，不是 1。应该除以 32。这样 10 个键上的 softmax 会非常尖锐，几乎只关注一个键，"
     "梯度很小，训练变慢。",
     "原来的权重约为 0.468、0.063、0.468；查询乘以 10 之后约为 0.5、0、0.5。分数整体放大，"
     "相当于降低温度，分布变尖，但相等的分数仍然相等。加性打分经过 tanh，有上界，"
     "查询无限增大时所有键的分数趋于相同，权重趋于均匀。"),
    ("点积是 64 个独立乘积之和，每个乘积方差 16，总方差 1024，标准差 32。代码只除以 "
     "sqrt(64)=8，剩下方差 16。要把方差变成 1，需要除以 32。预测：softmax 输出接近独热向量，"
     "最大权重大约 0.7，饱和的 softmax 导数接近零，参数更新困难。",
     "我运行 attend 得到 [0.47, 0.06, 0.47]，乘以十以后得到 [0.5, 0.0, 0.5]。点积注意力可以"
     "通过增大查询的长度变得任意尖锐。Bahdanau 的加性分数被 v 的一范数限制住，tanh 饱和后"
     "每个键得到同样的分数，所以注意力变成平均分布。"),
    ("方差计算：Var(q·k) = d_k × σ⁴ = 64 × 16 = 1024。缩放后 1024 ÷ 64 = 16。"
     "正确的除数是 σ² √d_k = 32。softmax 的权重会集中在分数最高的键上，"
     "雅可比矩阵 a_i(δ_ij − a_j) 几乎为零，学习信号消失。",
     "例子里的得分是 (2, 0, 2)，权重 (0.468, 0.063, 0.468)。查询放大十倍，得分变成 (20, 0, 20)，"
     "权重约 (0.5, 0, 0.5)。这是温度下降的效果。加性注意力中 tanh 的取值在 -1 和 1 之间，"
     "分数有界，不可能像点积那样无限变尖，最后趋向均匀。"),
    ("两个独立、均值为零、方差为 4 的数相乘，方差是 16。把 64 个这样的乘积加起来，"
     "方差就是 1024。我们的函数除以 8，方差降到 16，还是太大，要除以 32 才行。"
     "十个键的注意力几乎变成 argmax，梯度消失，模型很难学习。",
     "第一次：约 0.47 / 0.06 / 0.47；第二次：约 0.50 / 0.00 / 0.50。所有分数乘以 10，"
     "指数函数把差距放大。加性打分受 tanh 饱和的限制：查询很大时每个隐藏单元都取 "
     "W_q q 的符号，和键无关，因此每个键分数一样，权重均匀。"),
]


# --------------------------------------------------------------------------- copies


def lightly_edit_english(text: str) -> str:
    """A copy handed in as one's own: a few words changed, a sentence added."""
    edits = [("so", "therefore"), ("gives", "yields"), ("very", "extremely"),
             ("I would", "we should"), ("First", "In the first"), ("about", "roughly")]
    for old, new in edits:
        text = re.sub(rf"\b{old}\b", new, text, count=1)
    return text + " This matches what I expected."


def lightly_edit_chinese(text: str) -> str:
    """A Chinese copy with a few words changed and a sentence added."""
    for old, new in [("非常", "十分"), ("应该", "需要"), ("原来的", "最初的"), ("趋于", "变得")]:
        text = text.replace(old, new, 1)
    return text + "这和我的预期一致。"


# Paraphrases a copier writes from someone else's answer (of ENGLISH[4] and CHINESE[1]):
# sentences reordered and reworded, their substance and much of their wording kept.
PARAPHRASED_ENGLISH = (
    "The right divisor is 32, because scaling with sqrt(d_k)=8 only divides the variance by "
    "64, leaving 16. Computation: the product of two independent zero-mean entries with "
    "variance 4 has variance 16, and summing 64 of them gives 1024. We should expect "
    "attention collapsing onto one key and tiny gradients for other keys; training is slow "
    "or unstable.",
    "Because tanh is bounded, additive attention scores stay in [-sum|v|, sum|v|], so it "
    "cannot become arbitrarily peaked; in the limit every key looks the same to it and it "
    "becomes uniform. The weights change from roughly (0.47, 0.06, 0.47) to (0.50, 0.00, "
    "0.50): the key with score 0 is suppressed exponentially more while equal keys share.")
PARAPHRASED_CHINESE = (
    "要把方差变成 1，需要除以 32，因为代码只除以 sqrt(64)=8，方差还剩 16。点积由 64 个独立乘积"
    "相加，每个乘积方差 16，所以总方差 1024，标准差 32。我的预测是 softmax 输出接近独热向量，"
    "饱和的 softmax 导数接近零，参数很难更新。",
    "Bahdanau 加性分数被 v 的一范数限制住，tanh 饱和以后每个键分数相同，注意力变成平均分布。"
    "而点积注意力可以通过增大查询长度变得任意尖锐：运行 attend 得到 [0.47, 0.06, 0.47]，"
    "查询乘以十得到 [0.5, 0.0, 0.5]。")


def _bound(code: str) -> set[str]:
    tree = ast.parse(code)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.FunctionDef):
            names.add(node.name)
    keywords = {node.arg for node in ast.walk(tree) if isinstance(node, ast.keyword)}
    return names - set(GRADED) - keywords - {"self"}


def rename(code: str) -> str:
    """Every variable, argument and helper of a module renamed (not the graded functions
    nor attributes), as a copier with a find-and-replace would."""
    names = _bound(code)
    out, previous = [], ""
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type == tokenize.NAME and token.string in names and previous != ".":
            token = token._replace(string=f"my_{token.string.strip('_')}_2")
        out.append(token)
        previous = token.string
    return tokenize.untokenize(out)


def recomment(code: str) -> str:
    """Comments and docstrings removed, other comments written."""
    tree = ast.parse(code)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.body and isinstance(
                node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant):
            node.body[0].value.value = "My implementation, written for the assignment."
    lines = ast.unparse(tree).splitlines()
    out = []
    for line in lines:
        if line.strip().startswith("return"):
            indent = line[:len(line) - len(line.lstrip())]
            out.append(f"{indent}# compute and return the result here")
        out.append(line)
    return "\n".join(out)


def reformat(code: str) -> str:
    """The same code laid out again: two-space indents, one statement per line as
    ast.unparse writes it, blank lines between statements."""
    text = ast.unparse(ast.parse(code))
    lines = []
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        depth = (len(line) - len(stripped)) // 4
        lines.append("  " * depth + stripped)
        if not stripped.startswith(("def ", "class ", "@")):
            lines.append("")
    return "\n".join(lines)


def insert_dead_code(code: str) -> str:
    """Dead code a copier inserts to look different: unused variables and branches,
    statements after a return, an unused helper."""
    out = []
    for line in code.splitlines():
        out.append(line)
        stripped = line.strip()
        indent = line[:len(line) - len(stripped)]
        if stripped.startswith("def ") and stripped.endswith(":"):
            body = indent + "    "
            out += [f"{body}unused_counter = 0", f"{body}if False:",
                    f"{body}    print('debugging', unused_counter)"]
        elif stripped.startswith("return ") and not stripped.endswith(("(", ",", "\\")) and \
                stripped.count("(") == stripped.count(")"):
            out.append(f"{indent}print('never printed')")
    out += ["", "", "def _unused_helper(x):", "    return x * 2 + 1"]
    return "\n".join(out)


def _split_definitions(code: str) -> tuple[list[str], list[str]]:
    """(other statements, definitions) of a cell's top level."""
    tree = ast.parse(code)
    lines = code.splitlines()
    other, definitions = [], []
    for node in tree.body:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        segment = "\n".join(lines[first - 1:node.end_lineno])
        (definitions if isinstance(node, ast.FunctionDef | ast.ClassDef) else other).append(
            segment)
    return other, definitions


def reorder(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Definitions reversed in every cell, and the helpers moved to the last code cell."""
    cells = [c for c in notebook.cells if c.cell_type == "code"
             and c.metadata.get("nbgrader", {}).get("solution")]
    moved = []
    for cell in cells:
        other, definitions = _split_definitions(cell.source)
        helpers = [d for d in definitions if not set(defined_names(d)) & set(GRADED)]
        graded = [d for d in definitions if d not in helpers]
        moved += helpers
        cell.source = "\n\n".join(other + graded[::-1])
    cells[-1].source = "\n\n".join([cells[-1].source, *moved[::-1]])
    return notebook


def on_code(notebook: nbformat.NotebookNode, change: Callable[[str], str]
            ) -> nbformat.NotebookNode:
    """``change`` applied to every solution code cell of ``notebook``."""
    for cell in notebook.cells:
        if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = change(cell.source)
    return notebook


# --------------------------------------------------------------------------- the class


def independent_codes() -> dict[str, str]:
    """{style: module source} of every whole implementation written apart from the others
    (the catalogue's variants that define every graded function, the independent ones)."""
    codes = {}
    for path in sorted(CATALOGUE.glob("*.py")) + sorted(
            (INDEPENDENT / ASSIGNMENT / "variants").glob("*.py")):
        code = path.read_text()
        if set(GRADED) <= set(defined_names(code)):
            codes[("cat-" if path.parent == CATALOGUE else "ind-") + path.stem] = code
    return codes


SPARE = "ind-straightforward"    # own work nobody else in the class has: for cp-one-function


def reference_code(course) -> str:
    """The reference solution as one module (its solution cells' code, markers removed)."""
    source = nbformat.read(course.source / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    return "\n\n".join(solution_text(cell.source) for cell in source.cells
                       if cell.cell_type == "code"
                       and cell.metadata.get("nbgrader", {}).get("solution"))


def _notebook(course, code: str | None, answers: tuple[str, str] | None,
              language: str | None = None) -> nbformat.NotebookNode:
    name = f"{ASSIGNMENT}.{language}" if language else ASSIGNMENT
    release = nbformat.read(course.release / ASSIGNMENT / f"{name}.ipynb", as_version=4)
    source = nbformat.read(course.source / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    notebook = fill_release(release, source, code) if code is not None else release
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.cell_type == "markdown" and grade_id in (SCALING, LINEAR):
            cell.source = (answers[0] if grade_id == SCALING else answers[1]) if answers \
                else cell.source
    return notebook


def _hand_in(course, student: str, notebook, language: str | None = None) -> None:
    if language:
        folder = course.submitted / student / ASSIGNMENT
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, folder / f"{ASSIGNMENT}.{language}.ipynb")
    else:
        submit(course, student, notebook)


def independent_class(course) -> dict[str, tuple[str, tuple, str | None]]:
    """Hand in the independent students; {student: (code, answers, language)}: every whole
    implementation but :data:`SPARE`, and the reference solution."""
    codes = [(style, code) for style, code in independent_codes().items() if style != SPARE]
    codes.append(("reference", None))
    answers = [(a, None) for a in ENGLISH] + [(a, "zh_CN") for a in CHINESE]
    students = {}
    for index, (style, code) in enumerate(codes):
        text, language = answers[index % len(answers)]
        student = f"alone-{style}"
        students[student] = (code, text, language)
        _hand_in(course, student, _notebook(course, code, text, language), language)
    return students


def copied_pairs(copies: list[tuple[str, str, set[str]]]) -> set[frozenset[str]]:
    """The pairs whose work has a common source: each copy and its source, and two copies of
    the same source that copied the same part of it (``"code"``, ``"prose"``)."""
    pairs = {frozenset((student, source)) for student, source, _ in copies}
    for student, source, parts in copies:
        for other, other_source, other_parts in copies:
            if student < other and source == other_source and parts & other_parts:
                pairs.add(frozenset((student, other)))
    return pairs


def build(course) -> tuple[list[str], set[frozenset[str]]]:
    """Hand in the whole class: (independent students, copied pairs)."""
    students = independent_class(course)
    names = list(students)
    spare_code = independent_codes()[SPARE]
    copies: list[tuple[str, str, set[str]]] = []     # (student, source, parts copied)

    def copy_code(student: str, source: str, change, own_answers=None, language=None,
                  renamed=False):
        code, answers, lang = students[source]
        code = rename(code or reference_code(course)) if renamed else code
        notebook = _notebook(course, code, own_answers or answers, language or lang)
        notebook = change(notebook)
        _hand_in(course, student, notebook, language or lang)
        copies.append((student, source, {"code"} if own_answers else {"code", "prose"}))

    # Copies of code, each with their own (another student's style of) written answers
    # kept as the source's: a copier of code usually copies the answers too; two do not.
    copy_code("cp-renamed", names[0], lambda nb: nb, renamed=True)
    copy_code("cp-reordered", names[1], reorder)
    copy_code("cp-recommented", names[2], lambda nb: on_code(nb, recomment),
              own_answers=("The variance is large.", "Weights become sharper."))
    copy_code("cp-reformatted", names[3], lambda nb: on_code(nb, reformat))
    copy_code("cp-dead-code", names[4], lambda nb: on_code(nb, insert_dead_code))
    copy_code("cp-everything", names[5],
              lambda nb: reorder(on_code(on_code(on_code(nb, recomment), insert_dead_code),
                                         reformat)), renamed=True,
              own_answers=("I think the scores have variance 1024 and should be divided by "
                           "32.", "The weights get sharper with a longer query; the "
                           "additive ones do not."))
    # Three students share one source: the source and two copies of it.
    copy_code("cluster-renamed", names[6], lambda nb: nb, renamed=True)
    copy_code("cluster-dead-code", names[6], lambda nb: on_code(nb, insert_dead_code))

    # One function copied among otherwise own work (a style nobody else in the class has).
    source_code = students[names[7]][0]
    own = _replace_function(spare_code, source_code, "masked_softmax")
    _hand_in(course, "cp-one-function", _notebook(
        course, own, ("Var is 1024; dividing by 8 is not enough.", "Sharper; additive no.")))
    copies.append(("cp-one-function", names[7], {"code"}))

    # Written answers only (no code: the starter's), copied or paraphrased.
    author = {students[n][1]: n for n in names}
    handed = [("prose-edited-en", author[ENGLISH[2]],
               tuple(map(lightly_edit_english, ENGLISH[2])), None),
              ("prose-paraphrased-en", author[ENGLISH[4]], PARAPHRASED_ENGLISH, None),
              ("prose-edited-zh", author[CHINESE[0]],
               tuple(map(lightly_edit_chinese, CHINESE[0])), "zh_CN"),
              ("prose-paraphrased-zh", author[CHINESE[1]], PARAPHRASED_CHINESE, "zh_CN")]
    for student, source, answers, language in handed:
        _hand_in(course, student, _notebook(course, None, answers, language), language)
        copies.append((student, source, {"prose"}))
    return names, copied_pairs(copies)


def _replace_function(own: str, other: str, name: str) -> str:
    """``own`` with its function ``name`` replaced by ``other``'s (and its helpers)."""
    def definitions(code):
        tree = ast.parse(code)
        lines = code.splitlines()
        return {node.name: "\n".join(lines[node.lineno - 1:node.end_lineno])
                for node in tree.body if isinstance(node, ast.FunctionDef)}

    mine, theirs = definitions(own), definitions(other)
    copied = theirs[name]
    helpers = [theirs[n] for n in theirs if n not in GRADED and n in copied]
    return own.replace(mine[name], "\n\n".join([*helpers, copied]))
