"""Factors: the independent variables of a design, categorical or continuous."""

from __future__ import annotations

import copy
import math
import sys
from dataclasses import dataclass
from typing import Any, Literal

from xdoe._levels import repeated_level
from xdoe.errors import DesignError

__all__ = ["Factor", "round_continuous", "SIGNIFICANT_DIGITS"]

#: significant digits kept of a continuous factor's value (identical text on every platform)
SIGNIFICANT_DIGITS = 12


def _plain(value: Any) -> Any:
    """Return ``value`` as a plain Python object (numpy scalars unwrapped,
    mutable containers copied so callers cannot alter the factor)."""
    np = sys.modules.get("numpy")  # not loaded: ``value`` cannot be a numpy scalar
    if np is not None and isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, dict, tuple, set)):
        return copy.deepcopy(value)
    return value


@dataclass(frozen=True)
class Factor:
    """One factor (independent variable) of a design.

    A factor is either *categorical* -- a tuple of ``levels`` (any JSON-able
    values: numbers, strings, lists, mappings) -- or *continuous* -- a range
    ``[low, high]`` sampled on a ``linear`` or ``log`` scale, optionally
    rounded to integers.

    In a design's ``points`` array a categorical factor's column holds level
    indices (exact integers ``0 .. k-1``), a continuous factor's column holds
    the unit position ``u`` in ``[0, 1]``; :meth:`value` maps either to the
    value written into a run document.

    Raises:
        DesignError: empty name or levels, a level listed twice, both levels and a range, neither,
            ``low >= high``, a non-finite bound, ``log`` scale with
            ``low <= 0``, a scale other than linear/log, ``integer`` or
            ``log`` on a categorical factor, or an integer range holding no
            integer.
    """

    name: str
    levels: tuple[Any, ...] | None = None
    low: float | None = None
    high: float | None = None
    scale: Literal["linear", "log"] = "linear"
    integer: bool = False
    #: ``((factor, (level, ...)), ...)``: the factor applies only at design
    #: points where each named categorical factor takes one of the levels
    when: tuple = ()

    def __post_init__(self) -> None:
        name = self.name
        if not isinstance(name, str) or not name:
            raise DesignError(f"factor name must be a non-empty string, got {name!r}")
        has_range = self.low is not None or self.high is not None
        if self.levels is not None:
            if has_range:
                raise DesignError(f"factor {name!r}: give either levels or a range [low, high], not both")
            if isinstance(self.levels, (str, bytes, dict)) or not hasattr(self.levels, "__iter__"):
                raise DesignError(f"factor {name!r}: levels must be a list, got {type(self.levels).__name__}")
            levels = tuple(self.levels)
            if not levels:
                raise DesignError(f"factor {name!r}: levels must not be empty")
            if (twice := repeated_level(levels)) is not None:
                raise DesignError(f"factor {name!r}: level {twice[1]!r} is listed twice; the levels of a factor "
                                  "must differ")
            object.__setattr__(self, "levels", levels)
            if self.scale != "linear":
                raise DesignError(f"factor {name!r}: scale {self.scale!r} applies to ranges, not to levels")
            if self.integer:
                raise DesignError(f"factor {name!r}: integer applies to ranges, not to levels")
            return
        if self.low is None or self.high is None:
            raise DesignError(f"factor {name!r}: needs levels or a range [low, high]")
        try:
            low, high = float(self.low), float(self.high)
        except (TypeError, ValueError):
            raise DesignError(
                f"factor {name!r}: range bounds must be numbers, got [{self.low!r}, {self.high!r}]"
            ) from None
        if isinstance(self.low, bool) or isinstance(self.high, bool):
            raise DesignError(f"factor {name!r}: range bounds must be numbers, got booleans")
        if not (math.isfinite(low) and math.isfinite(high)):
            raise DesignError(f"factor {name!r}: range bounds must be finite, got [{low}, {high}]")
        if low >= high:
            raise DesignError(f"factor {name!r}: range needs low < high, got [{low}, {high}]")
        if self.scale not in ("linear", "log"):
            raise DesignError(f"factor {name!r}: scale must be 'linear' or 'log', got {self.scale!r}")
        if self.scale == "log" and low <= 0:
            raise DesignError(f"factor {name!r}: log scale needs low > 0, got low = {low}")
        if self.integer and math.ceil(low) > math.floor(high):
            raise DesignError(f"factor {name!r}: integer range [{low}, {high}] holds no integer")
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)

    @property
    def kind(self) -> Literal["categorical", "continuous"]:
        """``"categorical"`` for a factor with levels, else ``"continuous"``."""
        return "categorical" if self.levels is not None else "continuous"

    @property
    def n_levels(self) -> int | None:
        """Number of levels of a categorical factor, ``None`` for a continuous one."""
        return None if self.levels is None else len(self.levels)

    def value(self, coordinate: float) -> Any:
        """Map a design coordinate to the factor's value.

        Categorical: ``coordinate`` is a level index (an integer-valued
        number) and the level is returned. Continuous: ``coordinate`` is a unit
        position ``u`` in ``[0, 1]`` mapped to ``low + u (high - low)``
        (linear) or ``low (high / low) ** u`` (log), then rounded to an ``int``
        inside the range when ``integer``. Always a plain Python value.

        Raises:
            DesignError: an index that is not an integer or out of range, a
                position outside ``[0, 1]`` or not finite.
        """
        c = float(coordinate)
        if self.levels is not None:
            i = int(round(c))
            if abs(c - i) > 1e-9 or not 0 <= i < len(self.levels):
                raise DesignError(
                    f"factor {self.name!r}: level index {coordinate!r} is not one of 0..{len(self.levels) - 1}"
                )
            return _plain(self.levels[i])
        if not math.isfinite(c) or c < -1e-12 or c > 1 + 1e-12:
            raise DesignError(f"factor {self.name!r}: unit position {coordinate!r} is outside [0, 1]")
        u = min(max(c, 0.0), 1.0)
        low, high = float(self.low), float(self.high)  # type: ignore[arg-type]
        if self.scale == "log":
            x = math.exp(math.log(low) + u * (math.log(high) - math.log(low)))
        else:
            x = low + u * (high - low)
        x = min(max(x, low), high)
        if abs(x) <= 1e-12 * max(abs(low), abs(high)):  # rounding noise of a widened range (axial or path
            x = 0.0  # points: xdoe.design._classic.coded_design) at a bound of 0, which significant digits keep
        if self.integer:
            return int(min(max(round(x), math.ceil(low)), math.floor(high)))
        return float(x)


def round_continuous(value: Any) -> Any:
    """A continuous factor's float rounded to :data:`SIGNIFICANT_DIGITS`
    significant digits, so that the last-bit differences of ``exp``/``log``
    between platforms never reach the written documents."""
    if isinstance(value, float):
        return float(f"{value:.{SIGNIFICANT_DIGITS}g}")
    return value
