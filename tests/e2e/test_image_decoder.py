"""ONNX ImageDecoder-20 through the whole compiler: images encoded here with Pillow in every format
the spec lists (BMP, JPEG, JPEG 2000, TIFF, PNG, WebP, PNM) and in their variants (colour modes,
bit depths, palettes, alpha, subsampling, progressive / interlaced, compression), decoded by one
compiled model at run time (the VM's builtin image_decode binds the image's extents per call) and
compared with the ONNX reference's definition (Pillow's decode; convert("RGB") / convert("L")).
Exact, except CMYK JPEG (Pillow's CMYK -> RGB rounds differently: within 1). Also: a decoded image
feeding kernels of symbolic extents, a constant stream decoded at import, an undecodable stream
giving the spec's empty image, and bad models refused at import."""
import io

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from PIL import Image

from conftest import run_cli, run_outputs


def _model(pixel_format, tail=(), out_type=TensorProto.UINT8, out_shape=("h", "w", "c"), inits=()):
    nodes = [helper.make_node("ImageDecoder", ["data"], ["image" if tail else "y"], pixel_format=pixel_format)]
    nodes += list(tail)
    graph = helper.make_graph(nodes, "decode", [helper.make_tensor_value_info("data", TensorProto.UINT8, ["n"])],
                              [helper.make_tensor_value_info("y", out_type, list(out_shape))], initializer=list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


def _compile(tmp_path, model, name="m"):
    path, so = tmp_path / f"{name}.onnx", tmp_path / f"{name}.so"
    onnx.save(model, path)
    run_cli("compile", path, "-o", so)
    return so


def _encode(image, fmt, **options):
    with io.BytesIO() as f:
        image.save(f, format=fmt, **options)
        return np.frombuffer(f.getvalue(), dtype=np.uint8).copy()


def _reference(data, pixel_format):
    """The ONNX reference's decode (Pillow), with the spec's channels for any source mode."""
    img = Image.open(io.BytesIO(data.tobytes()))
    if pixel_format == "Grayscale":
        return np.asarray(img.convert("L"))[:, :, None]
    rgb = np.asarray(img.convert("RGB"))
    return rgb[:, :, ::-1] if pixel_format == "BGR" else rgb


def _checkerboard(h, w, seed, tile=5):
    rng = np.random.default_rng(seed)
    colours = rng.integers(0, 256, size=(h // tile + 1, w // tile + 1, 3), dtype=np.uint8)
    ys, xs = np.arange(h) // tile, np.arange(w) // tile
    image = colours[ys[:, None], xs[None, :]]
    image[::7, ::3] = rng.integers(0, 256, size=3, dtype=np.uint8)  # some detail for the codecs
    return image


RGB = Image.fromarray(_checkerboard(37, 53, 0))
GRAY = Image.fromarray(_checkerboard(41, 29, 1)[:, :, 0])


def _variants():
    rgba = RGB.copy()
    rgba.putalpha(Image.fromarray(np.linspace(0, 255, 37 * 53).reshape(37, 53).astype(np.uint8)))
    palette = RGB.quantize(colors=23)
    yield "jpeg 4:2:0", _encode(RGB, "JPEG", quality=90, subsampling=2)
    yield "jpeg 4:4:4", _encode(RGB, "JPEG", quality=75, subsampling=0)
    yield "jpeg progressive", _encode(RGB, "JPEG", progressive=True)
    yield "jpeg gray", _encode(GRAY, "JPEG")
    yield "png rgb", _encode(RGB, "PNG")
    yield "png rgba", _encode(rgba, "PNG")
    yield "png gray", _encode(GRAY, "PNG")
    yield "png gray+alpha", _encode(GRAY.convert("LA"), "PNG")
    yield "png palette", _encode(palette, "PNG")
    yield "png 1-bit", _encode(GRAY.convert("1"), "PNG")
    yield "png optimized", _encode(RGB, "PNG", optimize=True)
    yield "tiff rgb", _encode(RGB, "TIFF")
    yield "tiff lzw", _encode(RGB, "TIFF", compression="tiff_lzw")
    yield "tiff gray deflate", _encode(GRAY, "TIFF", compression="tiff_adobe_deflate")
    yield "webp lossy", _encode(RGB, "WEBP", quality=80)
    yield "webp lossless", _encode(RGB, "WEBP", lossless=True)
    yield "webp alpha", _encode(rgba, "WEBP", lossless=True)
    yield "jpeg2000 jp2", _encode(RGB, "JPEG2000")
    yield "jpeg2000 j2k", _encode(RGB, "JPEG2000", no_jp2=True)
    yield "jpeg2000 gray", _encode(GRAY, "JPEG2000")
    yield "bmp 24-bit", _encode(RGB, "BMP")
    yield "bmp palette", _encode(palette, "BMP")
    yield "bmp gray", _encode(GRAY, "BMP")
    yield "bmp 1-bit", _encode(GRAY.convert("1"), "BMP")
    yield "ppm", _encode(RGB, "PPM")
    yield "pgm", _encode(GRAY, "PPM")
    yield "pbm", _encode(GRAY.convert("1"), "PPM")


VARIANTS = list(_variants())


@pytest.mark.parametrize("pixel_format", ["RGB", "BGR", "Grayscale"])
def test_every_format_and_variant_matches_the_reference(tmp_path, pixel_format):
    so = _compile(tmp_path, _model(pixel_format))
    for k, (name, data) in enumerate(VARIANTS):
        got, _ = run_outputs(tmp_path, so, {"data": data}, f"v{k}")
        want = _reference(data, pixel_format)
        assert got["y"].dtype == np.uint8 and got["y"].shape == want.shape, (name, got["y"].shape, want.shape)
        np.testing.assert_array_equal(got["y"], want, err_msg=name)


def test_cmyk_jpeg_becomes_rgb(tmp_path):
    data = _encode(RGB.convert("CMYK"), "JPEG", quality=95)
    so = _compile(tmp_path, _model("RGB"))
    got, _ = run_outputs(tmp_path, so, {"data": data}, "cmyk")
    want = _reference(data, "RGB")
    assert got["y"].shape == want.shape
    assert np.abs(got["y"].astype(int) - want.astype(int)).max() <= 1


def test_sixteen_bit_png_keeps_the_high_byte(tmp_path):
    """16-bit samples become their high byte (as OpenCV and png_set_strip_16; Pillow's "L" clips instead)."""
    wide = (np.arange(23 * 31, dtype=np.uint32).reshape(23, 31) * 97 % 65536).astype(np.uint16)
    data = _encode(Image.fromarray(wide), "PNG")
    so = _compile(tmp_path, _model("Grayscale"))
    got, _ = run_outputs(tmp_path, so, {"data": data}, "w")
    np.testing.assert_array_equal(got["y"][:, :, 0], (wide >> 8).astype(np.uint8))


def test_ascii_and_wide_pnm(tmp_path):
    """PNM variants Pillow does not write: ASCII P1-P3 and 16-bit samples (maxval 1000), scaled to 8 bits."""
    so = _compile(tmp_path, _model("RGB"))
    rgb = np.array([[[0, 500, 1000], [1000, 0, 250]]], dtype=np.int64)  # 1 x 2, maxval 1000
    cases = [
        (b"P3\n# a comment\n2 1\n1000\n" + " ".join(map(str, rgb.ravel())).encode() + b"\n",
         ((rgb * 255 + 500) // 1000).astype(np.uint8)),
        (b"P6 2 1 1000\n" + rgb.astype(">u2").tobytes(), ((rgb * 255 + 500) // 1000).astype(np.uint8)),
        (b"P2 3 1 15 0 15 7\n", np.repeat(np.array([[0, 255, 119]], dtype=np.uint8)[:, :, None], 3, axis=2)),
        (b"P1 3 2 101\n010\n", np.repeat(np.array([[0, 255, 0], [255, 0, 255]], dtype=np.uint8)[:, :, None], 3, 2)),
    ]
    for k, (stream, want) in enumerate(cases):
        got, _ = run_outputs(tmp_path, so, {"data": np.frombuffer(stream, dtype=np.uint8).copy()}, f"p{k}")
        np.testing.assert_array_equal(got["y"], want, err_msg=stream[:2].decode())


def test_undecodable_streams_give_the_empty_image(tmp_path):
    """The spec: a stream that cannot be decoded (unknown format, truncated, corrupt) gives an empty matrix."""
    so = _compile(tmp_path, _model("BGR"))
    png = _encode(RGB, "PNG")
    jpeg = _encode(RGB, "JPEG")
    streams = {
        "unknown": np.frombuffer(b"GIF89a not supported", dtype=np.uint8).copy(),
        "truncated png": png[: len(png) // 2].copy(),
        "corrupt png": np.concatenate([png[:40], np.full(len(png) - 40, 7, np.uint8)]),
        "truncated jpeg": jpeg[:20].copy(),
        "bad ppm": np.frombuffer(b"P6 4 4 255\n\x00\x01", dtype=np.uint8).copy(),
        "huge bmp header": np.frombuffer(b"BM" + bytes(60), dtype=np.uint8).copy(),
        "empty": np.zeros(0, np.uint8),
    }
    for k, (name, data) in enumerate(streams.items()):
        got, _ = run_outputs(tmp_path, so, {"data": data}, f"bad{k}")
        assert got["y"].shape == (0, 0, 3) and got["y"].dtype == np.uint8, name


def test_streams_cut_inside_the_pixels_are_undecodable_as_in_the_reference(tmp_path):
    """A stream that ends inside its pixel data: libjpeg pads it with gray, stb_image reads zeros
    and libtiff fails after a raster of the declared size is allocated, but Pillow (the reference)
    refuses it ("image file is truncated"); so must the decoder."""
    so = _compile(tmp_path, _model("RGB"))
    streams = {
        "jpeg cut mid-scan": _encode(RGB, "JPEG", quality=95)[:-200],
        "progressive jpeg cut": _encode(RGB, "JPEG", progressive=True)[:-200],
        "bmp missing its last row": _encode(RGB, "BMP")[:-(53 * 3 + 1)],
        "bmp missing one pixel": _encode(GRAY, "BMP")[:-4],
        "tiff missing its last byte": _encode(RGB, "TIFF")[:-1],
    }
    for k, (name, data) in enumerate(streams.items()):
        with pytest.raises(OSError, match="truncated"):
            _reference(data, "RGB")
        got, _ = run_outputs(tmp_path, so, {"data": data}, f"cut{k}")
        assert got["y"].shape == (0, 0, 3), name
    # Only the last row's padding missing (29 gray pixels + 3 bytes): the reference decodes it.
    data = _encode(GRAY, "BMP")[:-1]
    got, _ = run_outputs(tmp_path, so, {"data": data}, "pad")
    np.testing.assert_array_equal(got["y"], _reference(data, "RGB"))


def test_decoded_image_feeds_kernels_of_symbolic_extents(tmp_path):
    """The decoded size binds h and w for the kernels after it: one model, images of two sizes."""
    tail = [helper.make_node("Cast", ["image"], ["f"], to=TensorProto.FLOAT),
            helper.make_node("Div", ["f", "scale"], ["n"]),
            helper.make_node("Transpose", ["n"], ["chw"], perm=[2, 0, 1]),
            helper.make_node("ReduceMean", ["chw", "axes"], ["y"], keepdims=0)]
    inits = [numpy_helper.from_array(np.array(255, np.float32), "scale"),
             numpy_helper.from_array(np.array([1, 2], np.int64), "axes")]
    so = _compile(tmp_path, _model("RGB", tail, TensorProto.FLOAT, [3], inits))
    for k, image in enumerate([RGB, Image.fromarray(_checkerboard(64, 17, 5))]):
        data = _encode(image, "PNG")
        got, _ = run_outputs(tmp_path, so, {"data": data}, f"s{k}")
        want = (_reference(data, "RGB").astype(np.float32) / 255).mean(axis=(0, 1))
        np.testing.assert_allclose(got["y"], want, rtol=1e-5, atol=1e-6)


def test_constant_stream_is_decoded_at_import(tmp_path):
    data = _encode(RGB, "JPEG")
    nodes = [helper.make_node("ImageDecoder", ["stream"], ["image"], pixel_format="Grayscale"),
             helper.make_node("Cast", ["image"], ["f"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["f", "x"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [37, 53, 1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [37, 53, 1])],
                              initializer=[numpy_helper.from_array(data, "stream")])
    so = _compile(tmp_path, helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]))
    x = np.random.default_rng(2).standard_normal((37, 53, 1)).astype(np.float32)
    got, _ = run_outputs(tmp_path, so, {"x": x}, "c")
    np.testing.assert_allclose(got["y"], _reference(data, "Grayscale").astype(np.float32) + x, rtol=0, atol=0)
    # Static shapes: the graph executor runs it (no VM, no builtin).
    info = run_cli("inspect", so).stdout
    assert "image_decode" not in info


@pytest.mark.parametrize("case,message", [
    ("format", 'pixel_format "RGBA" is not one of RGB, BGR, Grayscale'),
    ("dtype", "the encoded stream must be a 1-D uint8 tensor, got float32"),
])
def test_bad_models_are_refused_at_import(tmp_path, case, message):
    if case == "format":
        model = _model("RGBA")
    else:
        model = _model("RGB")
        model.graph.input[0].type.tensor_type.elem_type = TensorProto.FLOAT
    path = tmp_path / "bad.onnx"
    onnx.save(model, path)
    proc = run_cli("compile", path, "-o", tmp_path / "bad.so", check=False)
    assert proc.returncode == 1
    assert message in proc.stderr and "ImageDecoder" in proc.stderr, proc.stderr
