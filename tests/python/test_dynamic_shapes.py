"""A VM library with symbolic shapes (runtime/vm.h "Shapes") from Python: `inputs` shows a symbolic
dim as its name, arrays of any fitting extent run, a wrong rank or static extent names the input.
The library is the runtime tests' hand-written fixture (tests/runtime/fixtures/fixture_dynamic_model.c:
y = relu(x + x), x and y float32 ["n", 4]), so no compiler support for dynamic shapes is needed."""
import os

import numpy as np
import pytest

import tessera


@pytest.fixture(scope="module")
def dynamic_model():
    path = os.environ.get("TESSERA_FIXTURE_DYNAMIC_MODEL")
    if not path or not os.path.isfile(path):
        pytest.fail("TESSERA_FIXTURE_DYNAMIC_MODEL (the runtime tests' fixture library) is not set: run through "
                    "ctest (tests/python/CMakeLists.txt sets it)")
    return tessera.load(path)


def test_inputs_show_symbolic_dims_by_name(dynamic_model):
    (x,) = dynamic_model.inputs
    assert x.name == "x" and x.shape == ("n", 4) and x.dtype == "float32" and not x.is_static
    assert dynamic_model.outputs[0].shape == ("n", 4)
    assert "x: float32['n', 4]" in repr(dynamic_model)


def test_any_fitting_extent_runs(dynamic_model):
    for n in (1, 3, 10, 0):
        x = np.arange(4 * n, dtype=np.float32).reshape(n, 4) - 5
        y = dynamic_model(x)
        assert y.shape == (n, 4)
        np.testing.assert_array_equal(y, np.maximum(2 * x, 0))
    assert dynamic_model.run(x=np.ones((2, 4), np.float32))["y"].shape == (2, 4)


def test_wrong_rank_or_static_extent_names_the_input(dynamic_model):
    with pytest.raises(tessera.UserError, match=r"input 'x' expects float32 \[n, 4\], got float32 \[3, 5\]"):
        dynamic_model(np.zeros((3, 5), np.float32))
    with pytest.raises(tessera.UserError, match=r"input 'x' expects float32 \[n, 4\], got float32 \[12\]"):
        dynamic_model(np.zeros(12, np.float32))


def test_benchmark_needs_inputs_for_dynamic_dims(dynamic_model):
    with pytest.raises(tessera.UserError, match=r"input 'x' has dynamic dims \['n', 4\]"):
        dynamic_model.benchmark()
    assert dynamic_model.benchmark(np.zeros((2, 4), np.float32), repeat=2, warmup=0).median_ms >= 0
