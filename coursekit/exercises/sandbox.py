"""The box a submission's kernel runs in: its own folder, its own user when the grader is root, and limits.

The grader starts each kernel through this module instead of directly::

    python -m coursekit.exercises.sandbox --memory-mb 6144 [--uid 64001 --home DIR --own FILE ...] -- \
        python -m ipykernel_launcher -f {connection_file}

Before it becomes the kernel (``exec``), it

* limits the address space (``RLIMIT_AS``: a memory bomb gets ``MemoryError`` or kills only this process),
  the size of any file it writes and core dumps;
* sends its standard input, output and error to ``/dev/null`` (the grader's own output cannot be written to);
* when ``--uid`` is given (the grader runs as root), hands ``--home`` and the ``--own`` files (the connection
  file) to that user, limits its number of processes (a fork bomb stops there) and drops every privilege:
  the kernel can then read the course's installed files but not the reference notebook, the other
  submissions, the gradebook or the grader's memory, and :func:`kill_user` ends everything it left behind.

Without ``--uid`` (a grader that is not root) the kernel runs as the grader's own user: the limits hold, but a
hostile submission could reach the grader's files; docs/INSTRUCTORS.md says when that matters.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import signal
import stat
import sys
import time
from pathlib import Path

import coursekit

__all__ = ["SANDBOX_UID_BASE", "kill_user", "main", "sandbox_command", "sandbox_uid"]

SANDBOX_UID_BASE = 100000  # the sandbox users' ids start here (no passwd entry is needed)
MAX_SLOTS = 64             # jobs of one grader run


def sandbox_uid(slot: int = 0, pid: int | None = None) -> int:
    """The user id of job slot ``slot`` of the grader process ``pid`` (default: this one): two graders running at
    once never share a user, so that one's clean-up (:func:`kill_user`) cannot end the other's kernels."""
    if not isinstance(slot, int) or isinstance(slot, bool) or not 0 <= slot < MAX_SLOTS:
        raise ValueError(f"slot must be an int in [0, {MAX_SLOTS}), got {slot!r}")
    pid = os.getpid() if pid is None else pid
    return SANDBOX_UID_BASE + (pid % 30000) * MAX_SLOTS + slot
MAX_PROCESSES = 512        # processes and threads of one sandbox user (torch's threads count)
MAX_FILE_BYTES = 2**30     # the largest file a kernel may write


def sandbox_command(kernel_argv: list[str], *, memory_mb: int, uid: int | None = None, home: Path | None = None,
                    own: list[str] = ()) -> list[str]:
    """The argv that starts ``kernel_argv`` inside the box (see the module docstring)."""
    if not isinstance(kernel_argv, list) or not kernel_argv or not all(isinstance(a, str) for a in kernel_argv):
        raise TypeError(f"kernel_argv must be a non-empty list of str, got {kernel_argv!r:.80}")
    if not isinstance(memory_mb, int) or isinstance(memory_mb, bool) or memory_mb < 256:
        raise ValueError(f"memory_mb must be an int >= 256 (megabytes), got {memory_mb!r}")
    argv = [sys.executable, "-m", "coursekit.exercises.sandbox", "--memory-mb", str(memory_mb)]
    if uid is not None:
        if not isinstance(uid, int) or isinstance(uid, bool) or uid <= 0:
            raise ValueError(f"uid must be a positive int (not root), got {uid!r}")
        argv += ["--uid", str(uid)]
        if home is not None:
            argv += ["--home", str(home)]
        for path in own:
            argv += ["--own", str(path)]
        for path in needed_paths():
            argv += ["--expose", path]
    return argv + ["--"] + kernel_argv


def needed_paths() -> list[str]:
    """What a kernel must be able to read: the interpreter, the environment, the course and its data mirror."""
    paths = [sys.base_prefix, sys.prefix, str(Path(coursekit.__file__).resolve().parents[1])]
    paths += [p for p in sys.path if p and Path(p).is_dir()]
    if os.environ.get("COURSEKIT_DATA_MIRROR"):
        paths.append(os.environ["COURSEKIT_DATA_MIRROR"])
    return list(dict.fromkeys(paths))


def kill_user(uid: int, grace: float = 0.0) -> int:
    """SIGKILL every process of ``uid`` (a sandbox user: never the grader's own); returns how many were found."""
    if not isinstance(uid, int) or isinstance(uid, bool) or uid <= 0 or uid == os.geteuid():
        raise ValueError(f"uid must be a sandbox user's id (positive, not the grader's), got {uid!r}")
    if grace:
        time.sleep(grace)
    found = 0
    for _ in range(5):                      # a fork bomb may spawn while we kill: sweep until none is left
        pids = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if entry.stat().st_uid == uid:
                    pids.append(int(entry.name))
            except OSError:
                continue
        if not pids:
            break
        found += len(pids)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.05)
    return found


_CLONE_NEWNS, _MS_BIND, _MS_REC, _MS_PRIVATE, _MNT_DETACH = 0x00020000, 4096, 16384, 1 << 18, 2


def _libc_call(name: str, *args) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if getattr(libc, name)(*args) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{name}{args!r:.120}: {os.strerror(err)}")


def _closed_ancestor(path: Path) -> tuple[Path, Path] | None:
    """``(directory, its child on the way to path)`` for the first directory others may not pass through."""
    parts = path.resolve().parts
    for i in range(1, len(parts)):
        here = Path(*parts[:i])
        if not os.stat(here).st_mode & stat.S_IXOTH:
            return here, Path(*parts[:i + 1])
    return None


def _expose(paths: list[str], stage: Path) -> None:
    """Let the sandbox user reach ``paths`` (the interpreter, the course) when one of their parent folders is
    closed to others (``/root`` holding pyenv or conda): in a mount namespace of the kernel's own, the closed
    folder is covered by an empty one that others may pass through, and only the needed child is mounted back."""
    closed: dict[Path, set[Path]] = {}
    for p in paths:
        found = _closed_ancestor(Path(p)) if Path(p).exists() else None
        if found:
            closed.setdefault(found[0], set()).add(found[1])
    if not closed:
        return
    _libc_call("unshare", _CLONE_NEWNS)
    _libc_call("mount", b"none", b"/", None, _MS_REC | _MS_PRIVATE, None)
    for n, (folder, children) in enumerate(sorted(closed.items())):
        staged = stage / f".stage{n}"
        staged.mkdir(mode=0o700, exist_ok=True)
        _libc_call("mount", str(folder).encode(), str(staged).encode(), None, _MS_BIND | _MS_REC, None)
        _libc_call("mount", b"tmpfs", str(folder).encode(), b"tmpfs", 0, b"mode=0711")
        for child in sorted(children):
            target = folder / child.name
            source = staged / child.name
            if source.is_dir():
                target.mkdir()
            else:
                target.touch()
            _libc_call("mount", str(source).encode(), str(target).encode(), None, _MS_BIND | _MS_REC, None)
        _libc_call("umount2", str(staged).encode(), _MNT_DETACH)


def _limit(kind: int, value: int) -> None:
    soft, hard = resource.getrlimit(kind)
    new = value if hard == resource.RLIM_INFINITY else min(value, hard)
    resource.setrlimit(kind, (new, new))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m coursekit.exercises.sandbox")
    parser.add_argument("--memory-mb", type=int, required=True)
    parser.add_argument("--uid", type=int)
    parser.add_argument("--home")
    parser.add_argument("--own", action="append", default=[])
    parser.add_argument("--expose", action="append", default=[])
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no kernel command after --")
    _limit(resource.RLIMIT_AS, args.memory_mb * 2**20)
    _limit(resource.RLIMIT_FSIZE, MAX_FILE_BYTES)
    _limit(resource.RLIMIT_CORE, 0)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    if args.uid is not None:
        for path in ([args.home] if args.home else []) + args.own:
            os.chown(path, args.uid, args.uid)
        if args.home:
            _expose(args.expose, Path(args.home))
        _limit(resource.RLIMIT_NPROC, MAX_PROCESSES)
        os.setgroups([])
        os.setgid(args.uid)
        os.setuid(args.uid)
    os.execvp(command[0], command)


if __name__ == "__main__":
    main()
