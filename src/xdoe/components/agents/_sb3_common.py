"""Helpers shared by the Stable-Baselines3 brain and muscle: the algorithm
class, hyperparameters from a document, and random state kept apart from
the process's global generators."""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import numpy as np

__all__ = ["ALGORITHMS", "algorithm_class", "hyperparameters", "OwnRandomState", "require_sb3"]

#: The algorithms addressable by name.
ALGORITHMS = ("PPO", "A2C", "DQN", "SAC", "TD3", "DDPG")
#: Constructor arguments the brain sets itself.
_RESERVED = ("policy", "env", "seed", "device", "_init_setup_model", "verbose", "tensorboard_log")


def require_sb3() -> Any:
    """Import ``stable_baselines3`` (``ImportError`` naming the extra if missing)."""
    try:
        return importlib.import_module("stable_baselines3")
    except ImportError as exc:  # pragma: no cover - the test extra installs it
        from xdoe._extras import install_command

        raise ImportError(f"SB3Brain needs Stable-Baselines3: {install_command('sb3')}") from exc


def algorithm_class(name: str) -> type:
    """``PPO``, ``A2C``, ``DQN``, ``SAC``, ``TD3``, ``DDPG`` or ``module:Class``
    (e.g. ``sb3_contrib:QRDQN``).

    Raises:
        ValueError: unknown name, unimportable module, or a class that is not
            a Stable-Baselines3 ``BaseAlgorithm``.
    """
    sb3 = require_sb3()
    from stable_baselines3.common.base_class import BaseAlgorithm

    if ":" in name:
        module, _, attr = name.partition(":")
        try:
            cls = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"algorithm {name!r} cannot be imported: {exc}") from None
    elif name in ALGORITHMS:
        cls = getattr(sb3, name)
    else:
        raise ValueError(f"unknown algorithm {name!r}; expected one of {', '.join(ALGORITHMS)} "
                         f"or 'module:Class' (e.g. 'sb3_contrib:QRDQN')")
    if not (isinstance(cls, type) and issubclass(cls, BaseAlgorithm)):
        raise ValueError(f"algorithm {name!r} is not a Stable-Baselines3 algorithm class")
    return cls


def _schedule(value: Any) -> Any:
    """rl-zoo's ``"lin_<x>"``: linear from ``x`` to 0 over the training."""
    if isinstance(value, str) and value.startswith("lin_"):
        from stable_baselines3.common.utils import LinearSchedule

        return LinearSchedule(float(value[4:]), 0.0, 1.0)
    return value


def _policy_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    out = dict(kwargs)
    activation = out.get("activation_fn")
    if isinstance(activation, str):
        import torch.nn

        name = activation.removeprefix("nn.").removeprefix("torch.nn.")
        fn = getattr(torch.nn, name, None) or getattr(torch.nn, name.capitalize(), None)
        if not isinstance(fn, type):
            raise ValueError(f"hyperparameters.policy_kwargs.activation_fn: unknown torch.nn "
                             f"activation {activation!r} (e.g. 'ReLU', 'Tanh')")
        out["activation_fn"] = fn
    return out


def hyperparameters(cls: type, given: dict[str, Any] | None) -> tuple[dict[str, Any], float | None]:
    """The constructor arguments of ``cls`` from a document's ``hyperparameters``.

    ``"lin_<x>"`` strings become linear schedules (rl-zoo's notation),
    ``policy_kwargs.activation_fn`` may name a ``torch.nn`` class, and
    ``action_noise`` is a float: the standard deviation of Gaussian noise
    added by the muscles in the normalised action space (returned apart).

    Raises:
        ValueError: a name the constructor does not take (the accepted names
            are listed) or one the brain sets itself.
    """
    given = dict(given or {})
    accepted = [p for p in inspect.signature(cls.__init__).parameters
                if p not in ("self", "args", "kwargs") and p not in _RESERVED]
    reserved = sorted(set(given) & set(_RESERVED))
    if reserved:
        raise ValueError(f"hyperparameters: {', '.join(reserved)} set by the brain itself "
                         f"(seed from the run seed, device from 'device')")
    unknown = sorted(set(given) - set(accepted))
    if unknown:
        raise ValueError(f"hyperparameters: {cls.__name__} takes no {', '.join(unknown)}; "
                         f"accepted: {', '.join(sorted(accepted))}")
    noise = given.pop("action_noise", None)
    if noise is not None and (isinstance(noise, bool) or not isinstance(noise, (int, float)) or noise < 0):
        raise ValueError(f"hyperparameters.action_noise must be a standard deviation >= 0, got {noise!r}")
    out = {k: _schedule(v) for k, v in given.items()}
    if "policy_kwargs" in out:
        out["policy_kwargs"] = _policy_kwargs(out["policy_kwargs"] or {})
    return out, None if noise is None else float(noise)


class OwnRandomState:
    """A brain's or muscle's own random state, apart from the process's
    global generators: :attr:`numpy`, which the brain's SB3 buffers draw
    from (:mod:`~xdoe.components.agents._sb3_buffers`), and :attr:`generator`,
    torch's, swapped in for torch's global generator while SB3 code runs
    (:meth:`active`: its initialisers and distributions draw from the global
    one), so a brain or muscle draws only from its own seeded streams and
    leaves the process's global state as it found it.

    Args:
        seed: seeds both private generators.
    """

    def __init__(self, seed: int) -> None:
        import torch

        #: the private numpy generator (SB3's buffers' minibatch and replay draws)
        self.numpy = np.random.RandomState(seed % 2**32)
        #: the private torch generator (draws may also pass it as ``generator=``)
        self.generator = torch.Generator()
        self.generator.manual_seed(seed)

    @property
    def torch(self) -> Any:
        """The state of :attr:`generator` (a ``uint8`` tensor, a copy)."""
        return self.generator.get_state()

    @torch.setter
    def torch(self, state: Any) -> None:
        self.generator.set_state(state)

    def active(self) -> "_Active":
        """Within the block (``with state.active():``), torch's CPU generator
        is the private one (two state copies each way, ~1 µs each).

        A plain context manager rather than a ``contextlib`` generator: the
        muscles enter it once per step."""
        return _Active(self)

    def __getstate__(self) -> dict[str, Any]:
        return {"numpy": self.numpy.get_state(), "torch": self.torch.numpy()}

    def __setstate__(self, state: dict[str, Any]) -> None:
        import torch

        self.numpy = np.random.RandomState(0)
        self.numpy.set_state(state["numpy"])
        self.generator = torch.Generator()
        self.generator.set_state(torch.from_numpy(np.asarray(state["torch"], dtype=np.uint8)))


class _Active:
    """The swap of :meth:`OwnRandomState.active`."""

    __slots__ = ("owner", "saved")

    def __init__(self, owner: OwnRandomState) -> None:
        self.owner = owner

    def __enter__(self) -> None:
        import torch

        self.saved = torch.get_rng_state()
        torch.set_rng_state(self.owner.torch)

    def __exit__(self, *exc: object) -> None:
        import torch

        self.owner.torch = torch.get_rng_state()
        torch.set_rng_state(self.saved)
