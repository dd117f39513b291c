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
// The Python side (flambeau_cpu/kernels/nn_pooling.py) hands over C-contiguous aligned float32 or
// float64 arrays (half inputs as float32 copies) and int64 indices; each is checked here again.
#include <atomic>
#include <cmath>
#include <limits>
#include <utility>

#include "common.h"

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

// The data pointer of `obj` after checking that it is a C-contiguous aligned array of `dt` with `size`
// elements lying in bounds.
void* pointer(const char* op, const py::object& obj, const char* name, DType dt, index_t size, bool written) {
  if (!py::isinstance<py::array>(obj)) throw py::type_error(std::string(op) + ": " + name + " must be a numpy array");
  py::array a = py::reinterpret_borrow<py::array>(obj);
  if (dtype_of(a) != dt) throw py::type_error(std::string(op) + ": " + name + " has the wrong dtype");
  if (!c_contiguous(a) || !is_aligned(a)) {
    throw py::value_error(std::string(op) + ": " + name + " must be C-contiguous and aligned");
  }
  if (static_cast<index_t>(a.size()) != size) {
    throw py::value_error(std::string(op) + ": " + name + " has " + std::to_string(a.size()) + " elements, expected " +
                          std::to_string(size));
  }
  check_in_bounds(a, name, written);
  return written ? a.mutable_data() : const_cast<void*>(a.data());
}

DType float_dtype(const char* op, const py::object& x) {
  if (!py::isinstance<py::array>(x)) throw py::type_error(std::string(op) + ": expected a numpy array");
  const DType dt = dtype_of(py::reinterpret_borrow<py::array>(x));
  if (dt != DType::f32 && dt != DType::f64) throw py::type_error(std::string(op) + ": expected float32 or float64");
  return dt;
}

void check_planes(const char* op, index_t planes) {
  if (planes < 0) throw py::value_error(std::string(op) + ": negative plane count");
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
  if (val > maxval || std::isnan(val)) {
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
        T maxval = -std::numeric_limits<T>::infinity();
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
    for (index_t ow = 0; ow < OW; ++ow) {
      const T a = r0[2 * ow], b = r0[2 * ow + 1], c = r1[2 * ow], e = r1[2 * ow + 1];
      T m = a;
      index_t i = 0;
      if (b > m || std::isnan(b)) { m = b; i = 1; }
      if (c > m || std::isnan(c)) { m = c; i = W; }
      if (e > m || std::isnan(e)) { m = e; i = W + 1; }
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
  const DType dt = float_dtype(op, x);
  check_planes(op, planes);
  const Geometry g = geometry(op, in, out, k, s, p, d);
  const index_t ip = g.in_plane(), opl = g.out_plane();
  const void* px = pointer(op, x, "input", dt, planes * ip, false);
  void* py_ = pointer(op, y, "output", dt, planes * opl, true);
  auto* pi = static_cast<std::int64_t*>(pointer(op, ind, "indices", DType::i64, planes * opl, true));
  const bool fast = is_2x2(g);
  py::gil_scoped_release nogil;
  dispatch(dt, [&](auto tag) {
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

// -- average pooling ------------------------------------------------------------------------------

// One dim of an average-pool window: [lo, hi) inside the input and the size of the window clamped
// to the padded input.
struct Span {
  index_t lo, hi, padded;
};

inline Span avg_span(index_t o, index_t in, index_t k, index_t s, index_t p) {
  const index_t start = o * s - p;
  const index_t end = std::min(start + k, in + p);
  return {std::max<index_t>(start, 0), std::min(end, in), end - start};
}

// Visits every output of a plane with its window: fn(o, span0, span1, span2, divisor); divisor 0
// marks a window with no input element.
template <class Fn>
inline void avg_windows(const Geometry& g, bool count_include_pad, index_t divisor_override, Fn&& fn) {
  index_t o = 0;
  for (index_t od = 0; od < g.out[0]; ++od) {
    const Span a = avg_span(od, g.in[0], g.k[0], g.s[0], g.p[0]);
    for (index_t oh = 0; oh < g.out[1]; ++oh) {
      const Span b = avg_span(oh, g.in[1], g.k[1], g.s[1], g.p[1]);
      for (index_t ow = 0; ow < g.out[2]; ++ow, ++o) {
        const Span c = avg_span(ow, g.in[2], g.k[2], g.s[2], g.p[2]);
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
FLAMBEAU_CLONES void avg_pool_plane(const T* x, T* y, const Geometry& g, bool cip, index_t divisor) {
  const index_t H = g.in[1], W = g.in[2];
  avg_windows(g, cip, divisor, [&](index_t o, const Span& a, const Span& b, const Span& c, index_t div) {
    if (div == 0) {
      y[o] = T(0);
      return;
    }
    T sum = 0;
    for (index_t id = a.lo; id < a.hi; ++id)
      for (index_t ih = b.lo; ih < b.hi; ++ih) {
        const T* row = x + (id * H + ih) * W;
        for (index_t iw = c.lo; iw < c.hi; ++iw) sum += row[iw];
      }
    y[o] = sum / static_cast<T>(div);
  });
}

template <class T>
FLAMBEAU_CLONES void avg_pool_backward_plane(const T* go, T* gi, const Geometry& g, bool cip, index_t divisor) {
  const index_t H = g.in[1], W = g.in[2];
  std::fill(gi, gi + g.in_plane(), T(0));
  avg_windows(g, cip, divisor, [&](index_t o, const Span& a, const Span& b, const Span& c, index_t div) {
    if (div == 0) return;
    const T v = go[o] / static_cast<T>(div);
    for (index_t id = a.lo; id < a.hi; ++id)
      for (index_t ih = b.lo; ih < b.hi; ++ih) {
        T* row = gi + (id * H + ih) * W;
        for (index_t iw = c.lo; iw < c.hi; ++iw) row[iw] += v;
      }
  });
}

void nn_avg_pool(const py::object& x, const py::object& y, index_t planes, const std::vector<index_t>& in,
                 const std::vector<index_t>& out, const std::vector<index_t>& k, const std::vector<index_t>& s,
                 const std::vector<index_t>& p, bool count_include_pad, index_t divisor_override) {
  const char* op = "nn_avg_pool";
  const DType dt = float_dtype(op, x);
  check_planes(op, planes);
  const Geometry g = geometry(op, in, out, k, s, p, {1, 1, 1});
  if (divisor_override < 0) throw py::value_error("nn_avg_pool: divisor_override must be positive");
  const index_t ip = g.in_plane(), opl = g.out_plane();
  const void* px = pointer(op, x, "input", dt, planes * ip, false);
  void* py_ = pointer(op, y, "output", dt, planes * opl, true);
  py::gil_scoped_release nogil;
  dispatch(dt, [&](auto tag) {
    using T = decltype(tag);
    over_planes(planes, ip + opl, [&](index_t begin, index_t end) {
      for (index_t q = begin; q < end; ++q)
        avg_pool_plane(static_cast<const T*>(px) + q * ip, static_cast<T*>(py_) + q * opl, g, count_include_pad,
                       divisor_override);
    });
  });
}

void nn_avg_pool_backward(const py::object& go, const py::object& gi, index_t planes, const std::vector<index_t>& in,
                          const std::vector<index_t>& out, const std::vector<index_t>& k,
                          const std::vector<index_t>& s, const std::vector<index_t>& p, bool count_include_pad,
                          index_t divisor_override) {
  const char* op = "nn_avg_pool_backward";
  const DType dt = float_dtype(op, go);
  check_planes(op, planes);
  const Geometry g = geometry(op, in, out, k, s, p, {1, 1, 1});
  if (divisor_override < 0) throw py::value_error("nn_avg_pool_backward: divisor_override must be positive");
  const index_t ip = g.in_plane(), opl = g.out_plane();
  const void* pg = pointer(op, go, "grad_out", dt, planes * opl, false);
  void* pi = pointer(op, gi, "grad_input", dt, planes * ip, true);
  py::gil_scoped_release nogil;
  dispatch(dt, [&](auto tag) {
    using T = decltype(tag);
    over_planes(planes, ip + opl, [&](index_t begin, index_t end) {
      for (index_t q = begin; q < end; ++q)
        avg_pool_backward_plane(static_cast<const T*>(pg) + q * opl, static_cast<T*>(pi) + q * ip, g,
                                count_include_pad, divisor_override);
    });
  });
}

// -- adaptive pooling -----------------------------------------------------------------------------

// Output o of `out` covers [floor(o * in / out), ceil((o + 1) * in / out)).
inline index_t adaptive_lo(index_t o, index_t in, index_t out) { return (o * in) / out; }
inline index_t adaptive_hi(index_t o, index_t in, index_t out) { return ((o + 1) * in + out - 1) / out; }

template <class Fn>
inline void adaptive_windows(const Geometry& g, Fn&& fn) {
  index_t o = 0;
  for (index_t od = 0; od < g.out[0]; ++od) {
    const Span a{adaptive_lo(od, g.in[0], g.out[0]), adaptive_hi(od, g.in[0], g.out[0]), 0};
    for (index_t oh = 0; oh < g.out[1]; ++oh) {
      const Span b{adaptive_lo(oh, g.in[1], g.out[1]), adaptive_hi(oh, g.in[1], g.out[1]), 0};
      for (index_t ow = 0; ow < g.out[2]; ++ow, ++o) {
        const Span c{adaptive_lo(ow, g.in[2], g.out[2]), adaptive_hi(ow, g.in[2], g.out[2]), 0};
        fn(o, a, b, c);
      }
    }
  }
}

template <class T>
FLAMBEAU_CLONES void adaptive_avg_plane(const T* x, T* y, const Geometry& g) {
  const index_t H = g.in[1], W = g.in[2];
  adaptive_windows(g, [&](index_t o, const Span& a, const Span& b, const Span& c) {
    T sum = 0;
    for (index_t id = a.lo; id < a.hi; ++id)
      for (index_t ih = b.lo; ih < b.hi; ++ih) {
        const T* row = x + (id * H + ih) * W;
        for (index_t iw = c.lo; iw < c.hi; ++iw) sum += row[iw];
      }
    y[o] = sum / static_cast<T>((a.hi - a.lo) * (b.hi - b.lo) * (c.hi - c.lo));
  });
}

template <class T>
FLAMBEAU_CLONES void adaptive_avg_backward_plane(const T* go, T* gi, const Geometry& g) {
  const index_t H = g.in[1], W = g.in[2];
  std::fill(gi, gi + g.in_plane(), T(0));
  adaptive_windows(g, [&](index_t o, const Span& a, const Span& b, const Span& c) {
    const T v = go[o] / static_cast<T>((a.hi - a.lo) * (b.hi - b.lo) * (c.hi - c.lo));
    for (index_t id = a.lo; id < a.hi; ++id)
      for (index_t ih = b.lo; ih < b.hi; ++ih) {
        T* row = gi + (id * H + ih) * W;
        for (index_t iw = c.lo; iw < c.hi; ++iw) row[iw] += v;
      }
  });
}

template <class T>
FLAMBEAU_CLONES void adaptive_max_plane(const T* x, T* y, std::int64_t* ind, const Geometry& g) {
  const index_t H = g.in[1], W = g.in[2];
  adaptive_windows(g, [&](index_t o, const Span& a, const Span& b, const Span& c) {
    index_t maxidx = (a.lo * H + b.lo) * W + c.lo;
    T maxval = -std::numeric_limits<T>::infinity();
    for (index_t id = a.lo; id < a.hi; ++id)
      for (index_t ih = b.lo; ih < b.hi; ++ih) {
        const index_t row = (id * H + ih) * W;
        for (index_t iw = c.lo; iw < c.hi; ++iw) take_max(x[row + iw], row + iw, maxval, maxidx);
      }
    y[o] = maxval;
    ind[o] = maxidx;
  });
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
  const char* op = "nn_adaptive_avg_pool";
  const DType dt = float_dtype(op, x);
  check_planes(op, planes);
  const Geometry g = adaptive_geometry(op, in, out);
  const index_t ip = g.in_plane(), opl = g.out_plane();
  const void* px = pointer(op, x, "input", dt, planes * ip, false);
  void* py_ = pointer(op, y, "output", dt, planes * opl, true);
  py::gil_scoped_release nogil;
  dispatch(dt, [&](auto tag) {
    using T = decltype(tag);
    over_planes(planes, ip + opl, [&](index_t begin, index_t end) {
      for (index_t q = begin; q < end; ++q)
        adaptive_avg_plane(static_cast<const T*>(px) + q * ip, static_cast<T*>(py_) + q * opl, g);
    });
  });
}

void nn_adaptive_avg_pool_backward(const py::object& go, const py::object& gi, index_t planes,
                                   const std::vector<index_t>& in, const std::vector<index_t>& out) {
  const char* op = "nn_adaptive_avg_pool_backward";
  const DType dt = float_dtype(op, go);
  check_planes(op, planes);
  const Geometry g = adaptive_geometry(op, in, out);
  const index_t ip = g.in_plane(), opl = g.out_plane();
  const void* pg = pointer(op, go, "grad_out", dt, planes * opl, false);
  void* pi = pointer(op, gi, "grad_input", dt, planes * ip, true);
  py::gil_scoped_release nogil;
  dispatch(dt, [&](auto tag) {
    using T = decltype(tag);
    over_planes(planes, ip + opl, [&](index_t begin, index_t end) {
      for (index_t q = begin; q < end; ++q)
        adaptive_avg_backward_plane(static_cast<const T*>(pg) + q * opl, static_cast<T*>(pi) + q * ip, g);
    });
  });
}

void nn_adaptive_max_pool(const py::object& x, const py::object& y, const py::object& ind, index_t planes,
                          const std::vector<index_t>& in, const std::vector<index_t>& out) {
  const char* op = "nn_adaptive_max_pool";
  const DType dt = float_dtype(op, x);
  check_planes(op, planes);
  const Geometry g = adaptive_geometry(op, in, out);
  const index_t ip = g.in_plane(), opl = g.out_plane();
  const void* px = pointer(op, x, "input", dt, planes * ip, false);
  void* py_ = pointer(op, y, "output", dt, planes * opl, true);
  auto* pi = static_cast<std::int64_t*>(pointer(op, ind, "indices", DType::i64, planes * opl, true));
  py::gil_scoped_release nogil;
  dispatch(dt, [&](auto tag) {
    using T = decltype(tag);
    over_planes(planes, ip + opl, [&](index_t begin, index_t end) {
      for (index_t q = begin; q < end; ++q)
        adaptive_max_plane(static_cast<const T*>(px) + q * ip, static_cast<T*>(py_) + q * opl, pi + q * opl, g);
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
