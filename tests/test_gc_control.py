"""xlapy.gc_control: the collector paused through a first call, and the exit freeze (what it
changes at the interpreter's shutdown and what it must not)."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap

import numpy as np

from xlapy.gc_control import collector_paused

# The child registers its own atexit hook before importing xlapy: hooks run last-in first-out,
# so it runs after xlapy's and sees what xlapy's left.
_CHILD = textwrap.dedent("""
    import atexit, gc, os, sys
    out = sys.argv[1]

    def report():
        print("frozen", gc.get_freeze_count(), flush=True)

    atexit.register(report)
    import xlapy  # noqa: F401

    class Holder:  # a cycle keeps it and its file alive
        def __init__(self, path):
            self.f = open(path, "w")
            self.me = self

    class Noisy:  # garbage in a cycle at exit: its finalizer must still run
        def __init__(self):
            self.me = self

        def __del__(self):
            print("finalized", flush=True)

    keep = Holder(out)
    keep.f.write("written before exit")
    gc.disable()  # (so that the cycle below is still uncollected when the program ends)
    Noisy()
""")


def _run_child(tmp_path, env_value=None):
    import os  # (the child's environment only)
    env = dict(os.environ)
    env.pop("XLAPY_EXIT_FREEZE", None)
    if env_value is not None:
        env["XLAPY_EXIT_FREEZE"] = env_value
    out = tmp_path / "held.txt"
    r = subprocess.run([sys.executable, "-c", _CHILD, str(out)], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout, out.read_text()


def test_exit_freeze_keeps_finalizers_of_garbage_and_flushes_files(tmp_path):
    stdout, text = _run_child(tmp_path)
    assert "finalized" in stdout  # garbage at exit was collected before the freeze
    frozen = int(stdout.split("frozen")[1].split()[0])
    assert frozen > 1000  # the live objects (xlapy's modules among them) left the collections
    assert text == "written before exit"  # a file only a cycle keeps was flushed


def test_exit_freeze_can_be_turned_off(tmp_path):
    stdout, _ = _run_child(tmp_path, "0")
    assert "frozen 0" in stdout
    assert "finalized" in stdout
    # (the file: CPython's own shutdown left it unflushed here, the collector being off)


def test_collector_paused_through_a_first_jit_call():
    import xlapy  # (the frontend, loaded for this test only)
    seen = []

    def f(x):
        seen.append(gc.isenabled())
        return x * 2.0

    was = gc.isenabled()
    gc.enable()
    try:
        out = xlapy.jit(f)(np.arange(3.0, dtype=np.float32))
        assert seen == [False]  # traced with the collector off
        assert gc.isenabled()  # and on again after
        np.testing.assert_array_equal(np.asarray(out), [0.0, 2.0, 4.0])
        with collector_paused():
            assert not gc.isenabled()
        assert gc.isenabled()
    finally:
        if not was:
            gc.disable()


def test_a_child_forked_during_another_threads_pause_is_not_stuck():
    import os  # (fork: the child reports through its exit status)
    import threading
    was = gc.isenabled()
    gc.enable()
    inside, release = threading.Event(), threading.Event()

    def compiling():
        with collector_paused():
            inside.set()
            release.wait(30)

    t = threading.Thread(target=compiling, daemon=True)
    t.start()
    try:
        assert inside.wait(30)
        assert not gc.isenabled()  # (the other thread's pause)
        pid = os.fork()
        if pid == 0:  # the child: that thread is gone, its pause with it
            code = 1
            try:
                enabled = gc.isenabled()
                with collector_paused():  # (its lock is usable: no deadlock)
                    paused = not gc.isenabled()
                code = 0 if enabled and paused and gc.isenabled() else 2
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    finally:
        release.set()
        t.join(30)
        if not was:
            gc.disable()
    assert gc.isenabled() or not was
