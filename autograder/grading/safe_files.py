"""Files the grader touches in folders that learner code could write: never through a link.

Learner code runs in the sandbox, but the grader itself (nbgrader's process, the judge) has the
instructor's rights, and it reads and writes folders the learner's code wrote first:

* the autograded folder, where nbgrader's sandboxed kernel ran the notebook: the judge copies it
  for its student processes, writes ``judge.json`` into it, and nbgrader then writes the graded
  notebook there, chmods every file in it and copies its files into the learner's feedback;
* the judge's private working folder, where the student process writes its outputs (``.npz``).

A learner's kernel can leave anything in those folders: a symbolic link to ``.aag/secret``,
``gradebook.db``, ``source/`` or ``/dev/zero``, a FIFO (whose reader blocks forever), a hard link,
a folder named ``judge.json``, 40 links to one large library, a 2 MB ``.npz`` that inflates to
gigabytes. Followed with the instructor's rights, a link reads the course's secrets into the
learner's process (and from there into feedback), or writes over the gradebook.

What this module does instead:

* :func:`copy_tree` copies a folder walking it through directory file descriptors, never following
  a link (links are skipped, and listed), never opening a FIFO, socket or device, opening every file
  with ``O_NOFOLLOW`` and checking with ``fstat`` that what was opened is the regular file that was
  listed; it stops at a number of files and a number of bytes (:class:`CopyLimitExceeded`), and
  never copies its own destination into itself.
* :func:`clean_folder` removes, once no learner code runs any more in a folder, every link,
  special file and hard-linked file in it (and anything that is not a plain file at the names the
  grader is about to write), so nbgrader's later writes, chmods and feedback copies touch only the
  learner's own plain files.
* :func:`write_file` writes through a fresh temporary file made with ``O_EXCL | O_NOFOLLOW`` and
  renamed over the name: whatever was at the name (a link included) is replaced, never followed.
* :func:`read_file` reads a plain file there the same way (a link or a FIFO reads as nothing).
* :func:`load_npz` reads a student process's ``.npz`` without following a link and refuses it
  before decompressing anything when its members would inflate past a cap; :func:`save_npz`
  writes the judge's inputs for it the same way as :func:`write_file`.
"""

from __future__ import annotations

import fnmatch
import math
import os
import secrets
import shutil
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

DEFAULT_MAX_FILES = 2000          # files and folders copied from one submission folder
DEFAULT_MAX_BYTES = 256 << 20     # bytes copied from one submission folder
MAX_DEPTH = 64                    # folders nested deeper are not copied (each level holds an fd)
CHUNK = 1 << 20
MAX_NPZ_MEMBERS = 64

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: should a FIFO be swapped in between the listing and the open, the open returns at
# once (and fstat then shows it is no regular file) instead of waiting forever for a writer.
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class CopyLimitExceeded(Exception):
    """The folder holds more files or bytes than the grader copies; the message says which."""


class UnsafeFile(Exception):
    """A file the grader was to read is a link, not a regular file, or would inflate too far."""


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words (for notes to the instructor)."""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "a special file"


def _size_text(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB" if n >= 2**20 else f"{n:,} bytes"


@dataclass
class CopyReport:
    files: int = 0                      # files and folders created in the copy
    bytes: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)   # (relative path, why)

    def notes(self, limit: int = 10) -> list[str]:
        """One line for the instructor per kind of thing left out (a few names each)."""
        by_why: dict[str, list[str]] = {}
        for rel, why in self.skipped:
            by_why.setdefault(why, []).append(rel)
        return [f"not copied for the judge, {why}: {', '.join(names[:limit])}"
                + (f" and {len(names) - limit} more" if len(names) > limit else "")
                for why, names in by_why.items()]


def copy_tree(src: Path, dst: Path, *, max_files: int = DEFAULT_MAX_FILES,
              max_bytes: int = DEFAULT_MAX_BYTES, skip: tuple[str, ...] = ("*.ipynb",)
              ) -> CopyReport:
    """Copy the folder ``src`` to ``dst`` (which must not exist yet) without following links.

    Links (to the course's secret, the gradebook, ``/dev/zero``, a large library...), FIFOs,
    sockets and devices are skipped and listed in the report; names matching ``skip`` are left
    out silently. Raises :class:`CopyLimitExceeded` once more than ``max_files`` files and folders
    or more than ``max_bytes`` bytes would be copied (``dst`` is then left partly filled: the
    caller removes it). A folder that is ``dst`` or holds it (``aag grade`` of a notebook in the
    folder the temporary copy is made in) is not copied into itself.
    """
    src, dst = Path(src), Path(dst)
    report = CopyReport()
    os.mkdir(dst, 0o700)
    # (device, inode) of the destination and of every folder above it: never descended into.
    avoid = set()
    for folder in [dst, *dst.resolve().parents]:
        st = os.stat(folder)
        avoid.add((st.st_dev, st.st_ino))
    sfd = os.open(src, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)   # the root may be a link
    dfd = os.open(dst, _DIR_FLAGS)
    try:
        _copy_dir(sfd, dfd, "", 0, report, avoid, max_files, max_bytes, skip)
    finally:
        os.close(sfd)
        os.close(dfd)
    return report


def _copy_dir(sfd: int, dfd: int, rel: str, depth: int, report: CopyReport, avoid: set,
              max_files: int, max_bytes: int, skip: tuple[str, ...]) -> None:
    with os.scandir(sfd) as it:
        names = sorted(entry.name for entry in it)
    for name in names:
        path = f"{rel}{name}"
        if any(fnmatch.fnmatch(name, pattern) for pattern in skip):
            continue
        try:
            st = os.stat(name, dir_fd=sfd, follow_symlinks=False)
        except FileNotFoundError:
            continue
        mode = st.st_mode
        if stat.S_ISDIR(mode):
            if (st.st_dev, st.st_ino) in avoid:
                report.skipped.append((path + "/", "the grader's own copy"))
                continue
            if depth >= MAX_DEPTH:
                report.skipped.append((path + "/", f"folders nested deeper than {MAX_DEPTH}"))
                continue
            _count(report, max_files, 0, max_bytes)
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=sfd)
            except OSError as exc:   # ELOOP: a link swapped in since the listing; EACCES
                report.skipped.append((path + "/", f"unreadable ({exc.strerror})"))
                continue
            try:
                opened = os.fstat(child)
                if (opened.st_dev, opened.st_ino) != (st.st_dev, st.st_ino):
                    report.skipped.append((path + "/", "changed while copying"))
                    continue
                os.mkdir(name, 0o755, dir_fd=dfd)
                out = os.open(name, _DIR_FLAGS, dir_fd=dfd)
                try:
                    _copy_dir(child, out, path + "/", depth + 1, report, avoid, max_files,
                              max_bytes, skip)
                finally:
                    os.close(out)
            finally:
                os.close(child)
        elif stat.S_ISREG(mode):
            _count(report, max_files, st.st_size, max_bytes)
            _copy_file(sfd, dfd, name, path, st, report, max_bytes)
        else:
            why = kind_of(mode) + (" (not followed)" if stat.S_ISLNK(mode) else "")
            report.skipped.append((path, why))


def _count(report: CopyReport, max_files: int, size: int, max_bytes: int) -> None:
    if report.files + 1 > max_files:
        raise CopyLimitExceeded(f"more than {max_files:,} files")
    if report.bytes + size > max_bytes:
        raise CopyLimitExceeded(f"more than {_size_text(max_bytes)} of files")
    report.files += 1


def _copy_file(sfd: int, dfd: int, name: str, path: str, listed: os.stat_result,
               report: CopyReport, max_bytes: int) -> None:
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=sfd)
    except OSError as exc:   # ELOOP: replaced by a link since the listing; EACCES
        report.files -= 1
        report.skipped.append((path, f"unreadable ({exc.strerror})"))
        return
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != (listed.st_dev, listed.st_ino):
            report.files -= 1
            report.skipped.append((path, "changed while copying"))
            return
        os.set_blocking(fd, True)
        out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                      (st.st_mode & 0o777) | 0o600, dir_fd=dfd)
        try:
            while True:
                data = os.read(fd, CHUNK)
                if not data:
                    break
                # The size was counted when listed; a file that grew since counts as it reads.
                report.bytes += len(data)
                if report.bytes > max_bytes:
                    raise CopyLimitExceeded(f"more than {_size_text(max_bytes)} of files")
                view = memoryview(data)
                while view:
                    view = view[os.write(out, view):]
        finally:
            os.close(out)
    finally:
        os.close(fd)


# ---- cleaning a folder learner code wrote -------------------------------------------------------

def clean_folder(folder: Path, free: tuple[str, ...] = ()) -> list[str]:
    """Remove from ``folder`` (recursively) every symbolic link, FIFO, socket, device and
    hard-linked file (``st_nlink > 1``), and, at each name in ``free`` (relative to ``folder``,
    the files the grader writes next), anything that is not a plain file. Returns one line per
    removal, for the instructor.

    Call it only when no learner code runs any more with write access to ``folder`` (after
    nbgrader's Execute has shut its kernel down): it is a check of a folder at rest.

    Why: after the judge, nbgrader writes the graded notebook into this folder with a plain
    ``open(..., "w")`` (a link named like the notebook would write over its target, e.g. the
    gradebook), chmods every file in it (through links: a link to any file the grader's user
    owns changes that file's mode) and copies every file but notebooks into the learner's
    feedback (through links: the course's secret would be handed to the learner).
    """
    removed: list[str] = []
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        _clean_dir(fd, "", 0, removed)
        for name in free:
            parent, _, base = name.rpartition("/")
            try:
                pfd = os.open(parent, _DIR_FLAGS, dir_fd=fd) if parent else os.dup(fd)
            except OSError:
                continue
            try:
                st = os.stat(base, dir_fd=pfd, follow_symlinks=False)
            except FileNotFoundError:
                os.close(pfd)
                continue
            try:
                if stat.S_ISDIR(st.st_mode):
                    shutil.rmtree(base, dir_fd=pfd)
                    removed.append(f"{name}/: a folder where the grader writes a file (removed)")
                elif not stat.S_ISREG(st.st_mode):
                    os.unlink(base, dir_fd=pfd)
                    removed.append(f"{name}: {kind_of(st.st_mode)} (removed)")
            finally:
                os.close(pfd)
    finally:
        os.close(fd)
    return removed


def _clean_dir(fd: int, rel: str, depth: int, removed: list[str]) -> None:
    mode = stat.S_IMODE(os.fstat(fd).st_mode)
    if mode & 0o700 != 0o700:      # a read-only folder (chmod 555): removing in it needs u+w
        os.fchmod(fd, mode | 0o700)
    with os.scandir(fd) as it:
        names = sorted(entry.name for entry in it)
    for name in names:
        path = f"{rel}{name}"
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            continue
        mode = st.st_mode
        if stat.S_ISDIR(mode):
            if depth >= MAX_DEPTH:
                shutil.rmtree(name, dir_fd=fd)
                removed.append(f"{path}/: folders nested deeper than {MAX_DEPTH} (removed)")
                continue
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except PermissionError:
                # A folder the learner made unreadable (chmod 000; as the grader's own user when
                # it is not root): give it back to its owner (it is a folder, no link: nothing
                # runs in here any more to swap it), then look inside.
                os.chmod(name, 0o700, dir_fd=fd)
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            try:
                _clean_dir(child, path + "/", depth + 1, removed)
            finally:
                os.close(child)
        elif stat.S_ISREG(mode):
            # A hard link shares its file with another name, here or elsewhere; once this name
            # goes, a second name in this folder is a plain file again and stays.
            if st.st_nlink > 1:
                os.unlink(name, dir_fd=fd)
                removed.append(f"{path}: a file with {st.st_nlink} hard links (removed)")
        else:
            target = ""
            if stat.S_ISLNK(mode):
                try:
                    target = f" to {os.readlink(name, dir_fd=fd)}"
                except OSError:
                    pass
            os.unlink(name, dir_fd=fd)
            removed.append(f"{path}: {kind_of(mode)}{target} (removed)")


def summarize(removed: list[str], names: int = 5) -> list[str]:
    """:func:`clean_folder`'s lines grouped by what was removed (40 links to one library are one
    line, naming a few of them)."""
    groups: dict[str, list[str]] = {}
    for line in removed:
        path, _, what = line.partition(": ")
        groups.setdefault(what, []).append(path)
    return [", ".join(paths[:names]) + (f" and {len(paths) - names} more" if len(paths) > names
                                        else "") + f": {what}" for what, paths in groups.items()]


def write_file(folder: Path, name: str, data: bytes, mode: int = 0o644) -> None:
    """Write ``folder/name`` without following a link: the data goes into a new file made with
    ``O_EXCL | O_NOFOLLOW`` (a name nobody could have prepared), renamed over ``name``. Whatever
    was at ``name`` (a link to the gradebook included) is replaced, never written through."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        tmp = f".{name}.{secrets.token_hex(8)}.tmp"
        out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                      mode, dir_fd=fd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(out, view):]
        finally:
            os.close(out)
        try:
            os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except OSError:
            os.unlink(tmp, dir_fd=fd)
            raise
    finally:
        os.close(fd)


def read_file(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes | None:
    """The bytes of ``path`` if it is a regular file, read without following a link at its name
    and without waiting on a FIFO; None if it is missing, a link or anything but a plain file.
    Raises :class:`UnsafeFile` past ``max_bytes``. For files the grader reads where learner
    code could have written (the autograded folder)."""
    try:
        fd = os.open(path, _FILE_FLAGS)
    except OSError:          # missing, or ELOOP: a symbolic link
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        if st.st_size > max_bytes:
            raise UnsafeFile(f"{Path(path).name} is larger ({_size_text(st.st_size)}) than the "
                             f"grader reads ({_size_text(max_bytes)})")
        os.set_blocking(fd, True)
        return f.read()


def save_npz(folder: Path, name: str, arrays: dict) -> None:
    """``np.savez`` into a folder a student process can write (the judge's inputs for it), with
    :func:`write_file`: a link the student process left at ``name`` (to the gradebook, or to
    ``/etc/passwd`` when grading as root) is replaced, never written through."""
    import io

    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    write_file(folder, name, buffer.getvalue())


# ---- reading a student process's outputs --------------------------------------------------------

def npz_bytes(outputs: dict, factor: int = 4, slack: int = 1 << 20) -> int:
    """The cap for a returned ``.npz``: ``factor`` times the bytes of the outputs the spec expects
    (``{name: (shape, dtype)}``; a learner's dtype may be wider than the spec's, which the judge
    then reports as a wrong dtype) plus ``slack``."""
    total = 0
    for shape, dtype in outputs.values():
        count = math.prod(shape) if isinstance(shape, tuple) else int(shape)
        total += count * np.dtype(dtype).itemsize
    return factor * total + slack


def load_npz(folder: Path, name: str, max_bytes: int, max_file: int) -> dict[str, np.ndarray]:
    """The arrays of ``folder/name``, an ``.npz`` a student process wrote.

    The student process can write ``folder``: ``name`` may have been replaced by a link (to a file
    of the instructor's, or to ``/dev/zero``), a FIFO, or a small archive whose members inflate to
    gigabytes (NumPy allocates an array from its header's shape before reading it). So: the name
    must be a plain name in ``folder``, opened with ``O_NOFOLLOW`` and checked to be a regular
    file of at most ``max_file`` bytes; every member's declared uncompressed size and its ``.npy``
    header's shape × item size are summed and checked against ``max_bytes`` before any array is
    read. Raises :class:`UnsafeFile` with a plain reason.
    """
    if not name or "/" in name or name in (".", ".."):
        raise UnsafeFile("the student process named a file outside its folder")
    dfd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=dfd)
        except FileNotFoundError:
            raise UnsafeFile("the student process named an output file that does not exist") from None
        except OSError:   # ELOOP: a symbolic link
            raise UnsafeFile("the outputs file is a link, not a file the student process wrote") from None
    finally:
        os.close(dfd)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise UnsafeFile(f"the outputs file is {kind_of(st.st_mode)}, not a file")
    with os.fdopen(fd, "rb") as f:
        if st.st_size > max_file:
            raise UnsafeFile(f"the outputs came back larger ({_size_text(st.st_size)}) than the "
                             f"grader accepts ({_size_text(max_file)})")
        os.set_blocking(fd, True)
        try:
            with zipfile.ZipFile(f) as zf:
                infos = zf.infolist()
                if len(infos) > MAX_NPZ_MEMBERS:
                    raise UnsafeFile(f"the outputs file holds {len(infos)} arrays")
                declared = sum(i.file_size for i in infos)
                if declared > max_bytes + 4096 * len(infos):
                    raise UnsafeFile(_too_big(declared, max_bytes))
                total = 0
                for info in infos:
                    if not info.filename.endswith(".npy"):
                        raise UnsafeFile("the outputs file holds something that is not an array")
                    with zf.open(info) as member:
                        total += _npy_bytes(member)
                if total > max_bytes:
                    raise UnsafeFile(_too_big(total, max_bytes))
                out = {}
                for info in infos:
                    # zipfile stops a member at its declared size (and fails its CRC check if
                    # the data runs on), so nothing inflates past what was checked above.
                    with zf.open(info) as member:
                        out[info.filename[:-4]] = np.lib.format.read_array(member,
                                                                           allow_pickle=False)
                return out
        except UnsafeFile:
            raise
        except (zipfile.BadZipFile, ValueError, OSError, EOFError) as exc:
            raise UnsafeFile(f"the outputs file is not a readable array archive ({exc})") from None


def _npy_bytes(member) -> int:
    fmt = np.lib.format
    version = fmt.read_magic(member)
    if version == (1, 0):
        shape, _, dtype = fmt.read_array_header_1_0(member)
    elif version == (2, 0):
        shape, _, dtype = fmt.read_array_header_2_0(member)
    else:
        raise UnsafeFile(f"the outputs file holds an array of format {version}")
    if dtype.hasobject:
        raise UnsafeFile("the outputs file holds Python objects, not numbers")
    if any(d < 0 for d in shape):
        raise UnsafeFile("the outputs file holds an array of negative shape")
    return math.prod(shape) * dtype.itemsize


def _too_big(n: int, cap: int) -> str:
    return (f"the outputs came back as {_size_text(n)} of arrays, more than the grader accepts "
            f"for this exercise ({_size_text(cap)}): outputs far larger than the expected ones "
            "are refused")
