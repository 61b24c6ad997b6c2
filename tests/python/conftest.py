"""Fixtures of the Python package's tests: the shared models and their reference data."""
import os
import pathlib

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def shared_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("TESSERA_SHARED", str(ROOT.parent / "shared")))


def load_pb(path) -> np.ndarray:
    import onnx
    from onnx import numpy_helper

    return numpy_helper.to_array(onnx.load_tensor(str(path)))


@pytest.fixture(scope="session")
def mnist_dir() -> pathlib.Path:
    d = shared_dir() / "models" / "mnist-8"
    assert (d / "model.onnx").is_file(), f"shared model mnist-8 not found at {d}"
    return d


@pytest.fixture(scope="session")
def mnist(mnist_dir):
    import tessera

    return tessera.compile(mnist_dir / "model.onnx")


@pytest.fixture(scope="session")
def mnist_data(mnist_dir):
    """[(input, reference output)] of every shipped data set."""
    sets = sorted(mnist_dir.glob("test_data_set_*"))
    assert sets
    return [(load_pb(s / "input_0.pb"), load_pb(s / "output_0.pb")) for s in sets]


def assert_close(got, ref, rtol=1e-3, atol=1e-4):
    got, ref = np.asarray(got), np.asarray(ref)
    assert got.shape == ref.shape and got.dtype == ref.dtype, (got.shape, got.dtype, ref.shape, ref.dtype)
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol)
