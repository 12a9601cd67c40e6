"""Shared pytest setup: backend markers, so GPU tests skip with a reason on CPU-only machines."""

import os

import pytest

import autograder as ag


def pytest_collection_modifyitems(config, items):
    if ag.backend.name == "cuda":
        return
    reason = f"needs an NVIDIA GPU; this run uses {ag.backend.label} ({ag.backend.reason})"
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def repo_root():
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
