"""The tf2xla Config text-format reader (the subset tfcompile's configs use)."""

import pytest

from xlapy.aot.config import parse_config
from xlapy.errors import AotError

TEXT = """
# feeds, fetches and variables as tfcompile's examples write them
feed {
  id { node_name: "x" }
  shape { dim { size: 1 } dim { size: 784 } }
  name: "image"
  type: DT_FLOAT
}
feed: < id: { node_name: 'y' output_index: 1 } name: "why" >
fetch { id { node_name: "out" } name: "out" }
variable { node_name: "w" name: "weights" shape { dim { size: 3 } } type: DT_DOUBLE
           readonly: true }
variable { node_name: "v" }
"""


def test_reads_feeds_fetches_and_variables():
    c = parse_config(TEXT, "m.pbtxt")
    assert [(f.id.node_name, f.id.output_index, f.shape, f.name, f.type) for f in c.feeds] == \
        [("x", 0, [1, 784], "image", "f32"), ("y", 1, None, "why", None)]
    assert [(f.id.node_name, f.name) for f in c.fetches] == [("out", "out")]
    assert [(v.node_name, v.name, v.shape, v.type, v.readonly) for v in c.variables] == \
        [("w", "weights", [3], "f64", True), ("v", "", None, None, False)]
    assert c.feeds[0].where == "m.pbtxt:3:6"


@pytest.mark.parametrize("text,message", [
    ('feed { id { node_name: "x" } foo: 1 }', r"c:1:30: unknown field 'foo' in a feed; "
                                              r"known fields: id, shape, name, type"),
    ('fetch { id { } }', r"c:1:12: a fetch's id needs a node_name"),
    ('feed { id { node_name: "x" }', r"c:1:28: expected a field name, found the end"),
    ('fetch { id { node_name: "x" } name: 3 }', r"field 'name' of a fetch must be a string"),
    ('fetch { id { node_name: "x" } name: "a" name: "b" }', r"field 'name' of a fetch given "
                                                            r"twice"),
    ('feed { id { node_name: "x" } type: DT_STRING }', r"type 'DT_STRING' of feed x:0 is not "
                                                       r"one of DT_FLOAT"),
    ('feed { id { node_name: "x" } shape { unknown_rank: true } }', r"unknown rank"),
    ('bar: 1', r"c:1:1: unknown field 'bar' in the config; known fields: feed, fetch, variable"),
    ('feed { id { node_name: "x" } }', r"c: the config fetches nothing"),
    ('fetch { id { node_name: "x" } } ]', r"c:1:33: expected a field name, found ']'"),
    ('fetch { id { node_name: "x\\', r"c:1:25: unexpected character"),
])
def test_errors_name_the_place_and_the_problem(text, message):
    with pytest.raises(AotError, match=message):
        parse_config(text, "c")
