"""A student's code as a copier cannot cheaply change it: tokens of its syntax tree.

The solution cells' code is parsed with :mod:`ast` (never run) and written out as a stream
of tokens (:class:`~.fingerprints.Token`) in which

* comments, docstrings, blank lines, layout, parentheses and imports do not appear (they
  are not in the tree, or are left out);
* every name the submission itself binds (its functions, arguments, variables, helpers) is
  ``V``, so renaming changes nothing; names it only uses (``torch``, ``math``) and
  attributes (``.masked_fill``, ``.softmax``) stay, since they carry what the code does;
* dead code is gone: statements after a ``return``/``raise``/``break``/``continue``, the
  branch a constant condition never takes, ``pass``, bare expressions that are constants,
  assignments to a name nothing reads and functions nothing calls (except the graded ones);
* each top-level definition (and each method of a class) is a *run* of its own: k-grams
  never span two definitions, so the order of definitions changes nothing.

IPython lines (``%magic``, ``!shell``) are blanked first. A cell that does not parse loses
the lines Python names in its errors, one at a time, until it parses (up to
:data:`MAX_REPAIRS` lines); if it still does not, its tokens come from :mod:`tokenize`, or
failing that from a plain split into words and symbols, so that it is compared as far as
possible and never stops the run. Each token keeps the line of the cell it came from.
"""

from __future__ import annotations

import ast
import io
import keyword
import re
import tokenize
from collections.abc import Iterable

from .fingerprints import Token

MAX_REPAIRS = 20        # lines a cell that does not parse may lose before it is only tokenised
_MAGIC = re.compile(r"^\s*[%!]")
_WORD = re.compile(r"[A-Za-z_]\w*|\d+(?:\.\d*)?|\S")
_STOPS = (ast.Return, ast.Raise, ast.Break, ast.Continue)
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_SKIPPED_FIELDS = {"ctx", "type_comment", "kind", "lineno", "col_offset", "end_lineno",
                   "end_col_offset", "level", "is_async"}


class ParsedCell:
    """One code cell: its tree (or, if it never parsed, its tokens) and what went wrong."""

    def __init__(self, cell: str, source: str) -> None:
        self.cell = cell
        self.tree: ast.Module | None = None
        self.lexical: list[Token] = []
        self.notes: list[str] = []
        lines = ["" if _MAGIC.match(line) else line for line in source.splitlines()]
        dropped: list[int] = []
        for _ in range(MAX_REPAIRS + 1):
            try:
                self.tree = ast.parse("\n".join(lines))
                break
            except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
                # ValueError: a NUL byte; RecursionError: nested beyond the parser's depth
                line = getattr(error, "lineno", None)
                if not line or not 1 <= line <= len(lines) or not lines[line - 1].strip():
                    break
                lines[line - 1] = ""
                dropped.append(line)
        self.text = "\n".join(lines)
        if self.tree is None:
            self.lexical = _lexical_tokens(self.text)
            self.notes.append(f"cell {cell}: its code does not parse; compared by its words")
        elif dropped:
            self.notes.append(f"cell {cell}: its code does not parse; line(s) "
                              f"{', '.join(map(str, sorted(dropped)))} left out")

    def names_read(self) -> set[str]:
        """Every name this cell reads (all its words, if it never parsed)."""
        if self.tree is None:
            return {t.text for t in self.lexical if t.text.isidentifier()}
        read = {node.id for node in ast.walk(self.tree)
                if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store)}
        # A decorator or a call through an attribute of a class reads a method's name.
        read |= {node.attr for node in ast.walk(self.tree) if isinstance(node, ast.Attribute)}
        return read


def code_runs(cells: dict[str, str], graded_names: Iterable[str] = ()
              ) -> tuple[dict[str, list[list[Token]]], list[str]]:
    """The token runs of every code cell of one submission ({grade_id: source}), and notes
    on cells that did not parse. ``graded_names``: functions and classes the assignment asks
    for, never removed as unused."""
    parsed = [ParsedCell(cell, source) for cell, source in cells.items()]
    everything = set(graded_names) | {n for one in parsed for n in one.names_read()}
    for one in parsed:        # what can never run goes first: then what only it reads
        if one.tree is not None:
            one.tree.body = _live(one.tree.body, everything)
    read = set(graded_names)
    for one in parsed:
        read |= one.names_read()
    bound = {name for one in parsed if one.tree for name in _bound_names(one.tree)}
    runs: dict[str, list[list[Token]]] = {}
    notes: list[str] = []
    for one in parsed:
        notes += one.notes
        if one.tree is None:
            runs[one.cell] = [one.lexical] if one.lexical else []
            continue
        try:
            body = _live(one.tree.body, read)
            runs[one.cell] = [run for run in _units(body, bound, read) if run]
        except RecursionError:       # an expression nested thousands deep: its words
            lexical = _lexical_tokens(one.text)
            runs[one.cell] = [lexical] if lexical else []
            notes.append(f"cell {one.cell}: its code is nested too deeply to be read as a "
                         "tree; compared by its words")
    return runs, notes


def defined_names(source: str) -> set[str]:
    """Functions and classes defined at the top level of ``source`` (empty if it does not
    parse): in a starter cell, the names the assignment asks for."""
    try:
        return _defined(ast.parse("\n".join("" if _MAGIC.match(line) else line
                                            for line in source.splitlines())))
    except (SyntaxError, ValueError):
        return set()


def _defined(tree: ast.Module) -> set[str]:
    return {node.name for node in tree.body if isinstance(node, _DEFINITIONS)}


# --------------------------------------------------------------------------- dead code


def _constant_truth(test: ast.expr) -> bool | None:
    if isinstance(test, ast.Constant):
        return bool(test.value)
    return None


def _live(body: list[ast.stmt], read: set[str]) -> list[ast.stmt]:
    """``body`` without its dead statements (see the module's docstring), recursively."""
    kept: list[ast.stmt] = []
    for statement in body:
        if isinstance(statement, ast.Pass | ast.Import | ast.ImportFrom):
            continue
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
            continue
        if isinstance(statement, ast.If | ast.While):
            truth = _constant_truth(statement.test)
            if truth is False:
                kept += _live(statement.orelse, read)
                continue
            if truth is True and isinstance(statement, ast.If):
                kept += _live(statement.body, read)
                continue
        if isinstance(statement, _DEFINITIONS) and statement.name not in read:
            continue
        if isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) \
                else [statement.target]
            if all(isinstance(t, ast.Name) and t.id not in read for t in targets):
                continue
        for name in ("body", "orelse", "finalbody"):
            inner = getattr(statement, name, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                setattr(statement, name, _live(inner, read))
        for handler in getattr(statement, "handlers", []) or []:
            handler.body = _live(handler.body, read)
        kept.append(statement)
        if isinstance(statement, _STOPS):
            break
    return kept


# --------------------------------------------------------------------------- tokens


def _bound_names(tree: ast.AST) -> set[str]:
    """Every name ``tree`` binds: assigned, an argument, defined, caught. (Not what it
    imports: ``math`` is ``math`` whether the cell imports it or an earlier cell did.)"""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, _DEFINITIONS):
            bound.add(node.name)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            bound.update(node.names)
    return bound


def _units(body: list[ast.stmt], bound: set[str], read: set[str]) -> list[list[Token]]:
    """One run of tokens per definition (and per method of a class), one per stretch of
    other statements between them."""
    runs: list[list[Token]] = []
    stretch: list[Token] = []
    for statement in body:
        if isinstance(statement, ast.ClassDef):
            header = ast.ClassDef(name=statement.name, bases=statement.bases,
                                  keywords=statement.keywords, body=[],
                                  decorator_list=statement.decorator_list, type_params=[],
                                  lineno=statement.lineno)
            runs += [stretch, _tokens(header, bound, statement.lineno)]
            stretch = []
            runs += _units(_live(statement.body, read), bound, read)
        elif isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            runs += [stretch, _tokens(statement, bound, statement.lineno)]
            stretch = []
        else:
            stretch += _tokens(statement, bound, statement.lineno)
    return [*runs, stretch]


def _tokens(node: ast.AST, bound: set[str], line: int) -> list[Token]:
    out: list[Token] = []
    _emit(node, bound, line, out)
    return out


def _name(name: str, bound: set[str]) -> str:
    return "V" if name in bound else name


def _emit(node: ast.AST, bound: set[str], line: int, out: list[Token]) -> None:
    line = getattr(node, "lineno", line) or line
    if isinstance(node, ast.expr_context):
        return
    if isinstance(node, ast.Name):
        out.append(Token(_name(node.id, bound), line))
        return
    if isinstance(node, ast.Constant):
        value = node.value
        text = "S" if isinstance(value, str) else "B" if isinstance(value, bytes) else repr(value)
        out.append(Token(text, line))
        return
    out.append(Token(type(node).__name__, line))
    if isinstance(node, ast.Attribute):
        _emit(node.value, bound, line, out)
        out.append(Token("." + node.attr, line))
        return
    if isinstance(node, ast.arg | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        out.append(Token("V", line))       # the name it binds
    elif isinstance(node, ast.keyword):
        out.append(Token(f"{node.arg}=", line))
    for name, value in ast.iter_fields(node):
        if name in _SKIPPED_FIELDS or name in ("arg", "name", "attr", "id"):
            continue
        if isinstance(value, ast.AST):
            _emit(value, bound, line, out)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, ast.AST):
                    _emit(item, bound, line, out)
                elif isinstance(item, str):           # global/nonlocal names
                    out.append(Token(_name(item, bound), line))


def _lexical_tokens(source: str) -> list[Token]:
    """Tokens of code that does not parse: Python's tokens where :mod:`tokenize` can read
    them, else words and symbols; names ``V`` except after a dot, comments left out."""
    out: list[Token] = []
    skipped = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
               tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER}
    previous = ""
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type in skipped:
                continue
            text = token.string
            if token.type == tokenize.NAME and previous != "." and text.isidentifier() \
                    and not _is_keyword(text):
                text = "V"
            elif token.type == tokenize.STRING:
                text = "S"
            out.append(Token(text, token.start[0]))
            previous = token.string
        return out
    except (tokenize.TokenError, SyntaxError, IndentationError):
        out = []
    for number, line in enumerate(source.splitlines(), start=1):
        previous = ""
        for word in _WORD.findall(line.split("#", 1)[0]):
            text = "V" if word.isidentifier() and previous != "." and not _is_keyword(word) \
                else word
            out.append(Token(text, number))
            previous = word
    return out


def _is_keyword(word: str) -> bool:
    return keyword.iskeyword(word)
