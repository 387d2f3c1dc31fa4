"""The model zoo: the shipped networks under immutable versioned names (``agents/zoo/NAME.safetensors``) and the
metadata each file carries, without torch.

Each entry of :data:`ZOO` is a network as it was shipped, named by what it is and the date it was made
(``avg109-2026-12-06``): a name never changes meaning, a new network gets a new name. Its file carries, beside
the ``agents.nn`` checkpoint's own keys (``format``, ``config``, ``sha256`` of the weights, ...), the keys of
:data:`REQUIRED_KEYS`: the name, the command that made it (as far as lab/notebook.md records it), the commit that
added its weights, the date and its strength (JSON: points per hand against the rule agent on one fixed set of
walls, alone and with the wait check, or ``null`` while not measured). ``agents.nn:zoo`` loads an entry by name;
``agents.nn:latest`` is :data:`LATEST`, the newest network alone; ``agents.nn:baseline`` the strongest shipped
agent, :data:`BASELINE` with the wait check (docs/agents.md, "Model zoo").

``python -m agents.zoo_meta`` writes each file's zoo keys from :data:`ZOO` (:func:`write_metadata`: the header
only, the tensors' bytes untouched), ``--check`` only verifies them (exit status 1 on a difference), ``--show``
prints them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

#: the folder of the zoo's files
ZOO_DIR = Path(__file__).with_name("zoo")
#: the keys every zoo file's safetensors metadata holds beside the ``agents.nn`` checkpoint's own
REQUIRED_KEYS = ("zoo_name", "zoo_recipe", "zoo_commit", "zoo_date", "zoo_strength")
#: the walls of the zoo's strength figures: ``mjenv eval --agent nn=... --agent rule=agents.rule:make --seating 1v3
#: --walls 10000 --seed 20261207``
STRENGTH_WALLS, STRENGTH_SEED = 10_000, 20261207


@dataclass(frozen=True)
class ZooEntry:
    """One shipped network: ``name`` (the file ``agents/zoo/NAME.safetensors``), ``arch`` (its
    ``NNConfig.describe()``), ``parameters``, ``recipe`` (how it was made: the commands of lab/notebook.md),
    ``commit`` and ``date`` (the commit that added these weights, and the date the network was made), ``old``
    (its factory name before the zoo, now a deprecated alias; None for a network shipped in the zoo), ``alone``
    and ``checked`` (points per hand with 95% CI against the rule agent on :data:`STRENGTH_WALLS` walls of
    :data:`STRENGTH_SEED`, 1v3, the network greedy, alone and with the wait check; None while not measured)."""

    name: str
    arch: str
    parameters: int
    recipe: str
    commit: str
    date: str
    old: str | None
    alone: str | None = None
    checked: str | None = None

    @property
    def path(self) -> Path:
        return ZOO_DIR / f"{self.name}.safetensors"

    def strength(self) -> dict:
        """The ``zoo_strength`` metadata (a dict; JSON in the file)."""
        return {
            "against": "agents.rule:make",
            "seating": "1v3",
            "walls": STRENGTH_WALLS,
            "seed": STRENGTH_SEED,
            "alone": self.alone,
            "checked": self.checked,
        }

    def metadata(self) -> dict[str, str]:
        """The zoo keys of the file's metadata (:data:`REQUIRED_KEYS`), as strings."""
        return {
            "zoo_name": self.name,
            "zoo_recipe": self.recipe,
            "zoo_commit": self.commit,
            "zoo_date": self.date,
            "zoo_strength": json.dumps(self.strength(), sort_keys=True),
        }


_PLANES = "planes(blocks=2, channels=32, hidden=128, with_features)"

#: the zoo, oldest first; a name never changes meaning
ZOO: dict[str, ZooEntry] = {
    e.name: e
    for e in (
        ZooEntry(
            name="mlp-2026-12-01",
            arch="mlp(channels=16, hidden=128)",
            parameters=68_547,
            recipe=(
                "BC from the rule agent, PPO from it (update 1,480 of the 2026-12-01 run, 82.8 min), then "
                "python -m train.ppo --run-dir runs/c --init-from <that network> --updates 800 --lr 6e-4 "
                "--value-warmup 0 --seed 11 --eval-every 40 --eval-walls 100 --keep-eval-policies "
                "--save-every 20 --no-progress; update 360 (runs/c/evals/policy_u000360.safetensors), "
                "99.6 min of PPO in all (lab/notebook.md, the shipped mlp of 2026-12-01)"
            ),
            commit="c07eac4",
            date="2026-12-01",
            old="mlp_baseline",
            alone="+0.13 [-0.12, +0.37]",
            checked="+1.27 [+1.00, +1.53]",
        ),
        ZooEntry(
            name="planes32-2026-12-04",
            arch=_PLANES,
            parameters=96_740,
            recipe=(
                "PPO of the tile-plane network to u1080, then python -m train.ppo --run-dir runs/anneal_planes "
                "--seed 26 --threads 1 --torch-threads 1 --init-from runs/long_planes_u1080.safetensors "
                "--value-warmup 20 --updates 1600 --save-every 10 --time-budget-s 6600 --eval-every 50 "
                "--no-progress; update 1250 (runs/anneal_planes/evals/policy_u001250.safetensors), selected on "
                '4,000 walls of seed 100 (lab/notebook.md, "Annealed continuation")'
            ),
            commit="1d730b7",
            date="2026-12-04",
            old="planes32_baseline",
            alone="+1.05 [+0.77, +1.33]",
            checked="+2.69 [+2.40, +2.98]",
        ),
        ZooEntry(
            name="ens5-2026-12-05",
            arch=_PLANES,
            parameters=96_740,
            recipe=(
                "python -m train.bc --teacher agents.nn:ensemble --teacher-opt checkpoints=$ENS5 "
                "--decisions 2000000 --data runs/s21/ens5_2m.npz ... --seed 1, then python -m train.bc --data "
                "runs/s21/ens5_2m.npz --arch planes --blocks 2 --channels 32 --with-features --threads 2 "
                "--torch-threads 2 --seed 1 --out runs/s21/student5_32.safetensors --no-progress; ENS5 = "
                'planes32-2026-12-04 and four PPO runs after it (lab/notebook.md, "Distilled ensembles")'
            ),
            commit="b366019",
            date="2026-12-05",
            old="ens5_baseline",
            alone="+1.07 [+0.80, +1.35]",
            checked="+2.76 [+2.48, +3.05]",
        ),
        ZooEntry(
            name="avg109-2026-12-06",
            arch=_PLANES,
            parameters=96_740,
            recipe=(
                "python -m train.average over the 109 snapshots (from update 50 on) and final networks of eight "
                "PPO runs of 1,800-3,600 s from ens5-2026-12-05 and from averages of them (runs/s25/swa_s55, "
                "swa_s56, runs/s26/ppo_s57..s62) --out runs/s28/grand.safetensors (lab/notebook.md, the "
                "weight average of 2026-12-06)"
            ),
            commit="ccb5f11",
            date="2026-12-06",
            old="baseline",
            alone="+1.38 [+1.11, +1.66]",
            checked="+2.88 [+2.60, +3.17]",
        ),
        ZooEntry(
            name="distil1-2026-12-07",
            arch="planes(blocks=2, channels=32, hidden=128, with_features, wait_inputs)",
            parameters=96_804,
            recipe=(
                "python -m train.bc --out runs/exit/z1.safetensors --teacher agents.nn:make --teacher-opt "
                "checkpoint=agents/zoo/avg109-2026-12-06.safetensors greedy=true 'waits={\"claims\": 0.5}' threads=1 "
                "--opponent agents.rule:make --decisions 1000000 --data runs/exit/z1.npz --seed 30 --init-from "
                "agents/zoo/avg109-2026-12-06.safetensors --wait-inputs --epochs 3 --batch-size 1024 --lr 0.0005 "
                "--threads 1 --torch-threads 1 (one distil round: avg109-2026-12-06 with agents.nn:baseline's wait "
                "check cloned back into it; lab/2026-12-07-strength.md)"
            ),
            commit="8af3912",
            date="2026-12-07",
            old=None,
            alone="+1.83 [+1.55, +2.11]",
            checked="+2.93 [+2.64, +3.21]",
        ),
        ZooEntry(
            name="recipe-2026-12-08",
            arch="planes(blocks=2, channels=32, hidden=128, with_features, wait_inputs, near_inputs)",
            parameters=96_868,
            recipe=(
                "python -m train.recipe (its defaults, seed 0: teacher data, cloning, 800 PPO updates, the fine "
                "stage through the check, the average, three distil rounds with the wait and near inputs); the "
                "stages up to the average ran at c1f8241 (PPO resumed at 5f98db8), the distil and final stages at "
                "d2e878b; 12,914 s (3.6 h) of one core. Final walls (10,000 of seed 8,000,000): alone +1.92 "
                "[+1.66, +2.19], with agents.nn:baseline's check +2.76 [+2.48, +3.03] (docs/training.md)"
            ),
            commit="a413b16",
            date="2026-12-08",
            old=None,
            alone="+1.71 [+1.45, +1.98]",
            checked="+1.90 [+1.63, +2.16]",
        ),
    )
}

#: the newest network (``agents.nn:latest``)
LATEST = next(reversed(ZOO))
#: the network inside the strongest shipped agent, ``agents.nn:baseline`` (with the wait check); moved to a new
#: entry only once that is measured stronger
BASELINE = "avg109-2026-12-06"


def zoo_path(name: str) -> Path:
    """The file of zoo entry ``name`` (``ValueError`` naming the entries for an unknown one)."""
    if not isinstance(name, str):
        raise TypeError(f"a zoo name is a str, got {type(name).__name__}")
    if name not in ZOO:
        raise ValueError(f"no zoo entry {name!r}; the zoo: {', '.join(ZOO)}")
    return ZOO[name].path


def _read_header(path: str | Path) -> tuple[dict, bytes]:
    """``(header, rest)`` of a safetensors file: its JSON header and the bytes after it (the tensors)."""
    data = Path(path).read_bytes()
    if len(data) < 8:
        raise ValueError(f"{path} is not a safetensors file (shorter than 8 bytes)")
    (n,) = struct.unpack("<Q", data[:8])
    if 8 + n > len(data):
        raise ValueError(f"{path} is not a safetensors file (header of {n} bytes in {len(data)})")
    try:
        header = json.loads(data[8 : 8 + n])
    except ValueError as e:
        raise ValueError(f"{path} is not a safetensors file (unreadable header: {e})") from e
    if not isinstance(header, dict):
        raise ValueError(f"{path} is not a safetensors file (its header is not a JSON object)")
    return header, data[8 + n :]


def read_metadata(path: str | Path) -> dict[str, str]:
    """The safetensors metadata (``__metadata__``) of ``path``."""
    return dict(_read_header(path)[0].get("__metadata__") or {})


def tensors_digest(path: str | Path) -> str:
    """SHA-256 of a safetensors file's tensors: every tensor's name, dtype, shape and offsets, and the data bytes
    (what :func:`write_metadata` leaves unchanged)."""
    header, rest = _read_header(path)
    h = hashlib.sha256()
    h.update(json.dumps({k: v for k, v in header.items() if k != "__metadata__"}, sort_keys=True).encode())
    h.update(rest)
    return h.hexdigest()


def num_parameters(path: str | Path) -> int:
    """The number of values in a safetensors file's tensors."""
    header, _ = _read_header(path)
    total = 0
    for k, v in header.items():
        if k != "__metadata__":
            n = 1
            for d in v["shape"]:
                n *= int(d)
            total += n
    return total


def write_metadata(path: str | Path, updates: dict[str, str]) -> bool:
    """Set the metadata keys ``updates`` (str to str) of the safetensors file ``path`` in place, keeping its other
    keys and its tensors' bytes (only the header is rewritten, padded to 8 bytes as safetensors writes it).
    Returns whether the file changed."""
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in updates.items()):
        raise TypeError("metadata keys and values must be str")
    header, rest = _read_header(path)
    meta = dict(header.get("__metadata__") or {})
    new = {**meta, **updates}
    if new == meta:
        return False
    tensors = {k: v for k, v in header.items() if k != "__metadata__"}
    text = json.dumps({"__metadata__": new, **tensors}, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    Path(path).write_bytes(struct.pack("<Q", len(text)) + text + rest)
    return True


def differences(entry: ZooEntry) -> list[str]:
    """What the file of ``entry`` lacks or holds otherwise than :data:`ZOO` says (empty when it agrees)."""
    meta = read_metadata(entry.path)
    out = [f"{k}: {meta.get(k)!r} != {v!r}" for k, v in entry.metadata().items() if meta.get(k) != v]
    if num_parameters(entry.path) != entry.parameters:
        out.append(f"parameters: {num_parameters(entry.path)} != {entry.parameters}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m agents.zoo_meta", description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--check", action="store_true", help="only verify the files' zoo keys (exit 1 on a difference)"
    )
    ap.add_argument("--show", action="store_true", help="print each file's metadata")
    args = ap.parse_args(argv)
    bad = 0
    for e in ZOO.values():
        if args.show:
            print(e.name, json.dumps(read_metadata(e.path), indent=1, sort_keys=True))
            continue
        diff = differences(e)
        if args.check:
            bad += bool(diff)
            print(f"{e.name}: " + ("ok" if not diff else "; ".join(diff)))
        else:
            before = tensors_digest(e.path)
            changed = write_metadata(e.path, e.metadata())
            assert tensors_digest(e.path) == before, e.path
            print(f"{e.name}: {'written' if changed else 'unchanged'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
