"""The code a kernel compiles to: PTX and SASS, with the lines that matter pointed out.

``show_code(kernel, *example_args)`` (or ``show_code(kernel, "float32, float32[::1]")``) compiles
the learner's kernel for a real NVIDIA GPU and shows three views: the Python source, the PTX that
Numba's compiler (NVVM) produced, and the SASS machine code the GPU runs. Shared-memory loads and
stores, barriers (``cuda.syncthreads()``), warp shuffles, local memory (spills) and atomics are
highlighted and explained, each Python line says what it turned into, and a summary line gives the
compiler's own resource figures: registers per thread, shared memory per block, local memory.

No GPU is needed: compiling for ``cc=(9, 0)`` (the course's H200) needs only NVIDIA's compiler
libraries from the CUDA toolkit wheels (the ``cuda13`` extra) and ``nvdisasm`` for SASS. The
compile runs in a child process with the simulator off, because in CPU mode this process's
``numba.cuda`` is the simulator; the kernel's source, its globals and the device functions it
calls are rebuilt there. Without the toolkit the child still runs Numba's real type inference, so
a kernel that would not compile for a GPU is caught (see :mod:`autograder.explain`), and the view
says exactly what to install.
"""

from __future__ import annotations

import html
import inspect
import json
import os
import pickle
import re
import subprocess
import sys
import tempfile
import types as _pytypes
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from autograder.core.explain import Explanation, explain, explain_text
from autograder.core.spec import skipped_while_graded

DEFAULT_CC = (9, 0)   # the course's reference GPU (H200) when there is no GPU to ask

# What to install, by platform. The cuda13 extra carries NVVM, NVRTC and nvJitLink (numba-cuda's
# [cu13] extra) plus nvdisasm; sizes are the Linux x86-64 wheels of CUDA 13.5.
INSTALL_TOOLKIT = (
    "The code viewer compiles your kernel with NVIDIA's compiler, which comes in the CUDA toolkit "
    "wheels (no GPU needed). They are not installed here. Install them with\n"
    "    AAG_EXTRAS=cuda13 ./aag lab\n"
    "(about 190 MB to download; on a machine with a CUDA 12 driver use AAG_EXTRAS=cuda12), or "
    "into an existing environment with\n"
    "    pip install 'numba-cuda[cu13]>=0.30,<0.31' 'cuda-toolkit[nvdisasm]==13.*'\n"
    "then restart the notebook's kernel.")
INSTALL_TOOLKIT_MACOS = (
    "The code viewer compiles your kernel with NVIDIA's compiler, and NVIDIA ships no CUDA "
    "toolkit for macOS. Run the course on Linux (or WSL2 on Windows) with AAG_EXTRAS=cuda13 "
    "./aag lab to see PTX and SASS.")
INSTALL_NVDISASM = (
    "SASS needs NVIDIA's disassembler (nvdisasm, about 5 MB): pip install "
    "'nvidia-cuda-nvdisasm>=13.2,<14' (it comes with AAG_EXTRAS=cuda13), then restart the "
    "notebook's kernel.")

# name: (label, colour, explanation, PTX opcodes (prefixes of the dotted opcode), SASS opcodes)
CATEGORIES: dict[str, tuple[str, str, str, tuple[str, ...], tuple[str, ...]]] = {
    "shared_load": ("shared-memory load", "#b7e4c7",
                    "reads the block's shared memory, the fast on-chip scratchpad all threads of a "
                    "block share (cuda.shared.array)",
                    ("ld.shared", "ldmatrix"), ("LDS", "LDSM")),
    "shared_store": ("shared-memory store", "#95d5b2",
                     "writes the block's shared memory", ("st.shared",), ("STS",)),
    "barrier": ("barrier", "#ffd166",
                "cuda.syncthreads(): every thread of the block waits here until all of them "
                "have arrived", ("bar.sync", "bar.arrive", "bar.red", "barrier"), ("BAR",)),
    "shuffle": ("warp shuffle", "#caa8f5",
                "a thread reads a register of another thread of its warp, without going through "
                "memory (cuda.shfl_*_sync)", ("shfl",), ("SHFL",)),
    "local": ("local memory", "#ff8fa3",
              "per-thread data that does not live in registers: a cuda.local.array indexed at run "
              "time, or registers the compiler spilled. It sits in the GPU's DRAM behind the "
              "caches, hundreds of cycles away", ("ld.local", "st.local"), ("LDL", "STL")),
    "atomic": ("atomic", "#f4a261",
               "an atomic read-modify-write (cuda.atomic.*): threads updating the same address "
               "take turns", ("atom", "red"), ("ATOM", "ATOMS", "ATOMG", "RED", "REDG")),
    "double": ("float64 arithmetic", "#ffc9a8",
               "double precision: on most GPUs many times slower than float32 (1/64 of the rate "
               "on consumer cards). A Python float such as 0.5 is float64; write float32(0.5)",
               (), ()),     # matched by _is_double_*: an operation on .f64 / a D* instruction
    "fma": ("fused multiply-add", "#e2f0cb",
            "a·b + c in one instruction, rounded once: what the compiler makes of a * x + y",
            ("fma",), ("FFMA", "HFMA2")),
    "global_load": ("global-memory load", "#d0e3f5",
                    "reads global memory (the GPU's DRAM, through the L2 and L1 caches)",
                    ("ld.global",), ("LDG",)),
    "global_store": ("global-memory store", "#a9cbee",
                     "writes global memory", ("st.global",), ("STG",)),
}
_ORDER = list(CATEGORIES)      # most important first: a line's colour is its first category


@dataclass
class Resources:
    """What the compiler (ptxas, through nvJitLink) reports for the kernel."""

    registers: int | None = None      # per thread
    shared_bytes: int | None = None   # static shared memory per block
    local_bytes: int | None = None    # local memory per thread (local arrays and spills)
    stack_bytes: int | None = None
    spill_stores: int | None = None   # bytes
    spill_loads: int | None = None
    barriers: int | None = None

    @property
    def local_total(self) -> int:
        """Local memory per thread: the stack frame (local arrays, spills) plus any other lmem."""
        return (self.local_bytes or 0) + (self.stack_bytes or 0)


@dataclass
class KernelCode:
    """A compiled kernel: sources, PTX, SASS, resources, notes; shows itself as HTML or text."""

    name: str
    cc: tuple[int, int]
    signature: str = ""
    source: str = ""
    first_line: int = 1
    filename: str = ""
    ptx: str = ""
    sass: str = ""
    info_log: str = ""
    resources: Resources = field(default_factory=Resources)
    notes: list[dict] = field(default_factory=list)   # {"line", "kind", "text"} from typing
    missing: tuple[str, ...] = ()     # tools that were not found: "nvvm", "nvrtc", "nvJitLink", "nvdisasm"
    error: dict | None = None         # {"type", "message"}: the kernel did not compile
    toolkit: str = ""                 # e.g. "13.5"
    skipped_globals: tuple[str, ...] = ()

    # ---- what the views are made of ----------------------------------------------------------
    @property
    def compiled(self) -> bool:
        return bool(self.ptx)

    def install_message(self, platform: str | None = None) -> str:
        """What to install for the parts that are missing ("" when nothing is)."""
        if {"nvvm", "nvrtc"} & set(self.missing):
            macos = (platform or sys.platform) == "darwin"
            return INSTALL_TOOLKIT_MACOS if macos else INSTALL_TOOLKIT
        if "nvdisasm" in self.missing or "nvJitLink" in self.missing:
            return INSTALL_NVDISASM
        return ""

    def ptx_lines(self) -> list[tuple[str, str | None]]:
        return [(line, classify_ptx(line)) for line in _readable(self.ptx).splitlines()]

    def sass_lines(self) -> list[tuple[str, str | None]]:
        return [(line, classify_sass(line)) for line in _readable(self.sass).splitlines()]

    def counts(self) -> dict[str, int]:
        """How many instructions of each highlighted kind (SASS if there is any, else PTX)."""
        lines = self.sass_lines() if self.sass else self.ptx_lines()
        out: dict[str, int] = {}
        for _, cat in lines:
            if cat:
                out[cat] = out.get(cat, 0) + 1
        return out

    def by_source_line(self) -> dict[int, dict[str, int]]:
        """Python line -> {category: instructions}, from SASS line info, else PTX ``.loc``."""
        return (_sass_line_map(self.sass, self.filename) if self.sass
                else _ptx_line_map(self.ptx, self.filename))

    def shared_array_bytes(self) -> int:
        """Static shared memory the kernel's own arrays take, from the PTX declarations."""
        return sum(int(m.group(1)) for m in
                   re.finditer(r"^\s*\.(?:visible\s+)?\.shared\s+.*?\[(\d+)\]", self.ptx, re.M))

    def summary(self) -> str:
        r = self.resources
        if not self.compiled:
            if self.error:
                return f"{self.name} does not compile for an NVIDIA GPU: {self.error['type']}"
            return f"{self.name}: no PTX (the CUDA toolkit wheels are missing)"
        parts = [f"{self.name} compiled for sm_{self.cc[0]}{self.cc[1]}"
                 + (f" by CUDA {self.toolkit}" if self.toolkit else "")]
        if r.registers is not None:
            parts.append(f"{r.registers} registers per thread")
        if r.shared_bytes is not None:
            mine = self.shared_array_bytes()
            text = f"{r.shared_bytes:,} B shared memory per block"
            if mine and mine != r.shared_bytes:
                text += (f" ({mine:,} B in your shared arrays, {r.shared_bytes - mine:,} B that "
                         "the system reserves per block)")
            parts.append(text)
        if r.local_bytes is not None or r.stack_bytes is not None:
            spill = (r.spill_stores or 0) + (r.spill_loads or 0)
            text = f"{r.local_total:,} B local memory per thread"
            if spill:
                text += f" ({r.spill_stores} B spill stores, {r.spill_loads} B spill loads)"
            elif r.local_total:
                text += " (a local array the compiler could not keep in registers; no spills)"
            else:
                text += " (no spills)"
            parts.append(text)
        return ": ".join(parts[:1]) + (": " + ", ".join(parts[1:]) if parts[1:] else "")

    # ---- text -------------------------------------------------------------------------------
    def __repr__(self) -> str:
        out = [self.summary()]
        if self.error:
            out.append(f"{self.error['type']}: {self.error['message'].strip()}")
        if self.install_message():
            out.append(self.install_message())
        counts = self.counts()
        if counts:
            out.append("highlighted instructions: " + ", ".join(
                f"{counts[c]} {CATEGORIES[c][0]}" for c in _ORDER if c in counts))
        for line, cats in sorted(self.by_source_line().items()):
            out.append(f"  line {line}: " + ", ".join(f"{n}× {CATEGORIES[c][0]}"
                                                      for c, n in _sorted_cats(cats)))
        for note in self.notes:
            out.append(f"  line {note['line']}: {note['text']}")
        return "\n".join(out)

    # ---- HTML -------------------------------------------------------------------------------
    def _repr_html_(self) -> str:
        return render_html(self)


# ---------------------------------------------------------------------------------------------
# Classifying instructions
# ---------------------------------------------------------------------------------------------
_PTX_INSTR = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][\w.]*)")
_SASS_INSTR = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)")


_PTX_DOUBLE_OPS = {"add", "sub", "mul", "fma", "mad", "div", "sqrt", "rcp", "rsqrt", "neg", "abs",
                   "min", "max", "cvt"}
_SASS_DOUBLE_OPS = {"DADD", "DMUL", "DFMA", "DSETP", "DMNMX", "DRCP"}


def classify_ptx(line: str) -> str | None:
    m = _PTX_INSTR.match(line)
    if not m or line.lstrip().startswith(("//", ".")):
        return None
    op = m.group(1)
    parts = op.split(".")
    if parts[0] in _PTX_DOUBLE_OPS and "f64" in parts[1:]:
        return "double"
    for cat in _ORDER:
        for prefix in CATEGORIES[cat][3]:
            if op == prefix or op.startswith(prefix + "."):
                return cat
    return None


def classify_sass(line: str) -> str | None:
    m = _SASS_INSTR.match(line)
    if not m:
        return None
    full = m.group(1)
    op = full.split(".")[0]
    if op in _SASS_DOUBLE_OPS or (op in ("F2F", "I2F", "F2I") and "F64" in full):
        return "double"
    for cat in _ORDER:
        if op in CATEGORIES[cat][4]:
            return cat
    return None


_LABEL = re.compile(r"^\s*(\.L_x_\d+):")
_GLOBAL_LOAD = re.compile(r"\bLDG\.E(?:\.(?:64|128|U8|S8|U16|S16))?(?:\.\w+)*\s+R(\d+)")
_REGISTER = re.compile(r"\bR(\d+)\b")


@dataclass
class LoadsInFlight:
    """How many of a loop's global loads a warp has in flight, read from its SASS in program
    order (``loads_in_flight``). A warp issues in order, so an instruction that reads a register
    a load has not yet filled waits for that load (and, here, for every load issued before it)."""
    loads: int = 0                     # LDG instructions in the loop's body
    instructions: int = 0
    waits: list[int] = field(default_factory=list)   # loads outstanding at each wait
    across_back_edge: int = 0          # loads still outstanding at the branch back to the top


def loads_in_flight(sass: str) -> LoadsInFlight:
    """The loop (a label, then a branch back to it) with the most global loads in ``sass``: how
    many loads are outstanding each time an instruction waits for one, and how many stay in
    flight across the branch back. A loop whose loads are used right after they are issued
    waits with one or two outstanding; a software-pipelined one keeps a pass's loads in flight
    across the branch. (An estimate: it counts a wait where an instruction reads a register a
    pending load writes, a 64-bit load writing two; it does not model the memory system.)"""
    lines = [line for line in sass.splitlines() if _SASS_INSTR.match(line) or _LABEL.match(line)]
    best: list[str] | None = None
    best_loads = -1
    for i, line in enumerate(lines):
        label = _LABEL.match(line)
        if not label:
            continue
        back = re.compile(r"BRA\s+`\(" + re.escape(label.group(1)) + r"\)")
        end = next((j for j in range(i + 1, len(lines)) if back.search(lines[j])), None)
        if end is not None:
            body = [b for b in lines[i + 1:end + 1] if _SASS_INSTR.match(b)]
            loads = sum(bool(_GLOBAL_LOAD.search(b)) for b in body)
            if loads > best_loads:
                best, best_loads = body, loads
    result = LoadsInFlight()
    if not best:
        return result
    pending: list[set[int]] = []          # the registers each outstanding load writes, in order
    for line in best:
        text = re.sub(r"^\s*/\*[0-9a-f]+\*/\s+(@!?U?P\w+\s+)?", "", line).rstrip(" ;")
        opcode, _, operands = text.partition(" ")
        # The first operand is written, the rest read; a store or a branch writes no register.
        sources = operands if opcode.startswith(("ST", "RED", "BRA")) else \
            operands.partition(",")[2]
        read = {int(r) for r in _REGISTER.findall(sources)}
        waited = [k for k, regs in enumerate(pending) if regs & read]
        if waited:
            result.waits.append(len(pending))
            pending = pending[waited[-1] + 1:]
        load = _GLOBAL_LOAD.search(text)
        if load:
            parts = opcode.split(".")
            width = 4 if "128" in parts else 2 if "64" in parts else 1
            first = int(load.group(1))
            pending.append(set(range(first, first + width)))
            result.loads += 1
        result.instructions += 1
    result.across_back_edge = len(pending)
    return result


def _sorted_cats(cats: dict[str, int]):
    return [(c, cats[c]) for c in _ORDER if c in cats]


def _ptx_line_map(ptx: str, filename: str) -> dict[int, dict[str, int]]:
    files = {m.group(1): m.group(2) for m in re.finditer(r'^\s*\.file\s+(\d+)\s+"([^"]*)"', ptx, re.M)}
    out: dict[int, dict[str, int]] = {}
    current = None
    for line in ptx.splitlines():
        m = re.match(r"\s*\.loc\s+(\d+)\s+(\d+)", line)
        if m:
            same = not filename or files.get(m.group(1)) == filename
            current = int(m.group(2)) if same and int(m.group(2)) > 0 else None
            continue
        cat = classify_ptx(line)
        if cat and current:
            out.setdefault(current, {}).setdefault(cat, 0)
            out[current][cat] += 1
    return out


def _sass_line_map(sass: str, filename: str) -> dict[int, dict[str, int]]:
    out: dict[int, dict[str, int]] = {}
    current = None
    for line in sass.splitlines():
        m = re.match(r'\s*//## File "([^"]*)", line (\d+)', line)
        if m:
            current = int(m.group(2)) if not filename or m.group(1) == filename else None
            continue
        cat = classify_sass(line)
        if cat and current:
            out.setdefault(current, {}).setdefault(cat, 0)
            out[current][cat] += 1
    return out


def parse_resources(log: str, entry: str = "") -> Resources:
    """The kernel's figures from nvJitLink's verbose log (ptxas's own report)."""
    text = log
    if entry and entry in log:    # the entry's own block, if the log names several functions
        text = log[log.index(entry):]
    r = Resources()

    def grab(pattern):
        m = re.search(pattern, text, re.I)
        return int(m.group(1)) if m else None

    r.registers = grab(r"used (\d+) registers")
    r.barriers = grab(r"used (\d+) barriers")
    r.shared_bytes = grab(r"(\d+) bytes smem")
    r.local_bytes = grab(r"(\d+) bytes lmem")
    r.stack_bytes = grab(r"(\d+) bytes stack frame")
    r.spill_stores = grab(r"(\d+) bytes spill stores")
    r.spill_loads = grab(r"(\d+) bytes spill loads")
    return r


# ---------------------------------------------------------------------------------------------
# Readable symbol names
# ---------------------------------------------------------------------------------------------
_MANGLED = re.compile(r"(_ZN\w+?)(_param_\d+)?\b")
_HIDDEN_PARTS = {"__main__", "__aag_kernel__"}


def demangle(symbol: str) -> str:
    """``_ZN8__main__5saxpyB2v1B92cw...E5ArrayIf...`` -> ``saxpy`` (Numba's names, simply)."""
    if not symbol.startswith("_ZN"):
        return symbol
    i, parts = 3, []
    while i < len(symbol) and symbol[i] != "E":
        tag = symbol[i] == "B"           # an ABI tag: B<len><text>, not part of the name
        i += tag
        m = re.match(r"\d+", symbol[i:])
        if not m:
            break
        n = int(m.group())
        i += len(m.group())
        if not tag:
            parts.append(symbol[i:i + n])
        i += n
    parts = [p for p in parts if p not in _HIDDEN_PARTS]
    return ".".join(parts) or symbol


def _readable(text: str) -> str:
    return _MANGLED.sub(lambda m: demangle(m.group(1)) + (m.group(2) or ""), text)


# ---------------------------------------------------------------------------------------------
# Packing a kernel for the child process
# ---------------------------------------------------------------------------------------------
def python_function(kernel) -> tuple[_pytypes.FunctionType, dict]:
    """The Python function behind a kernel (GPU dispatcher, simulator kernel or plain function)
    and the options it was compiled with."""
    if isinstance(kernel, _pytypes.FunctionType):
        return kernel, {}
    fn = getattr(kernel, "fn", None)                # the simulator's FakeCUDAKernel
    if isinstance(fn, _pytypes.FunctionType) and hasattr(kernel, "_device"):
        return fn, {"fastmath": bool(getattr(kernel, "_fastmath", False)),
                    "device": bool(getattr(kernel, "_device", False))}
    fn = getattr(kernel, "py_func", None)           # numba-cuda's CUDADispatcher
    if isinstance(fn, _pytypes.FunctionType):
        opts = dict(getattr(kernel, "targetoptions", {}) or {})
        return fn, {"fastmath": bool(opts.get("fastmath", False)),
                    "device": bool(opts.get("device", False))}
    raise TypeError(f"{kernel!r} is not a kernel: pass the function decorated with @cuda.jit")


def _names_used(code: _pytypes.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, _pytypes.CodeType):
            names |= _names_used(const)
    return names


def _is_kernel_like(value) -> bool:
    try:
        python_function(value)
        return not isinstance(value, _pytypes.FunctionType)
    except TypeError:
        return False


def _module_name(module: _pytypes.ModuleType) -> str:
    name = module.__name__
    return "numba.cuda" if name.startswith("numba.cuda.simulator") else name


def pack(kernel) -> dict:
    """Everything the child needs to rebuild ``kernel``: sources of the kernel and of the
    functions it calls, the modules and the picklable constants it refers to."""
    job = {"functions": [], "modules": {}, "values": {}, "skipped": []}
    seen: set[int] = set()

    def add(obj, global_name: str | None, kind: str):
        fn, opts = python_function(obj)
        if id(fn) in seen:
            return
        seen.add(id(fn))
        try:
            lines, first = inspect.getsourcelines(fn)
        except (OSError, TypeError) as exc:
            raise ValueError(f"the source of {fn.__name__} is not available ({exc}); define the "
                             "kernel in a notebook cell or a file") from exc
        if kind == "kernel" and opts.get("device"):
            raise TypeError(f"{fn.__name__} is a device function (device=True): show the kernel "
                            "that calls it")
        job["functions"].append({"def_name": fn.__name__, "global_name": global_name or fn.__name__,
                                 "source": "".join(lines), "first_line": first,
                                 "filename": fn.__code__.co_filename, "kind": kind,
                                 "fastmath": opts.get("fastmath", False)})
        refs = {}
        for name in _names_used(fn.__code__):
            if name in fn.__globals__:
                refs[name] = fn.__globals__[name]
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                refs[name] = cell.cell_contents
            except ValueError:   # an empty cell
                pass
        for name, value in refs.items():
            if isinstance(value, _pytypes.ModuleType):
                job["modules"][name] = _module_name(value)
            elif _is_kernel_like(value):
                _, o = python_function(value)
                add(value, name, "device" if o.get("device") else "kernel_called")
            elif isinstance(value, _pytypes.FunctionType):
                add(value, name, "python")
            else:
                try:
                    job["values"][name] = pickle.dumps(value)
                except Exception:
                    job["skipped"].append(name)

    add(kernel, None, "kernel")
    return job


# ---------------------------------------------------------------------------------------------
# Signatures
# ---------------------------------------------------------------------------------------------
def arg_type(value):
    """The Numba type a kernel launch gives ``value`` (host or device array, scalar)."""
    import numba
    nt = getattr(value, "_numba_type_", None)      # device arrays, real or simulated
    if nt is not None:
        return nt
    return numba.typeof(value)


def signature_of(args: tuple, signature=None):
    """A signature for ``compile_ptx``: the one given (string or tuple of types) or the types of
    example arguments."""
    if signature is not None:
        return signature
    if not args:
        raise TypeError("say what the kernel is called with: show_code(kernel, x, y, out) with "
                        "example arguments, or show_code(kernel, 'float32[::1], float32[::1]')")
    return tuple(arg_type(a) for a in args)


def _signature_text(sig) -> str:
    if isinstance(sig, str):
        return sig
    return ", ".join(str(t) for t in sig)


# ---------------------------------------------------------------------------------------------
# The child process
# ---------------------------------------------------------------------------------------------
_PROBE = r"""
import json, sys
out = {}
try:
    import cuda.pathfinder as pf
except Exception as exc:
    print(json.dumps({"error": f"{type(exc).__name__}: {exc}"})); sys.exit()
for lib in ("nvvm", "nvrtc", "nvJitLink"):
    try:
        out[lib] = pf.load_nvidia_dynamic_lib(lib).abs_path or "loaded"
    except Exception:
        out[lib] = None
try:
    out["nvdisasm"] = pf.find_nvidia_binary_utility("nvdisasm")
except Exception:
    out["nvdisasm"] = None
print(json.dumps(out))
"""

_CHILD = r"""
import ast, importlib, json, linecache, os, pickle, re, subprocess, sys, tempfile, textwrap, traceback
jobs = pickle.load(open(sys.argv[1], "rb"))
results = []
try:
    from numba import cuda
    from numba.core import types
    from numba.cuda import compiler as cudacompiler
    original = cudacompiler.compile_cuda
    captured = {}

    def spy(*a, **k):
        cres = original(*a, **k)
        captured["cres"] = cres     # nested device functions finish first: the last is the kernel
        return cres

    cudacompiler.compile_cuda = spy

    class _Device:              # device functions ask the current GPU for its cc: answer for it
        compute_capability = tuple(jobs[0]["cc"]) if jobs else (9, 0)

    import numba.cuda.dispatcher as _dispatcher
    _dispatcher.get_current_device = lambda: _Device
except BaseException as exc:
    startup = {"type": type(exc).__name__, "message": str(exc)[:20000]}
    results = [{"ok": False, "notes": [], "error": startup} for _ in jobs]
    jobs = []


def rebuild(job):
    ns = {"__name__": "__aag_kernel__", "__builtins__": __builtins__}
    for name, mod in job["modules"].items():
        ns[name] = importlib.import_module(mod)
    for name, blob in job["values"].items():
        ns[name] = pickle.loads(blob)
    kernel = None
    for fn in job["functions"]:
        src, first, filename = fn["source"], fn["first_line"], fn["filename"]
        lines = ["\n"] * (first - 1) + src.splitlines(True)
        if not linecache.getline(filename, first):
            linecache.cache[filename] = (sum(map(len, lines)), None, lines, filename)
        tree = ast.parse(textwrap.dedent(src))
        ast.increment_lineno(tree, first - 1)
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                node.decorator_list = []
        exec(compile(tree, filename, "exec"), ns)
        pyfunc = ns[fn["def_name"]]
        if fn["kind"] == "kernel":
            kernel = (pyfunc, fn)
        elif fn["kind"] == "device":
            ns[fn["global_name"]] = cuda.jit(device=True, fastmath=fn["fastmath"],
                                             lineinfo=True)(pyfunc)
        elif fn["kind"] == "kernel_called":
            ns[fn["global_name"]] = cuda.jit(fastmath=fn["fastmath"])(pyfunc)
        else:
            ns[fn["global_name"]] = pyfunc
    return kernel


def notes_of(cres, result):
    ann = cres.type_annotation
    typemap = ann.typemap
    arrays64 = any(isinstance(t, types.Array) and t.dtype == types.float64
                   for t in cres.signature.args)
    floats64 = set()
    for block in ann.blocks.values():
        for inst in block.body:
            kind = type(inst).__name__          # numba-cuda has its own IR classes: go by name
            if kind in ("SetItem", "StaticSetItem"):
                at, vt = typemap.get(inst.target.name), typemap.get(inst.value.name)
                if (isinstance(at, types.Array) and isinstance(at.dtype, types.Integer)
                        and isinstance(vt, (types.Float, types.Complex))):
                    result["notes"].append({
                        "line": inst.loc.line, "kind": "float_into_int",
                        "array": inst.target.name.split(".")[0],
                        "value_type": str(vt), "array_type": str(at.dtype)})
            elif (kind == "Assign" and getattr(inst.value, "op", None) in ("binop", "inplace_binop")
                  and not arrays64 and typemap.get(inst.target.name) == types.float64
                  and inst.loc.line not in floats64):
                floats64.add(inst.loc.line)
                result["notes"].append({"line": inst.loc.line, "kind": "float64"})


def link_and_disassemble(job, result):
    cc = job["cc"]
    arch = f"sm_{cc[0]}{cc[1]}"
    try:
        from cuda.bindings import nvjitlink
        opts = [f"-arch={arch}", "-verbose"]
        h = nvjitlink.create(len(opts), opts)
        data = result["ptx"].encode()
        nvjitlink.add_data(h, nvjitlink.InputType.PTX, data, len(data), "kernel.ptx")
        try:
            nvjitlink.complete(h)
        finally:
            log = bytearray(nvjitlink.get_info_log_size(h))
            nvjitlink.get_info_log(h, log)
            result["info_log"] = log.decode(errors="replace").rstrip("\x00")
        cubin = bytearray(nvjitlink.get_linked_cubin_size(h))
        nvjitlink.get_linked_cubin(h, cubin)
        nvjitlink.destroy(h)
    except Exception as exc:
        result["link_error"] = f"{type(exc).__name__}: {exc}"
        return
    if job["mode"] != "sass":
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "kernel.cubin")
        with open(path, "wb") as f:
            f.write(bytes(cubin))
        proc = subprocess.run([job["nvdisasm"], "-c", "-g", path], capture_output=True,
                              text=True, timeout=120)
    if proc.returncode == 0:
        result["sass"] = proc.stdout
    else:
        result["disasm_error"] = proc.stderr.strip()[-2000:]


for job in jobs:
    result = {"notes": []}
    results.append(result)
    captured.clear()
    try:
        pyfunc, meta = rebuild(job)
        cc, sig = tuple(job["cc"]), job["signature"]
        try:
            if job["mode"] == "typing":
                cudacompiler._compile_pyfunc_with_fixup(
                    pyfunc, sig, lineinfo=True, device=False, cc=cc, abi="numba",
                    fastmath=meta["fastmath"])
            else:
                result["ptx"], _ = cuda.compile_ptx(pyfunc, sig, cc=cc, lineinfo=True,
                                                    fastmath=meta["fastmath"])
        finally:
            cres = captured.get("cres")
            if cres is not None:
                result["entry"] = cres.fndesc.llvm_func_name
                try:
                    notes_of(cres, result)
                except Exception as exc:   # notes are a bonus; never lose the compile for them
                    result["notes_error"] = repr(exc)
        if result.get("ptx"):
            link_and_disassemble(job, result)
        result["ok"] = True
    except BaseException as exc:
        result["ok"] = False
        result["error"] = {"type": type(exc).__name__, "module": type(exc).__module__,
                           "message": str(exc)[:20000],
                           "traceback": "".join(traceback.format_exception(exc))[-20000:]}
with open(sys.argv[2], "w") as f:
    json.dump(results, f)
"""

_probe_cache: dict[str, dict] = {}
_compile_cache: dict[Any, KernelCode] = {}


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["NUMBA_ENABLE_CUDASIM"] = "0"   # the real CUDA target; no GPU is touched by compiling
    env.setdefault("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")
    env["PYTHONWARNINGS"] = "ignore"
    return env


def find_toolkit() -> dict[str, str | None]:
    """Where NVVM, NVRTC, nvJitLink and nvdisasm are (None where missing), asked in a child
    process so that this one loads nothing. Cached for the session."""
    if "tools" not in _probe_cache:
        try:
            proc = subprocess.run([sys.executable, "-c", _PROBE], env=_child_env(),
                                  capture_output=True, text=True, timeout=120)
            found = json.loads(proc.stdout.strip().splitlines()[-1])
        except Exception as exc:  # no cuda-pathfinder, a broken environment
            found = {"error": f"{type(exc).__name__}: {exc}"}
        if "error" in found:
            found = {"nvvm": None, "nvrtc": None, "nvJitLink": None, "nvdisasm": None}
        _probe_cache["tools"] = found
    return dict(_probe_cache["tools"])


def _default_cc() -> tuple[int, int]:
    from autograder.machine import device
    if device.current().name == "cuda":
        from numba import cuda
        return tuple(cuda.get_current_device().compute_capability)
    return DEFAULT_CC


def compile_kernel(kernel, *args, signature=None, cc=None, timeout: float = 300) -> KernelCode:
    """Compile ``kernel`` for an NVIDIA GPU of compute capability ``cc`` in a child process:
    as far as the installed tools go (typing only, PTX, or PTX and SASS)."""
    return compile_kernels([(kernel, args, signature)], cc=cc, timeout=timeout)[0]


def compile_kernels(requests, cc=None, timeout: float = 300) -> list[KernelCode]:
    """Several kernels in one child process: ``requests`` is a list of ``(kernel, args,
    signature)``; each result carries its own error, if any."""
    cc = tuple(cc) if cc else _default_cc()
    tools = find_toolkit()
    missing = tuple(t for t in ("nvvm", "nvrtc", "nvJitLink", "nvdisasm") if not tools.get(t))
    if {"nvvm", "nvrtc"} & set(missing):
        mode = "typing"
    elif "nvdisasm" in missing or "nvJitLink" in missing:
        mode = "ptx"
    else:
        mode = "sass"
    out: list[KernelCode | None] = []
    todo: list[tuple[int, Any, dict]] = []
    for kernel, args, signature in requests:
        fn, _ = python_function(kernel)
        sig = signature_of(tuple(args), signature)
        job = pack(kernel)
        job.update(signature=sig, cc=list(cc), mode=mode, nvdisasm=tools.get("nvdisasm"))
        # numba types pick up cached attributes as they are used, so their pickles change: the
        # key uses their repr (which names dtype, layout and flags) instead.
        key = (pickle.dumps({k: v for k, v in job.items() if k not in ("values", "signature")}),
               repr(sig), tuple(sorted(job["values"].items())))
        main = next(f for f in job["functions"] if f["kind"] == "kernel")
        code = KernelCode(name=fn.__name__, cc=cc, signature=_signature_text(sig),
                          source=main["source"], first_line=main["first_line"],
                          filename=main["filename"], missing=missing,
                          skipped_globals=tuple(job["skipped"]))
        if key in _compile_cache:
            out.append(_compile_cache[key])
            continue
        out.append(code)
        todo.append((len(out) - 1, key, job))
    if todo:
        results = _run_child([job for _, _, job in todo], timeout)
        for (index, key, _), result in zip(todo, results):
            _fill(out[index], result)
            if not (out[index].error or {}).get("type") in ("TimeoutError", "ChildProcessError"):
                _compile_cache[key] = out[index]
    return out


def _fill(code: KernelCode, result: dict) -> None:
    code.ptx = result.get("ptx", "")
    code.sass = result.get("sass", "")
    code.info_log = result.get("info_log", "")
    code.error = result.get("error")
    code.notes = [_note_text(n) for n in result.get("notes", [])]
    if code.ptx and "double" not in code.counts():
        # Numba typed something as float64, but the compiler narrowed it to float32 exactly
        code.notes = [n for n in code.notes if n["kind"] != "float64"]
    if code.info_log:
        code.resources = parse_resources(code.info_log, result.get("entry", ""))
    m = re.search(r"release (\d+\.\d+)", code.ptx)
    code.toolkit = m.group(1) if m else ""
    if result.get("link_error") and "nvJitLink" not in code.missing:
        helpers = sorted(set(re.findall(r"^\s*\.extern\s+\.func\s+(?:\([^)]*\)\s*)?(\w+)",
                                        code.ptx, re.M)))
        if helpers:
            # Numba links these in when it loads the kernel on a GPU; here the kernel is linked
            # alone, so there is no SASS, but ptxas has already reported its figures.
            text = (f"No SASS for this kernel: it calls {', '.join(helpers)}, code that Numba "
                    "links in only when it loads the kernel on a GPU (reshape inside a kernel "
                    "calls numba_attempt_nocopy_reshape), and the viewer links the kernel alone. "
                    "The PTX and the compiler's figures (registers, stack) are still the "
                    "kernel's own.")
        else:
            text = "linking failed: " + result["link_error"]
        code.notes.append({"line": 0, "kind": "tool", "text": text})
    if result.get("disasm_error"):
        code.notes.append({"line": 0, "kind": "tool", "text": "nvdisasm failed: " + result["disasm_error"]})


def _run_child(jobs: list[dict], timeout: float) -> list[dict]:
    def failed(kind, message):
        return [{"notes": [], "error": {"type": kind, "message": message}} for _ in jobs]

    with tempfile.TemporaryDirectory(prefix="aag-code-") as tmp:
        job_path, out_path = os.path.join(tmp, "jobs.pickle"), os.path.join(tmp, "out.json")
        with open(job_path, "wb") as f:
            pickle.dump(jobs, f)
        try:
            proc = subprocess.run([sys.executable, "-c", _CHILD, job_path, out_path],
                                  env=_child_env(), capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return failed("TimeoutError", f"compiling took over {timeout:.0f} s")
        try:
            with open(out_path) as f:
                results = json.load(f)
        except (OSError, ValueError):
            tail = (proc.stderr or proc.stdout or "").strip()[-3000:]
            return failed("ChildProcessError",
                          f"the compiler process died (exit {proc.returncode}): {tail}")
    return results + failed("ChildProcessError", "no result")[len(results):]


def _note_text(note: dict) -> dict:
    if note["kind"] == "float_into_int":
        text = (f"stores a {note['value_type']} value into `{note['array']}`, an array of "
                f"{note['array_type']}: the fraction is cut off (2.7 becomes 2). Round first, or "
                "use a float array.")
    elif note["kind"] == "float64":
        text = ("computes in float64 (double precision): a Python float such as 0.5 is float64 "
                "and pulls float32 values up with it; on most GPUs float64 is many times slower. "
                "Write float32(0.5) or keep the constant in a float32 variable.")
    else:
        text = note.get("text", note["kind"])
    return dict(note, text=text)


@skipped_while_graded("Your kernel's PTX and SASS")
def show_code(kernel, *args, signature=None, cc=None) -> KernelCode:
    """Show what ``kernel`` compiles to: Python, PTX and SASS, with the lines that matter
    highlighted and the compiler's registers, shared and local memory per thread.

    Give example arguments as you would launch it (``show_code(saxpy, a, x, y, out)``; host or
    device arrays) or a signature (``show_code(saxpy, "float32, float32[::1], float32[::1],
    float32[::1]")``). ``cc=(8, 0)`` picks another GPU generation (default: this GPU, or the
    course's H200, 9.0, without one). Make it the last line of a cell to see it.
    """
    if len(args) == 1 and signature is None and (isinstance(args[0], str) or (
            isinstance(args[0], tuple) and args[0] and not isinstance(args[0][0], np.ndarray)
            and _looks_like_types(args[0]))):
        signature, args = args[0], ()
    return compile_kernel(kernel, *args, signature=signature, cc=cc)


def _looks_like_types(values) -> bool:
    from numba.core import types
    return all(isinstance(v, types.Type) for v in values)


# ---------------------------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------------------------
_MONO = "font-family:var(--jp-code-font-family,monospace);font-size:12px;line-height:1.45"
_PRE = (f"margin:0;padding:6px 8px;{_MONO};max-height:32em;overflow:auto;"
        "background:var(--jp-layout-color1,#fff);border:1px solid #ddd;white-space:pre")


def _chip(cat: str, count: int | None = None) -> str:
    label, colour, explanation = CATEGORIES[cat][:3]
    text = label if count is None else f"{label} ×{count}"
    return (f'<span class="aag-code-chip aag-code-{cat}" title="{html.escape(explanation)}" '
            f'style="background:{colour};color:#000;padding:1px 6px;border-radius:3px;'
            f'margin-right:6px;white-space:nowrap">{html.escape(text)}</span>')


def _code_block(lines: list[tuple[str, str | None]], kind: str) -> str:
    out = []
    for text, cat in lines:
        esc = html.escape(text)
        if cat:
            label, colour, explanation = CATEGORIES[cat][:3]
            out.append(f'<span class="aag-code-hl aag-code-{cat}" style="background:{colour};'
                       f'color:#000;display:inline-block;min-width:100%" '
                       f'title="{html.escape(label + ": " + explanation)}">{esc}</span>')
        else:
            out.append(esc)
    return f'<pre class="aag-code-{kind}" style="{_PRE}">' + "\n".join(out) + "</pre>"


def _source_block(code: KernelCode) -> str:
    per_line = code.by_source_line()
    notes: dict[int, list[str]] = {}
    for note in code.notes:
        notes.setdefault(note["line"], []).append(note["text"])
    rows = []
    for k, text in enumerate(code.source.rstrip("\n").splitlines()):
        n = code.first_line + k
        cats = per_line.get(n, {})
        row = f'<span style="color:#999">{n:4d}  </span>{html.escape(text)}'
        if cats:
            first = _sorted_cats(cats)[0][0]
            row = (f'<span style="background:{CATEGORIES[first][1]};color:#000;display:inline-block;'
                   f'min-width:60%">{row}</span>')
            row += "   " + "".join(_chip(c, k) for c, k in _sorted_cats(cats))
        for text_ in notes.get(n, []):
            row += (f'\n      <span class="aag-code-note" style="color:#b00020">⚠ '
                    f'{html.escape(text_)}</span>')
        rows.append(row)
    return f'<pre class="aag-code-python" style="{_PRE}">' + "\n".join(rows) + "</pre>"


def _section(title: str, body: str, open_: bool = False) -> str:
    return (f'<details{" open" if open_ else ""} style="margin:4px 0">'
            f'<summary style="cursor:pointer;font-weight:600">{html.escape(title)}</summary>'
            f"{body}</details>")


def render_html(code: KernelCode) -> str:
    parts = ['<div class="aag-visual aag-visual-code-viewer" style="font-size:13px">']
    warn = code.resources.local_total > 0 or (code.resources.spill_stores or 0) > 0
    parts.append(f'<div class="aag-code-summary" style="font-weight:600;margin-bottom:4px;'
                 f'{"color:#b00020" if warn else ""}">{html.escape(code.summary())}</div>')
    if code.signature:
        parts.append(f'<div style="color:#666">arguments: {html.escape(code.signature)}</div>')
    if code.error:
        plain = explain_text(f"{code.error['type']}: {code.error['message']}")
        parts.append('<div class="aag-code-error" style="border-left:4px solid #b00020;'
                     'padding:4px 8px;margin:4px 0">'
                     + (f"<b>{html.escape(plain)}</b><br>" if plain else "")
                     + f'<pre style="{_PRE};max-height:14em">{html.escape(code.error["type"])}: '
                     f'{html.escape(code.error["message"].strip())}</pre></div>')
    message = code.install_message()
    if message:
        parts.append(f'<div class="aag-code-install" style="border-left:4px solid #e9a400;'
                     f'padding:4px 8px;margin:4px 0;white-space:pre-wrap">{html.escape(message)}</div>')
    counts = code.counts()
    if counts:
        parts.append('<div class="aag-code-legend" style="margin:4px 0">'
                     + "".join(_chip(c, counts[c]) for c in _ORDER if c in counts)
                     + '<span style="color:#666"> (hover for what each means)</span></div>')
        parts.append('<ul class="aag-code-explain" style="margin:2px 0 6px 18px;padding:0">'
                     + "".join(f"<li><b>{html.escape(CATEGORIES[c][0])}</b>: "
                               f"{html.escape(CATEGORIES[c][2])}</li>"
                               for c in _ORDER if c in counts) + "</ul>")
    title = "Python source"
    if code.ptx:
        title += (" (beside each line: the instructions the compiler made of it; optimized code "
                  "is reordered, so the attribution is approximate)")
    parts.append(_section(title, _source_block(code), open_=True))
    if code.ptx:
        parts.append(_section(f"PTX ({len(code.ptx.splitlines())} lines: NVIDIA's portable "
                              "assembly, what Numba hands to the driver)",
                              _code_block(code.ptx_lines(), "ptx")))
    if code.sass:
        parts.append(_section("SASS (the machine code the GPU runs)",
                              _code_block(code.sass_lines(), "sass"), open_=False))
    if code.info_log:
        parts.append(_section("compiler report (ptxas)",
                              f'<pre style="{_PRE}">{html.escape(_readable(code.info_log))}</pre>'))
    if code.skipped_globals:
        parts.append(f'<div style="color:#666">not carried over (not picklable): '
                     f'{html.escape(", ".join(code.skipped_globals))}</div>')
    parts.append("</div>")
    return "".join(parts)


def gpu_compile_check(kernel, *args, signature=None, cc=None) -> Explanation | None:
    """Compile ``kernel`` with Numba's real CUDA front end (in a child process; no GPU needed)
    and explain why it would not compile for a GPU, or None when it compiles. In CPU mode this
    catches what the simulator lets through: a shared array of run-time size, a Python list, a
    call to a plain Python function."""
    code = compile_kernel(kernel, *args, signature=signature, cc=cc)
    if not code.error:
        return None
    message = f"{code.error['type']}: {code.error['message']}"
    found = explain(message, kernel=kernel, args=args)
    return found or Explanation("compile_error", "Numba could not compile the kernel for a GPU: "
                                "the first lines of the message say where.", message, {})
