import pytest

from xdoe.documents import PlaceholderError, interpolate, substitute
from xdoe.documents._placeholders import find_placeholders


def test_whole_string_keeps_the_type() -> None:
    values = {"a": 0.5, "n": 3, "flag": True, "keys": ["x", "y"], "none": None}
    assert interpolate("${a}", values) == 0.5
    assert interpolate(" ${ n } ", values) == 3
    assert interpolate("${keys}", values) == ["x", "y"]
    assert interpolate("${none}", values) is None


def test_interpolation_formats_like_canonical_yaml() -> None:
    values = {"a": 1e-05, "n": 3, "flag": False, "s": "txt", "none": None}
    assert interpolate("lr=${a}", values) == "lr=1.0e-05"
    assert interpolate("${n}-${flag}-${s}-${none}", values) == "3-false-txt-null"
    assert interpolate("cost $${a} is ${n}", values) == "cost ${a} is 3"
    with pytest.raises(PlaceholderError, match="cannot interpolate a list"):
        interpolate("x${k}", {"k": [1]})


def test_substitute_copies_containers() -> None:
    template = {"p": ["${a}", {"q": "v${a}"}], "c": 1}
    out = substitute(template, {"a": 2})
    assert out == {"p": [2, {"q": "v2"}], "c": 1}
    assert out["p"] is not template["p"]


def test_find_placeholders() -> None:
    found = list(find_placeholders({"a": ["${x}", "y${z}w${x}"]}))
    assert found == [(("a", 0), "x", True), (("a", 1), "z", False), (("a", 1), "x", False)]
    with pytest.raises(PlaceholderError, match="empty placeholder"):
        list(find_placeholders("${}"))
    with pytest.raises(PlaceholderError, match="without a closing"):
        list(find_placeholders({"k": "${open"}))
