// Pointwise kernels of the operator catalogue where numpy/scipy lose: addcmul/addcdiv fused into one
// pass (numpy needs three and two temporaries), float32 hypot in a vectorisable form, logaddexp and
// lgamma on several threads. Contiguous operands of out's shape only: every other layout returns
// False and the caller uses its numpy kernel.
#include <cmath>
#include <limits>

#include "common.h"
#include "vecmath.h"

namespace flambeau {
namespace {

enum class PwBinary { hypot, logaddexp, logaddexp2 };
enum class PwUnary { lgamma };

template <class T>
struct Hypot {
  T operator()(T a, T b) const { return std::hypot(a, b); }
};
template <>
struct Hypot<float> {
  // In double: no float32 input can overflow or lose precision there, and it vectorises (std::hypot
  // is an opaque call). An infinite operand wins over NaN, as in C's hypot.
  float operator()(float a, float b) const {
    const double x = a, y = b;
    const float r = static_cast<float>(std::sqrt(x * x + y * y));
    return (std::isinf(a) || std::isinf(b)) ? std::numeric_limits<float>::infinity() : r;
  }
};

template <class T>
struct LogAddExp {
  T operator()(T a, T b) const {
    if (std::isinf(a) && a == b) return a;  // log(2 e**inf) is inf; -inf + -inf stays -inf
    const T m = a > b ? a : b;
    return m + std::log1p(vec_exp(-std::fabs(a - b)));
  }
};

template <class T>
struct LogAddExp2 {
  T operator()(T a, T b) const {
    if (std::isinf(a) && a == b) return a;
    const T m = a > b ? a : b;
    return m + std::log1p(std::exp2(-std::fabs(a - b))) * T(1.4426950408889634);  // / ln 2
  }
};

template <class T>
struct LGamma {
  T operator()(T x) const {
    int sign;  // the reentrant forms: lgamma() writes the global signgam from every thread
    if constexpr (sizeof(T) == 4) return ::lgammaf_r(x, &sign);
    else return ::lgamma_r(x, &sign);
  }
};

template <class T, class F>
FLAMBEAU_CLONES void binary_loop(T* o, const T* a, const T* b, index_t n, F f) {
#pragma omp simd
  for (index_t i = 0; i < n; ++i) o[i] = f(a[i], b[i]);
}

template <class T, class F>
FLAMBEAU_CLONES void unary_loop(T* o, const T* a, index_t n, F f) {
  for (index_t i = 0; i < n; ++i) o[i] = f(a[i]);
}

template <class T>
FLAMBEAU_CLONES void addcmul_loop(T* o, const T* x, const T* a, const T* b, T v, index_t n) {
#pragma omp simd
  for (index_t i = 0; i < n; ++i) o[i] = x[i] + v * a[i] * b[i];
}

template <class T>
FLAMBEAU_CLONES void addcdiv_loop(T* o, const T* x, const T* a, const T* b, T v, index_t n) {
#pragma omp simd
  for (index_t i = 0; i < n; ++i) o[i] = x[i] + v * a[i] / b[i];
}

bool c_contig(const py::array& a) { return (a.flags() & py::array::c_style) != 0; }

bool same_shape(const py::array& a, const py::array& out) {
  if (a.ndim() != out.ndim()) return false;
  for (index_t d = 0; d < a.ndim(); ++d) {
    if (a.shape(d) != out.shape(d)) return false;
  }
  return true;
}

// Whether the fast path may run: float32/float64 throughout, every operand contiguous with out's
// shape and in bounds, out writeable and sharing memory with an input only element for element.
// Returns the dtype, or DType::other when the caller must fall back.
DType usable(const py::array* in, int count, const py::array& out) {
  const DType dt = dtype_of(out);
  if (dt != DType::f32 && dt != DType::f64) return DType::other;
  if (!c_contig(out) || !is_aligned(out)) return DType::other;
  for (int i = 0; i < count; ++i) {
    const py::array& a = in[i];
    if (dtype_of(a) != dt || !c_contig(a) || !same_shape(a, out) || !is_aligned(a)) return DType::other;
  }
  check_in_bounds(out, "out", true);
  for (int i = 0; i < count; ++i) {
    check_in_bounds(in[i], "input", false);
    if (may_overlap(in[i], out) && !same_elements(in[i], out)) return DType::other;
  }
  return dt;
}

template <class T, template <class> class F>
void run_binary(const py::array& a, const py::array& b, py::array& out) {
  T* o = static_cast<T*>(out.mutable_data());
  const T* pa = static_cast<const T*>(a.data());
  const T* pb = static_cast<const T*>(b.data());
  py::gil_scoped_release nogil;
  parallel_chunks(out.size(), kParallelChunk, [&](index_t begin, index_t end) {
    binary_loop(o + begin, pa + begin, pb + begin, end - begin, F<T>{});
  });
}

bool pointwise_binary(int op, const py::array& a, const py::array& b, py::array& out) {
  if (op < 0 || op > static_cast<int>(PwBinary::logaddexp2)) throw py::value_error("unknown pointwise binary op");
  const py::array in[2] = {a, b};
  const DType dt = usable(in, 2, out);
  if (dt == DType::other) return false;
  const bool f32 = dt == DType::f32;
  switch (static_cast<PwBinary>(op)) {
    case PwBinary::hypot:
      f32 ? run_binary<float, Hypot>(a, b, out) : run_binary<double, Hypot>(a, b, out);
      break;
    case PwBinary::logaddexp:
      f32 ? run_binary<float, LogAddExp>(a, b, out) : run_binary<double, LogAddExp>(a, b, out);
      break;
    case PwBinary::logaddexp2:
      f32 ? run_binary<float, LogAddExp2>(a, b, out) : run_binary<double, LogAddExp2>(a, b, out);
      break;
  }
  return true;
}

template <class T, template <class> class F>
void run_unary(const py::array& a, py::array& out) {
  T* o = static_cast<T*>(out.mutable_data());
  const T* pa = static_cast<const T*>(a.data());
  py::gil_scoped_release nogil;
  // lgamma costs ~50x an add per element: smaller chunks spread the work over the threads sooner
  parallel_chunks(out.size(), kParallelChunk / 8, [&](index_t begin, index_t end) {
    unary_loop(o + begin, pa + begin, end - begin, F<T>{});
  });
}

bool pointwise_unary(int op, const py::array& a, py::array& out) {
  if (op != static_cast<int>(PwUnary::lgamma)) throw py::value_error("unknown pointwise unary op");
  const DType dt = usable(&a, 1, out);
  if (dt == DType::other) return false;
  dt == DType::f32 ? run_unary<float, LGamma>(a, out) : run_unary<double, LGamma>(a, out);
  return true;
}

template <class T>
void run_addc(bool divide, const py::array& x, const py::array& a, const py::array& b, double value, py::array& out) {
  T* o = static_cast<T*>(out.mutable_data());
  const T *px = static_cast<const T*>(x.data()), *pa = static_cast<const T*>(a.data()),
          *pb = static_cast<const T*>(b.data());
  const T v = static_cast<T>(value);
  py::gil_scoped_release nogil;
  parallel_chunks(out.size(), kParallelChunk, [&](index_t begin, index_t end) {
    if (divide) addcdiv_loop(o + begin, px + begin, pa + begin, pb + begin, v, end - begin);
    else addcmul_loop(o + begin, px + begin, pa + begin, pb + begin, v, end - begin);
  });
}

bool addc(bool divide, const py::array& x, const py::array& a, const py::array& b, double value, py::array& out) {
  const py::array in[3] = {x, a, b};
  const DType dt = usable(in, 3, out);
  if (dt == DType::other) return false;
  dt == DType::f32 ? run_addc<float>(divide, x, a, b, value, out) : run_addc<double>(divide, x, a, b, value, out);
  return true;
}

void register_pointwise(py::module_& m) {
  m.def("pointwise_binary", &pointwise_binary, py::arg("op"), py::arg("input"), py::arg("other"), py::arg("out"),
        "out = op(input, other) (POINTWISE_BINARY_OPS) for contiguous float32/float64 operands of out's shape. "
        "Returns False, touching nothing, for any other layout or dtype.");
  m.def("pointwise_unary", &pointwise_unary, py::arg("op"), py::arg("input"), py::arg("out"),
        "out = op(input) (POINTWISE_UNARY_OPS), as pointwise_binary.");
  m.def(
      "addcmul", [](const py::array& x, const py::array& a, const py::array& b, double value, py::array& out) {
        return addc(false, x, a, b, value, out);
      },
      py::arg("input"), py::arg("tensor1"), py::arg("tensor2"), py::arg("value"), py::arg("out"),
      "out = input + value * tensor1 * tensor2 in one pass; False when the layout is left to numpy.");
  m.def(
      "addcdiv", [](const py::array& x, const py::array& a, const py::array& b, double value, py::array& out) {
        return addc(true, x, a, b, value, out);
      },
      py::arg("input"), py::arg("tensor1"), py::arg("tensor2"), py::arg("value"), py::arg("out"),
      "out = input + value * tensor1 / tensor2 in one pass; False when the layout is left to numpy.");
  py::dict binary_codes;
  binary_codes["hypot"] = static_cast<int>(PwBinary::hypot);
  binary_codes["logaddexp"] = static_cast<int>(PwBinary::logaddexp);
  binary_codes["logaddexp2"] = static_cast<int>(PwBinary::logaddexp2);
  m.attr("POINTWISE_BINARY_OPS") = binary_codes;
  py::dict unary_codes;
  unary_codes["lgamma"] = static_cast<int>(PwUnary::lgamma);
  m.attr("POINTWISE_UNARY_OPS") = unary_codes;
}

}  // namespace

FLAMBEAU_REGISTER(register_pointwise);

}  // namespace flambeau
