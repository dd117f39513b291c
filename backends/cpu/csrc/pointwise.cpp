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

// log1p(e) for e in [0, 1] without libm: 2 atanh(t) with t = e / (2 + e) <= 1/3, whose odd series
// converges fast enough for float32 by t**13 and for float64 by t**31; vectorises, and keeps full
// relative precision for tiny e (no 1 + e is ever formed).
template <class T>
FLAMBEAU_INLINE T log1p_unit(T e) {
  const T t = e / (T(2) + e);
  const T t2 = t * t;
  T sum;
  if constexpr (sizeof(T) == 4) {
    sum = T(1) + t2 * (T(1) / 3 + t2 * (T(1) / 5 + t2 * (T(1) / 7 + t2 * (T(1) / 9 + t2 * (T(1) / 11 + t2 / 13)))));
  } else {
    sum = T(1) / 31;
    for (int k = 14; k >= 0; --k) sum = T(1) / (2 * k + 1) + t2 * sum;
  }
  return T(2) * t * sum;
}

template <class T>
struct LogAddExp {
  T operator()(T a, T b) const {
    const T m = a > b ? a : b;
    const T r = m + log1p_unit(vec_exp(-std::fabs(a - b)));  // exp(-inf) = 0; NaN stays NaN
    return (a == b && std::isinf(a)) ? a : r;                // inf - inf would be NaN
  }
};

template <class T>
struct LogAddExp2 {
  T operator()(T a, T b) const {
    constexpr T kLn2 = T(0.6931471805599453), kInvLn2 = T(1.4426950408889634);
    const T m = a > b ? a : b;
    const T r = m + log1p_unit(vec_exp(-std::fabs(a - b) * kLn2)) * kInvLn2;
    return (a == b && std::isinf(a)) ? a : r;
  }
};

// log(z) for finite z > 0 in double, vectorisable: z = m 2**e with m in [sqrt(1/2), sqrt(2)), and
// log(m) = 2 atanh((m - 1) / (m + 1)) by its odd series (|t| < 0.172: 11 terms reach 1e-17).
FLAMBEAU_INLINE double vlog(double z) {
  std::uint64_t bits;
  std::memcpy(&bits, &z, sizeof bits);
  std::int64_t e = static_cast<std::int64_t>((bits >> 52) & 0x7ff) - 1023;
  bits = (bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;  // m in [1, 2)
  double m;
  std::memcpy(&m, &bits, sizeof m);
  const bool big = m > 1.4142135623730951;
  m = big ? m * 0.5 : m;
  e = big ? e + 1 : e;
  const double t = (m - 1.0) / (m + 1.0), t2 = t * t;
  double sum = 1.0 / 21;
  for (int k = 9; k >= 0; --k) sum = 1.0 / (2 * k + 1) + t2 * sum;
  return 2.0 * t * sum + static_cast<double>(e) * 0.6931471805599453;
}

// |sin(pi x)| in double, vectorisable: x reduced to r in [-1/2, 1/2], then sin's Taylor series.
FLAMBEAU_INLINE double abs_sinpi(double x) {
  const double r = x - std::nearbyint(x);
  const double y = 3.141592653589793 * r, y2 = y * y;
  double sum = 1.0 / 51090942171709440000.0;  // (-1)^10 / 21!
  double fact = 51090942171709440000.0;
  for (int k = 20; k >= 2; k -= 2) {  // coefficients (-1)^j / (2j + 1)! down to 1/1!
    fact /= static_cast<double>(k * (k + 1));
    sum = ((k / 2) % 2 ? 1.0 : -1.0) / fact + y2 * sum;  // (-1)^(j-1) / (2j-1)!, j = k/2
  }
  return std::fabs(y * sum);
}

// lgamma of a float, computed in double without libm calls so that the loop vectorises: Stirling's
// series at z >= 8 (error < 1e-12), reached from smaller x by z = x + 8 and subtracting
// log(x (x+1) ... (x+7)); x <= 0 by reflection, log(pi / |sin(pi x)|) - lgamma(1 - x) (+inf at the
// poles, as PyTorch). float64 inputs use libm's lgamma_r instead (it is accurate to an ulp).
FLAMBEAU_INLINE float lgamma_float(float xf) {
  const double x = xf;
  const bool reflect = x <= 0.0;
  const double y = reflect ? 1.0 - x : x;  // >= 1 when reflected
  const bool shift = y < 8.0;
  double p = 1.0;
  for (int k = 0; k < 8; ++k) p *= shift ? y + k : 1.0;
  const double z = shift ? y + 8.0 : y;
  const double iz = 1.0 / z, iz2 = iz * iz;
  const double series =
      iz * (1.0 / 12 - iz2 * (1.0 / 360 - iz2 * (1.0 / 1260 - iz2 * (1.0 / 1680 - iz2 * (1.0 / 1188)))));
  const double big = (z - 0.5) * vlog(z) - z + 0.91893853320467274 + series;
  const double ly = big - (shift ? vlog(p) : 0.0);
  const double s = abs_sinpi(x);
  const double refl = (s == 0.0 ? std::numeric_limits<double>::infinity() : vlog(3.141592653589793 / s)) - ly;
  const double r = reflect ? refl : ly;
  const bool inf = std::isinf(xf);
  return inf ? std::numeric_limits<float>::infinity() : static_cast<float>(r);  // NaN propagates through r
}

template <class T>
struct LGamma {
  T operator()(T x) const {
    int sign;  // the reentrant form: lgamma() writes the global signgam from every thread
    return ::lgamma_r(x, &sign);
  }
};
template <>
struct LGamma<float> {
  float operator()(float x) const { return lgamma_float(x); }
};

template <class T, class F>
FLAMBEAU_CLONES void binary_loop(T* o, const T* a, const T* b, index_t n, F f) {
#pragma omp simd
  for (index_t i = 0; i < n; ++i) o[i] = f(a[i], b[i]);
}

template <class T, class F>
FLAMBEAU_CLONES void unary_loop(T* o, const T* a, index_t n, F f) {
#pragma omp simd
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
  if (!c_contiguous(out) || !is_aligned(out)) return DType::other;
  for (int i = 0; i < count; ++i) {
    const py::array& a = in[i];
    if (dtype_of(a) != dt || !c_contiguous(a) || !same_shape(a, out) || !is_aligned(a)) return DType::other;
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
