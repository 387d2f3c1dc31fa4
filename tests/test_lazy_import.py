"""``import mjenv`` is light (a warm start loads only what it uses) and keeps its public API and its gymnasium id."""

import subprocess
import sys
import textwrap
from pathlib import Path

import mjenv

ROOT = Path(__file__).resolve().parent.parent


def _run(code: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_every_public_name_resolves():
    for name in mjenv.__all__:
        assert getattr(mjenv, name) is not None, name


def test_import_mjenv_imports_no_framework_and_gymnasium_finds_the_env_later():
    """``import mjenv`` imports neither gymnasium, pettingzoo, numba nor tqdm; importing gymnasium afterwards
    registers the env (the import hook runs once, then is gone, and gymnasium keeps its own loader)."""
    out = _run(
        """
        import sys
        import mjenv
        heavy = sorted({"gymnasium", "pettingzoo", "numba", "tqdm", "torch"} & set(sys.modules))
        print("heavy", heavy)
        import gymnasium
        spec = gymnasium.spec(mjenv.GYM_ID)
        print("entry", spec.entry_point)
        print("hooks", [type(f).__name__ for f in sys.meta_path if "Gymnasium" in type(f).__name__])
        loader = gymnasium.__spec__.loader
        print("own loader", "exec_module" not in vars(loader), type(loader).__name__)
        """
    )
    assert "heavy []" in out
    assert "entry mjenv.gym_env:MahjongGymEnv" in out
    assert "hooks []" in out
    assert "own loader True" in out


def test_gymnasium_imported_first_and_reload_register_once():
    out = _run(
        """
        import importlib, sys
        import gymnasium
        import mjenv
        print("registered", mjenv.GYM_ID in gymnasium.registry)
        importlib.reload(mjenv)  # registered already: no error, no hook
        print("hooks", [type(f).__name__ for f in sys.meta_path if "Gymnasium" in type(f).__name__])
        """
    )
    assert "registered True" in out
    assert "hooks []" in out


def test_a_failed_registration_warns_and_gymnasium_still_imports():
    out = _run(
        """
        import warnings
        import mjenv
        mjenv._register = lambda gymnasium: 1 / 0
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import gymnasium
        print("imported", hasattr(gymnasium, "make"), mjenv.GYM_ID in gymnasium.registry)
        print("warned", [str(w.message)[:40] for w in caught if w.category is RuntimeWarning])
        """
    )
    assert "imported True False" in out
    assert "mjenv could not register" in out


def test_the_env_id_makes_the_gym_env():
    import gymnasium

    env = gymnasium.make(mjenv.GYM_ID, opponents="random")
    obs, info = env.reset(seed=0)
    assert obs.shape == env.observation_space.shape
    env.close()
