import pytest

from xdoe.components.agents import RewardObjective
from xdoe.environment import RewardInformation

REWARDS = [RewardInformation("t.reward_x", 1.0), RewardInformation("t.reward_o", -1.0), RewardInformation("e.r", 2.5)]


def test_sum_of_all_rewards():
    assert RewardObjective().internal_reward(REWARDS) == 2.5
    assert RewardObjective().internal_reward([]) == 0.0


def test_only_listed_rewards():
    assert RewardObjective(reward_ids=["t.reward_x", "e.r"]).internal_reward(REWARDS) == 3.5
    assert RewardObjective(reward_ids=["t.reward_o"]).internal_reward(REWARDS) == -1.0


def test_unknown_ids_are_named():
    objective = RewardObjective(reward_ids=["t.reward_x", "t.nope"])
    with pytest.raises(ValueError, match=r"\['t.nope'\].*received"):
        objective.internal_reward(REWARDS)


def test_bad_parameters():
    with pytest.raises(ValueError, match="list"):
        RewardObjective(reward_ids="t.reward_x")
    with pytest.raises(TypeError):
        RewardObjective(weights=[1])
