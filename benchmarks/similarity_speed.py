"""How long ``python -m autograder similarity`` takes for a class: 300 submissions by default.

Builds a scratch course of ``attention-scoring`` with synthetic submissions made from the
styles of the similarity tests' corpus (``tests/grader/commands/similarity_corpus.py``):
each student takes each graded function from one of the whole implementations written
apart (the catalogue's variants, the independent ones, the reference), at random, so that
students share some functions and not others, as a class does; a third of them then
change it as a copier would (renamed variables, new comments, new layout, dead code), and
every student's written answers are one of the corpus's English or Chinese answers with a
sentence dropped and their own last sentence. Then it times the command line, as an
instructor runs it (interpreter start, jieba's dictionary and all), ``--repeat`` times, and
prints the median and what the command reported.

    python benchmarks/similarity_speed.py [--submissions 300] [--repeat 3] [--seed 0]
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import make_course  # noqa: E402
from tests.grader.commands import similarity_corpus as corpus  # noqa: E402

ASSIGNMENT = corpus.ASSIGNMENT
TARGET = 60.0       # seconds: the budget for 300 submissions on 2 cores


def _definitions(code: str) -> dict[str, str]:
    tree = ast.parse(code)
    lines = code.splitlines()
    return {node.name: "\n".join(lines[node.lineno - 1:node.end_lineno])
            for node in tree.body if isinstance(node, ast.FunctionDef)}


def mixed_module(styles: list[dict[str, str]], rng: random.Random) -> str:
    """One student's module: each graded function from a style drawn at random, with the
    helpers of that style it calls."""
    parts = ["import math", "import torch", "import torch.nn.functional as F"]
    for name in corpus.GRADED:
        style = rng.choice(styles)
        helpers = [source for helper, source in style.items()
                   if helper not in corpus.GRADED and helper in style[name]]
        parts += [*helpers, style[name]]
    return "\n\n\n".join(parts)


def _answers(rng: random.Random) -> tuple[tuple[str, str], str | None]:
    texts, language = rng.choice([(corpus.ENGLISH, None), (corpus.CHINESE, "zh_CN")])
    chosen = rng.choice(texts)
    split = "。" if language else ". "
    edited = []
    for answer in chosen:
        sentences = [s for s in answer.split(split) if s]
        if len(sentences) > 2:
            sentences.pop(rng.randrange(len(sentences)))
        edited.append(split.join(sentences) + f" {rng.random():.6f}")
    return (edited[0], edited[1]), language


def build_class(course, count: int, seed: int) -> None:
    rng = random.Random(seed)
    reference = corpus.reference_code(course)
    styles = [_definitions(code) for code in corpus.independent_codes().values()]
    styles.append(_definitions(reference))
    changes = [corpus.recomment, corpus.reformat, corpus.insert_dead_code]
    for index in range(count):
        code = mixed_module(styles, rng)
        answers, language = _answers(rng)
        if rng.random() < 1 / 3:
            code = corpus.rename(code)
        notebook = corpus._notebook(course, code, answers, language)
        if rng.random() < 1 / 3:
            notebook = corpus.on_code(notebook, rng.choice(changes))
        corpus._hand_in(course, f"student-{index:04d}", notebook, language)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--submissions", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        course = make_course(Path(scratch) / "course")
        started = time.monotonic()
        build_class(course, args.submissions, args.seed)
        print(f"built {args.submissions} submissions in {time.monotonic() - started:.0f} s")
        output = Path(scratch) / "pairs.json"
        seconds = []
        for _ in range(args.repeat):
            started = time.monotonic()
            done = subprocess.run([sys.executable, "-m", "autograder", "--root",
                                   str(course.root), "similarity", ASSIGNMENT,
                                   "--json", str(output)],
                                  cwd=ROOT, capture_output=True, text=True, check=True)
            seconds.append(time.monotonic() - started)
        data = json.loads(output.read_text())
        flagged = sum(pair["flagged"] for pair in data["pairs"])
        print(done.stdout.splitlines()[0])
        print(f"similarity of {args.submissions} submissions ({len(data['pairs'])} pairs, "
              f"{flagged} flagged): median {statistics.median(seconds):.1f} s of "
              f"{', '.join(f'{s:.1f}' for s in seconds)} (target: under {TARGET:.0f} s)")
        if statistics.median(seconds) >= TARGET:
            sys.exit(1)


if __name__ == "__main__":
    main()
