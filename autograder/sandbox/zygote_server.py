"""The kernel zygote: runs inside a bubblewrap sandbox and forks one warm kernel per request.

Starting a sandboxed kernel costs an interpreter, IPython and ``import torch`` (seconds of
CPU) for every notebook graded. The zygote pays that once: it imports them, then waits on
a listening socket it inherited (:mod:`autograder.sandbox.zygote` starts it) and, for each request,
forks a child that becomes the notebook's kernel. The child, before any student code runs,

* kills whatever an earlier kernel left in the sandbox (one notebook at a time);
* gets a mount and an IPC namespace of its own with a fresh, bounded ``/tmp`` (nothing an
  earlier notebook wrote there, an IPython startup file say, is seen by the next one);
* sets the resource limits and the number of compute threads (the kernel's share of the
  cores), drops every capability, with no way back (``no_new_privs``);
* then starts ``ipykernel`` with the request's connection file, its standard streams
  those of the requesting process (passed over the socket).

Who the kernel runs as depends on who the grader is (:func:`confine`):

* a **root** grader starts the zygote as root of its sandbox (no user namespace): each
  kernel is handed ``/submission`` and becomes an unprivileged user of its own (uid
  100000 + the grading process's pid), so no two sandboxes share a user;
* **any other** grader starts the zygote as itself, in bubblewrap's user namespace, with no
  capability at all: each kernel makes a user namespace of its own, nested in the
  zygote's, where for a moment it has the capabilities to mount its ``/tmp``; it keeps the
  grader's uid (the only one such a grader has), then drops them all. It cannot reach the
  zygote: the zygote is PID 1 of the sandbox (a signal it has no handler for is dropped)
  and not dumpable (its memory and descriptors are out of reach of anything without a
  capability in the zygote's namespace); ``RLIMIT_NPROC`` counts the processes of the
  kernel's own namespace.

The zygote replies with the kernel's pid, and with its exit status when it ends; when the
requesting process goes away first, the kernel and everything of its user is killed.

This file runs as ``python -c`` inside the sandbox (the repository is not in its view),
after the source of :mod:`autograder.sandbox.inside`, so it uses only the standard library
and that module.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import re
import resource
import selectors
import signal
import socket
import sys
import sysconfig

try:                # imported by the grader (its tests)
    from .inside import SANDBOX_FOLDER, SANDBOX_SOCKETS, kill_until_gone, process_uids
except ImportError:  # run inside the sandbox, as bubblewrap.zygote_argv starts it
    from inside import SANDBOX_FOLDER, SANDBOX_SOCKETS, kill_until_gone, process_uids

PRELOAD = ("torch", "numpy", "IPython", "ipykernel.kernelapp", "ipykernel.ipkernel",
           "ipykernel.debugger", "sqlite3", "pdb")

_CLONE_NEWNS = 0x00020000
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWUSER = 0x10000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_REMOUNT, _MS_BIND = 0x1, 0x2, 0x4, 0x20, 0x1000
_MS_REC, _MS_PRIVATE = 0x4000, 0x40000
_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE, _PR_CAPBSET_DROP, _PR_SET_NO_NEW_PRIVS = 1, 4, 24, 38
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_CAPABILITY_VERSION_3 = 0x20080522
_LIMITS = {"memory_bytes": resource.RLIMIT_AS, "cpu_seconds": resource.RLIMIT_CPU,
           "file_bytes": resource.RLIMIT_FSIZE, "open_files": resource.RLIMIT_NOFILE,
           "processes": resource.RLIMIT_NPROC}

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def kill_all(uid: int | None = None) -> None:
    """SIGKILL every process of the sandbox but this one (of real uid ``uid`` only, if
    given), in one sweep: this process, PID 1 of the sandbox, reaps them."""
    kill_until_gone(lambda pid: uid is None or process_uids(pid)[:1] == (uid,), patience=0)


def _chown_tree(top: str, uid: int) -> None:
    os.lchown(top, uid, uid)
    for folder, folders, files in os.walk(top):
        for name in folders + files:
            os.lchown(os.path.join(folder, name), uid, uid)


def _mounts_under(top: str) -> list[str]:
    """The outermost mount points strictly below ``top`` (the Python environment lives
    in ``/tmp`` when the repository was cloned there, say)."""
    points = []
    with open("/proc/self/mountinfo") as mountinfo:
        for line in mountinfo:
            point = re.sub(r"\\([0-7]{3})", lambda code: chr(int(code[1], 8)), line.split()[4])
            if point.startswith(top + "/"):
                points.append(point)
    points.sort(key=len)
    return [point for index, point in enumerate(points)
            if not any(point.startswith(outer + "/") for outer in points[:index])]


def _fresh_tmp(options: bytes) -> None:
    """Mount a new, empty ``/tmp``, keeping what was mounted below the old one, read-only
    (each is reached through a descriptor opened before the old ``/tmp`` was covered)."""
    kept = {point: os.open(point, os.O_PATH | os.O_DIRECTORY) for point in _mounts_under("/tmp")}
    _check(_libc.mount(b"tmpfs", b"/tmp", b"tmpfs", _MS_NOSUID | _MS_NODEV, options), "mount /tmp")
    for point, descriptor in kept.items():
        os.makedirs(point, mode=0o755)
        for folder in _parents_below(point, "/tmp"):
            os.chmod(folder, 0o755)
        source = f"/proc/self/fd/{descriptor}".encode()
        _check(_libc.mount(source, point.encode(), None, _MS_BIND | _MS_REC, None), "bind " + point)
        _check(_libc.mount(None, point.encode(), None,
                           _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _MS_NOSUID | _MS_NODEV, None),
               "read-only " + point)
        os.close(descriptor)


def _parents_below(path: str, top: str) -> list[str]:
    parents = []
    while (path := os.path.dirname(path)) != top:
        parents.append(path)
    return parents


def privileged() -> bool:
    """Whether this zygote is root of its sandbox (a root grader's), or runs as its
    grader, without a capability, in bubblewrap's user namespace (anyone else's)."""
    return os.geteuid() == 0


def kernel_uid(request: dict) -> int:
    """The uid a request's kernel runs as, as this zygote sees it: the request's own user
    under a root grader; otherwise the only one there is, the grader's."""
    return int(request["uid"]) if privileged() else os.getuid()


def _own_user_namespace() -> None:
    """Move this process into a user namespace of its own (with mount and IPC namespaces
    it owns), mapping its uid and gid to themselves: it has every capability there, for
    now, and none over anything outside it."""
    uid, gid = os.getuid(), os.getgid()
    _check(_libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWIPC), "unshare")
    for name, line in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                       ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as file:
            file.write(line)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def _empty_bounding_set() -> None:
    """Drop every capability from the bounding set: nothing can give one back (needs
    ``CAP_SETPCAP``; without it, nothing is dropped and :func:`_confined` says so)."""
    cap = 0
    while _libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) == 0:
        cap += 1


def _drop_capabilities() -> None:
    """Empty the bounding set, the ambient set, and the effective, permitted and
    inheritable sets."""
    _empty_bounding_set()
    _libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    nothing = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(_CapHeader(_CAPABILITY_VERSION_3, 0)), nothing), "capset")


def _confined(uid: int) -> bool:
    """Whether this process is what a kernel must be before student code runs: not root,
    not able to become root, without a capability in any set."""
    with open("/proc/self/status") as status:
        fields = dict(line.split(":", 1) for line in status if ":" in line)
    return (os.getuid() == uid and os.geteuid() == uid and uid != 0
            and fields["NoNewPrivs"].strip() == "1"
            and all(int(fields[name], 16) == 0
                    for name in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")))


def confine(request: dict) -> None:
    """Confine this (forked) process as the request's kernel: namespaces, ``/tmp``, its
    folders, limits, and no privilege left; exits with 70 if any of it did not hold."""
    uid = kernel_uid(request)
    if privileged():
        _check(_libc.unshare(_CLONE_NEWNS | _CLONE_NEWIPC), "unshare")
    else:
        # The zygote is not dumpable, nor, after fork, is this process: a process that is
        # not cannot write its own uid map (its /proc files belong to no one mapped here).
        _check(_libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0), "dumpable")
        _own_user_namespace()
    _check(_libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None), "mount --make-rprivate")
    gid = uid if privileged() else os.getgid()
    _fresh_tmp(f"size={int(request['tmp_bytes'])},mode=0700,uid={uid},gid={gid}".encode())
    connection = dict(request["connection"])
    # The grader's sockets folder is mounted at SANDBOX_SOCKETS: same sockets, other path.
    connection["ip"] = os.path.join(SANDBOX_SOCKETS, os.path.basename(connection["ip"]))
    with open("/tmp/kernel.json", "w") as file:
        json.dump(connection, file)
    if privileged():        # the folders become the kernel's (otherwise they are already)
        os.chown("/tmp/kernel.json", uid, uid)
        _chown_tree(SANDBOX_FOLDER, uid)
        os.chown(SANDBOX_SOCKETS, uid, uid)

    threads = max(1, int(request.get("threads", 1)))
    os.environ.update({"HOME": "/tmp", "MPLCONFIGDIR": "/tmp", "MPLBACKEND": "Agg",
                       "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
                       request["marker_variable"]: request["marker"]})
    if "torch" in sys.modules:      # imported before the variables were set: tell it too
        sys.modules["torch"].set_num_threads(threads)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for name, limit in _LIMITS.items():
        value = int(request["limits"][name])
        resource.setrlimit(limit, (value, value))
    if privileged():
        _empty_bounding_set()          # while this process may (CAP_SETPCAP)
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)     # as uid ≠ 0, permitted and effective capabilities go
    _drop_capabilities()
    _check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    _check(_libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "pdeathsig")
    if not _confined(uid):
        os._exit(70)


def become_kernel(request: dict, streams: list[int]) -> None:
    """In the forked child: confine this process, then run the kernel. Never returns."""
    os.setsid()
    signal.set_wakeup_fd(-1)        # the zygote's: its number is about to be reused
    for number in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM):
        signal.signal(number, signal.SIG_DFL)
    for target, stream in enumerate(streams[:3]):
        os.dup2(stream, target)
    os.closerange(3, 65536)
    confine(request)
    if request.get("check"):      # the grader asks whether kernels can be confined here
        try:                      # ... and still import what they have not imported yet
            os.listdir(sysconfig.get_paths()["purelib"])
        except OSError as error:
            print(f"kernel zygote: the Python environment is out of the kernel's view: {error}",
                  file=sys.stderr, flush=True)
            os._exit(71)
        os._exit(0)
    os.chdir(SANDBOX_FOLDER)
    sys.argv = ["ipykernel_launcher", "-f", "/tmp/kernel.json"]
    from ipykernel import kernelapp

    kernelapp.launch_new_instance()


def spawn(request: dict, streams: list[int]) -> int:
    """Fork the request's kernel; the pid."""
    kill_all()          # one notebook at a time: nothing of an earlier one survives
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            become_kernel(request, streams)
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 1
        except BaseException as error:       # noqa: BLE001 - reported, then the child ends
            print(f"kernel zygote: {type(error).__name__}: {error}", file=sys.stderr)
            code = 71
        finally:
            sys.stderr.flush()
            os._exit(code)
    for stream in streams:
        os.close(stream)
    return pid


def _send(connection: socket.socket, message: dict) -> None:
    try:
        connection.send(json.dumps(message).encode())
    except OSError:
        pass


def serve(listener: socket.socket, lifeline: int | None = None) -> None:
    """Answer requests until the sandbox is torn down, or until ``lifeline`` (the read
    end of a pipe whose other end only the grader holds) reaches its end: the grader is
    gone, however it ended, and so is everything this zygote started."""
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    if lifeline is not None:
        selector.register(lifeline, selectors.EVENT_READ)
    # A kernel's end wakes the loop at once (its requester waits for the news), rather
    # than at the next look round.
    woken, wake = socket.socketpair()
    for end in (woken, wake):
        end.setblocking(False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake.fileno())
    selector.register(woken, selectors.EVENT_READ)
    kernels: dict[int, tuple[socket.socket, int]] = {}    # pid → (requester, uid)
    requesters: dict[socket.socket, int] = {}              # requester → kernel pid
    while True:
        for key, _ in selector.select(timeout=0.5):
            if key.fileobj is woken:
                with contextlib.suppress(BlockingIOError):
                    while woken.recv(512):
                        pass
                continue
            if key.fileobj is lifeline:
                kill_all()
                os._exit(0)
            if key.fileobj is listener:
                connection, _ = listener.accept()
                selector.register(connection, selectors.EVENT_READ)
                continue
            connection = key.fileobj
            try:
                data, streams, _, _ = socket.recv_fds(connection, 1 << 20, 3)
            except OSError:
                data, streams = b"", []
            pid = requesters.pop(connection, None)
            if not data:                 # the requester is gone: so is its kernel
                if pid is not None:
                    kill_all(kernels.pop(pid)[1])
                selector.unregister(connection)
                connection.close()
                continue
            request = json.loads(data)
            pid = spawn(request, streams)
            kernels[pid] = (connection, kernel_uid(request))
            requesters[connection] = pid
            _send(connection, {"pid": pid})
        while True:                       # reap: kernels, and orphans adopted by PID 1
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid in kernels:
                connection, uid = kernels.pop(pid)
                requesters.pop(connection, None)
                kill_all(uid)
                _send(connection, {"exit": os.waitstatus_to_exitcode(status)})


def main() -> None:
    listener = socket.socket(fileno=int(sys.argv[1]))
    lifeline = int(sys.argv[2]) if len(sys.argv) > 2 else None
    # Out of the kernels' reach where they share the zygote's uid: its memory and
    # descriptors (not dumpable), and Python's SIGINT handler (PID 1 of the sandbox, the
    # zygote gets only the signals it handles).
    _check(_libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0), "not dumpable")
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    for module in PRELOAD:
        try:
            __import__(module)
        except ImportError:
            pass
    serve(listener, lifeline)


if __name__ == "__main__":
    main()
