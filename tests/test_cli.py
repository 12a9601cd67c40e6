"""autograder.cli: `aag test` fails loudly, passthrough commands reach their modules untouched."""

import subprocess
import sys
import types

import pytest

from autograder import cli


@pytest.fixture
def pytest_call(monkeypatch):
    """Replace the pytest child process: record its command line, return a chosen exit code."""
    calls = []

    def fake(rc):
        def call(cmd, cwd=None):
            calls.append(cmd)
            return rc
        monkeypatch.setattr(subprocess, "call", call)
        return calls
    return fake


@pytest.fixture
def fake_build(monkeypatch):
    """A stand-in autograder.build whose `--check` answers what the test asks."""
    module = types.ModuleType("autograder.tools.build")
    module.seen = []

    def main(argv):
        module.seen.append(argv)
        return module.rc
    module.main, module.rc = main, 0
    monkeypatch.setitem(sys.modules, "autograder.tools.build", module)
    monkeypatch.setattr(cli.importlib.util, "find_spec", lambda name: object())
    return module


def test_test_runs_pytest_on_every_core(fake_build, pytest_call):
    calls = pytest_call(0)
    assert cli.main(["test"]) == 0
    assert fake_build.seen == [["--check"]]
    cmd = calls[0]
    assert cmd[:3] == [sys.executable, "-m", "pytest"]
    assert cmd[3:7] == ["-n", str(cli.workers()), "--dist", "worksteal"] and cmd[-1] == "tests"
    assert cli.workers() == cli._cores() + 1


def test_test_passes_arguments_and_respects_caller_choices(fake_build, pytest_call):
    calls = pytest_call(0)
    cli.main(["test", "-n", "1", "-k", "vector", "tests/test_cli.py"])
    assert calls[0][3:] == ["-n", "1", "-k", "vector", "tests/test_cli.py"]


def test_no_tests_collected_is_a_failure(fake_build, pytest_call, capsys):
    pytest_call(5)
    assert cli.main(["test"]) == 5
    assert "collected no tests" in capsys.readouterr().err


def test_pytest_failure_is_a_failure(fake_build, pytest_call):
    pytest_call(1)
    assert cli.main(["test"]) == 1


def test_stale_course_fails_even_when_tests_pass(fake_build, pytest_call, capsys):
    pytest_call(0)
    fake_build.rc = 1
    assert cli.main(["test"]) == 1
    assert "aag build" in capsys.readouterr().err


def test_missing_build_module_skips_the_check(monkeypatch, pytest_call, capsys):
    pytest_call(0)
    real = cli.importlib.util.find_spec
    monkeypatch.setattr(cli.importlib.util, "find_spec",
                        lambda name: None if name == "autograder.tools.build" else real(name))
    assert cli.main(["test"]) == 0
    assert "skipping the staleness check" in capsys.readouterr().out


def test_build_passes_arguments_through(fake_build):
    assert cli.main(["build", "ch02", "--check"]) == 0
    assert fake_build.seen == [["ch02", "--check"]]


def test_delegate_turns_systemexit_into_a_return_code(fake_build):
    def main(argv):
        raise SystemExit(2)
    fake_build.main = main
    assert cli.main(["build", "--bogus"]) == 2


@pytest.mark.parametrize("command, func", [("bench", "main"), ("calibrate", "calibrate")])
def test_bench_and_calibrate_reach_the_bench_module(monkeypatch, command, func):
    module = types.ModuleType("autograder.tools.bench")
    seen = []
    setattr(module, func, lambda argv: seen.append(argv) or 0)
    monkeypatch.setitem(sys.modules, "autograder.tools.bench", module)
    monkeypatch.setattr(cli.importlib.util, "find_spec", lambda name: object())
    assert cli.main([command, "--out", "x"]) == 0
    assert seen == [["--out", "x"]]


def test_doctor_json_via_cli(capsys):
    import json
    assert cli.main(["doctor", "--json", "--no-ptx"]) in (0, 1)
    assert "backend" in json.loads(capsys.readouterr().out)
