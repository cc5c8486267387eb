"""Engines for loading compiled code (loader.LoadedObject): after each load the next engine is
built on a helper thread, handed out once, and never left half built across a fork."""

import os
import subprocess
import sys
import textwrap
import threading

import pytest

from xlapy.backends.cpu import codegen
from xlapy.backends.cpu.runtime import loader


def _obj(value: int) -> bytes:
    return codegen.compile_to_object(f'define i64 @"f"() {{\n  ret i64 {value}\n}}\n')


def test_the_next_engine_is_prepared_and_handed_out_once():
    import ctypes
    a = loader.LoadedObject(_obj(1))
    spare = loader._spare
    assert spare is not None
    spare.result(timeout=30)
    b = loader.LoadedObject(_obj(2))
    assert b.engine is spare.result() and a.engine is not b.engine
    call = lambda lo: ctypes.CFUNCTYPE(ctypes.c_int64)(lo.address("f"))()
    assert (call(a), call(b)) == (1, 2)


def test_concurrent_loads_get_their_own_engines():
    objs = [_obj(k) for k in range(8)]
    loaded, errors = [], []

    def work(o):
        try:
            loaded.append(loader.LoadedObject(o))
        except BaseException as e:  # reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(o,)) for o in objs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len({id(lo.engine) for lo in loaded}) == len(objs)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_fork_right_after_a_load():
    """The child of a fork made while the next engine is being built compiles and runs."""
    script = textwrap.dedent("""
        import os, numpy as np
        os.environ["XLAPY_DISABLE_CACHE"] = "1"
        import xlapy as xp
        for i in range(10):
            xp.jit(lambda x, i=i: x * (i + 1))(np.ones(1000, np.float32))
            pid = os.fork()
            if pid == 0:
                r = xp.jit(lambda x: x + 2)(np.ones(10, np.float32))
                os._exit(0 if r[0] == 3 else 1)
            assert os.waitpid(pid, 0)[1] == 0
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert proc.stdout.strip().endswith("ok"), proc.stdout + proc.stderr


def test_prepare_engine_builds_one_spare_which_the_next_load_takes():
    loader.prepare_engine()   # (the compiler's call when it starts on a new program)
    spare = loader._spare
    assert spare is not None
    loader.prepare_engine()
    assert loader._spare is spare  # one build at a time, not one per call
    engine = spare.result(timeout=30)
    a = loader.LoadedObject(_obj(3))
    assert a.engine is engine
    assert loader._spare is not spare  # handed out once; the next one is under way
