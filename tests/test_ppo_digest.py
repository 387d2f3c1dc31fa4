"""Digests of short seeded PPO runs, pinned: rearranging ``train.ppo`` and its run machinery must train the
same network bit for bit.

The digests below were measured on the code of commit f98e335, before ``train.ppo`` was split into the
algorithm (``train/ppo.py``) and its run machinery (checkpoints, logs, checks), with the settings of each case
on CPU with one Numba and one torch thread, and checked to repeat from run to run. Each digest is a SHA-256
over every tensor of the final checkpoint (network, optimizer, opponent pool, the whole VectorEnv state, chair
owners, RNG states, the oracle critic), the checkpoint's metadata but the config's paths and the wall-clock
seconds, and every row of ``progress.csv`` but its timing columns (losses, KL, clip fraction, points, ratings).
The VectorEnv's state is hashed as it was at f98e335: the match fields added since (which single hands leave
at their initial values) are left out, and its packed per-table buffers are read to their rows of then.

A digest is a float computation's fingerprint, so another torch build or CPU may round differently (MKL and
oneDNN pick their kernels by CPU: the same code gives other digests on an AMD EPYC than on the Intel Xeon of the
first measurement): the test compares only where torch's version, the machine's architecture and the CPU vendor
are those of a measurement (it skips elsewhere, naming the difference). :data:`DIGESTS` holds the Intel
measurement; :data:`DIGESTS_BY_VENDOR` adds the same code's digests on an AMD EPYC (Zen 4, AVX-512), measured
on the unchanged code of commit 28a5b2e. A change of the training on purpose regenerates the digests in a
commit of its own that says why: ``PYTHONPATH=$PWD python tests/test_ppo_digest.py`` prints them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import platform
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")
pytest.importorskip("openskill")

from agents import nn as ann  # noqa: E402 (after the importorskip)
from mjenv.vector import VectorEnv  # noqa: E402
from train.ppo import PPOConfig, read_checkpoint, train  # noqa: E402 (after the importorskip)

TINY = {
    "num_envs": 16, "rollout_steps": 16, "threads": 1, "torch_threads": 1, "channels": 4, "hidden": 16,
    "updates": 4, "minibatch_size": 64, "epochs": 2, "pool_every": 1, "pool_size": 2, "eval_every": 0,
    "save_every": 1, "progress": False, "opponents": ("rule", "pool", "random"), "opponent_prob": 0.5,
    "min_fan": 4, "value_warmup": 1, "lr_warmup": 2,
}  # fmt: skip
CASES = {
    "default": {},
    "oracle": {"critic": "oracle", "critic_channels": 4, "critic_hidden": 16},
    "anchor": {"anchor_kl": 5.0, "init_from": "INIT", "lr": 1e-2},
    "ratings": {"pool_ratings": True, "rollout_steps": 48},
    "planes-oracle": {"arch": "planes", "blocks": 1, "with_features": True, "critic": "oracle",
                      "critic_channels": 4, "critic_hidden": 16},
}  # fmt: skip

#: where the digests were measured (see the module docstring)
MEASURED_ON = {"torch": "2.13", "machine": "x86_64"}
DIGESTS = {
    "default": "d56a29a2e6ac410400e19dbb2363422f93ec1acb4422b4e053132d5fb855ffe5",
    "oracle": "864fef3eae4a897542c09d965db86a7e0a9972b8c98fc7da9f387302da0f5b17",
    "anchor": "093e03f3ce5105228f56def9756cf5564cac7b9507ef247858c3702b9e15bf86",
    "ratings": "88a4194bedeea48ae75053ba400d1af292f7ddf8037533914eda82cbdaf0518a",
    "planes-oracle": "042fd483187313328bddd8115bf5ea5b6abd2af8277b47ebaa5ee90907a25fcc",
}
#: the digests per CPU vendor (``vendor_id`` of /proc/cpuinfo), each on :data:`MEASURED_ON`
DIGESTS_BY_VENDOR = {
    "GenuineIntel": DIGESTS,
    "AuthenticAMD": {
        "default": "aa52a9d75eb1ed9ba394728a7a98248aef2dbe2b91f8e9dfd8703bc2c1f3227e",
        "oracle": "d5ef30299963b67772ac5f5d2889500b982c4434e5b2857492c491db09df3f85",
        "anchor": "898e7386b0d67d07475f54dbb95f0bc7ec00cf959bbdb7b78c39a4e3c64f5f43",
        "ratings": "924f54294699c971e1c02496793a190c5a781aa6c0329a430b19197882dc1b2a",
        "planes-oracle": "1ef3d4134f03ae4f3d2480234f8821b5cc0793ad206be289fe8a69da84a030f9",
    },
}
_TIMING = ("seconds", "decisions_per_s")


def _cpu_vendor() -> str:
    """The CPU's ``vendor_id`` (/proc/cpuinfo), or ``platform.processor()`` where there is none."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("vendor_id"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _init_checkpoint(path: Path) -> str:
    """A fixed starting network for ``init_from`` (the anchor of ``anchor_kl``)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(7)
        ann.save(ann.build_net(ann.NNConfig(4, 16)), path)
    return str(path)


def run_digest(run_dir: Path, case: str, stop_after: int | None = None) -> str:
    """Train the case in ``run_dir`` (``stop_after``: stop there, then resume to the end) and digest it."""
    kw = {**TINY, **CASES[case]}
    if kw.get("init_from") == "INIT":
        kw["init_from"] = _init_checkpoint(run_dir.parent / f"{run_dir.name}_init.safetensors")
    cfg = PPOConfig(run_dir=str(run_dir), **kw)
    if stop_after is not None:
        train(cfg, stop_after=stop_after)
        cfg = dataclasses.replace(cfg, resume=True)
    train(cfg)
    tensors, meta = read_checkpoint(run_dir / "checkpoint.safetensors")
    h = hashlib.sha256()
    for name in sorted(tensors):
        if (
            "match" in name
        ):  # the VectorEnv's match fields (added after f98e335; single hands leave them fixed)
            continue
        t = tensors[name].contiguous()
        if name.startswith("env.") and name[4:] in VectorEnv._ROWS_0_1:  # the packed rows of f98e335
            t = t[: VectorEnv._ROWS_0_1[name[4:]]].contiguous()
        h.update(f"{name} {tuple(t.shape)} {t.dtype}\n".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    counters = json.loads(meta.pop("counters"))
    counters.pop("seconds")
    meta.pop("config")
    meta.pop("sha256", None)
    if "net_config" in meta:  # a network setting added after the pins, at its default: the same training
        net_config = json.loads(meta["net_config"])
        for key in ("wait_inputs", "near_inputs"):
            if net_config.get(key) is False:
                del net_config[key]
        meta["net_config"] = json.dumps(net_config, sort_keys=True)
    h.update(json.dumps({**meta, "counters": counters}, sort_keys=True).encode())
    lines = (run_dir / "progress.csv").read_text().splitlines()
    header = lines[0].split(",")
    keep = [i for i, k in enumerate(header) if k not in _TIMING]
    for line in lines:
        cells = line.split(",")
        h.update((",".join(cells[i] for i in keep) + "\n").encode())
    return h.hexdigest()


def _platform_differs() -> str | None:
    here = {"torch": ".".join(torch.__version__.split(".")[:2]), "machine": platform.machine()}
    if here != MEASURED_ON:
        return f"digests measured on {MEASURED_ON}, this is {here}"
    vendor = _cpu_vendor()
    if vendor not in DIGESTS_BY_VENDOR:
        return f"digests measured on {', '.join(DIGESTS_BY_VENDOR)} CPUs, this is {vendor}"
    return None


@pytest.mark.parametrize("case", list(CASES))
def test_training_digest_is_pinned(tmp_path, case):
    why = _platform_differs()
    if why:
        pytest.skip(why)
    assert run_digest(tmp_path / case, case) == DIGESTS_BY_VENDOR[_cpu_vendor()][case]


def test_resumed_run_has_the_pinned_digest(tmp_path):
    """Stopped after two updates and resumed from its checkpoint (the VectorEnv restored from it), a run
    ends with the uninterrupted run's digest."""
    why = _platform_differs()
    if why:
        pytest.skip(why)
    assert (
        run_digest(tmp_path / "resumed", "oracle", stop_after=2) == DIGESTS_BY_VENDOR[_cpu_vendor()]["oracle"]
    )


#: every option of ``python -m train.ppo`` with its default, as at commit f98e335 (the settings now come from
#: several modules: train.run, train.opponents and the research options' modules)
OPTIONS = {
    "anchor_kl": 0.0, "anneal_lr": True, "arch": "mlp", "blocks": None, "channels": 16, "clip_coef": 0.2,
    "critic": "shared", "critic_channels": 32, "critic_hidden": 256, "device": "auto", "ent_coef": 0.002,
    "epochs": 3, "eval_every": 100, "eval_seed": 12345, "eval_walls": 200, "gae_lambda": 0.95, "gamma": 1.0,
    "hidden": 128, "init_from": None, "keep_eval_policies": True, "lr": 0.0015, "lr_warmup": 0,
    "max_grad_norm": 0.5, "min_fan": 8, "minibatch_size": 4096, "num_envs": 512, "opponent_prob": 0.75,
    "opponents": ("rule",), "pool_every": 25, "pool_ratings": False, "pool_size": 8, "progress": True,
    "ray_address": None, "ray_num_cpus": None, "ray_ship_code": False, "resume": False, "reward_scale": 0.03125,
    "rollout_check": False,
    "rollout_steps": 64, "run_dir": "runs/ppo", "save_every": 25, "seed": 0, "snapshot_every": 0, "target_kl": 0.03, "threads": 2,
    "time_budget_s": None, "torch_threads": 2, "updates": 1200, "value_warmup": 10, "vf_coef": 0.5, "wait_inputs": False,
    "with_features": False, "workers": 0,
}  # fmt: skip


def test_every_option_keeps_its_name_and_default(capsys, monkeypatch):
    tyro = pytest.importorskip("tyro")
    monkeypatch.setenv("COLUMNS", "200")  # one line per option
    assert dataclasses.asdict(PPOConfig()) == OPTIONS
    with pytest.raises(SystemExit):
        tyro.cli(PPOConfig, args=["--help"])
    shown = capsys.readouterr().out
    missing = [k for k in OPTIONS if f"--{k.replace('_', '-')}" not in shown]
    assert not missing and "--no-progress" in shown and "--opponents [STR [STR ...]]" in shown


if __name__ == "__main__":
    import sys
    import tempfile

    names = sys.argv[1:] or list(CASES)
    with tempfile.TemporaryDirectory() as d:
        for name in names:
            print(f"    {name!r}: {run_digest(Path(d) / name, name)!r},", flush=True)
