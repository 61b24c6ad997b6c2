#include "const_eval.h"

#include <cstring>

#include "tessera/runtime/float_formats.h"
#include "tessera/support/error.h"

namespace tessera::frontend::onnx_import {

using runtime::NDArray;

namespace {

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

// A new array of `dtype` from `values`, converted by the runtime's element accessors.
template <typename In>
NDArray Build(const std::vector<In>& values, const std::vector<int64_t>& shape, DataType dtype) {
  NDArray out = NDArray::Empty(shape, dtype);
  TESSERA_ICHECK(static_cast<int64_t>(values.size()) == out.NumElements(), "value count mismatch");
  for (size_t i = 0; i < values.size(); ++i) {
    if constexpr (std::is_same_v<In, double>) runtime::StoreFromDouble(out.raw_data(), static_cast<int64_t>(i), dtype, values[i]);
    else runtime::StoreFromInt64(out.raw_data(), static_cast<int64_t>(i), dtype, values[i]);
  }
  return out;
}

// Copies elements: out[i] = a[src_index(i)] for every flat output index i.
template <typename IndexFn>
NDArray Gather(const NDArray& a, const std::vector<int64_t>& out_shape, IndexFn&& src_index) {
  NDArray out = NDArray::Empty(out_shape, a.dtype());
  size_t es = a.dtype().bytes();
  const char* src = static_cast<const char*>(a.raw_data());
  char* dst = static_cast<char*>(out.raw_data());
  std::vector<int64_t> idx(out_shape.size(), 0);
  for (int64_t i = 0; i < out.NumElements(); ++i) {
    std::memcpy(dst + i * es, src + src_index(idx) * es, es);
    for (int d = static_cast<int>(idx.size()) - 1; d >= 0; --d) {
      if (++idx[d] < out_shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

}  // namespace

NDArray MakeInts(const std::vector<int64_t>& values, std::vector<int64_t> shape) {
  if (shape.size() == 1 && shape[0] == -1) shape[0] = static_cast<int64_t>(values.size());
  return Build(values, shape, DataType::Int(64));
}

// Elements are read through the runtime's element accessors, which know every dtype
// (float16, bfloat16, the float8 / float4 formats and the narrow integers included).
std::vector<int64_t> ToInts(const NDArray& a) {
  std::vector<int64_t> out(a.NumElements());
  for (size_t i = 0; i < out.size(); ++i) out[i] = runtime::LoadAsInt64(a.raw_data(), static_cast<int64_t>(i), a.dtype());
  return out;
}

std::vector<double> ToDoubles(const NDArray& a) {
  std::vector<double> out(a.NumElements());
  for (size_t i = 0; i < out.size(); ++i) out[i] = runtime::LoadAsDouble(a.raw_data(), static_cast<int64_t>(i), a.dtype());
  return out;
}

NDArray FromDoubles(const std::vector<double>& values, const std::vector<int64_t>& shape, DataType dtype) {
  return Build(values, shape, dtype);
}
NDArray FromInts(const std::vector<int64_t>& values, const std::vector<int64_t>& shape, DataType dtype) {
  return Build(values, shape, dtype);
}

NDArray CastArray(const NDArray& a, DataType dtype) {
  if (a.dtype().is_floating() || dtype.is_floating()) return Build(ToDoubles(a), a.shape(), dtype);
  return Build(ToInts(a), a.shape(), dtype);
}

NDArray ReshapeArray(const NDArray& a, const std::vector<int64_t>& shape) {
  NDArray out = NDArray::Empty(shape, a.dtype());
  TESSERA_ICHECK(out.NumElements() == a.NumElements(), "ReshapeArray: element count changes");
  if (out.NBytes()) std::memcpy(out.raw_data(), a.raw_data(), out.NBytes());
  return out;
}

NDArray TransposeArray(const NDArray& a, const std::vector<int64_t>& perm) {
  std::vector<int64_t> in_strides = RowMajorStrides(a.shape());
  std::vector<int64_t> out_shape;
  for (int64_t p : perm) out_shape.push_back(a.shape()[p]);
  return Gather(a, out_shape, [&](const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * in_strides[perm[d]];
    return off;
  });
}

NDArray GatherArray(const NDArray& a, const NDArray& indices, int64_t axis) {
  std::vector<int64_t> ind = ToInts(indices);
  const auto& s = a.shape();
  int64_t n = s[axis];
  for (int64_t& i : ind) {
    if (i < 0) i += n;
    TESSERA_CHECK(i >= 0 && i < n, "Gather index out of range [", -n, ", ", n, ")");
  }
  std::vector<int64_t> out_shape(s.begin(), s.begin() + axis);
  const auto& is = indices.shape();
  out_shape.insert(out_shape.end(), is.begin(), is.end());
  out_shape.insert(out_shape.end(), s.begin() + axis + 1, s.end());
  std::vector<int64_t> in_strides = RowMajorStrides(s);
  std::vector<int64_t> ind_strides = RowMajorStrides(is);
  size_t q = is.size();
  return Gather(a, out_shape, [&](const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (int64_t d = 0; d < axis; ++d) off += idx[d] * in_strides[d];
    int64_t flat = 0;
    for (size_t d = 0; d < q; ++d) flat += idx[axis + d] * ind_strides[d];
    off += ind[flat] * in_strides[axis];
    for (size_t d = axis + 1; d < s.size(); ++d) off += idx[d - 1 + q] * in_strides[d];
    return off;
  });
}

NDArray ConcatArrays(const std::vector<NDArray>& parts, int64_t axis) {
  TESSERA_ICHECK(!parts.empty(), "ConcatArrays of nothing");
  std::vector<int64_t> out_shape = parts[0].shape();
  out_shape[axis] = 0;
  for (const NDArray& p : parts) out_shape[axis] += p.shape()[axis];
  NDArray out = NDArray::Empty(out_shape, parts[0].dtype());
  // outer = prod(shape[:axis]); each part contributes a contiguous chunk per outer index.
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= out_shape[d];
  size_t es = out.dtype().bytes();
  char* dst = static_cast<char*>(out.raw_data());
  for (int64_t o = 0; o < outer; ++o) {
    for (const NDArray& p : parts) {
      size_t chunk = outer ? p.NBytes() / outer : 0;
      std::memcpy(dst, static_cast<const char*>(p.raw_data()) + o * chunk, chunk);
      dst += chunk;
    }
  }
  (void)es;
  return out;
}

NDArray SliceArray(const NDArray& a, const std::vector<graph::SliceRange>& ranges) {
  std::vector<int64_t> in_strides = RowMajorStrides(a.shape());
  std::vector<int64_t> out_shape;
  for (const auto& r : ranges) out_shape.push_back(r.extent);
  return Gather(a, out_shape, [&](const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += (ranges[d].begin + idx[d] * ranges[d].stride) * in_strides[d];
    return off;
  });
}

NDArray BinaryArray(const NDArray& a, const NDArray& b, char op) {
  TESSERA_CHECK(a.dtype() == b.dtype(), "operand dtypes differ: ", a.dtype().str(), " vs ", b.dtype().str());
  const auto &sa = a.shape(), &sb = b.shape();
  size_t n = std::max(sa.size(), sb.size());
  std::vector<int64_t> pa(n, 1), pb(n, 1), out_shape(n);
  std::copy(sa.begin(), sa.end(), pa.begin() + (n - sa.size()));
  std::copy(sb.begin(), sb.end(), pb.begin() + (n - sb.size()));
  for (size_t d = 0; d < n; ++d) {
    TESSERA_CHECK(pa[d] == pb[d] || pa[d] == 1 || pb[d] == 1, "shapes ", runtime::ShapeToString(sa), " and ",
                  runtime::ShapeToString(sb), " cannot be broadcast");
    out_shape[d] = pa[d] == 1 ? pb[d] : pa[d];
  }
  std::vector<int64_t> stra = RowMajorStrides(pa), strb = RowMajorStrides(pb);
  int64_t total = 1;
  for (int64_t d : out_shape) total *= d;
  auto offsets = [&](int64_t flat, int64_t& oa, int64_t& ob) {
    oa = ob = 0;
    for (int d = static_cast<int>(n) - 1; d >= 0; --d) {
      int64_t i = flat % out_shape[d];
      flat /= out_shape[d];
      if (pa[d] != 1) oa += i * stra[d];
      if (pb[d] != 1) ob += i * strb[d];
    }
  };
  auto apply = [&](auto x, auto y) -> decltype(x) {
    switch (op) {
      case '+': return x + y;
      case '-': return x - y;
      case '*': return x * y;
      default:
        if constexpr (std::is_integral_v<decltype(x)>) TESSERA_CHECK(y != 0, "integer division by zero");
        return x / y;
    }
  };
  if (a.dtype().is_floating()) {
    std::vector<double> va = ToDoubles(a), vb = ToDoubles(b), out(total);
    for (int64_t i = 0; i < total; ++i) {
      int64_t oa, ob;
      offsets(i, oa, ob);
      out[i] = apply(va[oa], vb[ob]);
    }
    if (a.dtype() == DataType::Float(32)) {
      // round each result to float, as a float32 kernel would
      for (double& v : out) v = static_cast<float>(v);
    }
    return Build(out, out_shape, a.dtype());
  }
  std::vector<int64_t> va = ToInts(a), vb = ToInts(b), out(total);
  for (int64_t i = 0; i < total; ++i) {
    int64_t oa, ob;
    offsets(i, oa, ob);
    out[i] = apply(va[oa], vb[ob]);
  }
  return Build(out, out_shape, a.dtype());
}

}  // namespace tessera::frontend::onnx_import
