// Separable resampling along one axis, for flambeau-nn's nn_resample and nn_resample_backward (the
// engine of F.interpolate's linear, bilinear, trilinear, bicubic, area and antialiased modes).
//
// The input is viewed as (outer, in_size, inner) and the output as (outer, out_size, inner); output
// position j along the axis is the weighted sum of `count` taps: out[o, j, i] = sum over t of
// weight[j * count + t] * x[o, index[j * count + t], i]. The Python side (flambeau_cpu/kernels/
// nn_vision.py) runs one pass per resized axis, the last axis first. The backward pass adds each
// output gradient, weighted, into the input rows its taps read: one `outer` slice per thread, so no
// two threads add into the same element.
//
// Every size, layout and tap index is checked, and the taps are copied, with the GIL held, before
// any pointer is used.
#include <cstdint>
#include <vector>

#include "common.h"

namespace flambeau {
namespace {

struct Axis {
  index_t outer = 0, in = 0, inner = 0, out = 0, count = 0;
  std::vector<index_t> index;
  std::vector<double> weight;
};

void* checked(const char* op, const py::array& a, const char* name, DType dt, index_t size, bool written) {
  if (dtype_of(a) != dt) throw py::type_error(std::string(op) + ": " + name + " has the wrong dtype");
  if (!c_contiguous(a) || !is_aligned(a)) {
    throw py::value_error(std::string(op) + ": " + name + " must be C-contiguous and aligned");
  }
  if (static_cast<index_t>(a.size()) != size) {
    throw py::value_error(std::string(op) + ": " + name + " has " + std::to_string(a.size()) + " elements, expected " +
                          std::to_string(size));
  }
  check_in_bounds(a, name, written);
  return written ? const_cast<py::array&>(a).mutable_data() : const_cast<void*>(a.data());
}

Axis read_axis(const char* op, index_t outer, index_t in, index_t inner, const py::array& index,
               const py::array& weight, index_t count) {
  if (outer < 0 || in <= 0 || inner < 0 || count <= 0) throw py::value_error(std::string(op) + ": bad sizes");
  Axis ax;
  ax.outer = outer;
  ax.in = in;
  ax.inner = inner;
  ax.count = count;
  if (index.size() % count != 0) throw py::value_error(std::string(op) + ": index size is not a multiple of count");
  ax.out = static_cast<index_t>(index.size()) / count;
  const auto* pi = static_cast<const std::int64_t*>(checked(op, index, "index", DType::i64, ax.out * count, false));
  const auto* pw = static_cast<const double*>(checked(op, weight, "weight", DType::f64, ax.out * count, false));
  ax.index.assign(pi, pi + ax.out * count);
  ax.weight.assign(pw, pw + ax.out * count);
  for (index_t v : ax.index) {
    if (v < 0 || v >= in) {
      throw py::index_error(std::string(op) + ": tap index " + std::to_string(v) + " is out of range for size " +
                            std::to_string(in));
    }
  }
  return ax;
}

// Output rows r in [begin, end) of the (outer * out) rows, each `inner` long.
template <class T>
FLAMBEAU_CLONES void resample_rows(const T* x, T* y, const Axis& ax, index_t begin, index_t end) {
  const index_t inner = ax.inner, c = ax.count;
  if (inner == 1) {  // the last axis: a dot product of taps per output element
    for (index_t r = begin; r < end; ++r) {
      const index_t o = r / ax.out, j = r % ax.out;
      const T* xo = x + o * ax.in;
      const index_t* idx = ax.index.data() + j * c;
      const double* w = ax.weight.data() + j * c;
      T acc = 0;
      for (index_t t = 0; t < c; ++t) acc += static_cast<T>(w[t]) * xo[idx[t]];
      y[r] = acc;
    }
    return;
  }
  for (index_t r = begin; r < end; ++r) {  // an inner axis: weighted sums of whole rows (vectorised)
    const index_t o = r / ax.out, j = r % ax.out;
    T* yr = y + r * inner;
    const T* xo = x + o * ax.in * inner;
    const index_t* idx = ax.index.data() + j * c;
    const double* w = ax.weight.data() + j * c;
    {
      const T* xr = xo + idx[0] * inner;
      const T w0 = static_cast<T>(w[0]);
#pragma omp simd
      for (index_t i = 0; i < inner; ++i) yr[i] = w0 * xr[i];
    }
    for (index_t t = 1; t < c; ++t) {
      const T* xr = xo + idx[t] * inner;
      const T wt = static_cast<T>(w[t]);
#pragma omp simd
      for (index_t i = 0; i < inner; ++i) yr[i] += wt * xr[i];
    }
  }
}

template <class T>
FLAMBEAU_CLONES void resample_backward_slices(const T* g, T* gx, const Axis& ax, index_t begin, index_t end) {
  const index_t inner = ax.inner, c = ax.count;
  for (index_t o = begin; o < end; ++o) {
    T* xo = gx + o * ax.in * inner;
    std::fill(xo, xo + ax.in * inner, T(0));
    const T* go = g + o * ax.out * inner;
    for (index_t j = 0; j < ax.out; ++j) {
      const T* gr = go + j * inner;
      for (index_t t = 0; t < c; ++t) {
        T* xr = xo + ax.index[j * c + t] * inner;
        const T wt = static_cast<T>(ax.weight[j * c + t]);
#pragma omp simd
        for (index_t i = 0; i < inner; ++i) xr[i] += wt * gr[i];
      }
    }
  }
}

DType float_dtype(const char* op, const py::array& a) {
  const DType dt = dtype_of(a);
  if (dt != DType::f32 && dt != DType::f64) throw py::type_error(std::string(op) + ": expected float32 or float64");
  return dt;
}

void nn_resample_axis(const py::array& x, const py::array& out, index_t outer, index_t in, index_t inner,
                      const py::array& index, const py::array& weight, index_t count) {
  const char* op = "nn_resample_axis";
  const Axis ax = read_axis(op, outer, in, inner, index, weight, count);
  const DType dt = float_dtype(op, x);
  const void* px = checked(op, x, "input", dt, outer * in * inner, false);
  void* py_ = checked(op, out, "output", dt, outer * ax.out * inner, true);
  if (may_overlap(x, out)) throw py::value_error("nn_resample_axis: input and output overlap");
  const index_t rows = outer * ax.out;
  const index_t per_chunk = std::max<index_t>(1, kParallelChunk / std::max<index_t>(1, inner * count));
  py::gil_scoped_release nogil;
  parallel_chunks(rows, per_chunk, [&](index_t begin, index_t end) {
    if (dt == DType::f32)
      resample_rows(static_cast<const float*>(px), static_cast<float*>(py_), ax, begin, end);
    else
      resample_rows(static_cast<const double*>(px), static_cast<double*>(py_), ax, begin, end);
  }, rows * inner * count);
}

void nn_resample_axis_backward(const py::array& g, const py::array& gx, index_t outer, index_t in, index_t inner,
                               const py::array& index, const py::array& weight, index_t count) {
  const char* op = "nn_resample_axis_backward";
  const Axis ax = read_axis(op, outer, in, inner, index, weight, count);
  const DType dt = float_dtype(op, g);
  const void* pg = checked(op, g, "grad_output", dt, outer * ax.out * inner, false);
  void* px = checked(op, gx, "grad_input", dt, outer * in * inner, true);
  if (may_overlap(g, gx)) throw py::value_error("nn_resample_axis_backward: input and output overlap");
  py::gil_scoped_release nogil;
  parallel_chunks(outer, 1, [&](index_t begin, index_t end) {
    if (dt == DType::f32)
      resample_backward_slices(static_cast<const float*>(pg), static_cast<float*>(px), ax, begin, end);
    else
      resample_backward_slices(static_cast<const double*>(pg), static_cast<double*>(px), ax, begin, end);
  }, outer * (in + ax.out * count) * inner);
}

void register_nn_vision(py::module_& m) {
  m.def("nn_resample_axis", &nn_resample_axis, "Separable resampling of (outer, in, inner) along the middle axis.");
  m.def("nn_resample_axis_backward", &nn_resample_axis_backward, "The input gradient of nn_resample_axis.");
}

}  // namespace
}  // namespace flambeau

FLAMBEAU_REGISTER(flambeau::register_nn_vision);
