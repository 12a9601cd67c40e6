"""Visual aids for the notebooks: pictures a learner can poke before (and after) writing a kernel.

Each aid renders a root element with the CSS classes ``aag-visual aag-visual-<name>`` and falls
back to HTML and text where no widget frontend runs. Modules load on first use.
"""

import importlib as _importlib

_LAZY = {
    "grid_explorer": "explorer", "grid_picture": "explorer", "GridLayout": "explorer",
    "access_picture": "access", "record_accesses": "access", "AccessPicture": "access",
    "AccessPictureError": "access",
    "show_code": "code", "compile_kernel": "code", "compile_kernels": "code", "KernelCode": "code",
    "speedup_steps": "plots", "time_vs_size": "plots", "FigureView": "plots",
}


def __getattr__(name):
    if name in _LAZY:
        return getattr(_importlib.import_module(f".{_LAZY[name]}", __name__), name)
    try:                                    # a module of the package: ag.visual.explorer
        return _importlib.import_module(f".{name}", __name__)
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_LAZY))
