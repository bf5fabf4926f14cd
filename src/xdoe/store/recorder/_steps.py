"""Which steps the recorder stores: ``none``, ``all`` or ``every:N``."""

from __future__ import annotations

import re
from dataclasses import dataclass

from xdoe.errors import StoreStepsError

__all__ = ["StepPolicy", "StoreStepsError"]

_EVERY = re.compile(r"every:([0-9]+)")


@dataclass(frozen=True)
class StepPolicy:
    """A parsed ``store_steps`` value.

    ``every`` is 0 for ``none``, 1 for ``all`` and N for ``every:N``. With
    ``every:N`` a step is stored when its step number is a multiple of N, and
    the last step of every episode (``done``) is always stored, so each
    stored episode ends with its final transition.
    """

    every: int

    @classmethod
    def parse(cls, value: str) -> "StepPolicy":
        """Parse ``none``, ``all`` or ``every:N`` (case-insensitive, spaces ignored).

        Raises:
            StoreStepsError: any other value, or N < 1.
        """
        text = str(value).strip().lower().replace(" ", "")
        if text == "none":
            return cls(0)
        if text == "all":
            return cls(1)
        match = _EVERY.fullmatch(text)
        if match and int(match.group(1)) >= 1:
            return cls(int(match.group(1)))
        raise StoreStepsError(
            f"store_steps: {value!r} is not valid; expected 'none', 'all' or 'every:N' "
            "with N a positive integer (e.g. 'every:10')"
        )

    @property
    def enabled(self) -> bool:
        """True unless ``none``."""
        return self.every > 0

    def wants(self, step: int, done: bool) -> bool:
        """True when step number ``step`` (``done``: last of its episode) is stored."""
        return self.every > 0 and (done or step % self.every == 0)

    def __str__(self) -> str:
        return {0: "none", 1: "all"}.get(self.every, f"every:{self.every}")
