"""The nvvm-reflect-ftz module flag is numbered after the module's own metadata: kernels with
loop hints (NOT_VECTORIZED, e.g. a short reduction's loop) already use !0 and !1."""

from __future__ import annotations

import llvmlite.binding as llvm

from xlapy.backends.gpu.codegen import with_ftz_flag

LOOP = """define void @k(ptr %p) {
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%n, %loop]
  %n = add i64 %i, 1
  %c = icmp slt i64 %n, 10
  br i1 %c, label %loop, label %done, !llvm.loop !1
done:
  ret void
}
!0 = !{ !"llvm.loop.vectorize.enable", i32 0 }
!1 = distinct !{ !1, !0 }
"""


def test_the_flag_follows_the_modules_metadata():
    text = with_ftz_flag(LOOP)
    assert '!2 = !{i32 4, !"nvvm-reflect-ftz", i32 0}' in text
    mod = llvm.parse_assembly(text)
    mod.verify()
    assert "nvvm-reflect-ftz" in str(mod)


def test_a_module_without_metadata_gets_it_as_0_and_one_with_the_flag_is_left_alone():
    plain = "define void @k() {\n  ret void\n}\n"
    assert '!0 = !{i32 4, !"nvvm-reflect-ftz", i32 0}' in with_ftz_flag(plain)
    llvm.parse_assembly(with_ftz_flag(plain)).verify()
    flagged = with_ftz_flag(plain)
    assert with_ftz_flag(flagged) == flagged
