"""The :class:`Design` value: design points over factors, with what the
method that made them says of them."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Sequence

from xdoe.design._common import check_factors, factorial_indices, full_size
from xdoe.design._factors import Factor
from xdoe.errors import DesignError

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Design"]


@dataclass(frozen=True, eq=False)
class Design:
    """A design: ``n`` design points over ``factors``.

    Attributes:
        factors: the factors, one column each.
        method: ``"full_factorial"``, ``"lhs"`` or ``"maximin"`` -- the
            method that produced ``points``.
        reason: one sentence saying why this method and size.
        points: ``(n, d)`` float64, read-only: level index (exact integer)
            for a categorical column, unit position in ``[0, 1]`` for a
            continuous one.

    A full factorial (:meth:`grid`) builds ``points`` and ``active`` on
    first use: its length and rows need no numpy (``xgen check``).

    Raises:
        DesignError: ``points`` of the wrong shape, a level index out of
            range or a position outside ``[0, 1]``.
    """

    factors: tuple[Factor, ...]
    method: str
    reason: str
    points: np.ndarray = field(repr=False)
    #: ``(n, d)`` bool, read-only: whether each factor applies at each point
    #: (``False`` only for a conditional factor whose ``when`` fails; its
    #: coordinate is then ``0``); ``None``: all active
    active: np.ndarray | None = field(default=None, repr=False)
    #: per factor the coded value of unit position 1 (``coded = (2 u - 1) *
    #: scale``): ``alpha`` for a continuous factor a circumscribed central
    #: composite design widened to its axial points, else 1; ``None``: all 1
    scale: tuple[float, ...] | None = field(default=None, repr=False)
    #: what the method says about the design (generators, resolution asked
    #: for, alpha, centre points, the model of its diagnostics); ``None``: nothing
    info: dict | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        import numpy as np

        factors = check_factors(self.factors)
        pts = np.array(self.points, dtype=np.float64, copy=True)
        if pts.ndim != 2 or pts.shape[1] != len(factors):
            raise DesignError(
                f"design points must have shape (n, {len(factors)}), got {pts.shape}"
            )
        for j, f in enumerate(factors):
            col = pts[:, j]
            if f.levels is not None:
                ok = np.all((col == np.rint(col)) & (col >= 0) & (col < len(f.levels)))
            else:
                ok = np.all((col >= 0.0) & (col <= 1.0))
            if not ok:
                raise DesignError(f"design column of factor {f.name!r} has values outside its range")
        pts.setflags(write=False)
        active = np.ones(pts.shape, dtype=bool) if self.active is None else np.array(self.active, dtype=bool)
        if active.shape != pts.shape:
            raise DesignError(f"design active mask must have shape {pts.shape}, got {active.shape}")
        active.setflags(write=False)
        object.__setattr__(self, "active", active)
        object.__setattr__(self, "factors", factors)
        object.__setattr__(self, "points", pts)

    @classmethod
    def grid(cls, factors: Sequence[Factor], method: str, reason: str) -> Design:
        """The full factorial of categorical ``factors`` (every factor has
        levels; zero factors give one point with no columns), in
        :func:`~xdoe.design.full_factorial` order; ``points`` and ``active``
        (all ``True``) are built on first use.

        Raises:
            DesignError: a factor is continuous, or a name is given twice.
        """
        factors = check_factors(factors)
        for f in factors:
            if f.levels is None:
                raise DesignError(f"full_factorial needs levels, but factor {f.name!r} is continuous")
        self = object.__new__(cls)
        for name, value in (("factors", factors), ("method", method), ("reason", reason),
                            ("_ks", tuple(len(f.levels) for f in factors))):  # type: ignore[arg-type]
            object.__setattr__(self, name, value)
        return self

    def __getattr__(self, name: str) -> Any:
        # only reached for an attribute not set yet: the arrays of a lazy grid
        if name not in ("points", "active") or "_ks" not in self.__dict__:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        import numpy as np

        points = factorial_indices(self.__dict__["_ks"]).astype(np.float64)
        points.setflags(write=False)
        active = np.ones(points.shape, dtype=bool)
        active.setflags(write=False)
        object.__setattr__(self, "points", points)
        object.__setattr__(self, "active", active)
        return self.__dict__[name]

    def _repr_html_(self) -> str:
        """In a notebook: what ``xgen generate --dry-run`` shows of the design
        (:func:`html_sections`): its factors, then its points."""
        from xdoe._html import design_sections as html_sections, html_block, html_table

        return html_block(f"design: {self.method}, {len(self)} points",
                          [html_table(*section) for section in html_sections(self)], [self.reason])

    def __len__(self) -> int:
        ks = self.__dict__.get("_ks")
        return math.prod(ks) if ks is not None else int(self.points.shape[0])

    def row(self, i: int) -> tuple[list[float], list[bool]]:
        """Design point ``i`` (negative: from the end) as plain lists: its
        coordinates (see ``points``) and whether each factor is active.

        Raises:
            IndexError: ``i`` out of range.
        """
        if self.__dict__.get("_ks") is None or "points" in self.__dict__:
            return self.points[i].tolist(), self.active[i].tolist()  # type: ignore[index]
        digits = self.indices(i)
        return [float(d) for d in digits], [True] * len(digits)

    @property
    def is_grid(self) -> bool:
        """Whether the design is a full factorial built by :meth:`grid`: its
        rows are mixed-radix digits, its figures come in closed form and its
        model diagnostics are known (D-efficiency 100 %, no correlation)."""
        return self.__dict__.get("_ks") is not None

    def indices(self, i: int) -> list[int]:
        """The level indices of design point ``i`` (negative: from the end)
        of a full factorial built by :meth:`grid`, without its array: mixed
        radix digits, the first factor slowest (``itertools.product`` order).

        Raises:
            IndexError: ``i`` out of range.
            ValueError: the design was not built by :meth:`grid`.
        """
        ks = self.__dict__.get("_ks")
        if ks is None:
            raise ValueError("indices() needs a full factorial built by Design.grid")
        n = math.prod(ks)
        index = i + n if i < 0 else i
        if not 0 <= index < n:
            raise IndexError(f"design point {i} out of range for {n} points")
        digits = [0] * len(ks)
        for j in range(len(ks) - 1, -1, -1):
            index, digits[j] = divmod(index, ks[j])
        return digits

    def coded(self) -> np.ndarray:
        """The points in coded units, shape ``(n, d)``: ``(2 u - 1) * scale``
        with ``u`` from :meth:`unit` (the factorial cube is ``[-1, 1]``; a
        two-level factor's levels are ``-1`` and ``+1``; a categorical factor
        of ``k`` levels has level ``i`` at ``2 i / (k - 1) - 1``)."""
        import numpy as np

        out = 2 * self.unit() - 1
        scale = getattr(self, "scale", None)
        if scale is not None:
            out = out * np.asarray(scale, dtype=np.float64)
        return out

    @cached_property
    def diagnostics(self) -> dict:
        """D-efficiency, largest correlation between model terms and, for a
        two-level design, resolution and aliases up to two-factor
        interactions (:func:`xdoe.design._diagnostics.diagnostics`); the model
        is ``info["model"]`` (default linear)."""
        from xdoe.design._diagnostics import diagnostics

        info = getattr(self, "info", None) or {}
        kinds = [0 if f.levels is None else len(f.levels) for f in self.factors]
        two = self.method in ("fractional_factorial", "plackett_burman")
        return diagnostics(self.coded(), [f.name for f in self.factors], kinds, info.get("model", "linear"),
                           self.active, two_level=two, regular=self.method != "plackett_burman")

    def __repr__(self) -> str:
        names = ", ".join(f.name for f in self.factors)
        return f"Design(method={self.method!r}, n={len(self)}, factors=[{names}])"

    def values(self, i: int) -> dict[str, Any]:
        """Factor name -> level or value (plain Python types) of design point
        ``i``; a conditional factor inactive at ``i`` is left out."""
        row, on = self.row(i)
        return {f.name: f.value(row[j]) for j, f in enumerate(self.factors) if on[j]}

    def unit(self) -> np.ndarray:
        """The points scaled to ``[0, 1]^d``, shape ``(n, d)``: level index
        ``i`` of ``k`` levels becomes ``i / (k - 1)`` (``0.5`` when ``k == 1``);
        continuous positions are unchanged."""
        import numpy as np

        out = np.array(self.points, dtype=np.float64, copy=True)
        for j, f in enumerate(self.factors):
            if f.levels is not None:
                k = len(f.levels)
                out[:, j] = out[:, j] / (k - 1) if k > 1 else 0.5
        return out

    @cached_property
    def _grid(self) -> list[int] | None:
        """The level counts when the points are exactly the full factorial
        (in any method's name), else ``None``."""
        if self.__dict__.get("_ks"):
            return list(self.__dict__["_ks"])
        ks = [len(f.levels) if f.levels is not None else 0 for f in self.factors]
        if not ks or 0 in ks or len(self) != full_size(self.factors):
            return None
        import numpy as np

        return ks if np.array_equal(self.points, factorial_indices(ks)) else None

    @cached_property
    def min_distance(self) -> float:
        """Minimum pairwise Euclidean distance of :meth:`unit` (``inf`` for fewer than two points)."""
        from xdoe.design._metrics import factorial_min_distance, min_distance

        if self._grid is not None:
            return factorial_min_distance(self._grid)
        return min_distance(self.unit())

    @cached_property
    def discrepancy(self) -> float:
        """Centred L2 discrepancy of :meth:`unit` (scipy ``qmc.discrepancy(method="CD")``;
        the same value in closed form for a full factorial); ``nan`` without columns."""
        from xdoe.design._metrics import centred_l2_discrepancy, factorial_discrepancy

        if self._grid is not None:
            return factorial_discrepancy(self._grid)
        return centred_l2_discrepancy(self.unit())
