"""The learner's workspace: a copy of ``course/`` that the course never overwrites.

``course/`` is generated and tracked by git, so learners work in a copy (default
``<repo>/workspace/``, git-ignored; ``AAG_WORKSPACE`` moves it). Syncing adds chapters and files
that are new in ``course/`` and never overwrites or deletes a file in the workspace. When the course
ships a new release of a file the learner already has, the release is written next to it as
``<stem>.updated<suffix>`` (``vector_add.updated.ipynb``). For a notebook, the learner's answers
come with it (:func:`carry_answers`): each solution cell of the new release (code the learner
writes, a written answer) holds the learner's version of that cell, matched by cell id (else by
nbgrader's grade id), and cells the learner added come after the same cell as before. The
learner's own notebook is never touched: they open the updated one and go on.

A manifest, ``.aag-manifest.json``, remembers for each file the hash of the course copy it was made
from and of the release last offered, so an update is offered once and a file the learner deleted
on purpose after merging is not offered again. Deleting a notebook and syncing again gives a fresh
copy: the way to start an exercise over.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

WORKSPACE_ENV = "AAG_WORKSPACE"
MANIFEST = ".aag-manifest.json"
UPDATED_TAG = ".updated"
# Editor and Jupyter droppings in course/ are not part of a release.
_SKIP_DIRS = {".ipynb_checkpoints", "__pycache__", ".git"}


def repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


def default_course_dir() -> Path:
    return repo_root() / "course"


def default_workspace() -> Path:
    env = os.environ.get(WORKSPACE_ENV)
    return Path(env).expanduser() if env else repo_root() / "workspace"


def updated_name(path: Path) -> Path:
    """``ch01/vector_add.ipynb`` -> ``ch01/vector_add.updated.ipynb``."""
    return path.with_name(f"{path.stem}{UPDATED_TAG}{path.suffix}")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _course_files(course: Path) -> list[Path]:
    """Course files relative to ``course``, skipping hidden files and Jupyter/Python caches."""
    found = []
    for dirpath, dirnames, filenames in os.walk(course):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if name.startswith(".") or name.endswith(".pyc"):
                continue
            found.append((Path(dirpath) / name).relative_to(course))
    return found


def _copy_new(src: Path, dest: Path) -> None:
    """Copy ``src`` to ``dest``, which must not exist: mode "xb" makes never-overwrite a guarantee."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with open(src, "rb") as fin, open(dest, "xb") as fout:
        while block := fin.read(1 << 20):
            fout.write(block)


@dataclass
class SyncResult:
    workspace: Path
    added_chapters: list[str] = field(default_factory=list)
    added_files: list[str] = field(default_factory=list)   # relative paths, new or restored
    updates: list[str] = field(default_factory=list)       # .updated files written this time
    pending: list[str] = field(default_factory=list)       # .updated files still waiting
    blocked: list[str] = field(default_factory=list)       # releases not written: see messages
    messages: list[str] = field(default_factory=list)

    def summary(self) -> str:
        parts = []
        if self.added_chapters:
            n = len(self.added_chapters)
            parts.append(f"added {n} chapter{'s' * (n != 1)}")
        other = len(self.added_files) - sum(
            1 for f in self.added_files if Path(f).parts[0] in self.added_chapters)
        if other:
            parts.append(f"added {other} file{'s' * (other != 1)}")
        waiting = len(self.updates) + len(self.pending)
        if waiting:
            parts.append(f"{waiting} update{'s' * (waiting != 1)} available")
        return f"workspace {self.workspace}: " + (", ".join(parts) if parts else "up to date")


def _cell_ids(path: Path) -> list[str] | None:
    """The cell ids of a notebook file (None if it is not one)."""
    try:
        nb = json.loads(path.read_text())
        return [c["id"] for c in nb["cells"] if c.get("id")]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _grade_id(cell: dict) -> str | None:
    return (cell.get("metadata") or {}).get("nbgrader", {}).get("grade_id")


def carry_answers(release: Path, mine: Path, released_ids: list[str] | None) -> bytes | None:
    """The new ``release`` of a notebook with the learner's work from ``mine`` carried in: every
    solution cell of the release (nbgrader ``solution``) holds the learner's version, outputs
    included, matched by cell id, else by grade id; and the cells the learner added (ids in
    neither release: ``released_ids`` are those of the release their copy was made from; None,
    unknown, carries none) follow the same cell as in their notebook. None if either file is not
    a notebook."""
    try:
        new, old = json.loads(release.read_text()), json.loads(mine.read_text())
        new_cells, old_cells = new["cells"], old["cells"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    by_id = {c["id"]: c for c in old_cells if c.get("id")}
    by_grade = {_grade_id(c): c for c in old_cells if _grade_id(c)}
    for cell in new_cells:
        if not (cell.get("metadata") or {}).get("nbgrader", {}).get("solution"):
            continue
        theirs = by_id.get(cell.get("id")) or by_grade.get(_grade_id(cell))
        if theirs is None or theirs.get("cell_type") != cell.get("cell_type"):
            continue
        cell["source"] = theirs.get("source", "")
        if cell.get("cell_type") == "code":
            cell["outputs"] = theirs.get("outputs", [])
            cell["execution_count"] = theirs.get("execution_count")
    new_ids = {c.get("id") for c in new_cells}
    known = set(released_ids or []) | new_ids
    after: dict = {}          # the id of the cell before (None: the top) -> cells the learner added
    anchor = None
    for cell in old_cells:
        if released_ids is not None and cell.get("id") not in known:
            after.setdefault(anchor, []).append(cell)
        elif cell.get("id") in new_ids:
            anchor = cell.get("id")
    merged = list(after.get(None, []))
    for cell in new_cells:
        merged.append(cell)
        merged += after.get(cell.get("id"), [])
    new["cells"] = merged
    return (json.dumps(new, indent=1, ensure_ascii=False) + "\n").encode()


def _write_release(src: Path, dest: Path, upd: Path, entry: dict) -> None:
    """Write the new release of ``dest`` as ``upd`` (which must not exist), a notebook with the
    learner's answers carried in; the manifest entry remembers what was written."""
    merged = carry_answers(src, dest, entry.get("cells")) if src.suffix == ".ipynb" else None
    if merged is None:
        _copy_new(src, upd)
    else:
        with open(upd, "xb") as f:
            f.write(merged)
    entry["written"] = _sha256(upd)


def _load_manifest(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {"version": 1, "files": {}}
    except (OSError, ValueError):
        # A damaged manifest only costs re-offering updates; it must not stop the learner working.
        return {"version": 1, "files": {}}
    data.setdefault("files", {})
    return data


def _save_manifest(path: Path, data: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)


def sync(course: Path | None = None, workspace: Path | None = None,
         echo: Callable[[str], None] | None = print) -> SyncResult:
    """Bring ``workspace`` up to date with ``course`` without touching any learner file."""
    course = Path(course) if course is not None else default_course_dir()
    workspace = Path(workspace) if workspace is not None else default_workspace()
    result = SyncResult(workspace=workspace)
    if not course.is_dir():
        raise FileNotFoundError(f"no course directory at {course}")
    workspace.mkdir(parents=True, exist_ok=True)
    manifest_path = workspace / MANIFEST
    manifest = _load_manifest(manifest_path)
    entries: dict[str, dict] = manifest["files"]

    for rel in _course_files(course):
        key = rel.as_posix()
        src, dest = course / rel, workspace / rel
        new_hash = _sha256(src)
        entry = entries.get(key)

        if not dest.exists():
            chapter = rel.parts[0]
            if len(rel.parts) > 1 and not (workspace / chapter).exists() \
                    and chapter not in result.added_chapters:
                result.added_chapters.append(chapter)
            _copy_new(src, dest)
            entries[key] = {"sha256": new_hash}
            if rel.suffix == ".ipynb" and (ids := _cell_ids(src)) is not None:
                entries[key]["cells"] = ids              # to tell the learner's cells later
            result.added_files.append(key)
            continue

        if entry is None:
            # A file the learner made with a course file's name, or a workspace older than the
            # manifest: what they have is the base from now on, unless it differs from the course.
            entry = entries[key] = {"sha256": _sha256(dest)}
        if new_hash == entry["sha256"]:
            continue                                       # the course did not change
        if _sha256(dest) == new_hash:
            entries[key] = {"sha256": new_hash}            # already identical: nothing to merge
            continue

        upd = updated_name(dest)
        upd_key = updated_name(rel).as_posix()
        if entry.get("offered") == new_hash:
            if upd.exists():
                result.pending.append(upd_key)
            continue                                       # offered before; merged or dismissed
        if upd.exists():
            # Ours to replace only if it is exactly what we wrote last time.
            if entry.get("offered") is None or \
                    _sha256(upd) != entry.get("written", entry["offered"]):
                result.blocked.append(upd_key)
                result.messages.append(
                    f"{key}: a new release is available but {upd_key} exists and was edited; "
                    f"rename it and run again to get the release")
                continue
            upd.unlink()
        _write_release(src, dest, upd, entry)
        entry["offered"] = new_hash
        result.updates.append(upd_key)
        carried = upd.suffix == ".ipynb" and entry["written"] != new_hash
        result.messages.append(f"{key}: the course changed; the new release is in {upd_key}"
                               + (", with your answers carried into it" if carried else ""))

    _save_manifest(manifest_path, manifest)
    if echo is not None:
        for line in result.messages:
            echo(f"  {line}")
        echo(result.summary())
    return result
