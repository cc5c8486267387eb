"""The cpu backend does not emit collectives yet: compiling one names the instruction and
says where such modules run (the interpreter), before any emission."""

import pytest

from xlapy.backends.base import get_platform
from xlapy.errors import LoweringError
from xlapy.hlo import parse_module

ADD = "add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }"


@pytest.mark.parametrize("op", [
    "all-reduce(p), replica_groups={{0,1}}, to_apply=add",
    "collective-permute(p), source_target_pairs={{0,1},{1,0}}",
])
def test_collectives_are_refused_with_a_pointer_to_the_interpreter(op):
    m = parse_module(f"HloModule m, replica_count=2\n{ADD}\n"
                     f"ENTRY e {{ p = f32[4] parameter(0)  ROOT r = f32[4] {op} }}")
    with pytest.raises(LoweringError, match=r"\(r\): the cpu backend does not run "
                                            r"collectives.*interpreter"):
        get_platform("cpu").compiler.compile(m)
