// Fused activation kernels for the ops flambeau-nn declares (nn_gelu, nn_silu, nn_mish, nn_leaky_relu,
// nn_elu, nn_hardswish, nn_softplus, and their nn_*_backward ops), and the dropout mask's
// compare-and-scale pass. One pass over memory per call, in registers: the composites run three to
// eight flambeau ops, each reading and writing the whole tensor.
//
// The Python side (flambeau_cpu/kernels/nn_activation.py) hands over C-contiguous, aligned float32 or
// float64 arrays of one dtype and size; they are checked again here before any write, and anything
// else returns False (Python then works on contiguous copies). `out` may be one of the inputs (in-place
// forms) but must not partly overlap them.
#include <cmath>

#include "common.h"
#include "vecmath.h"

namespace flambeau {
namespace {

enum class Act : int { gelu, gelu_tanh, silu, leaky_relu, elu, hardswish, softplus, mish };

constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kGeluC = 0.044715;

// vec_erfc (float32, vectorisable; libm's in float64) is in vecmath.h.

template <class T> FLAMBEAU_INLINE T sigmoid(T x) { return T(1) / (T(1) + vec_exp(-x)); }
template <class T> FLAMBEAU_INLINE T phi_cdf(T x) { return T(0.5) * vec_erfc(-x * T(kSqrt1_2)); }
template <class T> FLAMBEAU_INLINE T phi_pdf(T x) { return T(kInvSqrt2Pi) * vec_exp(T(-0.5) * x * x); }

// tanh(softplus(x)) = n / (n + 2) with n = e^x (e^x + 2), without a log; 1 from x = 20 (PyTorch's
// softplus threshold), where e^2x would overflow in float32.
template <class T> FLAMBEAU_INLINE T tanh_softplus(T x) {
  const T e = vec_exp(x > T(20) ? T(0) : x);
  const T n = e * (e + T(2));
  return x > T(20) ? T(1) : (x != x ? x : n / (n + T(2)));
}

// -- forward: out = f(x) ------------------------------------------------------------------------

template <class T> struct Forward {
  Act op;
  T a, b, c;  // gelu/silu/mish/hardswish: none; leaky_relu: slope; elu: alpha, scale, input_scale; softplus: beta, threshold
  FLAMBEAU_INLINE T operator()(T x) const {
    switch (op) {
      case Act::gelu: return x * phi_cdf(x);
      case Act::gelu_tanh: {
        const T inner = T(kSqrt2OverPi) * (x + T(kGeluC) * x * x * x);
        return T(0.5) * x * (T(1) + vec_tanh(inner));
      }
      case Act::silu: return x * sigmoid(x);
      case Act::leaky_relu: return x > T(0) ? x : x * a;
      case Act::elu: return x > T(0) ? b * x : b * a * T(std::expm1(x * c));
      case Act::hardswish: return x < T(-3) ? T(0) : (x > T(3) ? x : x * (x + T(3)) / T(6));
      case Act::softplus: return x * a > b ? x : T(std::log1p(vec_exp(x * a))) / a;
      case Act::mish: return x * tanh_softplus(x);
    }
    return x;
  }
};

// -- backward: out = grad * f'(x) ------------------------------------------------------------------

template <class T> struct Backward {
  Act op;
  T a, b, c;
  FLAMBEAU_INLINE T operator()(T g, T x) const {
    switch (op) {
      case Act::gelu: return g * (phi_cdf(x) + x * phi_pdf(x));
      case Act::gelu_tanh: {
        const T x2 = x * x;
        const T t = vec_tanh(T(kSqrt2OverPi) * (x + T(kGeluC) * x2 * x));
        const T du = T(kSqrt2OverPi) * (T(1) + T(3 * kGeluC) * x2);
        return g * (T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * du);
      }
      case Act::silu: {
        const T s = sigmoid(x);
        return g * s * (T(1) + x * (T(1) - s));
      }
      case Act::leaky_relu: return x > T(0) ? g : g * a;
      case Act::elu: return x > T(0) ? g * b : g * b * a * c * vec_exp(x * c);
      case Act::hardswish: return x < T(-3) ? T(0) : (x <= T(3) ? g * (x / T(3) + T(0.5)) : g);
      case Act::softplus: {
        const T z = vec_exp(x * a);
        return x * a > b ? g : g * z / (z + T(1));
      }
      case Act::mish: {
        const T t = tanh_softplus(x);
        return g * (t + x * sigmoid(x) * (T(1) - t * t));
      }
    }
    return g;
  }
};

// The element loops, one per op (the switch is resolved outside the loop so that each vectorises).
template <class T, class F>
FLAMBEAU_CLONES void forward_loop(T* o, const T* x, index_t n, F f) {
#pragma omp simd
  for (index_t i = 0; i < n; ++i) o[i] = f(x[i]);
}

template <class T, class F>
FLAMBEAU_CLONES void backward_loop(T* o, const T* g, const T* x, index_t n, F f) {
#pragma omp simd
  for (index_t i = 0; i < n; ++i) o[i] = f(g[i], x[i]);
}

template <Act A, class T> struct Fixed {
  Forward<T> fw;
  FLAMBEAU_INLINE T operator()(T x) const { return Forward<T>{A, fw.a, fw.b, fw.c}(x); }
};
template <Act A, class T> struct FixedBack {
  Backward<T> bw;
  FLAMBEAU_INLINE T operator()(T g, T x) const { return Backward<T>{A, bw.a, bw.b, bw.c}(g, x); }
};

template <class T, Act A>
void forward_range(T* o, const T* x, index_t n, const Forward<T>& f) {
  forward_loop(o, x, n, Fixed<A, T>{f});
}
template <class T, Act A>
void backward_range(T* o, const T* g, const T* x, index_t n, const Backward<T>& f) {
  backward_loop(o, g, x, n, FixedBack<A, T>{f});
}

template <class T>
void forward_dispatch(T* o, const T* x, index_t n, const Forward<T>& f) {
  switch (f.op) {
    case Act::gelu: return forward_range<T, Act::gelu>(o, x, n, f);
    case Act::gelu_tanh: return forward_range<T, Act::gelu_tanh>(o, x, n, f);
    case Act::silu: return forward_range<T, Act::silu>(o, x, n, f);
    case Act::leaky_relu: return forward_range<T, Act::leaky_relu>(o, x, n, f);
    case Act::elu: return forward_range<T, Act::elu>(o, x, n, f);
    case Act::hardswish: return forward_range<T, Act::hardswish>(o, x, n, f);
    case Act::softplus: return forward_range<T, Act::softplus>(o, x, n, f);
    case Act::mish: return forward_range<T, Act::mish>(o, x, n, f);
  }
}

template <class T>
void backward_dispatch(T* o, const T* g, const T* x, index_t n, const Backward<T>& f) {
  switch (f.op) {
    case Act::gelu: return backward_range<T, Act::gelu>(o, g, x, n, f);
    case Act::gelu_tanh: return backward_range<T, Act::gelu_tanh>(o, g, x, n, f);
    case Act::silu: return backward_range<T, Act::silu>(o, g, x, n, f);
    case Act::leaky_relu: return backward_range<T, Act::leaky_relu>(o, g, x, n, f);
    case Act::elu: return backward_range<T, Act::elu>(o, g, x, n, f);
    case Act::hardswish: return backward_range<T, Act::hardswish>(o, g, x, n, f);
    case Act::softplus: return backward_range<T, Act::softplus>(o, g, x, n, f);
    case Act::mish: return backward_range<T, Act::mish>(o, g, x, n, f);
  }
}

// -- argument checks ---------------------------------------------------------------------------------

Act act_of(int code) {
  if (code < 0 || code > static_cast<int>(Act::mish)) throw py::value_error("unknown activation code");
  return static_cast<Act>(code);
}

// Whether `a` can be read (or written) directly: `dt`, C-contiguous, aligned, `n` elements, in bounds.
bool direct(const py::array& a, DType dt, index_t n, const char* name, bool written) {
  if (dtype_of(a) != dt || !c_contiguous(a) || !is_aligned(a) || static_cast<index_t>(a.size()) != n) return false;
  check_in_bounds(a, name, written);
  return true;
}

// An input may be `out` itself (in place) but not partly overlap it.
bool alias_ok(const py::array& in, const py::array& out) {
  return !may_overlap(in, out) || in.data() == out.data();
}

bool act_forward(int code, const py::array& x, py::array& out, double a, double b, double c) {
  const Act op = act_of(code);
  const DType dt = dtype_of(out);
  if (dt != DType::f32 && dt != DType::f64) return false;
  const index_t n = static_cast<index_t>(out.size());
  if (!direct(out, dt, n, "out", true) || !direct(x, dt, n, "input", false) || !alias_ok(x, out)) return false;
  void* po = out.mutable_data();
  const void* px = x.data();
  py::gil_scoped_release release;
  parallel_chunks(n, kParallelChunk, [&](index_t begin, index_t end) {
    if (dt == DType::f32) {
      const Forward<float> f{op, float(a), float(b), float(c)};
      forward_dispatch(static_cast<float*>(po) + begin, static_cast<const float*>(px) + begin, end - begin, f);
    } else {
      const Forward<double> f{op, a, b, c};
      forward_dispatch(static_cast<double*>(po) + begin, static_cast<const double*>(px) + begin, end - begin, f);
    }
  });
  return true;
}

bool act_backward(int code, const py::array& grad, const py::array& x, py::array& out, double a, double b, double c) {
  const Act op = act_of(code);
  const DType dt = dtype_of(out);
  if (dt != DType::f32 && dt != DType::f64) return false;
  const index_t n = static_cast<index_t>(out.size());
  if (!direct(out, dt, n, "out", true) || !direct(x, dt, n, "input", false) || !direct(grad, dt, n, "grad", false) ||
      !alias_ok(x, out) || !alias_ok(grad, out)) {
    return false;
  }
  void* po = out.mutable_data();
  const void* pg = grad.data();
  const void* px = x.data();
  py::gil_scoped_release release;
  parallel_chunks(n, kParallelChunk, [&](index_t begin, index_t end) {
    if (dt == DType::f32) {
      const Backward<float> f{op, float(a), float(b), float(c)};
      backward_dispatch(static_cast<float*>(po) + begin, static_cast<const float*>(pg) + begin,
                        static_cast<const float*>(px) + begin, end - begin, f);
    } else {
      const Backward<double> f{op, a, b, c};
      backward_dispatch(static_cast<double*>(po) + begin, static_cast<const double*>(pg) + begin,
                        static_cast<const double*>(px) + begin, end - begin, f);
    }
  });
  return true;
}

// -- dropout: uniforms -> mask ------------------------------------------------------------------------

template <class T>
FLAMBEAU_CLONES void mask_loop(T* u, index_t n, T keep, T scale) {
#pragma omp simd
  for (index_t i = 0; i < n; ++i) u[i] = u[i] < keep ? scale : T(0);
}

// In place over uniforms in [0, 1): scale where u < keep (probability keep), else 0.
bool dropout_mask_scale(py::array& u, double keep, double scale) {
  const DType dt = dtype_of(u);
  if (dt != DType::f32 && dt != DType::f64) return false;
  const index_t n = static_cast<index_t>(u.size());
  if (!direct(u, dt, n, "mask", true)) return false;
  void* p = u.mutable_data();
  py::gil_scoped_release release;
  parallel_chunks(n, kParallelChunk, [&](index_t begin, index_t end) {
    if (dt == DType::f32) {
      mask_loop(static_cast<float*>(p) + begin, end - begin, float(keep), float(scale));
    } else {
      mask_loop(static_cast<double*>(p) + begin, end - begin, keep, scale);
    }
  });
  return true;
}

void register_nn_activation(py::module_& m) {
  m.def("nn_act_forward", &act_forward, py::arg("code"), py::arg("input"), py::arg("out"), py::arg("a"),
        py::arg("b"), py::arg("c"),
        "out = f(input) for activation `code`; False when the arrays need the Python path");
  m.def("nn_act_backward", &act_backward, py::arg("code"), py::arg("grad"), py::arg("input"), py::arg("out"),
        py::arg("a"), py::arg("b"), py::arg("c"),
        "out = grad * f'(input) for activation `code`; False when the arrays need the Python path");
  m.def("dropout_mask_scale", &dropout_mask_scale, py::arg("uniforms"), py::arg("keep"), py::arg("scale"),
        "In place: scale where uniforms < keep, else 0; False when the array needs the Python path");
  py::dict codes;
  const char* names[] = {"gelu", "gelu_tanh", "silu", "leaky_relu", "elu", "hardswish", "softplus", "mish"};
  for (int i = 0; i <= static_cast<int>(Act::mish); ++i) codes[names[i]] = i;
  m.attr("NN_ACTIVATIONS") = codes;
}

}  // namespace

FLAMBEAU_REGISTER(register_nn_activation);

}  // namespace flambeau
