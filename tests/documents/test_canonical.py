import io
import math

from hypothesis import given, settings, strategies as st
from ruamel.yaml import YAML

from xdoe.documents import dump_canonical, format_float

_yaml = YAML(typ="safe", pure=True)


def _load(text: str):
    return _yaml.load(io.StringIO(text))


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.text(st.characters(exclude_categories=("Cs",)), max_size=20),
    st.sampled_from(["yes", "No", "on", "null", "~", "1.5", "0x1F", "1e3", "a: b", "- x", "#c", "", " ", "é", "\u2028", "\x85", "key:"]),
)
keys = st.one_of(st.text(st.characters(exclude_categories=("Cs",)), max_size=10), st.integers(-5, 5))
data = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(data)
def test_round_trips_through_ruamel(value) -> None:
    text = dump_canonical(value)
    assert _load(text) == value
    assert dump_canonical(_load(text)) == text  # stable


@given(st.dictionaries(st.text(max_size=5), st.integers(), max_size=6))
def test_keys_sorted(mapping) -> None:
    text = dump_canonical({"m": mapping})
    assert _load(text) == {"m": mapping}
    assert list(_load(text)["m"]) == sorted(mapping)


def test_float_format() -> None:
    assert format_float(1e-05) == "1.0e-05"
    assert format_float(0.1) == "0.1"
    assert format_float(1e16) == "1.0e+16"
    assert format_float(math.inf) == ".inf"
    assert format_float(-math.inf) == "-.inf"
    assert format_float(math.nan) == ".nan"
    assert _load(dump_canonical([1e-05, 2.5e300]))[0] == 1e-05


def test_shape() -> None:
    text = dump_canonical({"b": [1, {"z": [], "x": {}}], "a": "xdoe.agents:DummyBrain", "c": "true"})
    assert text == (
        "a: xdoe.agents:DummyBrain\n"
        "b:\n"
        "  - 1\n"
        "  - x: {}\n"
        "    z: []\n"
        'c: "true"\n'
    )
