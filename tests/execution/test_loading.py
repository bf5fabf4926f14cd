"""Dynamic loading of components: messages name the document key, the module
and attribute tried, the underlying error and the accepted parameters."""

from __future__ import annotations

import pytest

from xdoe.errors import ComponentError
from xdoe.execution import accepted_parameters, construct, load_class

KEY = "schedule[0].training.agents[0].brain"


def test_both_address_forms_and_dotted_paths():
    from xdoe.components.agents import QLearningBrain
    from xdoe.components.agents._qlearning import QLearningBrain as Same

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

    with pytest.raises(ComponentError, match="not a subclass of xdoe.agent.Muscle"):
        load_class("xdoe.agents:QLearningBrain", KEY, base=Muscle)
    with pytest.raises(ComponentError, match="is not a class"):
        load_class("xdoe.execution:run", KEY)
    with pytest.raises(ComponentError, match="expected a component name"):
        load_class("NoModule", KEY)


def test_wrong_parameter_lists_the_accepted_ones():
    from xdoe.components.agents import QLearningBrain

    with pytest.raises(ComponentError) as info:
        construct(QLearningBrain, KEY, {"alhpa": 0.1}, seed=1)
    msg = str(info.value)
    assert msg.startswith(KEY + ".params: xdoe.components.agents:QLearningBrain does not accept")
    assert "'alhpa' (did you mean 'alpha'?)" in msg
    assert "accepted parameters: alpha, gamma, initial_q" in msg


def test_missing_parameter_and_constructor_errors():
    from components import ImportTimeConfused
    from xdoe.components.agents import QLearningBrain

    with pytest.raises(ComponentError, match=r"requires layers; accepted parameters: layers"):
        construct(ImportTimeConfused, KEY, {}, seed=0)
    with pytest.raises(ComponentError) as info:
        construct(QLearningBrain, KEY, {"alpha": 7}, seed=0)
    assert "QLearningBrain(...) raised ValueError" in str(info.value)
    with pytest.raises(ComponentError, match="set by the executor"):
        construct(QLearningBrain, KEY, {"seed": 3}, seed=0)


def test_open_ended_params_are_passed_on_and_refused_by_the_constructor():
    from xdoe.components.environments import GymnasiumEnvironment

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

    # both forward **params unchanged to Brain, which takes no other keywords
    assert accepted_parameters(Child) == (["width", "seed", "depth"], False)
    with pytest.raises(ComponentError) as info:
        construct(Child, KEY, {"widht": 3}, seed=0)
    assert "does not accept 'widht' (did you mean 'width'?)" in str(info.value)
    assert "accepted parameters: width, depth" in str(info.value)


def _user_brain():
    from xdoe.agent import Brain

    class UserBrain(Brain):
        """A user's brain that forwards **params to Brain (seed)."""

        def __init__(self, rate: float = 0.1, **params):
            super().__init__(**params)
            self.rate = rate

        def thinking(self, experience):
            return None

    return UserBrain


def test_user_subclass_forwarding_params_to_brain():
    UserBrain = _user_brain()
    assert accepted_parameters(UserBrain) == (["rate", "seed"], False)
    brain = construct(UserBrain, KEY, {"rate": 0.5}, seed=3)
    assert brain.rate == 0.5 and brain.seed == 3
    with pytest.raises(ComponentError) as info:
        construct(UserBrain, KEY, {"rte": 0.5}, seed=0)
    message = str(info.value)
    assert message.startswith(f"{KEY}.params: ") and "does not accept 'rte' (did you mean 'rate'?)" in message
    assert "accepted parameters: rate" in message and "seed" not in message.split("accepted")[1]


def test_params_used_other_than_forwarded_are_open_ended():
    from xdoe.agent import Brain

    class Popping(Brain):
        def __init__(self, **params):
            self.extra = params.pop("extra", None)  # consumes one before forwarding
            super().__init__(**params)

        def thinking(self, experience):
            return None

    class Consuming(Brain):
        def __init__(self, seed: int = 0, **options):
            super().__init__(seed=seed)
            self.options = dict(options)

        def thinking(self, experience):
            return None

    assert accepted_parameters(Popping) == ([], True)
    assert construct(Popping, KEY, {"extra": 1}, seed=0).extra == 1
    assert accepted_parameters(Consuming) == (["seed"], True)
    assert construct(Consuming, KEY, {"anything": 2}, seed=0).options == {"anything": 2}
    # a class whose source cannot be read is open-ended too (never refused wrongly)
    namespace: dict = {"Brain": Brain}
    exec("class NoSource(Brain):\n"
         "    def __init__(self, **params):\n"
         "        super().__init__(**params)\n"
         "    def thinking(self, experience):\n"
         "        return None\n", namespace)
    assert accepted_parameters(namespace["NoSource"]) == ([], True)


def test_gymnasium_subclass_and_max_episode_steps_from_a_run_document(tmp_path):
    from xdoe.components.environments import GymnasiumEnvironment
    from xdoe.execution import run

    class Taxi(GymnasiumEnvironment):
        def __init__(self, uid: str, seed: int, **params):
            super().__init__(uid, seed, "Taxi-v4", **params)

    # Taxi forwards to GymnasiumEnvironment, whose **make_kwargs go to gymnasium.make
    assert accepted_parameters(Taxi) == (["uid", "seed", "env_id"], True)
    assert construct(Taxi, "e", {"max_episode_steps": 4}, uid="t", seed=1).make_kwargs == {
        "max_episode_steps": 4}
    document = {
        "uid": "loading-max-steps", "experiment_uid": "loading", "seed": 5,
        "schedule": [{"training": {
            "environments": [{"environment": {
                "name": "xdoe.environments:GymnasiumEnvironment", "uid": "taxi",
                "params": {"env_id": "Taxi-v4", "max_episode_steps": 5}}}],
            "agents": [{"name": "learner",
                        "brain": {"name": "xdoe.agents:QLearningBrain", "params": {}},
                        "muscle": {"name": "xdoe.agents:QLearningMuscle", "params": {}},
                        "objective": {"name": "xdoe.agents:RewardObjective", "params": {}}}],
            "simulation": {"name": "xdoe.simulation:VanillaSimController", "conditions": []},
            "phase_config": {"mode": "train", "worker": 1, "episodes": 3},
        }}],
    }
    result = run(document, store=f"sqlite:///{tmp_path / 's.sqlite'}", results=tmp_path / "results")
    assert result.status == "finished", result.error
    assert result.episodes == 3 and result.steps == 15  # truncated after 5 steps each
