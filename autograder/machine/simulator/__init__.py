"""CPU mode: numba's CUDA simulator with what the course adds to it.

- :mod:`.blocks`: how a block runs: threads kept from block to block, a barrier they sleep at;
- :mod:`.cpu_mode`: the base hook (every simulated launch's ``cuda`` module gets the registered
  extensions) and the warp size as a parameter;
- :mod:`.races`: shared- and global-memory races and divergent barriers, stopped with a message;
- :mod:`.warp`: warps, lanes and the warp intrinsics the simulator lacks;
- :mod:`.bits`: libdevice's bit casts (a float's bits as an integer and back); its other
  functions say they have no CPU-mode version;
- :mod:`.stream`: an in-order stream with time in it: asynchronous work the course queues, events
  stamped when the stream reaches them, waits that wait, elapsed times in real milliseconds.

:func:`install` puts them in place, in that order (``autograder.machine.device`` calls it when it
picks CPU mode). The grader's data-flow recorder (``autograder.grading.provenance``) hooks the same
simulator from above, through :func:`cpu_mode.extension` and the simulator's classes.
"""

from __future__ import annotations

from autograder.machine.simulator import bits, blocks, cpu_mode, races, stream, warp


def install(warp_size: int = 32) -> None:
    """Hook the simulator once (the warp size is set on every call)."""
    blocks.install()
    cpu_mode.install(warp_size=warp_size)
    races.install()
    warp.install()
    stream.install()
    bits.install()
    blocks.install_exit()
