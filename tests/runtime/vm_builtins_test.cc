// The VM's builtins (vm_builtins.h) and the CallBuiltin instruction (vm.h "Builtins", executable
// version 4): image_decode binding the result's symbols for the instructions after it, the
// loader's checks (unknown builtin, args, attrs, version), run-time errors naming the instruction;
// and ImageDecoder's decoding (image_decode.h) of PNM streams, which need no image library, and of
// undecodable ones (the spec's empty image, with the reason).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "tessera/runtime/image_decode.h"
#include "tessera/runtime/param_io.h"
#include "tessera/runtime/vm.h"
#include "tessera/runtime/vm_builtins.h"
#include "test_util.h"

namespace tessera::runtime {
namespace {

using testing::TableSource;

NDArray Bytes(const std::string& s) {
  NDArray a = NDArray::Empty({static_cast<int64_t>(s.size())}, DataType::UInt(8));
  if (!s.empty()) std::memcpy(a.raw_data(), s.data(), s.size());
  return a;
}

std::vector<uint8_t> Pixels(const NDArray& a) {
  const auto* p = static_cast<const uint8_t*>(a.raw_data());
  return std::vector<uint8_t>(p, p + a.NumElements());
}

// `text` with the first `from` replaced by `to` (which must be there).
std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}
const std::string kFlat = R"(["h", "w3"])", kImageShape = R"(["h", "w", 3])";

struct Program {
  explicit Program(std::string program) : json(std::move(program)) {}
  std::string json;
  Module module() {
    auto source = std::make_shared<TableSource>();
    source->table[kGraphJsonSymbol] = json.data();
    return Module(source, "<builtins>");
  }
};

// y = image_decode(data), returned twice: as decoded and through a reshape naming its symbols.
std::string Decode(const std::string& call_fields, int version = 4) {
  return R"({"format": "tessera-vm", "version": )" + std::to_string(version) + R"(, "num_registers": 4,
    "inputs": [{"name": "data", "dtype": "uint8", "shape": ["n"]}],
    "outputs": [{"name": "y", "dtype": "uint8", "shape": ["h", "w", 3]},
                {"name": "flat", "dtype": "uint8", "shape": ["h", "w3"]}],
    "instructions": [
      {"op": "CallBuiltin", "dst": 1, "args": [0], )" + call_fields + R"(},
      {"op": "ReshapeTensor", "dst": 2, "src": 1, "shape": ["h", "w", 3]},
      {"op": "ShapeOf", "dst": 3, "src": 2},
      {"op": "Ret", "results": [1, 1]}]})";
}
const std::string kCall =
    R"("name": "image_decode", "attrs": {"pixel_format": "BGR"}, "dtype": "uint8", "shape": ["h", "w", 3])";

TEST(VMBuiltins, ImageDecodeBindsTheImagesExtents) {
  // Outputs: the image and the same tensor viewed as [h, w*3]: "w3" is bound by no one -> refused.
  Program bad{Decode(kCall)};
  EXPECT_THROW_WITH(VirtualMachine vm(bad.module()), UserError, "symbol 'w3' is bound nowhere");
  Program p{Replace(Decode(kCall), kFlat, kImageShape)};
  VirtualMachine vm(p.module());
  // A 2 x 1 PPM, then a 1 x 3 one: one program, each run binds h and w anew.
  std::vector<NDArray> out = vm.Invoke({Bytes(std::string("P6 1 2 255\n") + "\x01\x02\x03\x04\x05\x06")});
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{2, 1, 3}));
  EXPECT_EQ(Pixels(out[0]), (std::vector<uint8_t>{3, 2, 1, 6, 5, 4}));  // BGR
  out = vm.Invoke({Bytes("P3 3 1 255 10 20 30 40 50 60 70 80 90")});
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{1, 3, 3}));
  EXPECT_EQ(Pixels(out[1]), (std::vector<uint8_t>{30, 20, 10, 60, 50, 40, 90, 80, 70}));
  // Undecodable: the spec's empty image, h = w = 0.
  out = vm.Invoke({Bytes("not an image")});
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{0, 0, 3}));
}

TEST(VMBuiltins, TheLoaderChecksTheCall) {
  auto load = [](const std::string& call, int version = 4) {
    Program p{Decode(call, version)};
    VirtualMachine vm(p.module());
  };
  auto call = [](const std::string& from, const std::string& to) { return Replace(kCall, from, to); };
  EXPECT_THROW_WITH(load(kCall, 3), UserError, "instruction 0 (CallBuiltin)", "needs version 4");
  EXPECT_THROW_WITH(load(call("image_decode", "png_decode")), UserError, "unknown builtin \"png_decode\"",
                    "this runtime has: image_decode");
  EXPECT_THROW_WITH(load(call(R"("pixel_format": "BGR")", R"("pixel_format": "RGBA")")), UserError,
                    "pixel_format \"RGBA\" is not one of RGB, BGR, Grayscale");
  EXPECT_THROW_WITH(load(call(R"("pixel_format": "BGR")", "")), UserError, "needs attr \"pixel_format\"");
  EXPECT_THROW_WITH(load(call(R"("pixel_format": "BGR")", R"("pixel_format": "BGR", "dpi": "72")")), UserError,
                    "has no attr \"dpi\"");
  EXPECT_THROW_WITH(load(call(R"("pixel_format": "BGR")", R"("pixel_format": 3)")), UserError,
                    "attr \"pixel_format\" must be a string");
  EXPECT_THROW_WITH(load(call(R"("attrs": {"pixel_format": "BGR"})", R"("attrs": ["BGR"])")), UserError,
                    "\"attrs\" must be an object of strings");
  Program two{Replace(Decode(kCall), R"("args": [0])", R"("args": [0, 0])")};
  EXPECT_THROW_WITH(VirtualMachine vm(two.module()), UserError, "builtin image_decode takes 1 args, got 2");
}

TEST(VMBuiltins, RunTimeErrorsNameTheInstruction) {
  // The builtin's result must be the declared type: a Grayscale decode declared with 3 channels.
  Program p{Replace(Decode(Replace(kCall, "BGR", "Grayscale")), kFlat, kImageShape)};
  VirtualMachine vm(p.module());
  EXPECT_THROW_WITH(vm.Invoke({Bytes("P5 2 2 255\n\x01\x02\x03\x04")}), UserError, "instruction 0 (CallBuiltin)",
                    "returned [2, 2, 1], whose dim 2 should be 3");
  // A stream of another dtype (an executable whose input says float32).
  Program f{Replace(Replace(Decode(kCall), R"("dtype": "uint8", "shape": ["n"])", R"("dtype": "float32", "shape": ["n"])"),
                    kFlat, kImageShape)};
  VirtualMachine vm2(f.module());
  NDArray x = NDArray::Empty({4}, DataType::Float(32));
  EXPECT_THROW_WITH(vm2.Invoke({x}), UserError, "instruction 0 (CallBuiltin)", "builtin image_decode",
                    "1-D uint8 tensor, got float32 [4]");
}

TEST(VMBuiltins, Table) {
  EXPECT_EQ(VMBuiltinNames(), (std::vector<std::string>{"image_decode"}));
  EXPECT_EQ(FindVMBuiltin("nope"), nullptr);
}

DecodedImage DecodeString(const std::string& s, PixelFormat f = PixelFormat::kRGB) {
  return DecodeImageDetailed(reinterpret_cast<const uint8_t*>(s.data()), s.size(), f);
}

TEST(ImageDecode, PnmVariants) {
  // P1 (ASCII bitmap, digits unseparated, comments), 1 = black.
  DecodedImage a = DecodeString("P1\n# c\n3 2\n010 1\n0 1", PixelFormat::kGrayscale);
  EXPECT_EQ(a.failure, "");
  EXPECT_EQ(a.pixels, (std::vector<uint8_t>{255, 0, 255, 0, 255, 0}));
  // P4 (packed bits, rows padded to bytes): 10 x 1.
  DecodedImage b = DecodeString(std::string("P4 10 1\n") + "\xA5\xC0", PixelFormat::kGrayscale);
  EXPECT_EQ(b.pixels, (std::vector<uint8_t>{0, 255, 0, 255, 255, 0, 255, 0, 0, 0}));
  // P2 with maxval 4 (scaled, rounded), as RGB: each gray repeated.
  DecodedImage c = DecodeString("P2 2 1 4 1 3");
  EXPECT_EQ(c.channels, 3);
  EXPECT_EQ(c.pixels, (std::vector<uint8_t>{64, 64, 64, 191, 191, 191}));
  // P5 with 16-bit samples (maxval 65535: big-endian, scaled).
  DecodedImage d = DecodeString(std::string("P5 2 1 65535\n") + std::string("\xFF\xFF\x80\x00", 4), PixelFormat::kGrayscale);
  EXPECT_EQ(d.pixels, (std::vector<uint8_t>{255, 128}));
  // P6 to grayscale: Pillow's luma ((19595 R + 38470 G + 7471 B + 2^15) >> 16).
  DecodedImage e = DecodeString(std::string("P6 2 1 255\n") + std::string("\xFF\x00\x00\x10\x80\xF0", 6),
                                PixelFormat::kGrayscale);
  EXPECT_EQ(e.pixels, (std::vector<uint8_t>{76, (19595 * 16 + 38470 * 128 + 7471 * 240 + 32768) >> 16}));
}

TEST(ImageDecode, UndecodableStreamsSayWhy) {
  auto failure = [](const std::string& s) {
    DecodedImage d = DecodeString(s);
    EXPECT_EQ(d.height, 0);
    EXPECT_EQ(d.width, 0);
    EXPECT_EQ(d.channels, 3);
    EXPECT_TRUE(d.pixels.empty());
    return d.failure;
  };
  EXPECT_NE(failure("GIF89a").find("no known image signature"), std::string::npos);
  EXPECT_NE(failure("").find("no known image signature"), std::string::npos);
  EXPECT_NE(failure("P6 2 2 255\n\x01").find("PNM: the stream ends before the 2 x 2 image's samples"), std::string::npos);
  EXPECT_NE(failure("P6 2").find("PNM: the header (width, height, maxval) is incomplete"), std::string::npos);
  EXPECT_NE(failure("P2 1 1 9 10").find("sample 0 is 10, over maxval 9"), std::string::npos);
  EXPECT_NE(failure("P2 1 1 70000 1").find("maxval 70000 is outside 1..65535"), std::string::npos);
  EXPECT_NE(failure("P5 100000 100000 255\n").find("over the limit of 2^28"), std::string::npos);
  EXPECT_NE(failure("P5 0 3 255\n").find("a size of 0 x 3 pixels"), std::string::npos);
  // An ASCII PNM too short for one byte per sample is refused before its image is allocated.
  EXPECT_NE(failure("P2 16000 16000 255 1 2 3").find("PNM: the stream ends before the 16000 x 16000"),
            std::string::npos);
  // A 53-byte BMP declaring 227 x 1048578 8-bit pixels (a fuzz finding: stb_image reads zeros past
  // the end, and the 238 M pixels took seconds): refused from its header.
  const std::string bmp(
      "\x42\x4d\x00\x7a\x00\x00\x00\x00\x00\x00\x4a\x00\x00\x00\x28\x00\x00\x00\xe3\x00\x00\x00\x02\x00\x10\x00"
      "\x01\x00\x08\x00\x00\x00\x00\x00\x30\x00\x00\x00\xc4\x33\x32\x64\x00\x00\xb0\x50\x00\x00\x00\x20\x63\x0a\x00",
      53);
  EXPECT_NE(failure(bmp).find("BMP: the stream is truncated: its 227 x 1048578 pixels at 8 bits need 239075857 "
                              "bytes, it has 53"),
            std::string::npos);
  // A 156-byte TIFF declaring 16391 x 15620 pixels in 3,905 strips of which one is given (a fuzz
  // finding: the 1 GiB raster was allocated before libtiff failed): refused before allocating.
  const std::string tiff(
      "\x49\x49\x2a\x00\x2a\x00\x00\x00\x80\x1a\x0f\x0b\x30\x03\xc1\xea\xe6\x32\x2f\xdb\x07\xe6\xd8\x7d\x2a\xe7"
      "\x46\x9c\xc2\x09\x90\x41\xe5\xa6\xcf\x61\x81\xd6\x6c\xa5\xd4\x04\x09\x00\x00\x01\x03\x00\x01\x00\x00\x00"
      "\x07\x40\x00\x00\x01\x01\x03\x00\x01\x00\x00\x00\x04\x3d\x00\x00\x02\x01\x03\x00\x01\x00\x00\x00\x08\x00"
      "\x00\x03\x01\x03\x01\x00\x00\x00\x00\x00\x05\x00\x00\x00\x06\x01\x03\x00\x01\x00\x00\x00\x01\x00\x00\x00"
      "\x11\x01\x04\x00\x01\x00\x00\x00\x08\x00\x00\x00\x16\x01\x03\x00\x01\x00\x00\x00\x04\x00\x00\x00\x17\x01"
      "\x04\x00\x01\x00\x00\x00\x22\x00\x00\x00\x1c\x01\x03\x00\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00",
      156);
  EXPECT_NE(failure(tiff).find("TIFF: libtiff: strip 1 of 3905 (0 bytes at offset 0) is not inside the 156-byte stream"),
            std::string::npos)
      << failure(tiff);
  // A 156-byte TIFF declaring 2288 x 65532 pixels in one LZW strip of 34 bytes (a fuzz finding:
  // libtiff went on past the strip's decode error and the 150 M zero pixels took seconds to
  // convert): the decode error fails the stream.
  const std::string lzw(
      "\x49\x49\x2a\x00\x2a\x00\x00\x00\x80\x9a\x0f\x0b\x30\x03\xc1\xea\xe6\x32\x2f\xdb\x07\xe6\xd8\x7d\x2a\xe7"
      "\x46\x9c\xc2\x09\x90\x41\xe5\xa6\xcf\x61\x81\xd6\x6c\xa5\xd4\x04\x09\x00\x00\x01\x03\x00\x01\x00\x00\x00"
      "\xf0\x08\x00\x00\x01\x01\x03\x00\x01\x00\x00\x00\xfc\xff\x00\x00\x02\x01\x03\x00\x01\x00\x00\x00\x08\x00"
      "\x00\x00\x03\x01\x03\x00\x01\x00\x00\x00\x05\x00\x00\x00\x06\x01\x03\x00\x00\x01\x54\x00\x01\x00\x00\x00"
      "\x11\x01\x04\x00\x01\x00\x00\x00\x08\x00\x00\x00\x16\x41\x03\x00\x01\x00\x00\x00\x04\x00\x00\x00\x17\x01"
      "\x04\x00\x01\x00\x00\x00\x22\x00\x00\x00\x1c\x01\x03\x00\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00",
      156);
  EXPECT_EQ(failure(lzw), "TIFF: libtiff: LZWDecode: Not enough data at scanline 0 (short 149937216 bytes)");
  EXPECT_NE(failure("\x89PNG\r\n\x1A\n\x00\x00").find("PNG: "), std::string::npos);
  EXPECT_NE(failure("\xFF\xD8\xFF\xE0").find("JPEG: "), std::string::npos);
  EXPECT_THROW_WITH(ParsePixelFormat("rgb"), UserError, "pixel_format \"rgb\" is not one of RGB, BGR, Grayscale");
}

}  // namespace
}  // namespace tessera::runtime
