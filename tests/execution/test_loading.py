"""Dynamic loading of components: messages name the document key, the module
and attribute tried, the underlying error and the accepted parameters."""

from __future__ import annotations

import pytest

from xdoe.errors import ComponentError
from xdoe.execution import accepted_parameters, construct, load_class

KEY = "schedule[0].training.agents[0].brain"


def test_both_address_forms_and_dotted_paths():
    from xdoe.agents import QLearningBrain
    from xdoe.agents._qlearning import QLearningBrain as Same

    assert load_class("xdoe.agents:QLearningBrain", KEY) is QLearningBrain
    assert load_class("xdoe.agents._qlearning:QLearningBrain", KEY) is Same
    assert load_class("xdoe.agents.QLearningBrain", KEY) is QLearningBrain


def test_unknown_module_names_key_module_and_cause():
    with pytest.raises(ComponentError) as info:
        load_class("xdoe.agnets:QLearningBrain", KEY)
    msg = str(info.value)
    assert msg.startswith(KEY + ": cannot import module 'xdoe.agnets'")
    assert "ModuleNotFoundError" in msg


def test_unknown_attribute_suggests_close_names():
    with pytest.raises(ComponentError) as info:
        load_class("xdoe.agents:QLearnigBrain", KEY)
    assert "has no attribute 'QLearnigBrain'" in str(info.value)
    assert "did you mean QLearningBrain" in str(info.value)


def test_wrong_base_class_and_not_a_class():
    from xdoe.agent import Muscle

    with pytest.raises(ComponentError, match="not a subclass of xdoe.agent._agent.Muscle"):
        load_class("xdoe.agents:QLearningBrain", KEY, base=Muscle)
    with pytest.raises(ComponentError, match="is not a class"):
        load_class("xdoe.execution:run", KEY)
    with pytest.raises(ComponentError, match="expected a component name"):
        load_class("NoModule", KEY)


def test_wrong_parameter_lists_the_accepted_ones():
    from xdoe.agents import QLearningBrain

    with pytest.raises(ComponentError) as info:
        construct(QLearningBrain, KEY, {"alhpa": 0.1}, seed=1)
    msg = str(info.value)
    assert msg.startswith(KEY + ".params: xdoe.agents._qlearning:QLearningBrain does not accept")
    assert "'alhpa' (did you mean 'alpha'?)" in msg
    assert "accepted parameters: alpha, gamma, initial_q" in msg


def test_missing_parameter_and_constructor_errors():
    from components import ImportTimeConfused
    from xdoe.agents import QLearningBrain

    with pytest.raises(ComponentError, match=r"requires layers; accepted parameters: layers"):
        construct(ImportTimeConfused, KEY, {}, seed=0)
    with pytest.raises(ComponentError) as info:
        construct(QLearningBrain, KEY, {"alpha": 7}, seed=0)
    assert "QLearningBrain(...) raised ValueError" in str(info.value)
    with pytest.raises(ComponentError, match="set by the executor"):
        construct(QLearningBrain, KEY, {"seed": 3}, seed=0)


def test_open_ended_params_are_passed_on_and_refused_by_the_constructor():
    from xdoe.environments import GymnasiumEnvironment

    names, open_ended = accepted_parameters(GymnasiumEnvironment)
    assert open_ended and names[:3] == ["uid", "seed", "env_id"]
    env = construct(GymnasiumEnvironment, "e", {"env_id": "Taxi-v4", "max_episode_steps": 5},
                    uid="taxi", seed=1)
    assert env.make_kwargs == {"max_episode_steps": 5}
    with pytest.raises(ComponentError, match="raised ValueError: gymnasium cannot make"):
        construct(GymnasiumEnvironment, "e", {"env_id": "Taxi-v4", "bogus": 1}, uid="t", seed=1)


def test_following_params_up_the_mro():
    from xdoe.agent import Brain

    class Base(Brain):
        def __init__(self, seed: int = 0, depth: int = 1, **params):
            super().__init__(seed=seed, **params)

    class Child(Base):
        def __init__(self, width: int = 2, **params):
            super().__init__(**params)

        def thinking(self, experience):
            return None

    assert accepted_parameters(Child) == (["width", "seed", "depth"], True)
    with pytest.raises(ComponentError) as info:
        construct(Child, KEY, {"widht": 3}, seed=0)
    assert "accepted parameters: width, depth" in str(info.value)
