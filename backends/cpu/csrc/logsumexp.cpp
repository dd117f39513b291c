// logsumexp along the last dim of a C-contiguous float32/float64 array, threaded over rows.
//
// Two passes per row, both vectorised: the row's largest element m, then log(sum(exp(x - m))) + m,
// so that no exponential overflows. numpy needs five passes and four temporaries for the same.
// A row with NaN gives NaN; a row whose largest element is +inf gives +inf and one of only -inf
// gives -inf (exp(x - m) would be NaN there), as PyTorch.
#include <cmath>
#include <limits>

#include "common.h"
#include "vecmath.h"

namespace flambeau {
namespace {

// float32 rows add their exponentials in float in blocks of this many, each block then into a
// double: float lanes keep the loop vectorised, and a block's error stays at float's few ulp.
constexpr index_t kBlock = 4096;

// 16 independent lanes, written out as fixed-length inner loops (the form the reductions use),
// which the compiler turns into vector code; a `simd reduction` over the row did not vectorise.
constexpr int kLanes = 16;

template <class T>
FLAMBEAU_CLONES T row_logsumexp(const T* x, index_t n) {
  const T top = row_max(x, n);
  if (top != top) return top;  // the row holds NaN
  if (std::isinf(top)) return top;
  double total = 0.0;
  for (index_t b = 0; b < n; b += kBlock) {
    const index_t e = std::min(n, b + kBlock);
    T acc[kLanes] = {};
    index_t k = b;
    for (; k + kLanes <= e; k += kLanes) {
#pragma omp simd
      for (int j = 0; j < kLanes; ++j) acc[j] += vec_exp(x[k + j] - top);
    }
    T s = 0;
    for (; k < e; ++k) s += vec_exp(x[k] - top);
    for (int j = 0; j < kLanes; ++j) s += acc[j];
    total += s;
  }
  return static_cast<T>(std::log(total) + top);
}

template <class T>
void logsumexp_rows(const T* x, T* out, index_t rows, index_t n) {
  const index_t per_chunk = std::max<index_t>(1, kParallelChunk / std::max<index_t>(n, 1));
  parallel_chunks(
      rows, per_chunk,
      [&](index_t begin, index_t end) {
        for (index_t r = begin; r < end; ++r) out[r] = row_logsumexp(x + r * n, n);
      },
      rows * n);
}

// out[r] = logsumexp(input[r, :]) for input of shape (..., n) and out of input's leading shape (any
// dims of size 1 aside), both C-contiguous and of one float dtype. False, touching nothing, for any
// other layout or dtype, or an empty last dim.
bool logsumexp_lastdim(const py::array& input, py::array& out) {
  if (input.ndim() < 1 || !c_contiguous(input) || !c_contiguous(out) || !is_aligned(input) || !is_aligned(out))
    return false;
  const DType dt = dtype_of(input);
  if ((dt != DType::f32 && dt != DType::f64) || dtype_of(out) != dt) return false;
  const index_t n = input.shape(input.ndim() - 1);
  if (n == 0 || out.size() * n != input.size()) return false;
  check_in_bounds(input, "input", false);
  check_in_bounds(out, "out", true);
  if (may_overlap(input, out)) return false;
  const index_t rows = out.size();
  const void* src = input.data();
  void* dst = out.mutable_data();
  py::gil_scoped_release nogil;
  if (dt == DType::f32) logsumexp_rows(static_cast<const float*>(src), static_cast<float*>(dst), rows, n);
  else logsumexp_rows(static_cast<const double*>(src), static_cast<double*>(dst), rows, n);
  return true;
}

void register_logsumexp(py::module_& m) {
  m.def("logsumexp_lastdim", &logsumexp_lastdim, py::arg("input"), py::arg("out"),
        "out = logsumexp(input, dim=-1) for C-contiguous float32/float64 arrays (out holding one value per "
        "row); False, touching nothing, for anything else.");
}

}  // namespace

FLAMBEAU_REGISTER(register_logsumexp);

}  // namespace flambeau
