// Separable resampling along one axis, for flambeau-nn's nn_resample and nn_resample_backward (the
// engine of F.interpolate's linear, bilinear, trilinear, bicubic, area and antialiased modes), and
// bilinear grid sampling of 4-D inputs (nn_grid_sample_bilinear2d and its backward op).
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
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "common.h"
#include "nn_args.h"

namespace flambeau {
namespace {

struct Axis {
  index_t outer = 0, in = 0, inner = 0, out = 0, count = 0;
  std::vector<index_t> index;
  std::vector<double> weight;
};

// The array checks every entry point makes (dtype, layout, bounds, element count): nn_args.h's.
void* checked(const char* op, const py::array& a, const char* name, DType dt, index_t size, bool written) {
  return nn_args::pointer(op, a, name, dt, size, false, written);
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

using nn_args::float_dtype;

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

// -- bilinear grid sampling (4-D) ------------------------------------------------------------------
//
// out[n, c, h, w] = bilinear read of input[n, c] at grid[n, h, w] = (x, y) in [-1, 1], with the
// coordinates unnormalized (align_corners: corner centers; else outer edges) and padded (0 zeros,
// 1 border, 2 reflection) as PyTorch's grid_sampler_2d. A corner outside the input contributes 0.
// Huge coordinates are read as out of bounds and non-finite ones give NaN (zeros padding; the other
// paddings clip them), never cast to an index.

constexpr double kFar = -100.0;  // where a non-finite coordinate goes (out of bounds, as PyTorch's)

// Source coordinate of a normalized one, and d(source)/d(normalized) in `grad`.
inline double source_coordinate(double coord, index_t size, int padding, bool align_corners, double& grad) {
  double x;
  if (align_corners) {
    x = (coord + 1) / 2 * static_cast<double>(size - 1);
    grad = static_cast<double>(size - 1) / 2;
  } else {
    x = ((coord + 1) * static_cast<double>(size) - 1) / 2;
    grad = static_cast<double>(size) / 2;
  }
  if (padding == 2) {  // reflection, then clip
    double lo2 = align_corners ? 0.0 : -1.0, hi2 = align_corners ? 2.0 * (size - 1) : 2.0 * size - 1;
    if (lo2 == hi2) {
      x = 0;
      grad = 0;
    } else {
      const double lo = lo2 / 2, span = (hi2 - lo2) / 2;
      double v = x - lo, sign = 1;
      if (v < 0) {
        v = -v;
        sign = -1;
      }
      const double extra = std::fmod(v, span);
      const double flips = std::floor(v / span);
      if (std::fmod(flips, 2.0) == 0) {
        x = extra + lo;
        grad *= sign;
      } else {
        x = span - extra + lo;
        grad *= -sign;
      }
    }
  }
  if (padding == 1 || padding == 2) {  // clip to [0, size - 1]; NaN goes to 0, as PyTorch's
    if (!(x > 0)) {
      x = 0;
      grad = 0;
    } else if (x >= static_cast<double>(size - 1)) {
      x = static_cast<double>(size - 1);
      grad = 0;
    }
  }
  if (std::isfinite(x) && (x > 1e15 || x < -1e15)) x = kFar;
  return x;  // non-finite only with zeros padding: the caller writes NaN, as PyTorch's weights do
}

struct GridPlan {
  index_t n = 0, c = 0, h = 0, w = 0, ho = 0, wo = 0;
  int padding = 0;
  bool align_corners = false;
};

template <class T>
FLAMBEAU_CLONES void grid_sample_batches(const T* x, const T* grid, T* out, const GridPlan& p, index_t begin,
                                         index_t end) {
  const index_t plane = p.h * p.w, opix = p.ho * p.wo;
  // Per output point: its 4 corners' offsets and weights (an out-of-bounds corner reads offset 0 with
  // weight 0), computed once and then applied channel by channel over contiguous output rows.
  std::vector<index_t> at(static_cast<std::size_t>(opix * 4));
  std::vector<T> wt(static_cast<std::size_t>(opix * 4));
  std::vector<unsigned char> nan_point(static_cast<std::size_t>(opix));
  for (index_t b = begin; b < end; ++b) {
    for (index_t q = 0; q < opix; ++q) {
      const T* g = grid + (b * opix + q) * 2;
      double gx, gy;
      const double ix = source_coordinate(g[0], p.w, p.padding, p.align_corners, gx);
      const double iy = source_coordinate(g[1], p.h, p.padding, p.align_corners, gy);
      nan_point[q] = !std::isfinite(ix) || !std::isfinite(iy);
      if (nan_point[q]) {
        for (int k = 0; k < 4; ++k) at[q * 4 + k] = 0, wt[q * 4 + k] = 0;
        continue;
      }
      const double fx = std::floor(ix), fy = std::floor(iy);
      const index_t x0 = static_cast<index_t>(fx), y0 = static_cast<index_t>(fy);
      const double tx = ix - fx, ty = iy - fy;
      const double wts[4] = {(1 - tx) * (1 - ty), tx * (1 - ty), (1 - tx) * ty, tx * ty};
      const index_t xs[4] = {x0, x0 + 1, x0, x0 + 1}, ys[4] = {y0, y0, y0 + 1, y0 + 1};
      for (int k = 0; k < 4; ++k) {
        const bool inside = xs[k] >= 0 && xs[k] < p.w && ys[k] >= 0 && ys[k] < p.h;
        at[q * 4 + k] = inside ? ys[k] * p.w + xs[k] : 0;
        wt[q * 4 + k] = inside ? static_cast<T>(wts[k]) : T(0);
      }
    }
    for (index_t ch = 0; ch < p.c; ++ch) {
      const T* xc = x + (b * p.c + ch) * plane;
      T* oc = out + (b * p.c + ch) * opix;
      for (index_t q = 0; q < opix; ++q) {
        const index_t* a = at.data() + q * 4;
        const T* w = wt.data() + q * 4;
        oc[q] = nan_point[q] ? std::numeric_limits<T>::quiet_NaN()
                             : w[0] * xc[a[0]] + w[1] * xc[a[1]] + w[2] * xc[a[2]] + w[3] * xc[a[3]];
      }
    }
  }
}

template <class T>
FLAMBEAU_CLONES void grid_sample_backward_batches(const T* g_out, const T* x, const T* grid, T* gx_out, T* ggrid,
                                                  const GridPlan& p, index_t begin, index_t end) {
  const index_t plane = p.h * p.w, opix = p.ho * p.wo;
  for (index_t b = begin; b < end; ++b) {
    const T* xb = x + b * p.c * plane;
    const T* gb = g_out + b * p.c * opix;
    T* gxb = gx_out + b * p.c * plane;
    std::fill(gxb, gxb + p.c * plane, T(0));
    for (index_t q = 0; q < opix; ++q) {
      const T* g = grid + (b * opix + q) * 2;
      double mx, my;
      const double ix = source_coordinate(g[0], p.w, p.padding, p.align_corners, mx);
      const double iy = source_coordinate(g[1], p.h, p.padding, p.align_corners, my);
      T* gg = ggrid + (b * opix + q) * 2;
      if (!std::isfinite(ix) || !std::isfinite(iy)) {
        gg[0] = gg[1] = std::numeric_limits<T>::quiet_NaN();
        continue;
      }
      const double fx = std::floor(ix), fy = std::floor(iy);
      const index_t x0 = static_cast<index_t>(fx), y0 = static_cast<index_t>(fy);
      const double tx = ix - fx, ty = iy - fy;
      const double wts[4] = {(1 - tx) * (1 - ty), tx * (1 - ty), (1 - tx) * ty, tx * ty};
      // d(weight)/d(ix) and d(weight)/d(iy) of each corner
      const double dwx[4] = {-(1 - ty), (1 - ty), -ty, ty}, dwy[4] = {-(1 - tx), -tx, (1 - tx), tx};
      const index_t xs[4] = {x0, x0 + 1, x0, x0 + 1}, ys[4] = {y0, y0, y0 + 1, y0 + 1};
      double sx = 0, sy = 0;
      for (int k = 0; k < 4; ++k) {
        if (xs[k] < 0 || xs[k] >= p.w || ys[k] < 0 || ys[k] >= p.h) continue;
        const index_t at = ys[k] * p.w + xs[k];
        const T wk = static_cast<T>(wts[k]);
        double dot = 0;
        for (index_t ch = 0; ch < p.c; ++ch) {
          const T go = gb[ch * opix + q];
          gxb[ch * plane + at] += wk * go;
          dot += static_cast<double>(go) * static_cast<double>(xb[ch * plane + at]);
        }
        sx += dwx[k] * dot;
        sy += dwy[k] * dot;
      }
      gg[0] = static_cast<T>(sx * mx);
      gg[1] = static_cast<T>(sy * my);
    }
  }
}

GridPlan grid_plan(const char* op, const py::array& x, const py::array& grid, int padding, bool align_corners) {
  if (x.ndim() != 4 || grid.ndim() != 4 || grid.shape(3) != 2 || grid.shape(0) != x.shape(0)) {
    throw py::value_error(std::string(op) + ": expected input (N, C, H, W) and grid (N, H_out, W_out, 2)");
  }
  if (padding < 0 || padding > 2) throw py::value_error(std::string(op) + ": bad padding mode");
  GridPlan p;
  p.n = x.shape(0);
  p.c = x.shape(1);
  p.h = x.shape(2);
  p.w = x.shape(3);
  p.ho = grid.shape(1);
  p.wo = grid.shape(2);
  p.padding = padding;
  p.align_corners = align_corners;
  if (p.h <= 0 || p.w <= 0) throw py::value_error(std::string(op) + ": empty spatial dims");
  return p;
}

void nn_grid_sample_bilinear2d(const py::array& x, const py::array& grid, const py::array& out, int padding,
                               bool align_corners) {
  const char* op = "nn_grid_sample_bilinear2d";
  const GridPlan p = grid_plan(op, x, grid, padding, align_corners);
  const DType dt = float_dtype(op, x);
  const void* px = checked(op, x, "input", dt, p.n * p.c * p.h * p.w, false);
  const void* pg = checked(op, grid, "grid", dt, p.n * p.ho * p.wo * 2, false);
  void* po = checked(op, out, "output", dt, p.n * p.c * p.ho * p.wo, true);
  if (may_overlap(x, out) || may_overlap(grid, out)) throw py::value_error(std::string(op) + ": output overlaps");
  py::gil_scoped_release nogil;
  parallel_chunks(p.n, 1, [&](index_t begin, index_t end) {
    if (dt == DType::f32)
      grid_sample_batches(static_cast<const float*>(px), static_cast<const float*>(pg), static_cast<float*>(po), p,
                          begin, end);
    else
      grid_sample_batches(static_cast<const double*>(px), static_cast<const double*>(pg), static_cast<double*>(po), p,
                          begin, end);
  }, p.n * p.c * p.ho * p.wo * 4);
}

void nn_grid_sample_bilinear2d_backward(const py::array& g, const py::array& x, const py::array& grid,
                                        const py::array& gx, const py::array& ggrid, int padding, bool align_corners) {
  const char* op = "nn_grid_sample_bilinear2d_backward";
  const GridPlan p = grid_plan(op, x, grid, padding, align_corners);
  const DType dt = float_dtype(op, x);
  const void* pgo = checked(op, g, "grad_output", dt, p.n * p.c * p.ho * p.wo, false);
  const void* px = checked(op, x, "input", dt, p.n * p.c * p.h * p.w, false);
  const void* pg = checked(op, grid, "grid", dt, p.n * p.ho * p.wo * 2, false);
  void* pgx = checked(op, gx, "grad_input", dt, p.n * p.c * p.h * p.w, true);
  void* pgg = checked(op, ggrid, "grad_grid", dt, p.n * p.ho * p.wo * 2, true);
  for (const py::array* a : {&g, &x, &grid}) {
    if (may_overlap(*a, gx) || may_overlap(*a, ggrid)) throw py::value_error(std::string(op) + ": outputs overlap");
  }
  if (may_overlap(gx, ggrid)) throw py::value_error(std::string(op) + ": outputs overlap");
  py::gil_scoped_release nogil;
  parallel_chunks(p.n, 1, [&](index_t begin, index_t end) {
    if (dt == DType::f32)
      grid_sample_backward_batches(static_cast<const float*>(pgo), static_cast<const float*>(px),
                                   static_cast<const float*>(pg), static_cast<float*>(pgx), static_cast<float*>(pgg),
                                   p, begin, end);
    else
      grid_sample_backward_batches(static_cast<const double*>(pgo), static_cast<const double*>(px),
                                   static_cast<const double*>(pg), static_cast<double*>(pgx),
                                   static_cast<double*>(pgg), p, begin, end);
  }, p.n * p.c * p.ho * p.wo * 8);
}

void register_nn_vision(py::module_& m) {
  m.def("nn_resample_axis", &nn_resample_axis, "Separable resampling of (outer, in, inner) along the middle axis.");
  m.def("nn_resample_axis_backward", &nn_resample_axis_backward, "The input gradient of nn_resample_axis.");
  m.def("nn_grid_sample_bilinear2d", &nn_grid_sample_bilinear2d, "Bilinear grid sampling of (N, C, H, W).");
  m.def("nn_grid_sample_bilinear2d_backward", &nn_grid_sample_bilinear2d_backward,
        "The input and grid gradients of nn_grid_sample_bilinear2d.");
}

}  // namespace
}  // namespace flambeau

FLAMBEAU_REGISTER(flambeau::register_nn_vision);
