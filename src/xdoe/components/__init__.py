"""xdoe's built-in components, the classes documents name by ``module:Class``:

- :mod:`xdoe.components.agents` -- brains, muscles and objectives (dummy,
  tabular Q-learning, Stable-Baselines3, the reward objective);
- :mod:`xdoe.components.environments` -- environments (dummy, gymnasium,
  PettingZoo, tic-tac-toe).

They implement the plugin API of :mod:`xdoe.agent` and :mod:`xdoe.environment`
(the base classes a user's component subclasses), which is why they live
apart from it: ``xdoe.agent`` is what you implement, ``xdoe.components.agents``
what comes with xdoe. The old packages :mod:`xdoe.agents` and
:mod:`xdoe.environments` are aliases of these, so documents naming them load
the same classes.
"""

__all__: list[str] = []
