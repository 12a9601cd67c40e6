"""Packaging: one dependency list (pyproject.toml) mirrored exactly by environment.yml, the pins the
course depends on, and the entry points the README promises."""

import os
import re
import subprocess
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def parse_environment_yml(text):
    """The subset of YAML environment.yml uses: top-level keys, `- item` lists, one nested
    `- pip:` list. Hand-parsed so the test needs no PyYAML; anything else is an error, so the
    file cannot grow syntax this parser would misread."""
    data, key, in_pip = {}, None, False
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split(" #")[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        item = line.strip()
        if indent == 0:
            key, sep, value = item.partition(":")
            assert sep, f"environment.yml:{n}: expected 'key:' got {raw!r}"
            data[key] = value.strip() or []
            in_pip = False
        elif item == "- pip:":
            data[key].append({"pip": []})
            in_pip = True
        elif item.startswith("- "):
            value = item[2:].strip()
            if in_pip and indent > 2:
                data[key][-1]["pip"].append(value)
            else:
                data[key].append(value)
                in_pip = False
        else:
            raise AssertionError(f"environment.yml:{n}: unsupported YAML {raw!r}")
    return data


@pytest.fixture(scope="module")
def environment():
    return parse_environment_yml((ROOT / "environment.yml").read_text())


def requirements(lines):
    return {canonicalize_name(r.name): r for r in map(Requirement, lines)}


def test_parser_agrees_with_pyyaml_when_available():
    yaml = pytest.importorskip("yaml")
    text = (ROOT / "environment.yml").read_text()
    assert parse_environment_yml(text) == yaml.safe_load(text)


def test_environment_yml_mirrors_pyproject_exactly(pyproject, environment):
    project = pyproject["project"]
    wanted = requirements(project["dependencies"] + project["optional-dependencies"]["dev"])
    conda, pip = [], []
    for dep in environment["dependencies"]:
        if isinstance(dep, dict):
            pip += [p for p in dep["pip"] if p != "-e ."]
        elif dep != "pip" and not dep.startswith("python"):
            conda.append(dep)
    have = requirements(conda + pip)
    assert sorted(have) == sorted(wanted), "the same packages in both files"
    for name, req in wanted.items():
        assert have[name].specifier == req.specifier, \
            f"{name}: pyproject {req.specifier} but environment.yml {have[name].specifier}"
    # numba-cuda is pip's (its wheels carry the CUDA bindings), and so is the course itself.
    pip_section = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
    assert "-e ." in pip_section
    assert "numba-cuda" in requirements([p for p in pip_section if p != "-e ."])
    assert "conda-forge" in environment["channels"]


def test_python_version_agrees(pyproject, environment):
    python = next(d for d in environment["dependencies"]
                  if isinstance(d, str) and re.match(r"python\b", d) and d != "pip")
    assert SpecifierSet(python[len("python"):]) == SpecifierSet(pyproject["project"]["requires-python"])
    assert SpecifierSet(pyproject["project"]["requires-python"]) == SpecifierSet(">=3.11")


def all_requirements(project):
    lines = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        lines += extra
    return [Requirement(line) for line in lines]


def test_numpy_is_capped_below_2_5(pyproject):
    # numpy 2.5 removed np.row_stack, which every numba-cuda kernel compile uses.
    spec = requirements(pyproject["project"]["dependencies"])["numpy"].specifier
    assert "2.4.9" in spec and "2.5.0" not in spec and "2.5.0rc1" not in spec and "3.0" not in spec


def test_nbgrader_at_least_0_9_6(pyproject):
    # 0.9.4's lab extension broke on JupyterLab >= 4.3.
    spec = requirements(pyproject["project"]["dependencies"])["nbgrader"].specifier
    assert "0.9.6" in spec and "0.9.5" not in spec and "0.9.4" not in spec


def test_numba_cuda_is_0_30_everywhere(pyproject):
    reqs = [r for r in all_requirements(pyproject["project"]) if r.name == "numba-cuda"]
    assert len(reqs) == 3, "dependencies, cuda12 and cuda13 extras"
    for r in reqs:
        assert "0.30.0" in r.specifier and "0.30.4" in r.specifier
        assert "0.29.9" not in r.specifier and "0.31.0" not in r.specifier
    assert {tuple(sorted(r.extras)) for r in reqs} == {(), ("cu12",), ("cu13",)}


def test_hip_extra_caps_numba_below_0_64(pyproject):
    hip = requirements(pyproject["project"]["optional-dependencies"]["hip"])
    assert "0.63.1" in hip["numba"].specifier and "0.64.0" not in hip["numba"].specifier


def test_distribution_name_is_not_autograder(pyproject):
    # `autograder` on PyPI is someone else's project: `pip install autograder` must never be us.
    assert canonicalize_name(pyproject["project"]["name"]) != "autograder"


def test_aag_entry_point_exists(pyproject):
    target = pyproject["project"]["scripts"]["aag"]
    module, func = target.split(":")
    assert target == "autograder.tools.cli:main"
    import importlib
    assert callable(getattr(importlib.import_module(module), func))


def test_bootstrap_scripts_are_executable_and_parse():
    for script, shell in (("aag", "sh"), (".ci/run", "bash")):
        path = ROOT / script
        assert os.access(path, os.X_OK), f"{script} must be executable"
        subprocess.run([shell, "-n", str(path)], check=True)
    assert (ROOT / "aag").read_text().startswith("#!/bin/sh\n")
    assert "./aag test" in (ROOT / ".ci" / "run").read_text()


def test_readme_gives_the_two_commands():
    readme = (ROOT / "README.md").read_text()
    assert "./aag lab" in readme and "./aag test" in readme
    assert "Linux" in readme and "macOS" in readme and "WSL2" in readme
