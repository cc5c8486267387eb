"""Interpreter rules for dot and convolution, compared with JAX/XLA on the HLO text JAX emits."""

import functools

import ml_dtypes
import numpy as np
import pytest

from xlapy.backends.interpreter import evaluate
from xlapy.errors import EvaluationError
from xlapy.hlo import parse

from .lowered import check as check_lowered
from .lowered import run_both

jax = pytest.importorskip("jax")
jnp = jax.numpy
lax = jax.lax

RNG = np.random.default_rng(7)


check = functools.partial(check_lowered, rtol=1e-5, atol=1e-5)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# ---- dot ------------------------------------------------------------------------------------

@pytest.mark.parametrize("spec,shapes", [
    ("ij,jk->ik", [(5, 7), (7, 3)]),
    ("i,ij->j", [(6,), (6, 4)]),
    ("ij,j->i", [(4, 6), (6,)]),
    ("i,i->", [(9,), (9,)]),
    ("bij,bjk->bik", [(3, 4, 5), (3, 5, 2)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 8), (2, 3, 5, 8)]),
    ("abcd,dcbe->bae", [(2, 3, 4, 5), (5, 4, 3, 6)]),
    ("ij,kl->ijkl", [(2, 3), (4, 5)]),
])
def test_einsum_dots(spec, shapes):
    args = [rand(*s) for s in shapes]
    check(lambda *a: jnp.einsum(spec, *a), *args, opcode="dot")


def test_dot_general_batch_dims_not_leading():
    a, b = rand(4, 3, 5), rand(5, 6, 3)
    dn = (((2,), (0,)), ((1,), (2,)))
    check(lambda a, b: lax.dot_general(a, b, dn), a, b, opcode="dot")


def test_preferred_element_type_bf16_to_f32():
    a = rand(8, 300).astype(ml_dtypes.bfloat16)
    b = rand(300, 5).astype(ml_dtypes.bfloat16)
    check(lambda a, b: lax.dot(a, b, preferred_element_type=jnp.float32), a, b, opcode="dot",
          rtol=1e-4)


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float16])
def test_low_precision_dot_accumulates_in_f32(dtype):
    a, b = np.ones((2, 3000), dtype), np.ones((3000, 2), dtype)
    got, want = run_both(lambda a, b: a @ b, a, b, opcode="dot")
    assert got[0].dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got[0].astype(np.float32), want[0].astype(np.float32))
    assert float(got[0][0, 0]) == float(dtype(3000))


def test_int8_dot_with_int32_result():
    a = RNG.integers(-128, 128, size=(6, 50)).astype(np.int8)
    b = RNG.integers(-128, 128, size=(50, 4)).astype(np.int8)
    check(lambda a, b: lax.dot(a, b, preferred_element_type=jnp.int32), a, b, opcode="dot",
          exact=True)


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int8, np.uint8])
def test_integer_dot_wraps(dtype):
    info = np.iinfo(dtype)
    a = RNG.integers(info.min, info.max, size=(3, 40), endpoint=True).astype(dtype)
    b = RNG.integers(info.min, info.max, size=(40, 5), endpoint=True).astype(dtype)
    check(lambda a, b: a @ b, a, b, opcode="dot", exact=True)


def test_large_int32_dot_takes_the_exact_integer_path():
    # |a|*|b|*K exceeds 2^53: float64 would round, 64-bit integer arithmetic must not.
    a = np.full((2, 3), 2**31 - 1, np.int32)
    b = np.full((3, 2), -(2**31), np.int32)
    check(lambda a, b: a @ b, a, b, opcode="dot", exact=True)


def test_f64_dot_hand_written():
    module = parse("""
HloModule d
ENTRY e {
  a = f64[2,3] parameter(0)
  b = f64[3] parameter(1)
  ROOT d = f64[2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}""")
    a, b = np.arange(6.0).reshape(2, 3), np.array([1.0, 1e-17, -1.0])
    np.testing.assert_array_equal(evaluate(module, a, b), a @ b)


def test_dot_mismatched_contracting_dims_is_a_project_error():
    module = parse("""
HloModule d
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[4,2] parameter(1)
  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}""")
    with pytest.raises(EvaluationError, match="dot"):
        evaluate(module, np.zeros((2, 3), np.float32), np.zeros((4, 2), np.float32))


# ---- convolution ------------------------------------------------------------------------------

def conv(lhs, rhs, strides=None, padding="VALID", lhs_dil=None, rhs_dil=None, dn=None,
         fgc=1, bgc=1, pref=None):
    return lax.conv_general_dilated(lhs, rhs, strides or (1,) * (lhs.ndim - 2), padding,
                                    lhs_dil, rhs_dil, dn, feature_group_count=fgc,
                                    batch_group_count=bgc, preferred_element_type=pref)


@pytest.mark.parametrize("dn,lshape,rshape", [
    (("NHWC", "HWIO", "NHWC"), (2, 9, 8, 3), (3, 3, 3, 4)),
    (("NCHW", "OIHW", "NCHW"), (2, 3, 9, 8), (4, 3, 3, 2)),
    (("NHWC", "OIHW", "NCHW"), (2, 9, 8, 3), (4, 3, 2, 3)),
    (("HWCN", "IHWO", "CNHW"), (7, 8, 3, 2), (3, 2, 3, 5)),
])
@pytest.mark.parametrize("strides,padding", [((1, 1), "VALID"), ((2, 1), "SAME"),
                                             ((1, 3), ((2, 1), (0, 3)))])
def test_conv2d_layouts_strides_padding(dn, lshape, rshape, strides, padding):
    x, w = rand(*lshape), rand(*rshape)
    check(lambda x, w: conv(x, w, strides, padding, dn=dn), x, w, opcode="convolution")


def test_conv1d_and_conv3d():
    x1, w1 = rand(2, 3, 17), rand(5, 3, 4)
    check(lambda x, w: conv(x, w, (2,), "SAME"), x1, w1, opcode="convolution")
    x3, w3 = rand(1, 2, 6, 7, 5), rand(3, 2, 2, 3, 2)
    check(lambda x, w: conv(x, w, (1, 2, 1), ((1, 0), (0, 2), (1, 1))), x3, w3,
          opcode="convolution")


def test_negative_padding_crops():
    x, w = rand(1, 2, 10, 9), rand(3, 2, 3, 3)
    check(lambda x, w: conv(x, w, padding=((-2, 1), (1, -3))), x, w, opcode="convolution")


def test_lhs_dilation_transposed_conv():
    x, w = rand(2, 5, 6, 3), rand(3, 3, 3, 4)
    dn = ("NHWC", "HWIO", "NHWC")
    check(lambda x, w: conv(x, w, padding=((2, 2), (1, 2)), lhs_dil=(2, 3), dn=dn), x, w,
          opcode="convolution")
    check(lambda x, w: lax.conv_transpose(x, w, (2, 2), "SAME", dimension_numbers=dn), x, w,
          opcode="convolution")


def test_rhs_dilation():
    x, w = rand(2, 3, 12, 11), rand(4, 3, 3, 2)
    check(lambda x, w: conv(x, w, (1, 2), "SAME", rhs_dil=(2, 3)), x, w, opcode="convolution")


@pytest.mark.parametrize("groups,cin,cout", [(2, 6, 4), (3, 3, 6), (4, 4, 4)])
def test_feature_groups_and_depthwise(groups, cin, cout):
    x, w = rand(2, cin, 7, 7), rand(cout, cin // groups, 3, 3)
    check(lambda x, w: conv(x, w, (1, 1), "SAME", fgc=groups), x, w, opcode="convolution")


def test_batch_group_count_direct():
    x, w = rand(4, 3, 5, 5), rand(4, 3, 2, 2)
    check(lambda x, w: conv(x, w, bgc=2), x, w, opcode="convolution")


@pytest.mark.parametrize("groups", [1, 2, 4])
def test_grouped_conv_gradients(groups):
    # The kernel gradient of a grouped conv is a conv with batch_group_count = groups; the
    # input gradient uses lhs dilation and a reversed kernel.
    x, w = rand(3, 7, 7, 4), rand(3, 3, 4 // groups, 8)
    dn = ("NHWC", "HWIO", "NHWC")
    loss = lambda x, w: (conv(x, w, (2, 2), "SAME", dn=dn, fgc=groups) ** 2).sum()
    got, want = run_both(jax.grad(loss, argnums=(0, 1)), x, w, opcode="convolution")
    for g, v in zip(got, want):
        np.testing.assert_allclose(g, v, rtol=1e-4, atol=1e-4)


def test_conv_reversed_kernel_hand_written():
    module = parse("""
HloModule c
ENTRY e {
  x = f32[1,5,1] parameter(0)
  w = f32[3,1,1] parameter(1)
  ROOT c = f32[1,3,1] convolution(x, w), window={size=3 rhs_reversal=1}, dim_labels=b0f_0io->b0f
}""")
    x = np.arange(5, dtype=np.float32).reshape(1, 5, 1)
    w = np.array([1, 10, 100], np.float32).reshape(3, 1, 1)
    got = evaluate(module, x, w)
    np.testing.assert_array_equal(got[0, :, 0], [100 * 0 + 10 * 1 + 2, 100 + 20 + 3,
                                                 200 + 30 + 4])


def test_integer_and_low_precision_convs():
    xi = RNG.integers(-100, 100, size=(1, 6, 6, 2)).astype(np.int8)
    wi = RNG.integers(-100, 100, size=(3, 3, 2, 2)).astype(np.int8)
    dn = ("NHWC", "HWIO", "NHWC")
    check(lambda x, w: conv(x, w, dn=dn, pref=jnp.int32), xi, wi, opcode="convolution",
          exact=True)
    check(lambda x, w: conv(x, w, dn=dn), xi, wi, opcode="convolution", exact=True)
    xb, wb = rand(2, 8, 8, 3).astype(ml_dtypes.bfloat16), rand(3, 3, 3, 4).astype(
        ml_dtypes.bfloat16)
    check(lambda x, w: conv(x, w, dn=dn, pref=jnp.float32), xb, wb, opcode="convolution",
          rtol=1e-4, atol=1e-4)
    check(lambda x, w: conv(x, w, dn=dn), xb, wb, opcode="convolution", rtol=2e-2, atol=2e-2)


def test_conv_group_mismatch_is_a_project_error():
    module = parse("""
HloModule c
ENTRY e {
  x = f32[1,4,5] parameter(0)
  w = f32[4,3,1] parameter(1)
  ROOT c = f32[1,4,5] convolution(x, w), window={size=1}, dim_labels=bf0_oi0->bf0, feature_group_count=2
}""")  # noqa: E501 (HLO text: one instruction a line)
    with pytest.raises(EvaluationError, match="feature_group_count"):
        evaluate(module, np.zeros((1, 4, 5), np.float32), np.zeros((4, 3, 1), np.float32))


# ---- cholesky (the HLO opcode, run on XLA:CPU through jaxlib's HLO parser) --------------------

def _run_xla_hlo(text: str, *args) -> np.ndarray:
    """HLO text on XLA:CPU (jax emits custom-calls for Cholesky; the opcode needs the text)."""
    import jax.extend.backend
    import jaxlib._hlo as hlo
    from jax._src.lib import xla_client as xc
    module = hlo.hlo_module_from_text(text)
    comp = hlo.XlaComputation(module.as_serialized_hlo_module_proto())
    mlir = xc._xla.mlir.xla_computation_to_mlir_module(comp)
    backend = jax.extend.backend.get_backend("cpu")
    devices = xc._xla.DeviceList(tuple(backend.local_devices()[:1]))
    exe = backend.compile_and_load(str(mlir), devices, xc.CompileOptions())
    with jax.enable_x64(True):
        bufs = [jax.device_put(np.asarray(a), exe.local_devices()[0]) for a in args]
    return np.asarray(exe.execute_sharded(bufs).disassemble_into_single_device_arrays()[0][0])


def spd(shape, dtype):
    """Symmetric positive definite matrices (the last two dims)."""
    a = RNG.standard_normal(shape)
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


@pytest.mark.parametrize("t,dtype,tol", [("f32", np.float32, 1e-6), ("f64", np.float64, 1e-13),
                                         ("f16", np.float16, 3e-3),
                                         ("bf16", ml_dtypes.bfloat16, 2e-2)])
@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_matches_xla(t, dtype, tol, lower):
    """Batches of 5x5 matrices: a good one; one with garbage in the triangle that is not read
    (ignored); one that is not positive definite, one with a NaN and one with an inf in the
    read triangle (XLA: all NaN); the other triangle of a factor is zero."""
    a = spd((5, 5, 5), np.float64)
    other = np.triu(np.full((5, 5), 50.0), 1)
    a[1] += other if lower else other.T
    a[2, 3, 3] = -10.0
    a[3, 4, 1] = a[3, 1, 4] = np.nan
    a[4, 2, 0] = a[4, 0, 2] = np.inf
    a = a.astype(dtype)
    text = (f"HloModule m\nENTRY e {{\n  a = {t}[5,5,5] parameter(0)\n"
            f"  ROOT c = {t}[5,5,5] cholesky(a), lower={'true' if lower else 'false'}\n}}\n")
    want = _run_xla_hlo(text, a)
    got = evaluate(parse(text), a)
    assert got.dtype == want.dtype == a.dtype
    assert np.isnan(want[2:].astype(np.float64)).all()  # what XLA does, pinned
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol,
                               atol=tol, equal_nan=True)
    zeros = np.triu(np.ones((5, 5), bool), 1) if lower else np.tril(np.ones((5, 5), bool), -1)
    assert (got[:2][:, zeros] == 0).all()


def test_cholesky_default_is_upper_and_empty_matrices():
    a = spd((4, 4), np.float32)
    up = evaluate(parse("HloModule m\nENTRY e {\n  a = f32[4,4] parameter(0)\n"
                        "  ROOT c = f32[4,4] cholesky(a)\n}\n"), a)
    np.testing.assert_allclose(up.T @ up, a, rtol=1e-5)  # lower absent: false, as in XLA
    for dims in ("0,3,3", "2,0,0"):
        text = (f"HloModule m\nENTRY e {{\n  a = f64[{dims}] parameter(0)\n"
                f"  ROOT c = f64[{dims}] cholesky(a), lower=true\n}}\n")
        shape = tuple(int(d) for d in dims.split(","))
        assert evaluate(parse(text), np.zeros(shape)).shape == shape
