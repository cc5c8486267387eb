"""Reading a large numeric literal at machine speed (a model's weights are millions of values
of literal text): a scanner compiled with LLVM on first use reads the literal's braces,
commas and numbers in one pass, checks the nesting against the shape, and writes every
value to an array.

    values, end = scan(text, pos, dims, integer)   # flat float64 / int64 values and the
                                                   # position after the closing '}', or None

Floats: the decimal value is read exactly. A mantissa of at most 19 significant digits
that fits in 53 bits with a decimal exponent within +-22 is one exact multiplication or
division by an exact power of ten (Clinger's fast path: a single correctly rounded
operation); any other number (17-digit f64 values, subnormals, huge exponents) is read by
the C library's strtod, which rounds correctly too. The result is the correctly rounded
double, which the caller rounds to the literal's type as XLA's parser does (it reads a
double and casts). inf, -inf, nan and -nan are read; a NaN with a payload (`nan(0x..)`),
a value with more than 18 digits in an integer literal, pred, complex, anything not in
the grammar, or a nesting that does not match the shape returns None: the parser's
element-by-element path then reads it, with its precise error messages.
"""

from __future__ import annotations

import ctypes
import sys
import threading

import numpy as np
from llvmlite import ir

I1, I8, I64, F64 = ir.IntType(1), ir.IntType(8), ir.IntType(64), ir.DoubleType()
P8, P64 = I8.as_pointer(), I64.as_pointer()
_SIG = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
                        ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64)


def _c(v, t=I64):
    return ir.Constant(t, v)


def _build_module() -> ir.Module:
    """i64 xlapy_scan_literal(i8* s, i64 n, i64* dims, i64* cnt, i64 rank, i8* out,
    i64 integer): the position after the literal's closing '}' in s[0:n], or -1 - the
    position where the text left the fast grammar. cnt: rank scratch words."""
    mod = ir.Module("xlapy_literal_scan")
    strtod = ir.Function(mod, ir.FunctionType(F64, [P8, P8.as_pointer()]), "strtod")
    p10 = ir.GlobalVariable(mod, ir.ArrayType(F64, 23), "xlapy_scan_p10")
    p10.global_constant = True
    p10.initializer = ir.Constant(p10.value_type, [10.0 ** k for k in range(23)])
    fn = ir.Function(mod, ir.FunctionType(I64, [P8, I64, P64, P64, I64, P8, I64]),
                     "xlapy_scan_literal")
    s, n, dims, cnt, rank, out, integer = fn.args
    for arg in (s, dims, cnt, out):
        arg.add_attribute("noalias")
    blocks = {}

    def blk(name):
        blocks[name] = fn.append_basic_block(name)
        return blocks[name]

    entry = blk("entry")
    b = ir.IRBuilder(entry)
    pos, depth, after, idx = (b.alloca(I64, name=x) for x in ("pos", "depth", "after", "idx"))
    q_, neg_, m_, nd_, e_, any_, slow_, x_, es_ = (
        b.alloca(I64, name=x) for x in ("q", "neg", "m", "nd", "e", "any", "slow", "x", "es"))
    v_ = b.alloca(F64, name="v")
    endp = b.alloca(P8, name="endp")
    for var in (pos, depth, after, idx):
        b.store(_c(0), var)
    outf = b.bitcast(out, F64.as_pointer())
    outi = b.bitcast(out, P64)
    loop, fail = blk("loop"), blk("fail")
    b.branch(loop)

    # fail: return -1 - pos
    b.position_at_end(fail)
    b.ret(b.sub(_c(-1), b.load(pos)))

    def ch(bb, q):
        """s[q] as i64, or 0 past the end."""
        inside = bb.icmp_signed("<", q, n)
        safe = bb.select(inside, q, _c(0))
        c = bb.zext(bb.load(bb.gep(s, [safe])), I64)
        return bb.select(inside, c, _c(0))

    def fail_unless(bb, cond, name):
        ok = blk(name)
        bb.cbranch(cond, ok, fail)
        bb.position_at_end(ok)

    def dim(bb, arr, k):
        return bb.load(bb.gep(arr, [k]))

    # loop: dispatch on the next character
    b.position_at_end(loop)
    p = b.load(pos)
    fail_unless(b, b.icmp_signed("<", p, n), "in_text")
    c = ch(b, p)
    ws, opn, cls, comma, value = blk("ws"), blk("open"), blk("close"), blk("comma"), blk("value")
    sw = b.switch(c, value)
    for ch_, target in ((" ", ws), ("\n", ws), ("\t", ws), ("\r", ws), ("{", opn), ("}", cls),
                        (",", comma)):
        sw.add_case(_c(ord(ch_)), target)

    b.position_at_end(ws)
    b.store(b.add(b.load(pos), _c(1)), pos)
    b.branch(loop)

    # '{': a new level, at the start of its parent or after a ','; at most dims[d-1] of them
    b.position_at_end(opn)
    d = b.load(depth)
    fail_unless(b, b.and_(b.icmp_signed("==", b.load(after), _c(0)),
                          b.icmp_signed("<", d, rank)), "open_ok")
    top, nested = blk("open_top"), blk("open_nested")
    b.cbranch(b.icmp_signed("==", d, _c(0)), top, nested)
    b.position_at_end(nested)
    dm1 = b.sub(d, _c(1))
    fail_unless(b, b.icmp_signed("<", dim(b, cnt, dm1), dim(b, dims, dm1)), "open_room")
    b.branch(top)
    b.position_at_end(top)
    d = b.load(depth)
    b.store(_c(0), b.gep(cnt, [d]))
    b.store(b.add(d, _c(1)), depth)
    b.store(b.add(b.load(pos), _c(1)), pos)
    b.branch(loop)

    # '}': closes a level holding exactly dims[d-1] elements
    b.position_at_end(cls)
    d = b.load(depth)
    fail_unless(b, b.and_(b.icmp_signed("!=", b.load(after), _c(0)),
                          b.icmp_signed(">", d, _c(0))), "close_ok")
    dm1 = b.sub(d, _c(1))
    fail_unless(b, b.icmp_signed("==", dim(b, cnt, dm1), dim(b, dims, dm1)), "close_full")
    b.store(dm1, depth)
    p1 = b.add(b.load(pos), _c(1))
    b.store(p1, pos)
    done, more = blk("done"), blk("close_more")
    b.cbranch(b.icmp_signed("==", dm1, _c(0)), done, more)
    b.position_at_end(done)
    b.ret(p1)
    b.position_at_end(more)
    parent = b.gep(cnt, [b.sub(dm1, _c(1))])
    b.store(b.add(b.load(parent), _c(1)), parent)
    b.store(_c(1), after)
    b.branch(loop)

    # ',': after an element
    b.position_at_end(comma)
    fail_unless(b, b.icmp_signed("!=", b.load(after), _c(0)), "comma_ok")
    b.store(_c(0), after)
    b.store(b.add(b.load(pos), _c(1)), pos)
    b.branch(loop)

    # a value: at the innermost level, with room left in it
    b.position_at_end(value)
    d = b.load(depth)
    fail_unless(b, b.and_(b.icmp_signed("==", b.load(after), _c(0)),
                          b.icmp_signed("==", d, rank)), "value_ok")
    dm1 = b.sub(d, _c(1))
    fail_unless(b, b.icmp_signed("<", dim(b, cnt, dm1), dim(b, dims, dm1)), "value_room")
    p = b.load(pos)
    for var, init in ((q_, p), (neg_, _c(0)), (m_, _c(0)), (nd_, _c(0)), (e_, _c(0)),
                      (any_, _c(0)), (slow_, _c(0))):
        b.store(init, var)
    c = ch(b, p)
    minus = b.icmp_signed("==", c, _c(ord("-")))
    signed = b.or_(minus, b.icmp_signed("==", c, _c(ord("+"))))
    b.store(b.zext(minus, I64), neg_)
    b.store(b.add(p, b.zext(signed, I64)), q_)
    is_int, is_float = blk("int"), blk("float")
    b.cbranch(b.icmp_signed("!=", integer, _c(0)), is_int, is_float)

    def stored(bb, q):
        """The value is in out[idx]: count it and continue after it at q."""
        bb.store(bb.add(bb.load(idx), _c(1)), idx)
        d = bb.load(depth)
        slot = bb.gep(cnt, [bb.sub(d, _c(1))])
        bb.store(bb.add(bb.load(slot), _c(1)), slot)
        bb.store(_c(1), after)
        bb.store(q, pos)
        bb.branch(loop)

    def digits(bb, name, on_digit):
        """while s[q] is a digit: on_digit(builder, digit value); q += 1. Leaves bb after."""
        head, body, tail = blk(name + "_head"), blk(name + "_body"), blk(name + "_tail")
        bb.branch(head)
        bb.position_at_end(head)
        c = ch(bb, bb.load(q_))
        dv = bb.sub(c, _c(ord("0")))
        bb.cbranch(bb.icmp_unsigned("<", dv, _c(10)), body, tail)
        bb.position_at_end(body)
        on_digit(bb, dv)
        bb.store(bb.add(bb.load(q_), _c(1)), q_)
        bb.branch(head)
        bb.position_at_end(tail)

    # -- integer: at most 18 digits (no overflow of i64) --
    b.position_at_end(is_int)

    def int_digit(bb, dv):
        bb.store(bb.add(bb.mul(bb.load(m_), _c(10)), dv), m_)
        bb.store(bb.add(bb.load(nd_), _c(1)), nd_)
    digits(b, "idig", int_digit)
    nd = b.load(nd_)
    fail_unless(b, b.and_(b.icmp_signed(">", nd, _c(0)), b.icmp_signed("<=", nd, _c(18))),
                "int_ok")
    m = b.load(m_)
    v = b.select(b.icmp_signed("!=", b.load(neg_), _c(0)), b.sub(_c(0), m), m)
    b.store(v, b.gep(outi, [b.load(idx)]))
    stored(b, b.load(q_))

    # -- float --
    b.position_at_end(is_float)
    c = ch(b, b.load(q_))
    word_i, word_n, num = blk("word_inf"), blk("word_nan"), blk("number")
    sw = b.switch(c, num)
    sw.add_case(_c(ord("i")), word_i)
    sw.add_case(_c(ord("n")), word_n)

    def word(bb, text, value, name):
        q = bb.load(q_)
        ok = _c(1, I1)
        for k, letter in enumerate(text):
            ok = bb.and_(ok, bb.icmp_signed("==", ch(bb, bb.add(q, _c(k))), _c(ord(letter))))
        ok = bb.and_(ok, bb.icmp_signed("!=", ch(bb, bb.add(q, _c(len(text)))), _c(ord("("))))
        fail_unless(bb, ok, name)
        bb.store(ir.Constant(F64, value), v_)
        bb.store(bb.add(q, _c(len(text))), q_)
        bb.branch(blocks["signed"])

    blk("signed")
    b.position_at_end(word_i)
    word(b, "inf", float("inf"), "inf_ok")
    b.position_at_end(word_n)
    word(b, "nan", float("nan"), "nan_ok")

    b.position_at_end(num)

    def mant_digit(frac):
        def on(bb, dv):
            bb.store(_c(1), any_)
            m, nd = bb.load(m_), bb.load(nd_)
            lead = bb.and_(bb.icmp_signed("==", m, _c(0)), bb.icmp_signed("==", dv, _c(0)))
            room = bb.icmp_signed("<", nd, _c(19))
            take = bb.and_(bb.not_(lead), room)
            bb.store(bb.select(take, bb.add(bb.mul(m, _c(10)), dv), m), m_)
            bb.store(bb.select(take, bb.add(nd, _c(1)), nd), nd_)
            # a digit past the 19th: strtod reads the number
            dropped = bb.and_(bb.not_(lead), bb.not_(room))
            bb.store(bb.or_(bb.load(slow_), bb.zext(dropped, I64)), slow_)
            if frac:  # a fraction digit kept (or a leading zero) scales by 1/10
                e = bb.load(e_)
                bb.store(bb.select(bb.or_(take, lead), bb.sub(e, _c(1)), e), e_)
        return on
    digits(b, "mdig", mant_digit(False))
    dot, after_dot = blk("dot"), blk("after_dot")
    b.cbranch(b.icmp_signed("==", ch(b, b.load(q_)), _c(ord("."))), dot, after_dot)
    b.position_at_end(dot)
    b.store(b.add(b.load(q_), _c(1)), q_)
    digits(b, "fdig", mant_digit(True))
    b.branch(after_dot)
    b.position_at_end(after_dot)
    fail_unless(b, b.icmp_signed("!=", b.load(any_), _c(0)), "has_digits")
    c = ch(b, b.load(q_))
    expo, compute = blk("expo"), blk("compute")
    b.cbranch(b.or_(b.icmp_signed("==", c, _c(ord("e"))), b.icmp_signed("==", c, _c(ord("E")))),
              expo, compute)
    b.position_at_end(expo)
    q = b.add(b.load(q_), _c(1))
    c = ch(b, q)
    eminus = b.icmp_signed("==", c, _c(ord("-")))
    esigned = b.or_(eminus, b.icmp_signed("==", c, _c(ord("+"))))
    b.store(b.add(q, b.zext(esigned, I64)), q_)
    b.store(b.select(eminus, _c(-1), _c(1)), es_)
    b.store(_c(0), x_)
    b.store(_c(0), nd_)  # (reused: exponent digits)

    def exp_digit(bb, dv):
        x = bb.load(x_)
        bb.store(bb.select(bb.icmp_signed("<", x, _c(100000)), bb.add(bb.mul(x, _c(10)), dv), x),
                 x_)
        bb.store(_c(1), nd_)
    digits(b, "edig", exp_digit)
    fail_unless(b, b.icmp_signed("!=", b.load(nd_), _c(0)), "exp_digits")
    b.store(b.add(b.load(e_), b.mul(b.load(x_), b.load(es_))), e_)
    b.branch(compute)

    b.position_at_end(compute)
    m, e = b.load(m_), b.load(e_)
    fast = b.and_(b.icmp_signed("==", b.load(slow_), _c(0)),
                  b.and_(b.icmp_unsigned("<=", m, _c(1 << 53)),
                         b.and_(b.icmp_signed(">=", e, _c(-22)), b.icmp_signed("<=", e, _c(22)))))
    zero = b.icmp_signed("==", m, _c(0))
    fast = b.or_(b.and_(zero, b.icmp_signed("==", b.load(slow_), _c(0))), fast)
    clinger, libc = blk("clinger"), blk("strtod")
    b.cbranch(fast, clinger, libc)
    b.position_at_end(clinger)
    e = b.load(e_)
    ae = b.select(b.icmp_signed("<", e, _c(0)), b.sub(_c(0), e), e)
    ae = b.select(zero, _c(0), ae)
    scale = b.load(b.gep(p10, [_c(0), ae]))
    fm = b.uitofp(b.load(m_), F64)
    b.store(b.select(b.icmp_signed("<", e, _c(0)), b.fdiv(fm, scale), b.fmul(fm, scale)), v_)
    b.branch(blocks["signed"])

    b.position_at_end(libc)
    start = b.gep(s, [b.load(pos)])
    r = b.call(strtod, [start, endp])
    used = b.sub(b.ptrtoint(b.load(endp), I64), b.ptrtoint(s, I64))
    fail_unless(b, b.icmp_signed("==", used, b.load(q_)), "strtod_ok")
    b.store(r, b.gep(outf, [b.load(idx)]))
    stored(b, b.load(q_))

    b.position_at_end(blocks["signed"])
    v = b.load(v_)
    v = b.select(b.icmp_signed("!=", b.load(neg_), _c(0)), b.fneg(v), v)
    b.store(v, b.gep(outf, [b.load(idx)]))
    stored(b, b.load(q_))
    return mod


_lock = threading.Lock()
_scanner = None   # (engine, ctypes function), built on first use


def _compiled():
    global _scanner
    with _lock:
        if _scanner is None:
            import llvmlite.binding as llvm   # (loads LLVM: only when a big literal comes)
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            llvm.initialize_native_asmparser()
            mod = llvm.parse_assembly(str(_build_module()))
            mod.verify()
            tm = llvm.Target.from_default_triple().create_target_machine(opt=2, jit=True)
            pto = llvm.create_pipeline_tuning_options(speed_level=2)
            pb = llvm.create_pass_builder(tm, pto)
            pb.getModulePassManager().run(mod, pb)
            engine = llvm.create_mcjit_compiler(mod, tm)
            engine.finalize_object()
            _scanner = (engine, _SIG(engine.get_function_address("xlapy_scan_literal")))
        return _scanner[1]


# CPython keeps a str whose characters are all ASCII as one byte each right after its
# header (PEP 393's compact ASCII form), so the scanner can read the text in place instead
# of a copy of it (encoding 120 MB of literal text costs about a quarter of the scan).
_ASCII_HEADER = sys.getsizeof("") - 1 if sys.implementation.name == "cpython" else None


def _address(text: str):
    """The address of the text's characters when they are stored one byte each, or None."""
    if _ASCII_HEADER is not None and type(text) is str and text.isascii() and text:
        addr = id(text) + _ASCII_HEADER
        probe = text[:16]
        if ctypes.string_at(addr, len(probe)) == probe.encode():
            return addr
    return None


def scan(text: str, pos: int, dims: tuple, integer: bool):
    """(values, end): the values of the literal starting at text[pos] ('{'), flat, as
    float64 (int64 when integer), and the position after its closing '}'; None when the
    text is outside the fast grammar (see the module docstring)."""
    size = int(np.prod(dims)) if dims else 0
    if size == 0:
        return None
    where = _address(text)
    if where is None:   # (not compact ASCII: a copy of the literal's text, to its ')')
        stop = text.find(")", pos)
        raw = text[pos:stop if stop >= 0 else len(text)].encode("ascii", errors="replace")
        owner, addr, n = raw, ctypes.cast(ctypes.c_char_p(raw), ctypes.c_void_p).value, len(raw)
    else:
        owner, addr, n = text, where + pos, len(text) - pos
    out = np.empty(size, dtype=np.int64 if integer else np.float64)
    dims_arr = np.asarray(dims, dtype=np.int64)
    cnt = np.zeros(len(dims), dtype=np.int64)
    end = _compiled()(addr, n, dims_arr.ctypes.data, cnt.ctypes.data, len(dims),
                      out.ctypes.data, int(integer))
    del owner
    return None if end < 0 else (out, pos + end)
