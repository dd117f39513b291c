// Pooling kernels for the ops flambeau-nn declares: max pooling (values and indices), the scatter of
// a gradient through saved indices (max pooling's backward, also adaptive and fractional max
// pooling's), max unpooling, average pooling and adaptive average/max pooling, forward and backward.
//
// Every kernel works on planes: an input (P, D, H, W) with P = batch * channels, 1-d and 2-d pools
// handed over as 3-d ones with leading spatial sizes of 1 (kernel 1, stride 1, no padding), which
// leaves the flat index of an element within its plane unchanged. Threads split the planes
// statically; a plane's outputs never touch another plane's memory, so no write is shared.
//
// Windows follow PyTorch's CPU kernels exactly: a max-pool window is clamped to the input (its
// padding is never read), the max starts at -inf with the index of the window's first element
// inside the input, and an element replaces it when greater or NaN (so NaN propagates, the last NaN
// giving the index); an average-pool window's divisor is divisor_override, else the window clamped
// to the padded input (count_include_pad) or to the input. Windows are clamped whatever the sizes,
// so no geometry reads out of bounds; indices handed in (backward, unpooling) are checked.
//
// Integer inputs follow PyTorch's CPU kernels too: max pooling takes uint8, int8, int16, int32 and
// int64 (the max starting at the type's lowest value, so a window of nothing but that value keeps
// its first index, as -inf does for floats); average pooling takes int64, whose window sum wraps
// (two's complement, as PyTorch's int64 sum does; kept in uint64 here, where wrapping is defined,
// and order-independent, so every path gives the same bits) and is divided truncating toward zero.
//
// The Python side (flambeau_cpu/kernels/nn_pooling.py) hands over C-contiguous aligned float32,
// float64 or integer arrays (half inputs as float32 copies) and int64 indices; each is checked here
// again.
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "common.h"
#include "nn_args.h"

namespace flambeau {
namespace {

// -- geometry -------------------------------------------------------------------------------------

struct Geometry {
  index_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, p[3] = {0, 0, 0},
          d[3] = {1, 1, 1};
  index_t in_plane() const { return in[0] * in[1] * in[2]; }
  index_t out_plane() const { return out[0] * out[1] * out[2]; }
};

void copy3(const char* op, const char* name, const std::vector<index_t>& v, index_t* dst, index_t min) {
  if (v.size() != 3) throw py::value_error(std::string(op) + ": " + name + " must have 3 entries");
  for (int i = 0; i < 3; ++i) {
    if (v[i] < min) throw py::value_error(std::string(op) + ": " + name + " out of range");
    dst[i] = v[i];
  }
}

Geometry geometry(const char* op, const std::vector<index_t>& in, const std::vector<index_t>& out,
                  const std::vector<index_t>& k, const std::vector<index_t>& s, const std::vector<index_t>& p,
                  const std::vector<index_t>& d) {
  Geometry g;
  copy3(op, "input size", in, g.in, 0);
  copy3(op, "output size", out, g.out, 0);
  copy3(op, "kernel_size", k, g.k, 1);
  copy3(op, "stride", s, g.s, 1);
  copy3(op, "padding", p, g.p, 0);
  copy3(op, "dilation", d, g.d, 1);
  return g;
}

// -- argument checks (GIL held) -------------------------------------------------------------------

// The data pointer of `obj` after nn_args::pointer's checks (a required array here).
void* pointer(const char* op, const py::object& obj, const char* name, DType dt, index_t size, bool written) {
  return nn_args::pointer(op, obj, name, dt, size, false, written);
}

DType float_dtype(const char* op, const py::object& x) {
  if (!py::isinstance<py::array>(x)) throw py::type_error(std::string(op) + ": expected a numpy array");
  return nn_args::float_dtype(op, py::reinterpret_borrow<py::array>(x));
}

void check_planes(const char* op, index_t planes) {
  if (planes < 0) throw py::value_error(std::string(op) + ": negative plane count");
}

// The element types the pooling kernels take: numpy's float32, float64 and native-order integers.
// (common.h's DType knows only the float and int64 types; the narrower integers are named here.)
enum class Elem { f32, f64, u8, i8, i16, i32, i64, other };

Elem elem_of(const py::array& a) {
  const py::dtype dt = a.dtype();
  if (dt.byteorder() == '>') return Elem::other;
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  if (kind == 'f') return size == 4 ? Elem::f32 : size == 8 ? Elem::f64 : Elem::other;
  if (kind == 'u') return size == 1 ? Elem::u8 : Elem::other;
  if (kind == 'i') {
    switch (size) {
      case 1: return Elem::i8;
      case 2: return Elem::i16;
      case 4: return Elem::i32;
      case 8: return Elem::i64;
      default: return Elem::other;
    }
  }
  return Elem::other;
}

// The element type of the input `x`, which must be one of `allowed` (a bit per Elem).
Elem input_elem(const char* op, const py::object& x, unsigned allowed) {
  if (!py::isinstance<py::array>(x)) throw py::type_error(std::string(op) + ": expected a numpy array");
  const Elem e = elem_of(py::reinterpret_borrow<py::array>(x));
  if (e == Elem::other || !(allowed & (1u << static_cast<unsigned>(e))))
    throw py::type_error(std::string(op) + ": unsupported input dtype");
  return e;
}

constexpr unsigned bit(Elem e) { return 1u << static_cast<unsigned>(e); }
constexpr unsigned kFloats = bit(Elem::f32) | bit(Elem::f64);
constexpr unsigned kMaxTypes =
    kFloats | bit(Elem::u8) | bit(Elem::i8) | bit(Elem::i16) | bit(Elem::i32) | bit(Elem::i64);
constexpr unsigned kAvgTypes = kFloats | bit(Elem::i64);

// nn_args::pointer's checks (C-contiguous, aligned, in bounds, `size` elements) for an array of
// element type `e`.
void* elem_pointer(const char* op, const py::object& obj, const char* name, Elem e, index_t size, bool written) {
  if (!py::isinstance<py::array>(obj)) throw py::type_error(std::string(op) + ": " + name + " must be a numpy array");
  py::array a = py::reinterpret_borrow<py::array>(obj);
  if (elem_of(a) != e) throw py::type_error(std::string(op) + ": " + name + " has the wrong dtype");
  if (!c_contiguous(a) || !is_aligned(a))
    throw py::value_error(std::string(op) + ": " + name + " must be C-contiguous and aligned");
  if (static_cast<index_t>(a.size()) != size)
    throw py::value_error(std::string(op) + ": " + name + " has " + std::to_string(a.size()) + " elements, expected " +
                          std::to_string(size));
  check_in_bounds(a, name, written);
  return written ? a.mutable_data() : const_cast<void*>(a.data());
}

// Calls fn(T{}) with T the C++ type of `e`.
template <class Fn>
void dispatch_elem(Elem e, Fn&& fn) {
  switch (e) {
    case Elem::f32: fn(float{}); break;
    case Elem::f64: fn(double{}); break;
    case Elem::u8: fn(std::uint8_t{}); break;
    case Elem::i8: fn(std::int8_t{}); break;
    case Elem::i16: fn(std::int16_t{}); break;
    case Elem::i32: fn(std::int32_t{}); break;
    case Elem::i64: fn(std::int64_t{}); break;
    case Elem::other: break;  // refused by input_elem
  }
}

template <class T>
inline bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>)
    return std::isnan(v);
  else
    return false;
}

// Where a max starts: -inf for floats, the lowest value for integers.
template <class T>
constexpr T max_start() {
  if constexpr (std::is_floating_point_v<T>)
    return -std::numeric_limits<T>::infinity();
  else
    return std::numeric_limits<T>::lowest();
}

// Average pooling's sum: the element type, but uint64 for int64 (PyTorch's int64 sum wraps; uint64
// wraps the same bits without signed overflow's undefined behaviour).
template <class T>
using AvgSum = std::conditional_t<std::is_same_v<T, std::int64_t>, std::uint64_t, T>;

// sum / div as PyTorch's kernels compute it: float division, or int64 division truncating toward
// zero. INT64_MIN / -1, where PyTorch's kernel traps (SIGFPE), wraps to INT64_MIN here.
template <class T>
inline T avg_divide(AvgSum<T> sum, index_t div) {
  if constexpr (std::is_same_v<T, std::int64_t>) {
    if (div == -1) return static_cast<std::int64_t>(std::uint64_t{0} - sum);
    return static_cast<std::int64_t>(sum) / static_cast<std::int64_t>(div);
  } else {
    return sum / static_cast<T>(div);
  }
}

// Runs fn(begin, end) over the planes [0, planes), split statically across threads.
template <class Fn>
void over_planes(index_t planes, index_t per_plane, Fn&& fn) {
  parallel_chunks(planes, 1, fn, planes * std::max<index_t>(per_plane, 1));
}

// Calls fn.template operator()<T>() with T the C++ type of `dt`.
template <class Fn>
void dispatch(DType dt, Fn&& fn) {
  if (dt == DType::f32)
    fn(float{});
  else
    fn(double{});
}

// The first multiple of `step` at or above -x added to x: x moved to the first position >= 0 of its
// dilated sequence (PyTorch's `while (x < 0) x += dilation`, without the loop).
inline index_t first_nonnegative(index_t x, index_t step) {
  return x >= 0 ? x : x + ((-x + step - 1) / step) * step;
}

// -- max pooling ----------------------------------------------------------------------------------

template <class T>
inline void take_max(T val, index_t idx, T& maxval, index_t& maxidx) {
  if (val > maxval || is_nan(val)) {
    maxval = val;
    maxidx = idx;
  }
}

// One plane, any geometry.
template <class T>
FLAMBEAU_CLONES void max_pool_plane(const T* x, T* y, std::int64_t* ind, const Geometry& g) {
  const index_t H = g.in[1], W = g.in[2];
  index_t o = 0;
  for (index_t od = 0; od < g.out[0]; ++od) {
    index_t d0 = od * g.s[0] - g.p[0];
    const index_t d1 = std::min(d0 + (g.k[0] - 1) * g.d[0] + 1, g.in[0]);
    d0 = first_nonnegative(d0, g.d[0]);
    for (index_t oh = 0; oh < g.out[1]; ++oh) {
      index_t h0 = oh * g.s[1] - g.p[1];
      const index_t h1 = std::min(h0 + (g.k[1] - 1) * g.d[1] + 1, H);
      h0 = first_nonnegative(h0, g.d[1]);
      for (index_t ow = 0; ow < g.out[2]; ++ow, ++o) {
        index_t w0 = ow * g.s[2] - g.p[2];
        const index_t w1 = std::min(w0 + (g.k[2] - 1) * g.d[2] + 1, W);
        w0 = first_nonnegative(w0, g.d[2]);
        index_t maxidx = (d0 * H + h0) * W + w0;
        T maxval = max_start<T>();
        for (index_t id = d0; id < d1; id += g.d[0]) {
          for (index_t ih = h0; ih < h1; ih += g.d[1]) {
            const index_t row = (id * H + ih) * W;
            for (index_t iw = w0; iw < w1; iw += g.d[2]) take_max(x[row + iw], row + iw, maxval, maxidx);
          }
        }
        y[o] = maxval;
        ind[o] = maxidx;
      }
    }
  }
}

// One plane of a 2x2 window with stride 2, no padding or dilation, every window inside the input
// (the CNN's MaxPool2d(2)): the same comparisons in the same order, without the window loops.
template <class T>
FLAMBEAU_CLONES void max_pool_plane_2x2(const T* x, T* y, std::int64_t* ind, index_t W, index_t OH, index_t OW) {
  for (index_t oh = 0; oh < OH; ++oh) {
    const T* r0 = x + 2 * oh * W;
    const T* r1 = r0 + W;
    T* yr = y + oh * OW;
    std::int64_t* ir = ind + oh * OW;
    const index_t base = 2 * oh * W;
    // selects, not branches: on random data each comparison is a coin toss for the branch predictor
    // (this loop took 7% of the CNN's training step with branches); as selects it vectorises
#pragma omp simd
    for (index_t ow = 0; ow < OW; ++ow) {
      const T a = r0[2 * ow], b = r0[2 * ow + 1], c = r1[2 * ow], e = r1[2 * ow + 1];
      T m = a;
      index_t i = 0;
      const bool tb = (b > m) | (b != b);
      m = tb ? b : m;
      i = tb ? 1 : i;
      const bool tc = (c > m) | (c != c);
      m = tc ? c : m;
      i = tc ? W : i;
      const bool te = (e > m) | (e != e);
      m = te ? e : m;
      i = te ? W + 1 : i;
      yr[ow] = m;
      ir[ow] = base + 2 * ow + i;
    }
  }
}

bool is_2x2(const Geometry& g) {
  return g.k[0] == 1 && g.out[0] == g.in[0] && g.in[0] == 1 && g.k[1] == 2 && g.k[2] == 2 && g.s[1] == 2 &&
         g.s[2] == 2 && g.p[1] == 0 && g.p[2] == 0 && g.d[1] == 1 && g.d[2] == 1 && 2 * g.out[1] <= g.in[1] &&
         2 * g.out[2] <= g.in[2];
}

void nn_max_pool(const py::object& x, const py::object& y, const py::object& ind, index_t planes,
                 const std::vector<index_t>& in, const std::vector<index_t>& out, const std::vector<index_t>& k,
                 const std::vector<index_t>& s, const std::vector<index_t>& p, const std::vector<index_t>& d) {
  const char* op = "nn_max_pool";
  const Elem e = input_elem(op, x, kMaxTypes);
  check_planes(op, planes);
  const Geometry g = geometry(op, in, out, k, s, p, d);
  const index_t ip = g.in_plane(), opl = g.out_plane();
  const void* px = elem_pointer(op, x, "input", e, planes * ip, false);
  void* py_ = elem_pointer(op, y, "output", e, planes * opl, true);
  auto* pi = static_cast<std::int64_t*>(pointer(op, ind, "indices", DType::i64, planes * opl, true));
  const bool fast = is_2x2(g);
  py::gil_scoped_release nogil;
  dispatch_elem(e, [&](auto tag) {
    using T = decltype(tag);
    const T* xs = static_cast<const T*>(px);
    T* ys = static_cast<T*>(py_);
    over_planes(planes, ip, [&](index_t begin, index_t end) {
      for (index_t q = begin; q < end; ++q) {
        if (fast)
          max_pool_plane_2x2(xs + q * ip, ys + q * opl, pi + q * opl, g.in[2], g.out[1], g.out[2]);
        else
          max_pool_plane(xs + q * ip, ys + q * opl, pi + q * opl, g);
      }
    });
  });
}

// -- scatter through indices: max pooling's backward (adds) and max unpooling (assigns) -------------

// grad_input[q, ind[q, o]] (+)= grad_out[q, o] over planes of `src_plane` sources into planes of
// `dst_plane` zeroed first. Returns (true, index) for the first index outside [0, dst_plane) found,
// in which case the destination is left partly written (it is a fresh output).
template <bool kAdd>
std::pair<bool, std::int64_t> scatter_planes(const char* op, const py::object& src, const py::object& ind,
                                             const py::object& dst, index_t planes, index_t src_plane,
                                             index_t dst_plane) {
  const DType dt = float_dtype(op, src);
  check_planes(op, planes);
  if (src_plane < 0 || dst_plane < 0) throw py::value_error(std::string(op) + ": negative plane size");
  const void* ps = pointer(op, src, "source", dt, planes * src_plane, false);
  const auto* pi = static_cast<const std::int64_t*>(pointer(op, ind, "indices", DType::i64, planes * src_plane, false));
  void* pd = pointer(op, dst, "output", dt, planes * dst_plane, true);
  std::atomic<bool> bad{false};
  std::atomic<std::int64_t> bad_index{0};
  py::gil_scoped_release nogil;
  dispatch(dt, [&](auto tag) {
    using T = decltype(tag);
    const T* s = static_cast<const T*>(ps);
    T* dd = static_cast<T*>(pd);
    over_planes(planes, src_plane + dst_plane, [&](index_t begin, index_t end) {
      for (index_t q = begin; q < end; ++q) {
        T* out = dd + q * dst_plane;
        const T* in = s + q * src_plane;
        const std::int64_t* iq = pi + q * src_plane;
        std::fill(out, out + dst_plane, T(0));
        for (index_t o = 0; o < src_plane; ++o) {
          const std::int64_t i = iq[o];
          if (i < 0 || i >= dst_plane) {
            if (!bad.exchange(true)) bad_index.store(i);
            return;
          }
          if (kAdd)
            out[i] += in[o];
          else
            out[i] = in[o];
        }
      }
    });
  });
  return {bad.load(), bad_index.load()};
}

std::pair<bool, std::int64_t> nn_max_pool_backward(const py::object& grad_out, const py::object& ind,
                                                   const py::object& grad_in, index_t planes, index_t out_plane,
                                                   index_t in_plane) {
  return scatter_planes<true>("nn_max_pool_backward", grad_out, ind, grad_in, planes, out_plane, in_plane);
}

std::pair<bool, std::int64_t> nn_max_unpool(const py::object& x, const py::object& ind, const py::object& y,
                                            index_t planes, index_t in_plane, index_t out_plane) {
  return scatter_planes<false>("nn_max_unpool", x, ind, y, planes, in_plane, out_plane);
}

// -- average and adaptive pooling -----------------------------------------------------------------

// One dim of a window: [lo, hi) inside the input, and its size within the padded input (the
// divisor's factor with count_include_pad).
struct Span {
  index_t lo, hi, padded;
};

// Every output's window along each dim, computed once per call rather than once per plane (the
// adaptive bounds take integer divisions, which cost more than pooling a small plane).
struct Windows {
  std::vector<Span> dim[3];
};

Windows avg_windows(const Geometry& g) {
  Windows w;
  for (int d = 0; d < 3; ++d) {
    w.dim[d].resize(static_cast<size_t>(g.out[d]));
    for (index_t o = 0; o < g.out[d]; ++o) {
      const index_t start = o * g.s[d] - g.p[d];
      const index_t end = std::min(start + g.k[d], g.in[d] + g.p[d]);
      w.dim[d][o] = {std::max<index_t>(start, 0), std::min(end, g.in[d]), end - start};
    }
  }
  return w;
}

// Output o of `out` covers [floor(o * in / out), ceil((o + 1) * in / out)).
Windows adaptive_windows(const Geometry& g) {
  Windows w;
  for (int d = 0; d < 3; ++d) {
    w.dim[d].resize(static_cast<size_t>(g.out[d]));
    for (index_t o = 0; o < g.out[d]; ++o) {
      const index_t lo = (o * g.in[d]) / g.out[d], hi = ((o + 1) * g.in[d] + g.out[d] - 1) / g.out[d];
      w.dim[d][o] = {lo, hi, hi - lo};
    }
  }
  return w;
}

// Visits every output of a plane: fn(o, span0, span1, span2, divisor); divisor 0 marks a window
// with no input element. Adaptive windows pass count_include_pad (their padded size is their size).
template <class Fn>
inline void each_window(const Geometry& g, const Windows& w, bool count_include_pad, index_t divisor_override,
                        Fn&& fn) {
  index_t o = 0;
  for (index_t od = 0; od < g.out[0]; ++od) {
    const Span& a = w.dim[0][od];
    for (index_t oh = 0; oh < g.out[1]; ++oh) {
      const Span& b = w.dim[1][oh];
      for (index_t ow = 0; ow < g.out[2]; ++ow, ++o) {
        const Span& c = w.dim[2][ow];
        index_t div = 0;
        if (a.lo < a.hi && b.lo < b.hi && c.lo < c.hi) {
          div = divisor_override != 0 ? divisor_override
                : count_include_pad   ? a.padded * b.padded * c.padded
                                      : (a.hi - a.lo) * (b.hi - b.lo) * (c.hi - c.lo);
        }
        fn(o, a, b, c, div);
      }
    }
  }
}

template <class T>
FLAMBEAU_CLONES void avg_pool_plane(const T* x, T* y, const Geometry& g, const Windows& w, bool cip,
                                    index_t divisor) {
  const index_t H = g.in[1], W = g.in[2];
  each_window(g, w, cip, divisor, [&](index_t o, const Span& a, const Span& b, const Span& c, index_t div) {
    if (div == 0) {
      y[o] = T(0);
      return;
    }
    AvgSum<T> sum = 0;
    if (c.lo == 0 && c.hi == W) {
      // Whole rows: each slice of the window is one contiguous run (the whole plane for a global
      // pool), summed in independent vector lanes rather than one chain of dependent adds.
      const index_t n = (b.hi - b.lo) * W;
      for (index_t id = a.lo; id < a.hi; ++id) {
        const T* run = x + (id * H + b.lo) * W;
        if (n < 32) {  // too short to pay for the vector loop's set-up
          for (index_t i = 0; i < n; ++i) sum += run[i];
          continue;
        }
#pragma omp simd reduction(+ : sum)
        for (index_t i = 0; i < n; ++i) sum += run[i];
      }
    } else {
      for (index_t id = a.lo; id < a.hi; ++id)
        for (index_t ih = b.lo; ih < b.hi; ++ih) {
          const T* row = x + (id * H + ih) * W;
          for (index_t iw = c.lo; iw < c.hi; ++iw) sum += row[iw];
        }
    }
    y[o] = avg_divide<T>(sum, div);
  });
}

template <class T>
FLAMBEAU_CLONES void avg_pool_backward_plane(const T* go, T* gi, const Geometry& g, const Windows& w, bool cip,
                                             index_t divisor) {
  const index_t H = g.in[1], W = g.in[2];
  std::fill(gi, gi + g.in_plane(), T(0));
  each_window(g, w, cip, divisor, [&](index_t o, const Span& a, const Span& b, const Span& c, index_t div) {
    if (div == 0) return;
    const T v = go[o] / static_cast<T>(div);
    if (c.lo == 0 && c.hi == W) {  // whole rows: one contiguous run per slice
      const index_t n = (b.hi - b.lo) * W;
      for (index_t id = a.lo; id < a.hi; ++id) {
        T* run = gi + (id * H + b.lo) * W;
#pragma omp simd
        for (index_t i = 0; i < n; ++i) run[i] += v;
      }
      return;
    }
    for (index_t id = a.lo; id < a.hi; ++id)
      for (index_t ih = b.lo; ih < b.hi; ++ih) {
        T* row = gi + (id * H + ih) * W;
        for (index_t iw = c.lo; iw < c.hi; ++iw) row[iw] += v;
      }
  });
}

template <class T>
FLAMBEAU_CLONES void adaptive_max_plane(const T* x, T* y, std::int64_t* ind, const Geometry& g, const Windows& w) {
  const index_t H = g.in[1], W = g.in[2];
  each_window(g, w, true, 0, [&](index_t o, const Span& a, const Span& b, const Span& c, index_t) {
    index_t maxidx = (a.lo * H + b.lo) * W + c.lo;
    T maxval = max_start<T>();
    for (index_t id = a.lo; id < a.hi; ++id)
      for (index_t ih = b.lo; ih < b.hi; ++ih) {
        const index_t row = (id * H + ih) * W;
        for (index_t iw = c.lo; iw < c.hi; ++iw) take_max(x[row + iw], row + iw, maxval, maxidx);
      }
    y[o] = maxval;
    ind[o] = maxidx;
  });
}

// The forward (x -> y) or backward (grad_out -> grad_input) of average or adaptive average pooling;
// `allowed`: the element types taken (int64 only by average pooling's forward, as PyTorch's).
void avg_common(const char* op, bool backward, const py::object& src, const py::object& dst, index_t planes,
                const Geometry& g, const Windows& w, bool count_include_pad, index_t divisor_override,
                unsigned allowed) {
  const Elem e = input_elem(op, src, allowed);
  check_planes(op, planes);
  const index_t ip = g.in_plane(), opl = g.out_plane();
  const void* ps = elem_pointer(op, src, backward ? "grad_out" : "input", e, planes * (backward ? opl : ip), false);
  void* pd = elem_pointer(op, dst, backward ? "grad_input" : "output", e, planes * (backward ? ip : opl), true);
  // A global pool (one window covering each plane, divisor its size): no window bookkeeping per
  // plane, which dominates for many small planes (ResNet's head: 4096 planes of 2x2).
  bool global = opl == 1 && divisor_override == 0 && ip > 0;  // 0: no override (PyTorch refuses 0)
  for (int i = 0; i < 3 && global; ++i) {
    const Span& sp = w.dim[i][0];
    global = sp.lo == 0 && sp.hi == g.in[i] && sp.padded == g.in[i];
  }
  py::gil_scoped_release nogil;
  auto run_typed = [&](auto tag) {
    using T = decltype(tag);
    const T* s = static_cast<const T*>(ps);
    T* d = static_cast<T*>(pd);
    over_planes(planes, ip + opl, [&](index_t begin, index_t end) {
      if (global) {
        for (index_t q = begin; q < end; ++q) {
          if constexpr (std::is_floating_point_v<T>) {
            if (backward) {
              std::fill(d + q * ip, d + (q + 1) * ip, s[q] / static_cast<T>(ip));
              continue;
            }
          }
          const T* run = s + q * ip;
          AvgSum<T> sum = 0;
          if (ip < 32) {
            for (index_t i = 0; i < ip; ++i) sum += run[i];
          } else {
#pragma omp simd reduction(+ : sum)
            for (index_t i = 0; i < ip; ++i) sum += run[i];
          }
          d[q] = avg_divide<T>(sum, ip);
        }
        return;
      }
      for (index_t q = begin; q < end; ++q) {
        if constexpr (std::is_floating_point_v<T>) {
          if (backward) {
            avg_pool_backward_plane(s + q * opl, d + q * ip, g, w, count_include_pad, divisor_override);
            continue;
          }
        }
        avg_pool_plane(s + q * ip, d + q * opl, g, w, count_include_pad, divisor_override);
      }
    });
  };
  // Only the types some caller allows are compiled (each kernel is cloned per instruction set).
  if (e == Elem::f32)
    run_typed(float{});
  else if (e == Elem::f64)
    run_typed(double{});
  else
    run_typed(std::int64_t{});  // input_elem let nothing else through
}

void nn_avg_pool(const py::object& x, const py::object& y, index_t planes, const std::vector<index_t>& in,
                 const std::vector<index_t>& out, const std::vector<index_t>& k, const std::vector<index_t>& s,
                 const std::vector<index_t>& p, bool count_include_pad, index_t divisor_override) {
  const Geometry g = geometry("nn_avg_pool", in, out, k, s, p, {1, 1, 1});
  avg_common("nn_avg_pool", false, x, y, planes, g, avg_windows(g), count_include_pad, divisor_override,
             kAvgTypes);
}

void nn_avg_pool_backward(const py::object& go, const py::object& gi, index_t planes, const std::vector<index_t>& in,
                          const std::vector<index_t>& out, const std::vector<index_t>& k,
                          const std::vector<index_t>& s, const std::vector<index_t>& p, bool count_include_pad,
                          index_t divisor_override) {
  const Geometry g = geometry("nn_avg_pool_backward", in, out, k, s, p, {1, 1, 1});
  avg_common("nn_avg_pool_backward", true, go, gi, planes, g, avg_windows(g), count_include_pad, divisor_override,
             kFloats);
}

// Adaptive windows need in >= 1 wherever out >= 1 (an empty window has no mean nor max).
Geometry adaptive_geometry(const char* op, const std::vector<index_t>& in, const std::vector<index_t>& out) {
  const Geometry g = geometry(op, in, out, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1});
  for (int i = 0; i < 3; ++i)
    if (g.out[i] > 0 && g.in[i] == 0) throw py::value_error(std::string(op) + ": empty input dim");
  return g;
}

void nn_adaptive_avg_pool(const py::object& x, const py::object& y, index_t planes, const std::vector<index_t>& in,
                          const std::vector<index_t>& out) {
  const Geometry g = adaptive_geometry("nn_adaptive_avg_pool", in, out);
  avg_common("nn_adaptive_avg_pool", false, x, y, planes, g, adaptive_windows(g), true, 0, kFloats);
}

void nn_adaptive_avg_pool_backward(const py::object& go, const py::object& gi, index_t planes,
                                   const std::vector<index_t>& in, const std::vector<index_t>& out) {
  const Geometry g = adaptive_geometry("nn_adaptive_avg_pool_backward", in, out);
  avg_common("nn_adaptive_avg_pool_backward", true, go, gi, planes, g, adaptive_windows(g), true, 0, kFloats);
}

void nn_adaptive_max_pool(const py::object& x, const py::object& y, const py::object& ind, index_t planes,
                          const std::vector<index_t>& in, const std::vector<index_t>& out) {
  const char* op = "nn_adaptive_max_pool";
  const DType dt = float_dtype(op, x);
  check_planes(op, planes);
  const Geometry g = adaptive_geometry(op, in, out);
  const Windows w = adaptive_windows(g);
  const index_t ip = g.in_plane(), opl = g.out_plane();
  const void* px = pointer(op, x, "input", dt, planes * ip, false);
  void* py_ = pointer(op, y, "output", dt, planes * opl, true);
  auto* pi = static_cast<std::int64_t*>(pointer(op, ind, "indices", DType::i64, planes * opl, true));
  py::gil_scoped_release nogil;
  dispatch(dt, [&](auto tag) {
    using T = decltype(tag);
    over_planes(planes, ip + opl, [&](index_t begin, index_t end) {
      for (index_t q = begin; q < end; ++q)
        adaptive_max_plane(static_cast<const T*>(px) + q * ip, static_cast<T*>(py_) + q * opl, pi + q * opl, g, w);
    });
  });
}

void register_nn_pooling(py::module_& m) {
  m.def("nn_max_pool", &nn_max_pool, "Max pooling of (planes, D, H, W) planes into values and flat indices.");
  m.def("nn_max_pool_backward", &nn_max_pool_backward,
        "Adds each plane's gradient into a zeroed plane at its indices; returns (bad index found, index).");
  m.def("nn_max_unpool", &nn_max_unpool,
        "Writes each plane's values into a zeroed plane at its indices; returns (bad index found, index).");
  m.def("nn_avg_pool", &nn_avg_pool, "Average pooling of (planes, D, H, W) planes.");
  m.def("nn_avg_pool_backward", &nn_avg_pool_backward, "Average pooling's input gradient.");
  m.def("nn_adaptive_avg_pool", &nn_adaptive_avg_pool, "Adaptive average pooling of (planes, D, H, W) planes.");
  m.def("nn_adaptive_avg_pool_backward", &nn_adaptive_avg_pool_backward, "Adaptive average pooling's input gradient.");
  m.def("nn_adaptive_max_pool", &nn_adaptive_max_pool, "Adaptive max pooling into values and flat indices.");
}

}  // namespace
}  // namespace flambeau

FLAMBEAU_REGISTER(flambeau::register_nn_pooling);
