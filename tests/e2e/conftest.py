"""Shared fixtures of the end-to-end tests: where the CLI and the shared models are."""
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def tessera_bin() -> str:
    path = os.environ.get("TESSERA_BIN", str(ROOT / "build" / "tools" / "tessera"))
    if not os.path.exists(path):
        raise RuntimeError(f"tessera CLI not found at {path}: build first (scripts/build.sh) or set TESSERA_BIN")
    return path


def shared_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("TESSERA_SHARED", str(ROOT.parent / "shared")))


def run_cli(*args, check=True, timeout=900):
    """Runs `tessera ARGS...`; returns the CompletedProcess (text mode)."""
    proc = subprocess.run([tessera_bin(), *map(str, args)], capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"tessera {' '.join(map(str, args))} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture(scope="session")
def models_dir() -> pathlib.Path:
    d = shared_dir() / "models"
    assert d.is_dir(), f"shared models not found at {d}"
    return d
