"""``aag build``: regenerate course/ and solutions/ from the chapter sources.

Each chapter has one hand-edited source, ``source/chNN_topic/chNN_topic.py`` (jupytext percent
format, nbgrader metadata in the cell headers). A build

1. converts it to ``source/chNN_topic/chNN_topic.ipynb`` (git-ignored; nbgrader only reads
   notebooks), deterministically: stable cell ids, no jupytext metadata, a fixed kernelspec;
2. runs ``nbgrader generate_assignment`` (learner notebooks, into ``course/``) and
   ``generate_solution`` (into ``solutions/``) with the repository's nbgrader_config.py.

nbgrader runs in a staging copy with a throw-away gradebook, so building never touches the
instructor's gradebook.db and leaves nothing behind but the outputs. Building twice gives the same
bytes; ``--check`` rebuilds into a temporary directory and lists what differs from the committed
course/ and solutions/ (CI runs it: those directories are never edited by hand).

    python -m autograder.build [--check] [CHAPTER ...]
"""

from __future__ import annotations

import argparse
import filecmp
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Iterable, Sequence

# The cell metadata a built notebook keeps. Everything else in a cell's header (jupytext's own
# bookkeeping such as lines_to_next_cell) would make the notebook depend on how the source was
# typed, not on what it says.
_CELL_METADATA_KEPT = ("nbgrader", "tags", "editable", "deletable", "slideshow", "jupyter")

# A fixed kernel: the build must not depend on the kernels installed where it runs.
_KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
_LANGUAGE_INFO = {"name": "python", "pygments_lexer": "ipython3"}

# nbformat's rule for cell ids (nbformat 4.5).
_VALID_ID = re.compile(r"^[a-zA-Z0-9-_]{1,64}$")
_CHAPTER = re.compile(r"^ch\d\d[a-z]?_[a-z0-9_]+$")

OUTPUT_DIRS = ("course", "solutions")


class BuildError(Exception):
    """A source that cannot be built; the message says which and why."""


# --- discovery ------------------------------------------------------------------------------------

def chapters_in(root: Path) -> list[str]:
    """Chapters with a text source: source/<name>/<name>.py, sorted."""
    source = Path(root) / "source"
    if not source.is_dir():
        return []
    return sorted(
        d.name for d in source.iterdir()
        if d.is_dir() and _CHAPTER.match(d.name) and (d / f"{d.name}.py").is_file()
    )


# --- step 1: text source -> notebook --------------------------------------------------------------

def source_to_notebook(text: str, name: str = "<source>"):
    """Parse a jupytext percent source into a deterministic nbformat 4.5 notebook."""
    import jupytext
    import nbformat

    nb = jupytext.reads(text, fmt="py:percent")
    cells = []
    used: set[str] = set()
    for index, cell in enumerate(nb.cells):
        metadata = {k: cell.metadata[k] for k in _CELL_METADATA_KEPT if k in cell.metadata}
        # The grade_id names the cell for nbgrader and for the people reading diffs of course/;
        # other cells are numbered, which is stable as long as the source is.
        grade_id = metadata.get("nbgrader", {}).get("grade_id")
        cell_id = grade_id or f"cell-{index}"
        if not _VALID_ID.match(cell_id):
            raise BuildError(f"{name}: cell {index}: grade_id {cell_id!r} is not a valid cell id "
                             "(letters, digits, '-' and '_', at most 64)")
        if cell_id in used:
            raise BuildError(f"{name}: cell {index}: id {cell_id!r} is used twice")
        used.add(cell_id)
        if cell.cell_type == "code":
            new = nbformat.v4.new_code_cell(cell.source, metadata=metadata, id=cell_id)
        elif cell.cell_type == "markdown":
            new = nbformat.v4.new_markdown_cell(cell.source, metadata=metadata, id=cell_id)
        else:
            new = nbformat.v4.new_raw_cell(cell.source, metadata=metadata, id=cell_id)
        cells.append(new)
    out = nbformat.v4.new_notebook(
        cells=cells,
        metadata={"kernelspec": dict(_KERNELSPEC), "language_info": dict(_LANGUAGE_INFO)},
    )
    out.nbformat, out.nbformat_minor = 4, 5
    nbformat.validate(out)
    return out


def write_notebook(nb, path: Path) -> None:
    import nbformat

    # nbformat.writes sorts keys and indents by one: the same notebook gives the same bytes.
    text = nbformat.writes(nb, version=4)
    if not text.endswith("\n"):
        text += "\n"
    path.write_text(text, encoding="utf-8")


def convert_chapter(root: Path, chapter: str) -> Path:
    src = Path(root) / "source" / chapter / f"{chapter}.py"
    nb = source_to_notebook(src.read_text(encoding="utf-8"), name=str(src))
    dest = src.with_suffix(".ipynb")
    write_notebook(nb, dest)
    return dest


# --- step 2: nbgrader -----------------------------------------------------------------------------

def ensure_tools_on_path() -> None:
    """Put this interpreter's scripts directory on PATH.

    nbgrader's gradebook shells out to the ``alembic`` command each time it opens a database, so a
    build (or grading) from an interpreter whose environment is not activated fails without it.
    """
    scripts = str(Path(sys.executable).parent)
    if shutil.which("alembic") is None:
        os.environ["PATH"] = scripts + os.pathsep + os.environ.get("PATH", "")


def _run_nbgrader(stage: Path, chapters: Sequence[str]) -> None:
    """generate_assignment then generate_solution for each chapter, in ``stage``, in-process."""
    ensure_tools_on_path()
    from traitlets.config.loader import PyFileConfigLoader
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    config = PyFileConfigLoader("nbgrader_config.py", path=str(stage)).load_config()
    config.CourseDirectory.root = str(stage)
    # A throw-away gradebook: generate_assignment records the assignment in one, and
    # generate_solution insists the assignment exists there.
    config.CourseDirectory.db_url = "sqlite:///" + str(stage / "build-gradebook.db")
    # Building needs no exchange; pointing it into the stage keeps nbgrader from complaining
    # about (or creating) the system-wide one.
    config.Exchange.root = str(stage / "exchange")
    coursedir = CourseDirectory(config=config)
    api = NbGraderAPI(coursedir, config=config)
    for chapter in chapters:
        for step in ("generate_assignment", "generate_solution"):
            if step == "generate_assignment":
                result = api.generate_assignment(chapter, force=True, create=True)
            else:
                result = _generate_solution(api, coursedir, chapter)
            if not result["success"]:
                raise BuildError(f"nbgrader {step} {chapter} failed:\n"
                                 f"{result.get('log', '')}\n{result.get('error', '')}")


def _generate_solution(api, coursedir, chapter: str) -> dict:
    # NbGraderAPI has no generate_solution; run the converter as it runs generate_assignment.
    from nbgrader.apps.api import capture_log
    from nbgrader.converters import GenerateSolution
    from nbgrader.utils import temp_attrs

    with temp_attrs(coursedir, assignment_id=chapter):
        app = GenerateSolution(coursedir=coursedir, parent=api)
        app.force = True
        return capture_log(app)


def build_into(root: Path, stage: Path, chapters: Sequence[str]) -> None:
    """Build ``chapters`` of ``root`` into ``stage``/course and ``stage``/solutions."""
    root, stage = Path(root), Path(stage)
    shutil.copy2(root / "nbgrader_config.py", stage / "nbgrader_config.py")
    for chapter in chapters:
        shutil.copytree(root / "source" / chapter, stage / "source" / chapter,
                        ignore=shutil.ignore_patterns("*.ipynb", "__pycache__", ".ipynb_checkpoints"))
        convert_chapter(stage, chapter)
    _run_nbgrader(stage, chapters)


# --- comparing and installing ---------------------------------------------------------------------

def _files(base: Path) -> set[str]:
    if not base.is_dir():
        return set()
    return {p.relative_to(base).as_posix() for p in base.rglob("*") if p.is_file()}


def differences(expected: Path, actual: Path, chapters: Iterable[str]) -> list[str]:
    """Paths (relative to the repo) under course/ and solutions/ that differ, are missing or extra."""
    out = []
    for top in OUTPUT_DIRS:
        for chapter in chapters:
            a, b = Path(expected) / top / chapter, Path(actual) / top / chapter
            for rel in sorted(_files(a) | _files(b)):
                fa, fb = a / rel, b / rel
                if not (fa.is_file() and fb.is_file() and filecmp.cmp(fa, fb, shallow=False)):
                    out.append(f"{top}/{chapter}/{rel}")
    return out


def _stale_chapter_dirs(root: Path, chapters: Sequence[str]) -> list[str]:
    """Chapter directories in course/ or solutions/ whose source is gone."""
    keep = set(chapters)
    found = set()
    for top in OUTPUT_DIRS:
        d = Path(root) / top
        if d.is_dir():
            found |= {p.name for p in d.iterdir() if p.is_dir() and _CHAPTER.match(p.name)}
    return sorted(found - keep)


def build(root, chapters: Sequence[str] | None = None, check: bool = False) -> list[str]:
    """Build (or with ``check``, verify) ``chapters`` (default: all) of the course at ``root``.

    Returns the differing paths in check mode (empty when up to date), else the chapters built.
    """
    root = Path(root).resolve()
    every = chapters_in(root)
    wanted = list(chapters) if chapters else every
    unknown = [c for c in wanted if c not in every]
    if unknown:
        raise BuildError(f"no source for {', '.join(unknown)} (looked for source/<name>/<name>.py)")
    # Outputs of a chapter whose source was removed are stale too, when building everything.
    stale = _stale_chapter_dirs(root, every) if not chapters else []

    with tempfile.TemporaryDirectory(prefix="aag-build-") as tmp:
        stage = Path(tmp)
        build_into(root, stage, wanted)
        if check:
            return differences(stage, root, wanted) + [
                f"{top}/{c}/" for c in stale for top in OUTPUT_DIRS if (root / top / c).exists()
            ]
        for chapter in wanted:
            # The intermediate notebook, for instructors who run nbgrader or formgrader by hand.
            shutil.copy2(stage / "source" / chapter / f"{chapter}.ipynb",
                         root / "source" / chapter / f"{chapter}.ipynb")
            for top in OUTPUT_DIRS:
                dest = root / top / chapter
                if dest.exists():
                    shutil.rmtree(dest)
                shutil.copytree(stage / top / chapter, dest)
        for chapter in stale:
            for top in OUTPUT_DIRS:
                shutil.rmtree(root / top / chapter, ignore_errors=True)
    return wanted


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="aag build", description="Regenerate course/ and solutions/ from source/.")
    parser.add_argument("chapters", nargs="*", metavar="CHAPTER",
                        help="chapter directories to build, e.g. ch02_data_parallel (default: all)")
    parser.add_argument("--check", action="store_true",
                        help="build into a temporary directory and fail if course/ or solutions/ differ")
    parser.add_argument("--root", default=None,
                        help="the course repository (default: the one this package lives in)")
    args = parser.parse_args(argv)
    root = Path(args.root) if args.root else Path(__file__).resolve().parents[2]

    try:
        result = build(root, args.chapters or None, check=args.check)
    except BuildError as e:
        print(f"aag build: {e}", file=sys.stderr)
        return 2
    if args.check:
        if result:
            print("These generated files differ from what the sources build "
                  "(stale? run `aag build`):", file=sys.stderr)
            for path in result:
                print(f"  {path}", file=sys.stderr)
            return 1
        print("course/ and solutions/ are up to date")
        return 0
    print("built " + (", ".join(result) if result else "nothing (no chapters in source/)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
