import pytest

from xdoe.documents import Reference, ReferenceSyntaxError, is_reference, parse_reference


@pytest.mark.parametrize(
    "text, phase, index",
    [
        ("$req($prev)", None, None),
        ("$req(phase=0, index=1)", 0, 1),
        ("  $req( index = 2 , phase = 3 )  ", 3, 2),
        ("$req($prev, index=0)", None, 0),
        ("$req(phase=training)", "training", None),
    ],
)
def test_valid_references(text: str, phase, index) -> None:
    ref = parse_reference(text)
    assert (ref.phase, ref.index, ref.unclosed) == (phase, index, False)


def test_missing_closing_parenthesis_is_accepted_and_marked() -> None:
    ref = parse_reference("$req(phase=0, index=1")
    assert ref == Reference(phase=0, index=1, text="$req(phase=0, index=1", unclosed=True)


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("$req(phase=0, item=1)", "unknown argument 'item'"),
        ("$req(phase=0, phase=1)", "given twice"),
        ("$req($prev, phase=1)", "given twice"),
        ("$req(index=-1, phase=0)", "index must be >= 0"),
        ("$req(phase=)", "expected a phase index or name"),
        ("$req(index=x, $prev)", "expected a non-negative integer"),
        ("$req()", "needs $prev or phase=P"),
        ("$req(index=1)", "needs $prev or phase=P"),
        ("$req($next)", "unknown variable '$next'"),
        ("$req($prev) tail", "unexpected 'tail'"),
        ("$req($prev))", "unexpected ')'"),
        ("$req phase=0", "expected '(' after $req"),
        ("$req(phase=0; index=1)", "unexpected character ';'"),
        ("$req(phase 0)", "expected '=' after phase"),
    ],
)
def test_malformed_references(text: str, fragment: str) -> None:
    with pytest.raises(ReferenceSyntaxError) as info:
        parse_reference(text)
    assert fragment in str(info.value)


def test_target_index() -> None:
    names = ["train", "test", "again"]
    assert parse_reference("$req($prev)").target_index(2, names) == 1
    assert parse_reference("$req(phase=train)").target_index(2, names) == 0
    with pytest.raises(ValueError, match="no previous phase"):
        parse_reference("$req($prev)").target_index(0, names)
    with pytest.raises(ValueError, match="out of range"):
        parse_reference("$req(phase=1)").target_index(1, names)
    with pytest.raises(ValueError, match="not an earlier phase"):
        parse_reference("$req(phase=again)").target_index(1, names)


def test_is_reference() -> None:
    assert is_reference(" $req($prev)")
    assert not is_reference("agent_$req")
    assert not is_reference(["$req($prev)"])
