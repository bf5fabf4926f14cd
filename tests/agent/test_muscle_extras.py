"""``Muscle.extras``: the base class makes the class default ``None`` the
instance's own attribute (the executor reads it at every step, and CPython
specialises that read only for an instance attribute), and leaves alone
every muscle whose ``extras`` is something else."""

from typing import Any

from xdoe.agent import Muscle


class Plain(Muscle):
    def propose_values(self, observation: Any) -> Any:
        return 0

    def update(self, update: Any) -> None:
        pass


class ReadOnly(Plain):
    def __init__(self, uid: str, seed: int = 0) -> None:
        super().__init__(uid=uid, seed=seed)
        self.proposals = 0

    @property
    def extras(self) -> dict[str, Any]:  # not readable before __init__ ends: the base class never reads it
        return {"proposals": self.proposals}


class ClassDict(Plain):
    extras = {"shared": 1}  # noqa: RUF012 - a class-level value on purpose


class SetFirst(Plain):
    def __init__(self, uid: str, seed: int = 0) -> None:
        self.extras = {"early": 1}
        super().__init__(uid=uid, seed=seed)


def test_the_default_is_the_instances_own_none():
    muscle = Plain(uid="a", seed=1)
    assert vars(muscle)["extras"] is None
    assert muscle.extras is None
    muscle.extras = {"x": 1.0}
    assert Plain(uid="b").extras is None  # one muscle's value is not another's


def test_a_read_only_property_is_kept():
    muscle = ReadOnly(uid="a")
    assert "extras" not in vars(muscle)
    assert muscle.extras == {"proposals": 0}


def test_a_class_value_and_a_value_set_before_the_base_init_are_kept():
    assert ClassDict(uid="a").extras == {"shared": 1}
    assert "extras" not in vars(ClassDict(uid="a"))
    assert SetFirst(uid="a").extras == {"early": 1}
