// PNM (Netpbm's PBM / PGM / PPM, http://netpbm.sourceforge.net/doc/pnm.html) read here: no Debian
// package ships a Netpbm library, and the format is a text header and raw samples
// (runtime/image_decode.h).
//   P1 / P4  bitmap, ASCII / packed bits (1 = black): gray 0 or 255
//   P2 / P5  graymap, ASCII / binary (1 or 2 big-endian bytes per sample when maxval > 255)
//   P3 / P6  pixmap (RGB), ASCII / binary
// Header: magic, width, height, maxval (not for bitmaps), whitespace-separated decimal numbers
// with '#' comments to the end of the line; one whitespace byte before binary samples. Samples
// above maxval or a stream too short for the declared size make the stream undecodable; a
// maxval other than 255 (1..65535) is scaled to 0-255, rounded.
#include "codecs.h"

namespace tessera::runtime::image {

namespace {

class Parser {
 public:
  Parser(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  // The next whitespace-separated decimal number (skipping comments), or -1 when there is none.
  int64_t Number() {
    SkipSpace();
    if (pos_ >= size_ || data_[pos_] < '0' || data_[pos_] > '9') return -1;
    int64_t v = 0;
    while (pos_ < size_ && data_[pos_] >= '0' && data_[pos_] <= '9') {
      v = v * 10 + (data_[pos_++] - '0');
      if (v > (int64_t{1} << 40)) return -1;
    }
    return v;
  }

  // One ASCII bitmap digit (P1 allows them unseparated), or -1.
  int Bit() {
    SkipSpace();
    if (pos_ >= size_ || (data_[pos_] != '0' && data_[pos_] != '1')) return -1;
    return data_[pos_++] - '0';
  }

  // Binary samples start after exactly one whitespace byte.
  bool SkipOneSpace() {
    if (pos_ >= size_ || !IsSpace(data_[pos_])) return false;
    ++pos_;
    return true;
  }

  const uint8_t* here() const { return data_ + pos_; }
  size_t left() const { return size_ - pos_; }
  void Advance(size_t n) { pos_ += n; }

 private:
  static bool IsSpace(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
  void SkipSpace() {
    while (pos_ < size_) {
      if (data_[pos_] == '#') {
        while (pos_ < size_ && data_[pos_] != '\n' && data_[pos_] != '\r') ++pos_;
      } else if (IsSpace(data_[pos_])) {
        ++pos_;
      } else {
        break;
      }
    }
  }

  const uint8_t* data_;
  size_t size_, pos_ = 2;  // after the magic
};

}  // namespace

bool DecodePnm(const uint8_t* data, size_t size, RawImage& out, std::string& failure) {
  const int kind = data[1] - '0';  // 1..6 (DetectImageFormat checked)
  const bool ascii = kind <= 3, bitmap = kind == 1 || kind == 4;
  const int channels = kind == 3 || kind == 6 ? 3 : 1;
  Parser p(data, size);
  const int64_t width = p.Number(), height = p.Number();
  const int64_t maxval = bitmap ? 1 : p.Number();
  if (width < 0 || height < 0 || maxval < 0) {
    failure = "the header (width, height" + std::string(bitmap ? "" : ", maxval") + ") is incomplete";
    return false;
  }
  if (!CheckSize(height, width, failure)) return false;
  if (maxval < 1 || maxval > 65535) {
    failure = "maxval " + std::to_string(maxval) + " is outside 1..65535";
    return false;
  }
  const size_t count = static_cast<size_t>(height * width * channels);
  auto truncated = [&] {
    failure = "the stream ends before the " + std::to_string(width) + " x " + std::to_string(height) +
              " image's samples";
    return false;
  };
  // An ASCII sample takes at least one byte (P1's digits may touch): a shorter stream is refused
  // before the image is allocated.
  if (ascii && p.left() < count) return truncated();
  out.height = height;
  out.width = width;
  out.channels = channels;
  out.pixels.resize(count);
  auto scale = [&](int64_t v) { return static_cast<uint8_t>(maxval == 255 ? v : (v * 255 + maxval / 2) / maxval); };
  if (bitmap) {
    if (ascii) {
      for (size_t k = 0; k < count; ++k) {
        const int b = p.Bit();
        if (b < 0) return truncated();
        out.pixels[k] = b ? 0 : 255;
      }
      return true;
    }
    if (!p.SkipOneSpace()) return truncated();
    const size_t row_bytes = static_cast<size_t>((width + 7) / 8);
    if (p.left() < row_bytes * static_cast<size_t>(height)) return truncated();
    for (int64_t y = 0; y < height; ++y)
      for (int64_t x = 0; x < width; ++x) {
        const uint8_t byte = p.here()[static_cast<size_t>(y) * row_bytes + static_cast<size_t>(x / 8)];
        out.pixels[static_cast<size_t>(y * width + x)] = (byte >> (7 - x % 8)) & 1 ? 0 : 255;
      }
    return true;
  }
  if (ascii) {
    for (size_t k = 0; k < count; ++k) {
      const int64_t v = p.Number();
      if (v < 0) return truncated();
      if (v > maxval) {
        failure = "sample " + std::to_string(k) + " is " + std::to_string(v) + ", over maxval " + std::to_string(maxval);
        return false;
      }
      out.pixels[k] = scale(v);
    }
    return true;
  }
  if (!p.SkipOneSpace()) return truncated();
  const size_t bytes_per_sample = maxval > 255 ? 2 : 1;
  if (p.left() / bytes_per_sample < count) return truncated();
  const uint8_t* s = p.here();
  for (size_t k = 0; k < count; ++k) {
    const int64_t v = bytes_per_sample == 2 ? (int64_t{s[2 * k]} << 8 | s[2 * k + 1]) : s[k];
    if (v > maxval) {
      failure = "sample " + std::to_string(k) + " is " + std::to_string(v) + ", over maxval " + std::to_string(maxval);
      return false;
    }
    out.pixels[k] = scale(v);
  }
  return true;
}

}  // namespace tessera::runtime::image
