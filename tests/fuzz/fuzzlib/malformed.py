"""The malformed-input fuzzer: mutated HLO and StableHLO text, hostile npz input files.

Only two outcomes are right for a mutant: it is accepted (then the HLO passes run on it
too), or it is rejected with xlapy's own error (xlapy.errors) naming where the problem is:
a parse error's `<hlo>:LINE:COL:` position, or the instruction or computation it is about.
Any other exception, an error without a position, or a hang (the campaign's per-mutant
timeout) is a finding. StableHLO text (the .mlir corpus) is mutated the same way.

npz inputs go through run-hlo's loading (xlapy.tools.run_hlo) and the interpreter's
argument checks: truncated or corrupt files, pickled object arrays, wrong counts, dtypes,
shapes and ranks must end in run-hlo's "error:" exit or an InputError.
"""

from __future__ import annotations

import io
import re
import zipfile

import numpy as np

from xlapy.errors import XlapyError

_TOKEN = re.compile(r"[A-Za-z_][\w.\-]*|-?\d+(?:\.\d+)?(?:e-?\d+)?|\S")
_NUMBERS = ["0", "-1", "1", "2147483648", "9223372036854775808", "-9223372036854775809",
            "99999999999999999999", "1e999", "nan", "-0", "65536"]
_WORDS = ["f32", "s4", "u1", "f8e4m3", "tuple", "ROOT", "ENTRY", "parameter", "constant",
          "fusion", "while", "call", "to_apply", "dimensions", "slice", "{", "}", "(", ")",
          "[", "]", ",", "=", "->", "%", "\x00", "\u00e9", "\"", "/*", "f32[]", "pred[]"]
_POSITION = re.compile(r"<(hlo|stablehlo)>:\d+:\d+:|\b(computation|instruction) %?[\w.\-]+")


def mutate(text: str, rng: np.random.Generator, rounds: int = 0) -> str:
    """One to three random edits of `text` (token, line or byte level)."""
    for _ in range(rounds or int(rng.integers(1, 4))):
        toks = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
        if not toks:
            return text
        a, b = toks[int(rng.integers(len(toks)))]
        kind = int(rng.integers(9))
        if kind == 0:  # delete a token
            text = text[:a] + text[b:]
        elif kind == 1:  # duplicate a token
            text = text[:b] + " " + text[a:b] + text[b:]
        elif kind == 2:  # a number replaced by an extreme one
            nums = [t for t in toks if re.fullmatch(r"-?\d+", text[t[0]:t[1]])]
            if nums:
                a, b = nums[int(rng.integers(len(nums)))]
            text = text[:a] + _NUMBERS[int(rng.integers(len(_NUMBERS)))] + text[b:]
        elif kind == 3:  # a token replaced by a keyword or punctuation
            text = text[:a] + _WORDS[int(rng.integers(len(_WORDS)))] + text[b:]
        elif kind == 4:  # a token replaced by another token of the text
            c, d = toks[int(rng.integers(len(toks)))]
            text = text[:a] + text[c:d] + text[b:]
        elif kind == 5:  # truncation
            text = text[:int(rng.integers(len(text) + 1))]
        elif kind == 6:  # a line deleted or duplicated
            lines = text.split("\n")
            k = int(rng.integers(len(lines)))
            lines[k:k + 1] = [] if rng.random() < 0.5 else [lines[k], lines[k]]
            text = "\n".join(lines)
        elif kind == 7:  # two lines swapped
            lines = text.split("\n")
            i, j = (int(x) for x in rng.integers(len(lines), size=2))
            lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
        else:  # a random character
            ch = chr(int(rng.choice([0, 9, 10, 34, 37, 44, 61, 91, 93, 123, 125, 0xE9, 0x2028])))
            text = text[:a] + ch + text[a:]
    return text


def check_text(text: str, dialect: str = "hlo") -> str | None:
    """None if xlapy handles `text` (HLO, or StableHLO: dialect "stablehlo") properly, else
    what went wrong."""
    from xlapy.backends.cpu.passes.pipeline import run_cpu_pipeline
    from xlapy.hlo.parser import parse
    from xlapy.hlo.stablehlo import parse_stablehlo
    from xlapy.hlo.verifier import verify
    try:
        module = parse(text) if dialect == "hlo" else parse_stablehlo(text)
    except XlapyError as e:
        return None if _POSITION.search(str(e)) else f"error without a position: {e}"[:400]
    except RecursionError:
        return "RecursionError while parsing"
    except Exception as e:
        return f"parse raised {type(e).__name__}: {e}"[:400]
    try:
        verify(module)  # (as compile does first)
    except XlapyError as e:
        return None if _POSITION.search(str(e)) else f"error without a position: {e}"[:400]
    except Exception as e:
        return f"the verifier raised {type(e).__name__}: {e}"[:400]
    try:
        run_cpu_pipeline(module)
    except XlapyError:
        return None
    except Exception as e:
        return f"the HLO passes raised {type(e).__name__}: {e}"[:400]
    return None


# ---- npz ---------------------------------------------------------------------------------------
def npz_bytes(arrays: list) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, *arrays)
    return buf.getvalue()


def hostile_npz(shapes_dtypes: list, rng: np.random.Generator) -> bytes:
    """The bytes of an npz file meant for parameters of the given (shape, dtype)s, spoiled."""
    good = [np.zeros(s, d) for s, d in shapes_dtypes]
    kind = int(rng.integers(9))
    if kind == 0:  # truncated
        data = npz_bytes(good)
        return data[:int(rng.integers(len(data)))]
    if kind == 1:  # bytes flipped
        data = bytearray(npz_bytes(good))
        for _ in range(int(rng.integers(1, 8))):
            data[int(rng.integers(len(data)))] = int(rng.integers(256))
        return bytes(data)
    if kind == 2:  # a pickled object array
        return npz_bytes([np.array([{"a": 1}, None], dtype=object)] + good[1:])
    if kind == 3:  # one array too few or too many
        return npz_bytes(good[:-1] if good and rng.random() < 0.5 else good + [np.ones(3)])
    if kind == 4:  # wrong dtype
        return npz_bytes([a.astype(np.complex64) if rng.random() < 0.5 else a.astype(np.int8)
                          for a in good])
    if kind == 5:  # wrong shape / rank
        return npz_bytes([np.zeros(a.shape + (2,), a.dtype) if rng.random() < 0.5
                          else np.zeros((0,), a.dtype) for a in good])
    if kind == 6:  # not a zip at all
        return bytes(rng.integers(0, 256, size=int(rng.integers(0, 64)), dtype=np.uint8))
    if kind == 7:  # a zip whose member is not an .npy
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("arr_0.npy", b"\x93NUMPY\x01\x00\xff\xff{'descr': '<f4', }")
        return buf.getvalue()
    # a header claiming a huge shape
    data = npz_bytes(good)
    return data.replace(b"'shape': (", b"'shape': (99999999999, ", 1)


def check_npz(hlo_text: str, data: bytes, path) -> str | None:
    """None if run-hlo's loading and the interpreter reject the file properly (or run it)."""
    from xlapy.backends.base import get_platform
    from xlapy.hlo.parser import parse
    from xlapy.tools import run_hlo
    path.write_bytes(data)
    module = parse(hlo_text)
    try:
        arrays = run_hlo._load_inputs(str(path))
        inputs = run_hlo._group_for_parameters(arrays, [p.shape for p in
                                                        module.entry.parameters])
        get_platform("interpreter").compiler.compile(module).run(*inputs)
    except SystemExit as e:
        return None if "error:" in str(e) else f"SystemExit without an error: {e}"[:400]
    except XlapyError:
        return None
    except Exception as e:
        return f"{type(e).__name__}: {e}"[:400]
    return None
