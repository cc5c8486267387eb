"""tf.nest: nested structures of tensors (lists, tuples, namedtuples, dicts).

Control flow (while_loop's loop_vars, cond's branch outputs, map_fn's elems, RNN states
such as LSTMStateTuple) takes and returns such structures; these helpers flatten them into
a list of leaves and rebuild them, as TF's nest module does. Dicts are flattened in sorted
key order, as in TF.
"""

from __future__ import annotations

from xlapy.compat.v1.errors import InvalidArgumentError, InvalidTypeError


def is_sequence(x) -> bool:
    return isinstance(x, (list, tuple, dict))


is_nested = is_sequence


def _children(x) -> list:
    if isinstance(x, dict):
        return [x[k] for k in sorted(x)]
    return list(x)


def flatten(structure) -> list:
    """The leaves of `structure`, depth first (a leaf alone gives [leaf])."""
    if not is_sequence(structure):
        return [structure]
    out = []
    for c in _children(structure):
        out.extend(flatten(c))
    return out


def _rebuild(like, children):
    if isinstance(like, dict):
        return type(like)((k, v) for k, v in zip(sorted(like), children))
    if isinstance(like, tuple) and hasattr(like, "_fields"):
        return type(like)(*children)
    return type(like)(children)


def pack_sequence_as(structure, flat_sequence):
    """`flat_sequence`'s leaves in `structure`'s shape."""
    flat = list(flat_sequence)
    pos = [0]

    def build(s):
        if not is_sequence(s):
            if pos[0] >= len(flat):
                raise InvalidArgumentError(f"pack_sequence_as: the structure has more leaves "
                                           f"than the {len(flat)} given")
            pos[0] += 1
            return flat[pos[0] - 1]
        return _rebuild(s, [build(c) for c in _children(s)])
    out = build(structure)
    if pos[0] != len(flat):
        raise InvalidArgumentError(f"pack_sequence_as: the structure has {pos[0]} leaves but "
                                   f"{len(flat)} were given")
    return out


def assert_same_structure(nest1, nest2, check_types=True) -> None:
    def walk(a, b, path):
        if is_sequence(a) != is_sequence(b):
            raise InvalidArgumentError(f"The two structures don't have the same nested "
                                       f"structure at {path or 'the top'}: {a!r} vs {b!r}")
        if not is_sequence(a):
            return
        if check_types and type(a) is not type(b) and not (
                isinstance(a, list) and isinstance(b, list)):
            raise InvalidTypeError(f"The two structures don't have the same sequence type at "
                                   f"{path or 'the top'}: {type(a).__name__} vs "
                                   f"{type(b).__name__}")
        ca, cb = _children(a), _children(b)
        if len(ca) != len(cb) or (isinstance(a, dict) and sorted(a) != sorted(b)):
            raise InvalidArgumentError(f"The two structures don't have the same number of "
                                       f"elements at {path or 'the top'}: {len(ca)} vs "
                                       f"{len(cb)}")
        for i, (x, y) in enumerate(zip(ca, cb)):
            walk(x, y, f"{path}[{i}]")
    walk(nest1, nest2, "")


def map_structure(func, *structures, **kwargs):
    if not structures:
        raise InvalidArgumentError("map_structure needs at least one structure")
    for s in structures[1:]:
        assert_same_structure(structures[0], s, kwargs.get("check_types", True))
    flats = [flatten(s) for s in structures]
    return pack_sequence_as(structures[0], [func(*xs) for xs in zip(*flats)])
