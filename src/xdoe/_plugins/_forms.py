"""The two forms of a plugin method and how one is derived from the other.

The executor calls the *value form* of every plugin method (a step as plain
values, as gymnasium's ``Env.step``); plugin authors may write either form.
When a class body defines one form of a pair and not the other, the other
form of that class is derived from it (:func:`derive_forms`, called from the
base classes' ``__init_subclass__``). A derived method calls the function
defined in the same class body, not ``self.<name>``, so ``super()`` calls
between the two forms cannot recurse. A class body that defines both forms
is its author's explicit choice: the two must then agree (the built-in
components do this for speed: the value form for the executor, the object
form for callers that hold information objects).

Values: the value of a group of sensors or actuators is the plain value of
its only member when it has one, else a dict ``uid -> value`` in the group's
order (:func:`values_of`, :func:`items_of`). Rewards are always a dict
``uid -> float`` (their number and ids may change from step to step).
"""

from __future__ import annotations

import inspect
import warnings
import weakref
from typing import Any, Callable, Sequence

__all__ = ["DERIVED", "derive_forms", "is_derived", "is_derived_code", "items_of", "propose_through_objects",
           "retire_value_steps", "think_through_objects", "values_of"]

#: the attribute that marks a derived method
DERIVED = "__xdoe_derived__"
#: the code objects of the derived methods (the watchdog names the method a plugin wrote, not these)
_CODES: set[Any] = set()


def derive_forms(cls: type, general: str, value: str,
                 to_value: Callable[[Callable[..., Any]], Callable[..., Any]],
                 to_general: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
    """Give ``cls`` the form of the pair ``(general, value)`` its body does
    not define, made by ``to_value(function)`` / ``to_general(function)``
    from the one it defines (nothing when it defines both or neither)."""
    own = vars(cls)
    if general in own and value not in own:
        made = to_value(own[general])
        name = value
    elif value in own and general not in own:
        made = to_general(own[value])
        name = general
    else:
        return
    setattr(made, DERIVED, True)
    _CODES.add(made.__code__)
    made.__name__ = name
    made.__qualname__ = f"{cls.__qualname__}.{name}"
    setattr(cls, name, made)


def retire_value_steps(cls: type, marks: Sequence[str], clashes: dict[str, int | None]) -> None:
    """Run a plugin written against the value-step API that issue 23 replaced
    (``value_steps``, ``value_ids``, ``propose_action_value``,
    ``thinking_values(observation, action, objective, next_observation,
    done, truncated)``, ``internal_reward_value``, ``update_values(action)``
    with a float reward) unchanged, through its object form: that API
    required both forms to give the same results.

    A class is of the former API when its body defines one of ``marks``, when
    it defines a method named in ``clashes`` taking exactly ``clashes[name]``
    parameters after ``self`` of which the first is ``observation`` (the
    former ``thinking_values``; ``None``: not a sign by itself), or when it
    defines one of ``clashes`` below such a class. Its methods named in
    ``clashes`` (names the new value forms use) are then removed from it
    before :func:`derive_forms` runs, so its value form is derived from (or
    inherited with) its object form; a :class:`DeprecationWarning` at the
    class statement names them."""
    own = vars(cls)
    former = [name for name in marks if name in own]
    for name, arity in clashes.items():
        function = own.get(name)
        if arity is not None and callable(function):
            parameters = list(inspect.signature(function).parameters)[1:]
            if len(parameters) == arity and parameters[0] == "observation":
                former.append(name)
    inherited = any(base in _FORMER for base in cls.__mro__[1:]) and any(name in own for name in clashes)
    if not former and not inherited:
        return
    _FORMER.add(cls)
    for name in clashes:
        if name in own:
            delattr(cls, name)
            former.append(name)
    warnings.warn(f"{cls.__qualname__} defines {', '.join(sorted(set(former)))} of xdoe's former value-step "
                  f"API, which is no longer called: it is stepped through its object form (docs/plugins.md, "
                  f"'A step'; write the value form there to keep the speed)", DeprecationWarning, stacklevel=4)


#: the classes of the former value-step API (:func:`retire_value_steps`); kept here, not on the classes
_FORMER: "weakref.WeakSet[type]" = weakref.WeakSet()


def is_derived(cls: type, name: str) -> bool:
    """Whether ``cls.<name>`` is a derived form (see :func:`derive_forms`)."""
    return getattr(getattr(cls, name, None), DERIVED, False) is True


def is_derived_code(code: Any) -> bool:
    """Whether ``code`` is the code object of a derived method."""
    return code in _CODES


def values_of(items: Sequence[Any]) -> Any:
    """The value form of sensor or actuator information objects: the only
    item's ``value``, else ``{item.uid: item.value}``."""
    if len(items) == 1:
        return items[0].value
    return {item.uid: item.value for item in items}


def items_of(kind: type, specs: Sequence[tuple[str, Any]], value: Any) -> list[Any]:
    """Information objects ``kind(uid, space, value)`` of the value form
    ``value`` of the group ``specs`` (``(uid, space)`` pairs): one object when
    the group has one member, else one per key of the dict ``value`` (in the
    group's order; a key outside the group raises ``ValueError``)."""
    if len(specs) == 1:
        uid, space = specs[0]
        return [kind(uid, space, value)]
    if value is None:
        return []
    spaces = dict(specs)
    for uid in value:
        if uid not in spaces:
            raise ValueError(f"{uid!r} is not one of {', '.join(spaces) or 'none'}")
    return [kind(uid, space, value[uid]) for uid, space in specs if uid in value]


# -- the object forms called with values -------------------------------------------------------
# One implementation, used by the derived value forms of the base classes (their ids and spaces from
# the plugin's public ``sensors``/``actuators``) and by the executor's adapters (from what it holds).

def propose_through_objects(propose_actions: Callable[[list[Any], list[Any]], list[Any]], observation: Any,
                            sensors: Sequence[tuple[str, Any]], actuators: Sequence[tuple[str, Any]],
                            kinds: tuple[type, type], agent: str) -> Any:
    """The value form of a muscle's ``propose_actions`` (bound) for the agent
    ``agent`` whose sensors and actuators are ``sensors``/``actuators``
    (``(uid, space)`` pairs): ``observation`` becomes sensor objects, empty
    actuator objects are proposed on, the answer becomes the value form
    (``kinds``: the classes ``SensorInformation``, ``ActuatorInformation``).
    Raises :class:`~xdoe.errors.RunError` for an actuator the agent does not own."""
    sensor_kind, actuator_kind = kinds
    acted = propose_actions(items_of(sensor_kind, sensors, observation),
                            [actuator_kind(uid, space) for uid, space in actuators])
    if len(actuators) == 1:
        uid = actuators[0][0]
        if len(acted) == 1 and acted[0].uid == uid:
            return acted[0].value
    ids = {uid for uid, _ in actuators}
    for action in acted:
        if action.uid not in ids:
            from xdoe.errors import RunError

            raise RunError(f"agent {agent!r} set actuator {action.uid!r}, which is not assigned to it "
                           f"(assigned: {', '.join(uid for uid, _ in actuators) or 'none'})")
    if len(actuators) == 1:
        return next((a.value for a in acted if a.value is not None), None)
    return {a.uid: a.value for a in acted}


def think_through_objects(thinking: Callable[[Any], Any], step: tuple[Any, ...],
                          sensors: Sequence[tuple[str, Any]], actuators: Sequence[tuple[str, Any]],
                          kinds: tuple[type, type, type, type]) -> Any:
    """The value form of a brain's ``thinking`` (bound): ``step``, the
    arguments of ``thinking_values`` ``(worker, episode, step, observation,
    action, rewards, objective, next_observation, done, extras, truncated)``,
    becomes one ``Experience`` of the objects of the agent's ``sensors`` and
    ``actuators`` (``(uid, space)`` pairs; ``kinds``: the classes
    ``Experience``, ``SensorInformation``, ``ActuatorInformation``,
    ``RewardInformation``); returns what ``thinking`` returns."""
    experience, sensor_kind, actuator_kind, reward_kind = kinds
    worker, episode, number, observation, action, rewards, objective, next_observation, done, extras, \
        truncated = step
    return thinking(experience(
        worker, episode, number, items_of(sensor_kind, sensors, observation), items_of(actuator_kind, actuators, action),
        [reward_kind(uid, value) for uid, value in rewards.items()], objective,
        items_of(sensor_kind, sensors, next_observation), done, extras, truncated))
