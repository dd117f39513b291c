// Pointwise kernels (float32, float64): arithmetic, maximum/minimum, comparisons and unary math.
//
// Every kernel writes into a preallocated `out`. Inputs broadcast to out's shape (0 strides), may be
// any strided view, and out may alias an input element for element (in-place ops). The functions
// return False, leaving the work to numpy, for layouts they do not handle fast and safely: unaligned
// views, inputs that partly overlap out, outs that store several elements at one address.
#include "common.h"
#include "strided.h"
#include "vecmath.h"
#include "vec_log.h"

#include <cmath>

namespace flambeau {
namespace {

enum class Binary : int { add, sub, mul, div, maximum, minimum, eq, ne, lt, le, gt, ge };
enum class Unary : int { exp, log, sqrt, neg, abs, sigmoid, tanh, erf, erfc };

bool is_comparison(Binary op) { return op >= Binary::eq; }

// -- the per-element operations ------------------------------------------------------------------

template <class T> struct AddAlpha { T alpha; FLAMBEAU_INLINE T operator()(T a, T b) const { return a + alpha * b; } };
template <class T> struct Add { FLAMBEAU_INLINE T operator()(T a, T b) const { return a + b; } };
template <class T> struct SubAlpha { T alpha; FLAMBEAU_INLINE T operator()(T a, T b) const { return a - alpha * b; } };
template <class T> struct Sub { FLAMBEAU_INLINE T operator()(T a, T b) const { return a - b; } };
template <class T> struct Mul { FLAMBEAU_INLINE T operator()(T a, T b) const { return a * b; } };
template <class T> struct Div { FLAMBEAU_INLINE T operator()(T a, T b) const { return a / b; } };
// NaN wins, as in torch.maximum / torch.minimum.
template <class T> struct Max {
  FLAMBEAU_INLINE T operator()(T a, T b) const { return a != a ? a : (b != b ? b : (a > b ? a : b)); }
};
template <class T> struct Min {
  FLAMBEAU_INLINE T operator()(T a, T b) const { return a != a ? a : (b != b ? b : (a < b ? a : b)); }
};
template <class T> struct Eq { FLAMBEAU_INLINE bool operator()(T a, T b) const { return a == b; } };
template <class T> struct Ne { FLAMBEAU_INLINE bool operator()(T a, T b) const { return a != b; } };
template <class T> struct Lt { FLAMBEAU_INLINE bool operator()(T a, T b) const { return a < b; } };
template <class T> struct Le { FLAMBEAU_INLINE bool operator()(T a, T b) const { return a <= b; } };
template <class T> struct Gt { FLAMBEAU_INLINE bool operator()(T a, T b) const { return a > b; } };
template <class T> struct Ge { FLAMBEAU_INLINE bool operator()(T a, T b) const { return a >= b; } };

template <class T> struct Exp { FLAMBEAU_INLINE T operator()(T x) const { return vec_exp(x); } };
template <class T> struct Log { FLAMBEAU_INLINE T operator()(T x) const { return vec_log(x); } };
template <class T> struct Sqrt { FLAMBEAU_INLINE T operator()(T x) const { return std::sqrt(x); } };
template <class T> struct Neg { FLAMBEAU_INLINE T operator()(T x) const { return -x; } };
template <class T> struct Abs { FLAMBEAU_INLINE T operator()(T x) const { return std::fabs(x); } };
// 1/(1+e^-x): e^-x overflows to inf for very negative x, giving the correct limit 0.
template <class T> struct Sigmoid { FLAMBEAU_INLINE T operator()(T x) const { return T(1) / (T(1) + vec_exp(-x)); } };
template <class T> struct Tanh { FLAMBEAU_INLINE T operator()(T x) const { return vec_tanh(x); } };
template <class T> struct Erf { FLAMBEAU_INLINE T operator()(T x) const { return vec_erf(x); } };
// erfc stays libm's: vec_erfc's exp(-x*x) loses up to ~4e-6 relative in the far tail (x*x rounded to
// float), which gelu tolerates but erfc as an op should not.
template <class T> struct Erfc { FLAMBEAU_INLINE T operator()(T x) const { return std::erfc(x); } };

// -- inner rows: contiguous cases get their own loops so the compiler vectorises them ---------------

// The contiguous loops are compiled per CPU generation (FLAMBEAU_CLONES): exp and friends run
// several times faster with 8 or 16 lanes than with SSE2's 4.
template <class O, class T, class F>
FLAMBEAU_CLONES void binary_contiguous(O* o, const T* a, const T* b, index_t n, F f) {
#pragma omp simd
  for (index_t i = 0; i < n; ++i) o[i] = f(a[i], b[i]);
}

template <class O, class T, class F>
FLAMBEAU_CLONES void binary_scalar_other(O* o, const T* a, T b, index_t n, F f) {
#pragma omp simd
  for (index_t i = 0; i < n; ++i) o[i] = f(a[i], b);
}

template <class O, class T, class F>
FLAMBEAU_CLONES void binary_scalar_input(O* o, T a, const T* b, index_t n, F f) {
#pragma omp simd
  for (index_t i = 0; i < n; ++i) o[i] = f(a, b[i]);
}

template <class T, class F>
FLAMBEAU_CLONES void unary_contiguous(T* o, const T* a, index_t n, F f) {
#pragma omp simd
  for (index_t i = 0; i < n; ++i) o[i] = f(a[i]);
}

template <class O, class T, class F>
void binary_row(O* o, const T* a, const T* b, index_t n, index_t so, index_t sa, index_t sb, F f) {
  if (so == 1 && sa == 1 && sb == 1) {
    binary_contiguous(o, a, b, n, f);
  } else if (so == 1 && sa == 1 && sb == 0) {
    binary_scalar_other(o, a, *b, n, f);
  } else if (so == 1 && sa == 0 && sb == 1) {
    binary_scalar_input(o, *a, b, n, f);
  } else {
    for (index_t i = 0; i < n; ++i) o[i * so] = f(a[i * sa], b[i * sb]);
  }
}

template <class T, class F>
void unary_row(T* o, const T* a, index_t n, index_t so, index_t sa, F f) {
  if (so == 1 && sa == 1) {
    unary_contiguous(o, a, n, f);
  } else {
    for (index_t i = 0; i < n; ++i) o[i * so] = f(a[i * sa]);
  }
}

// -- argument checks -------------------------------------------------------------------------------

void check_broadcastable(const py::array& a, const py::array& out, const char* name) {
  const index_t shift = out.ndim() - a.ndim();
  bool ok = shift >= 0;
  for (index_t d = 0; ok && d < a.ndim(); ++d) {
    ok = a.shape(d) == out.shape(d + shift) || a.shape(d) == 1;
  }
  if (!ok) {
    throw py::value_error(std::string(name) + " of shape " + shape_str(a) + " cannot be broadcast to out's shape " +
                          shape_str(out));
  }
}

// False when out shares memory with `a` other than element for element (numpy then buffers the copy).
bool safe_alias(const py::array& a, const py::array& out) {
  return !may_overlap(a, out) || same_elements(a, out);
}

bool both_contiguous_same_shape(const py::array& a, const py::array& out) {
  if (a.ndim() != out.ndim()) return false;
  for (index_t d = 0; d < a.ndim(); ++d) {
    if (a.shape(d) != out.shape(d)) return false;
  }
  return true;
}

// -- drivers ---------------------------------------------------------------------------------------

// out = f(a, b) where b is an array, or a scalar when `b` is null (then `scalar` holds it).
template <class O, class T, class F>
void run_binary(const py::array& a, const py::array* b, T scalar, py::array& out, F f) {
  O* o = static_cast<O*>(out.mutable_data());
  const T* pa = static_cast<const T*>(a.data());
  const T* pb = b ? static_cast<const T*>(b->data()) : &scalar;
  const index_t n = out.size();
  // The fast path: everything contiguous and of out's shape (or b a scalar): one flat row.
  if (c_contiguous(out) && c_contiguous(a) && both_contiguous_same_shape(a, out) &&
      (!b || (c_contiguous(*b) && both_contiguous_same_shape(*b, out)))) {
    const index_t sb = b ? 1 : 0;
    py::gil_scoped_release nogil;
    parallel_chunks(n, kParallelChunk, [&](index_t begin, index_t end) {
      binary_row(o + begin, pa + begin, pb + begin * sb, end - begin, 1, 1, sb, f);
    });
    return;
  }
  StridedLoop L;
  if (b) {
    const py::array in[2] = {a, *b};
    build_loop(L, out, in, 2);
  } else {
    build_loop(L, out, &a, 1);
    L.noperands = 3;  // a third operand that never moves: the scalar
    for (int d = 0; d < L.ndim; ++d) L.stride[2][d] = 0;
    L.base[2] = reinterpret_cast<char*>(&scalar);
    L.item[2] = sizeof(T);
  }
  py::gil_scoped_release nogil;
  run_loop(L, [&](char** p, index_t len, const index_t* s) {
    binary_row(reinterpret_cast<O*>(p[0]), reinterpret_cast<const T*>(p[1]), reinterpret_cast<const T*>(p[2]), len,
               s[0], s[1], s[2], f);
  });
}

template <class T>
void dispatch_binary(Binary op, const py::array& a, const py::array* b, T scalar, py::array& out, T alpha) {
  switch (op) {
    case Binary::add:
      if (alpha == T(1)) return run_binary<T>(a, b, scalar, out, Add<T>{});
      return run_binary<T>(a, b, scalar, out, AddAlpha<T>{alpha});
    case Binary::sub:
      if (alpha == T(1)) return run_binary<T>(a, b, scalar, out, Sub<T>{});
      return run_binary<T>(a, b, scalar, out, SubAlpha<T>{alpha});
    case Binary::mul: return run_binary<T>(a, b, scalar, out, Mul<T>{});
    case Binary::div: return run_binary<T>(a, b, scalar, out, Div<T>{});
    case Binary::maximum: return run_binary<T>(a, b, scalar, out, Max<T>{});
    case Binary::minimum: return run_binary<T>(a, b, scalar, out, Min<T>{});
    case Binary::eq: return run_binary<bool>(a, b, scalar, out, Eq<T>{});
    case Binary::ne: return run_binary<bool>(a, b, scalar, out, Ne<T>{});
    case Binary::lt: return run_binary<bool>(a, b, scalar, out, Lt<T>{});
    case Binary::le: return run_binary<bool>(a, b, scalar, out, Le<T>{});
    case Binary::gt: return run_binary<bool>(a, b, scalar, out, Gt<T>{});
    case Binary::ge: return run_binary<bool>(a, b, scalar, out, Ge<T>{});
  }
}

bool binary(int op_code, const py::array& a, const py::object& other, py::array& out, double alpha) {
  if (op_code < 0 || op_code > static_cast<int>(Binary::ge)) throw py::value_error("unknown binary op code");
  const Binary op = static_cast<Binary>(op_code);
  const DType dt = dtype_of(a);
  if (dt != DType::f32 && dt != DType::f64) {
    throw py::type_error(std::string("binary kernel: input must be float32 or float64, got ") + dtype_name(dt));
  }
  const DType want_out = is_comparison(op) ? DType::boolean : dt;
  if (dtype_of(out) != want_out) {
    throw py::type_error(std::string("binary kernel: out must be ") + dtype_name(want_out) + ", got " +
                         dtype_name(dtype_of(out)));
  }
  py::array b_arr;
  const bool b_is_array = py::isinstance<py::array>(other);
  double scalar = 0;
  if (b_is_array) {
    b_arr = py::reinterpret_borrow<py::array>(other);
    if (dtype_of(b_arr) != dt) {
      throw py::type_error(std::string("binary kernel: other must have input's dtype ") + dtype_name(dt) + ", got " +
                           dtype_name(dtype_of(b_arr)));
    }
  } else if (PyFloat_Check(other.ptr()) || PyLong_Check(other.ptr())) {
    scalar = other.cast<double>();
  } else {
    throw py::type_error("binary kernel: other must be an array or a real Python number");
  }
  check_broadcastable(a, out, "input");
  if (b_is_array) check_broadcastable(b_arr, out, "other");
  check_in_bounds(out, "out", true);
  check_in_bounds(a, "input", false);
  if (b_is_array) check_in_bounds(b_arr, "other", false);
  if (!is_aligned(out) || !is_aligned(a) || (b_is_array && !is_aligned(b_arr))) return false;
  if (out.size() > 1 && has_internal_overlap(out)) return false;
  if (!safe_alias(a, out) || (b_is_array && !safe_alias(b_arr, out))) return false;
  if (dt == DType::f32) {
    dispatch_binary<float>(op, a, b_is_array ? &b_arr : nullptr, static_cast<float>(scalar), out,
                           static_cast<float>(alpha));
  } else {
    dispatch_binary<double>(op, a, b_is_array ? &b_arr : nullptr, scalar, out, alpha);
  }
  return true;
}

template <class T, class F>
void run_unary(const py::array& a, py::array& out, F f) {
  T* o = static_cast<T*>(out.mutable_data());
  const T* pa = static_cast<const T*>(a.data());
  if (c_contiguous(out) && c_contiguous(a) && both_contiguous_same_shape(a, out)) {
    py::gil_scoped_release nogil;
    parallel_chunks(out.size(), kParallelChunk, [&](index_t begin, index_t end) {
      unary_row(o + begin, pa + begin, end - begin, 1, 1, f);
    });
    return;
  }
  StridedLoop L;
  build_loop(L, out, &a, 1);
  py::gil_scoped_release nogil;
  run_loop(L, [&](char** p, index_t len, const index_t* s) {
    unary_row(reinterpret_cast<T*>(p[0]), reinterpret_cast<const T*>(p[1]), len, s[0], s[1], f);
  });
}

template <class T>
void dispatch_unary(Unary op, const py::array& a, py::array& out) {
  switch (op) {
    case Unary::exp: return run_unary<T>(a, out, Exp<T>{});
    case Unary::log: return run_unary<T>(a, out, Log<T>{});
    case Unary::sqrt: return run_unary<T>(a, out, Sqrt<T>{});
    case Unary::neg: return run_unary<T>(a, out, Neg<T>{});
    case Unary::abs: return run_unary<T>(a, out, Abs<T>{});
    case Unary::sigmoid: return run_unary<T>(a, out, Sigmoid<T>{});
    case Unary::tanh: return run_unary<T>(a, out, Tanh<T>{});
    case Unary::erf: return run_unary<T>(a, out, Erf<T>{});
    case Unary::erfc: return run_unary<T>(a, out, Erfc<T>{});
  }
}

bool unary(int op_code, const py::array& a, py::array& out) {
  if (op_code < 0 || op_code > static_cast<int>(Unary::erfc)) throw py::value_error("unknown unary op code");
  const DType dt = dtype_of(a);
  if (dt != DType::f32 && dt != DType::f64) {
    throw py::type_error(std::string("unary kernel: input must be float32 or float64, got ") + dtype_name(dt));
  }
  if (dtype_of(out) != dt) {
    throw py::type_error(std::string("unary kernel: out must be ") + dtype_name(dt) + ", got " +
                         dtype_name(dtype_of(out)));
  }
  check_broadcastable(a, out, "input");
  check_in_bounds(out, "out", true);
  check_in_bounds(a, "input", false);
  if (!is_aligned(out) || !is_aligned(a)) return false;
  if (out.size() > 1 && has_internal_overlap(out)) return false;
  if (!safe_alias(a, out)) return false;
  if (dt == DType::f32) dispatch_unary<float>(static_cast<Unary>(op_code), a, out);
  else dispatch_unary<double>(static_cast<Unary>(op_code), a, out);
  return true;
}

void register_elementwise(py::module_& m) {
  m.def("binary", &binary, py::arg("op"), py::arg("input"), py::arg("other"), py::arg("out"), py::arg("alpha") = 1.0,
        "out = op(input, other) for float32/float64, broadcasting to out's shape. Returns False when the layout "
        "is left to numpy (unaligned, or out partly overlapping an input).");
  m.def("unary", &unary, py::arg("op"), py::arg("input"), py::arg("out"),
        "out = op(input) for float32/float64. Returns False when the layout is left to numpy.");
  py::dict codes;
  const char* binary_names[] = {"add", "sub", "mul", "div", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge"};
  for (int i = 0; i <= static_cast<int>(Binary::ge); ++i) codes[binary_names[i]] = i;
  m.attr("BINARY_OPS") = codes;
  py::dict ucodes;
  const char* unary_names[] = {"exp", "log", "sqrt", "neg", "abs", "sigmoid", "tanh", "erf", "erfc"};
  for (int i = 0; i <= static_cast<int>(Unary::erfc); ++i) ucodes[unary_names[i]] = i;
  m.attr("UNARY_OPS") = ucodes;
}

}  // namespace

FLAMBEAU_REGISTER(register_elementwise);

}  // namespace flambeau
