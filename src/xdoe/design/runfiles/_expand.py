"""Expansion of one design point x one repetition into a run document.

The factors of an experiment are its schedule entries with several levels
(named ``<phase index>.<key>`` and ``<phase index>.<sensors|actuators>.<agent key>``,
arsenAI's convention) and its named factors; :func:`factors_of` turns them
into :class:`~xdoe.design.Factor` objects. :class:`Expander` resolves a
design point phase by phase:

1. each schedule key takes its level from the design point (or its only level;
   an omitted key takes the previous phase's choice; sensor and actuator sets
   are inherited agent by agent);
2. ``$req(phase=P, index=I)`` takes item ``I`` of the choice made in phase
   ``P`` (without ``index``, the whole choice; ``$prev`` is the phase before);
3. the chosen definitions are copied with every ``${name}`` replaced by the
   named factor's value;
4. an agent's ``load`` block keyed by phase names gives each phase its own
   entry (``null`` for the phases it does not name); any other ``load`` and
   ``replay`` pass through unchanged;
5. each agent gets the full ids ``<environment uid>.<id>`` of its sensor and
   actuator sets, for the environments of the phase (in environment order,
   without duplicates); an agent without a set gets ``null`` (all).

Run seeds (docs/architecture.md, "Seeds"): ``SeedSequence(seed, spawn_key=(1,
k1, k2, repetition))`` where ``k1, k2`` are the first two big-endian 32-bit
words of sha256 of the canonical JSON of the design point's levels; the seed is
``generate_state(1, uint32)[0]``. It depends on what the run is, not on its
position, so adding a repetition or a level never changes an existing run's seed
(:func:`xdoe.design.runfiles._seeds.run_seed`).
"""

from __future__ import annotations

from typing import Any

from xdoe.design import Factor, round_continuous
from xdoe.design.runfiles._seeds import run_seed, seed_levels
from xdoe.design.runfiles._shared import SharedSubtrees
from xdoe.documents import (
    LIST_KEYS,
    NAME_KEYS,
    RUN_DOCUMENT_VERSION,
    SET_KEYS,
    Experiment,
    PlaceholderError,
    Variable,
    find_placeholders,
    interpolate,
    is_reference,
)

__all__ = ["Expander", "copy_plain", "factors_of", "run_seed", "run_uid"]

def factors_of(experiment: Experiment) -> list[Factor]:
    """The experiment's factors (variables with more than one level, or a
    range) as :class:`Factor` objects: schedule factors first, in phase and
    key order, then named factors in document order."""
    return [_factor(v) for v in experiment.factors]


def _factor(v: Variable) -> Factor:
    if v.levels is not None:
        return Factor(v.name, levels=tuple(v.levels), when=v.when)
    return Factor(v.name, low=v.low, high=v.high, scale=v.scale, integer=v.integer,  # type: ignore[arg-type]
                  when=v.when)


def run_uid(safe_experiment_uid: str, number: int) -> str:
    """``<uid>-<NNNN>``: at least four digits, more when ``number`` needs them."""
    return f"{safe_experiment_uid}-{number:04d}"


def copy_plain(node: Any) -> Any:
    """A deep copy of plain data (dicts and lists copied, scalars shared)."""
    if isinstance(node, dict):
        return {k: copy_plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [copy_plain(v) for v in node]
    return node


def _component(raw: Any) -> dict | None:
    """``{name, params}`` of a component definition; an empty name is none."""
    if not isinstance(raw, dict) or not raw.get("name"):
        return None
    return {"name": raw["name"], "params": raw.get("params") or {}}


class Expander(SharedSubtrees):
    """Builds run documents of one :class:`Experiment`.

    Raises (from :meth:`document`):
        DocumentError: a ``$req`` index out of range for the chosen levels, a
            referenced phase without a set for the agent, two environments with
            the same uid or two agents with the same name in one phase.
    """

    def __init__(self, experiment: Experiment) -> None:
        self.experiment = experiment
        self.defs = experiment.definitions
        self.controls = {v.name: v.levels[0] for v in experiment.variables if not v.is_factor}  # type: ignore[index]
        self.factor_names = [v.name for v in experiment.factors]
        self.continuous = {v.name for v in experiment.factors if v.kind == "continuous"}
        self.named = {v.name for v in experiment.named}
        self.phase_names = experiment.phase_names()
        self.phase_name_set = set(self.phase_names)
        self.version = RUN_DOCUMENT_VERSION
        #: ``{id(node): {}}`` of the sub-trees shared by many documents, for
        #: :func:`~xdoe.documents.dump_canonical` (``cache=``)
        self.render_cache: dict[int, dict] = {}
        self._constants: list[Any] = []  # keeps the shared sub-trees alive
        self._templates: dict[tuple, tuple[tuple[str, Any], tuple[str, ...]]] = {}
        self._id_lists: dict[tuple, list[str]] = {}
        #: built definitions with placeholders, by (slot, their factors' typed values);
        #: shared and rendered once like constants, forgotten in bulk beyond MAX_INSTANCES
        self._instances: dict[tuple, tuple[Any, list[int]]] = {}
        self._seen: set[tuple] = set()  # keys built once so far
        #: set while :mod:`xdoe.design.runfiles._template` builds a probe document
        self.probe: Any = None

    # -------------------------------------------------------------- public

    def levels(self, values: dict[str, Any]) -> dict[str, Any]:
        """The design point's levels as written (continuous values rounded)."""
        return {name: round_continuous(values[name]) if name in self.continuous else values[name]
                for name in self.factor_names if name in values}  # an inactive conditional factor has none

    def document(self, *, number: int, index: int, repetition: int, levels: dict[str, Any], copy: int = 0) -> dict:
        """The run document of design point ``index``, repetition
        ``repetition`` (file number ``number``), given the point's ``levels``
        (from :meth:`levels`); ``copy``: how many earlier design points have
        the same levels (their replicates get seeds of their own,
        :func:`~xdoe.design.runfiles._seeds.seed_levels`).

        Sub-trees without placeholders are shared between documents (and
        registered in :attr:`render_cache`): copy the result (:func:`copy_plain`)
        before changing it."""
        run_config, schedule = self.body(levels)
        model = self.experiment.model
        return {
            "uid": run_uid(self.experiment.safe_uid, number),
            "experiment_uid": model.uid,
            "seed": run_seed(model.seed, seed_levels(levels, copy), repetition),
            "version": self.version,
            "design_point": {"index": index, "repetition": repetition, "levels": levels},
            "run_config": run_config,
            "schedule": schedule,
        }

    def body(self, levels: dict[str, Any]) -> tuple[dict | None, list[dict]]:
        """``(run_config, schedule)`` of the run documents of a design point
        with ``levels`` (shared sub-trees, as in :meth:`document`)."""
        values = {**self.controls, **levels}
        named = {name: values[name] for name in self.named if name in values}
        schedule = self._schedule(values, named)
        run_config = self.defs.get("run_config")
        if isinstance(run_config, dict):
            run_config = self._material(("run_config",), self._run_config, named, ("definitions", "run_config"))
        else:
            run_config = None
        return run_config, schedule

    # -------------------------------------------------------------- resolution

    def _schedule(self, values: dict[str, Any], named: dict[str, Any]) -> list[dict]:
        history: list[dict[str, Any]] = []
        out = []
        for plan in self.experiment.phases:
            i = plan.index
            choice: dict[str, Any] = {}
            for key in (*LIST_KEYS, *NAME_KEYS):
                levels = plan.entries[key]
                if levels is None:
                    prev = history[-1][key]
                    choice[key] = list(prev) if isinstance(prev, list) else prev
                    continue
                level = values[self.experiment.aliases.get(f"{i}.{key}", f"{i}.{key}")]
                path = plan.path + (key, _position(levels, level))
                choice[key] = self._resolve(level, key, i, history, path)
            for kind in SET_KEYS:
                sets = dict(history[-1][kind]) if history else {}
                mapping = plan.sets[kind]
                for agent, levels in (mapping or {}).items():
                    level = values[self.experiment.aliases.get(f"{i}.{kind}.{agent}", f"{i}.{kind}.{agent}")]
                    if is_reference(level):
                        path = plan.path + (kind, agent, _position(levels, level))
                        ref = self.experiment.reference(level)
                        target = ref.target_index(i, self.phase_names)
                        chosen = history[target][kind]
                        if agent not in chosen:
                            raise self.experiment.error(
                                f"{ref.text}: phase {target} ({self.phase_names[target]!r}) gives no "
                                f"{kind} set for agent {agent!r}",
                                path,
                            )
                        sets[agent] = chosen[agent]
                    else:
                        sets[agent] = level
                choice[kind] = sets
            history.append(choice)
            out.append({plan.name: self._phase(plan, choice, named)})
        return out

    def _resolve(self, level: Any, key: str, phase: int, history: list[dict], path: tuple) -> Any:
        if isinstance(level, str) and not is_reference(level):
            return level  # a simulation / phase_config key
        if isinstance(level, str):
            return self._follow(level, key, phase, history, path)
        items: list[str] = []
        for item in level:
            if is_reference(item):
                got = self._follow(item, key, phase, history, path)
                items.extend(got)
            else:
                items.append(item)
        return items

    def _follow(self, text: str, key: str, phase: int, history: list[dict], path: tuple) -> Any:
        ref = self.experiment.reference(text)
        target = ref.target_index(phase, self.phase_names)
        chosen = history[target][key]
        if ref.index is None:
            return list(chosen) if isinstance(chosen, list) else chosen
        if ref.index >= len(chosen):
            raise self.experiment.error(
                f"{ref.text}: index {ref.index} out of range: phase {target} ({self.phase_names[target]!r}) "
                f"chose {len(chosen)} {key} {chosen!r} in this design point",
                path,
            )
        return [chosen[ref.index]]

    # -------------------------------------------------------------- materialisation

    def _constant(self, value: Any) -> Any:
        """Register ``value`` as shared by many documents (rendered once)."""
        self._constants.append(value)
        if isinstance(value, (dict, list)) and value:
            self.render_cache[id(value)] = {}
            children = value.values() if isinstance(value, dict) else value
            for child in children:
                if isinstance(child, (dict, list)):
                    self._constant(child)
        return value

    def _material(self, slot: tuple, build: Any, named: dict[str, Any], path: tuple) -> Any:
        """The definition built by ``build()`` with placeholders replaced.
        Sub-trees without placeholders are one shared object; a definition
        with placeholders is built once per distinct values of the factors
        it uses (while at most :data:`MAX_INSTANCES` are kept) and shared
        like a constant, so that it is also rendered once."""
        template = self._templates.get(slot)
        if template is None:
            node = build()
            names = tuple(sorted({name for _, name, _ in find_placeholders(node)}))
            template = self._templates[slot] = (self._compile(node), names)
        compiled, names = template
        if compiled[0] == "const":
            return compiled[1]
        if self.probe is not None:  # a text template is being made (xdoe.design.runfiles._template)
            return self.probe.instance(compiled, names, named)
        try:  # typed: 1, 1.0 and True are different levels
            key: tuple | None = (slot, tuple((type(named[n]), named[n]) for n in names))
            hit = self._instances.get(key)  # type: ignore[arg-type]
        except (TypeError, KeyError):  # a list or mapping level; a missing factor raises below
            key, hit = None, None
        if hit is not None:
            return hit[0]
        try:
            value = _instantiate(compiled, named)
        except PlaceholderError as exc:  # pragma: no cover - caught when the document is loaded
            raise self.experiment.error(str(exc), path) from None
        except KeyError as exc:  # a conditional factor used where its condition does not hold
            raise self.experiment.error(
                f"factor {exc.args[0]!r} is used here, but its 'when' condition does not hold at this "
                f"design point ({', '.join(f'{k}={v!r}' for k, v in named.items()) or 'no named levels'})",
                path,
            ) from None
        return value if key is None else self._keep(key, value)

    def _compile(self, node: Any) -> tuple[str, Any]:
        if not any(True for _ in find_placeholders(node)):
            return ("const", self._constant(node))
        if isinstance(node, str):
            return ("str", node)
        if isinstance(node, dict):
            return ("dict", {key: self._compile(value) for key, value in node.items()})
        return ("list", [self._compile(value) for value in node])

    def _phase(self, plan: Any, choice: dict[str, Any], named: dict[str, Any]) -> dict:
        envs = []
        uids: list[str] = []
        for key in choice["environments"]:
            entry = self._material(("environments", key), lambda key=key: self._environment(key), named,
                                   ("definitions", "environments", key))
            uid = str(entry["environment"]["uid"])
            if uid in uids:
                raise self.experiment.error(
                    f"two environments with uid {uid!r} in phase {plan.name!r}: {choice['environments']!r}",
                    plan.path + ("environments",),
                )
            uids.append(uid)
            envs.append(entry)
        agents = []
        names: list[str] = []
        for key in choice["agents"]:
            base = self._material(("agents", key, plan.name), lambda key=key: self._agent(key, plan.name), named,
                                  ("definitions", "agents", key))
            entry = dict(base)
            if entry["name"] in names:
                raise self.experiment.error(
                    f"two agents named {entry['name']!r} in phase {plan.name!r}: {choice['agents']!r}",
                    plan.path + ("agents",),
                )
            names.append(entry["name"])
            for kind in SET_KEYS:
                set_key = choice[kind].get(key)
                entry[kind] = None if set_key is None else self._ids(kind, set_key, uids)
            self._refuse_disconnected(entry["name"], choice, key, uids, plan)
            agents.append(self._shared_by_parts(("agent",), [base, entry["sensors"], entry["actuators"]], entry))
        sim_key = choice["simulation"]
        pc_key = choice["phase_config"]
        return {
            "environments": self._shared_by_parts(("environments",), envs, envs),
            "agents": self._shared_by_parts(("agents",), agents, agents),
            "simulation": self._material(("simulation", sim_key), lambda: self._simulation(sim_key), named,
                                         ("definitions", "simulation", sim_key)),
            "phase_config": self._material(("phase_config", pc_key), lambda: dict(self.defs["phase_config"][pc_key] or {}),
                                           named, ("definitions", "phase_config", pc_key)),
        }

    def _refuse_disconnected(self, name: str, choice: dict[str, Any], key: str, uids: list[str], plan: Any) -> None:
        """Refuse an agent whose sets name ids, none of an environment of
        the phase: with no sensor and no actuator it cannot take part (an
        environment uid left out defaults to its definition key, and the
        sets naming the uid meant silently dropped out).

        Raises:
            DocumentError: at the agent's sensor set.
        """
        sets = {kind: choice[kind].get(key) for kind in SET_KEYS}
        if any(v is None for v in sets.values()):
            return  # none given: every sensor or actuator of the phase
        named = {uid for kind, set_key in sets.items() for uid, ids in (self.defs[kind][set_key] or {}).items()
                 if ids}
        if not named or named & set(uids):
            return
        raise self.experiment.error(
            f"agent {name!r} gets no sensor and no actuator in phase {plan.name!r}: its sets "
            f"{sets['sensors']!r} and {sets['actuators']!r} name environment uid(s) "
            f"{', '.join(map(repr, sorted(named)))}, and the phase's environments have {', '.join(map(repr, uids))} "
            "(an environment's uid defaults to its definition key)", ("definitions", "sensors", sets["sensors"]))

    def _environment(self, key: str) -> dict:
        raw = self.defs["environments"][key]
        env = raw["environment"]
        return {
            "environment": {"name": env["name"], "uid": env.get("uid") or key, "params": env.get("params") or {}},
            "reward": _component(raw.get("reward")),
            "state_transformer": _component(raw.get("state_transformer")),
        }

    def _agent(self, key: str, phase: str) -> dict:
        raw = self.defs["agents"][key]
        load = raw.get("load")
        if isinstance(load, dict) and load and set(load) <= self.phase_name_set:
            load = load.get(phase)  # a load block per phase name (arsenAI)
        return {
            "name": raw.get("name") or key,
            "brain": _component(raw["brain"]),
            "muscle": _component(raw["muscle"]),
            "objective": _component(raw["objective"]),
            "load": load,
            "replay": raw.get("replay"),
        }

    def _run_config(self) -> dict:
        out = dict(self.defs["run_config"])
        if "condition" in out:
            out["condition"] = _component(out["condition"])
        return out

    def _simulation(self, key: str) -> dict:
        raw = self.defs["simulation"][key]
        return {"name": raw["name"], "conditions": [_component(c) for c in raw.get("conditions") or []]}

    def _ids(self, kind: str, set_key: str, uids: list[str]) -> list[str]:
        """The full ids of set ``set_key`` for a phase with environments
        ``uids`` (the ids of other environments drop out).

        Raises:
            DocumentError: an id listed twice in the set.
        """
        slot = (kind, set_key, tuple(uids))
        cached = self._id_lists.get(slot)
        if cached is not None:
            return cached
        mapping = self.defs[kind][set_key] or {}
        full_ids: dict[str, list[str]] = {}
        seen: set[str] = set()
        for uid, ids in mapping.items():
            full_ids[uid] = []
            for raw in [] if ids is None else ids if isinstance(ids, list) else [ids]:
                text = str(raw)
                full = text if text.startswith(uid + ".") else f"{uid}.{text}"
                if full in seen:
                    raise self.experiment.error(f"{kind[:-1]} set {set_key!r} lists {full!r} twice",
                                                ("definitions", kind, set_key, uid))
                seen.add(full)
                full_ids[uid].append(full)
        out = [full for uid in uids for full in full_ids.get(uid, ())]
        self._id_lists[slot] = self._constant(out)
        return out


def _instantiate(compiled: tuple[str, Any], named: dict[str, Any]) -> Any:
    tag, node = compiled
    if tag == "const":
        return node
    if tag == "str":
        return interpolate(node, named)
    if tag == "dict":
        return {key: _instantiate(value, named) for key, value in node.items()}
    return [_instantiate(value, named) for value in node]


def _position(levels: list, level: Any) -> int:
    try:
        return levels.index(level)
    except ValueError:
        return 0

