// The tiny case of flambeau-nn's nn_linear (F.linear): out = input @ weight.T + bias for a few
// thousand multiply-adds at most, in one call.
//
// A small layer's call is mostly overhead (issue 13's bar: nn.Linear(4, 4) on a (1, 4) input against
// PyTorch); numpy's matmul with out= and the in-place bias add cost ~1.7 and ~1.4 us there, this loop
// about 0.4 us with its argument checks. Larger products go to BLAS (kernels/nn_linear.py). The GIL
// stays held: the work is shorter than releasing and taking it back, and no other Python thread
// can change the operands meanwhile.
#include <string>

#include "common.h"

namespace flambeau {
namespace {

// Products up to this many multiply-adds run here (the Python kernel's threshold for the fused gemm).
constexpr index_t kMaxWork = 16 * 16 * 16;

bool usable(const py::array& a, DType dt, int ndim) {
  return a.ndim() == ndim && dtype_of(a) == dt && c_contiguous(a) && is_aligned(a);
}

template <class T>
void linear_rows(const T* x, const T* w, const T* b, T* out, index_t n, index_t m, index_t k) {
  for (index_t i = 0; i < n; ++i) {
    const T* row = x + i * k;
    for (index_t j = 0; j < m; ++j) {
      const T* wrow = w + j * k;
      T acc = T(0);
      for (index_t p = 0; p < k; ++p) acc += row[p] * wrow[p];
      out[i * m + j] = b != nullptr ? acc + b[j] : acc;
    }
  }
}

// out (n, m) = input (n, k) @ weight (m, k).T (+ bias (m,)) for C-contiguous float32/float64 arrays
// of one dtype and at most kMaxWork multiply-adds. False, touching nothing, for anything else.
bool linear_small(const py::array& input, const py::array& weight, const py::object& bias, py::array& out) {
  const DType dt = dtype_of(out);
  if (dt != DType::f32 && dt != DType::f64) return false;
  if (!usable(input, dt, 2) || !usable(weight, dt, 2) || !usable(out, dt, 2)) return false;
  const index_t n = input.shape(0), k = input.shape(1), m = weight.shape(0);
  if (weight.shape(1) != k || out.shape(0) != n || out.shape(1) != m) return false;
  if (n * m > kMaxWork || n * m * k > kMaxWork) return false;  // n * m first: no overflow in the product
  py::array b;  // (a default py::array is an empty array, not a null handle: bp says whether there is one)
  const void* bp = nullptr;
  if (!bias.is_none()) {
    if (!py::isinstance<py::array>(bias)) return false;
    b = py::reinterpret_borrow<py::array>(bias);
    if (!usable(b, dt, 1) || b.shape(0) != m) return false;
    check_in_bounds(b, "bias", false);
    bp = b.data();
  }
  check_in_bounds(input, "input", false);
  check_in_bounds(weight, "weight", false);
  check_in_bounds(out, "out", true);
  if (may_overlap(input, out) || may_overlap(weight, out) || (bp != nullptr && may_overlap(b, out))) return false;
  if (dt == DType::f32)
    linear_rows(static_cast<const float*>(input.data()), static_cast<const float*>(weight.data()),
                static_cast<const float*>(bp), static_cast<float*>(out.mutable_data()), n, m, k);
  else
    linear_rows(static_cast<const double*>(input.data()), static_cast<const double*>(weight.data()),
                static_cast<const double*>(bp), static_cast<double*>(out.mutable_data()), n, m,
                k);
  return true;
}

void register_nn_linear(py::module_& m) {
  m.def("linear_small", &linear_small, py::arg("input"), py::arg("weight"), py::arg("bias"), py::arg("out"),
        "out = input @ weight.T (+ bias) for 2-D C-contiguous float32/float64 arrays of one dtype and at most "
        "4096 multiply-adds; False, touching nothing, for anything else.");
}

}  // namespace

FLAMBEAU_REGISTER(register_nn_linear);

}  // namespace flambeau
