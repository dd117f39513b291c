// clamp with number bounds over contiguous float32/float64 arrays: one threaded, vectorised pass.
// numpy's clip is one pass too, but single-threaded and about twice as slow per element here.
#include "common.h"

namespace flambeau {
namespace {

// min(max(x, lo), hi) as PyTorch computes it: hi wins when lo > hi, and NaN stays NaN (neither
// comparison holds for it). Bounds that are NaN are left to the caller.
template <class T>
void clamp_loop(const T* x, T* out, T lo, T hi, index_t n) {
#pragma omp simd
  for (index_t i = 0; i < n; ++i) {
    const T v = x[i] < lo ? lo : x[i];
    out[i] = v > hi ? hi : v;
  }
}

template <class T>
void clamp_inplace(T* x, T lo, T hi, index_t n) {
#pragma omp simd
  for (index_t i = 0; i < n; ++i) {
    const T v = x[i] < lo ? lo : x[i];
    x[i] = v > hi ? hi : v;
  }
}

template <class T>
void run(const py::array& input, py::array& out, double lo, double hi) {
  const T* x = static_cast<const T*>(input.data());
  T* o = static_cast<T*>(out.mutable_data());
  const bool same = static_cast<const void*>(x) == static_cast<void*>(o);
  const T l = static_cast<T>(lo), h = static_cast<T>(hi);
  py::gil_scoped_release nogil;
  parallel_chunks(out.size(), kParallelChunk, [&](index_t begin, index_t end) {
    if (same) clamp_inplace(o + begin, l, h, end - begin);
    else clamp_loop(x + begin, o + begin, l, h, end - begin);
  });
}

// out = clamp(input, lo, hi) for C-contiguous float32/float64 arrays of one shape and dtype (out may
// be input itself, not a partial overlap of it), and bounds that are not NaN (use +-inf for a
// missing one). False, touching nothing, for anything else.
bool clamp(const py::array& input, py::array& out, double lo, double hi) {
  if (lo != lo || hi != hi) return false;
  const DType dt = dtype_of(input);
  if ((dt != DType::f32 && dt != DType::f64) || dtype_of(out) != dt) return false;
  if (input.ndim() != out.ndim() || !std::equal(input.shape(), input.shape() + input.ndim(), out.shape()))
    return false;
  if (!c_contiguous(input) || !c_contiguous(out) || !is_aligned(input) || !is_aligned(out)) return false;
  check_in_bounds(input, "input", false);
  check_in_bounds(out, "out", true);
  if (input.data() != out.data() && may_overlap(input, out)) return false;
  dt == DType::f32 ? run<float>(input, out, lo, hi) : run<double>(input, out, lo, hi);
  return true;
}

void register_clamp(py::module_& m) {
  m.def("clamp", &clamp, py::arg("input"), py::arg("out"), py::arg("min"), py::arg("max"),
        "out = min(max(input, min), max) for C-contiguous float32/float64 arrays and number bounds that are "
        "not NaN; False, touching nothing, for anything else.");
}

}  // namespace

FLAMBEAU_REGISTER(register_clamp);

}  // namespace flambeau
