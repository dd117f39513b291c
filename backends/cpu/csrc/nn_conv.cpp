// im2col and col2im for flambeau-nn's convolution ops (nn_convolution, nn_convolution_backward).
//
// A convolution is a matrix product with the input's windows: im2col copies, for every plane
// (sample, channel), the element each kernel offset k reads at each output position l into
// cols[plane][k][l] (zero where the window hangs over the padding); col2im adds such columns back
// into the planes they came from. The products themselves run on numpy's BLAS
// (flambeau_cpu/kernels/nn_conv.py), which shares this module's thread pool (blas_threads.cpp).
//
// Everything is 3-D here: a 1-D or 2-D convolution comes with unit leading dims. Threads split the
// planes statically; each plane's columns (im2col) or its own image (col2im) belong to one thread,
// so nothing is written twice at once and the results do not depend on timing.
//
// Every size is checked against the arrays' real sizes before a pointer is taken, and every read
// and write stays inside [0, size) of its dim by construction: the range of output positions whose
// input position is inside the image is computed first, the rest is padding.
#include <array>
#include <string>

#include "common.h"
#include "nn_args.h"

namespace flambeau {
namespace {

using Dims = std::array<index_t, 3>;

struct Geometry {
  Dims big, small, kernel, stride, pad, dil;
  index_t plane_big() const { return big[0] * big[1] * big[2]; }
  index_t plane_small() const { return small[0] * small[1] * small[2]; }
  index_t kernel_size() const { return kernel[0] * kernel[1] * kernel[2]; }
};

Dims dims(const char* op, const std::vector<index_t>& v, const char* name, index_t least) {
  if (v.size() != 3) throw py::value_error(std::string(op) + ": " + name + " must have 3 entries");
  for (index_t x : v) {
    if (x < least || x > (index_t(1) << 40)) {
      throw py::value_error(std::string(op) + ": " + name + " has an entry out of range: " + std::to_string(x));
    }
  }
  return {v[0], v[1], v[2]};
}

// The output positions o in [0, n_out) whose input position o * stride - pad + offset lies in [0, n_in).
inline void valid_range(index_t n_in, index_t n_out, index_t stride, index_t pad, index_t offset, index_t& lo,
                        index_t& hi) {
  const index_t shift = offset - pad;  // input position = o * stride + shift
  lo = shift >= 0 ? 0 : (-shift + stride - 1) / stride;
  hi = n_in - shift <= 0 ? 0 : (n_in - shift - 1) / stride + 1;
  lo = std::min(lo, n_out);
  hi = std::max(lo, std::min(hi, n_out));
}

// Walks every (kernel offset, output row) of one plane: fn(k, od, oh, in_row or -1, lo, hi, shift_w), where
// in_row is the flat input offset of row (id, ih), and ow in [lo, hi) reads input column ow * sw + shift_w.
template <class Fn>
inline void for_rows(const Geometry& g, Fn&& fn) {
  index_t k = 0;
  for (index_t kd = 0; kd < g.kernel[0]; ++kd)
    for (index_t kh = 0; kh < g.kernel[1]; ++kh)
      for (index_t kw = 0; kw < g.kernel[2]; ++kw, ++k) {
        index_t lo = 0, hi = 0;
        valid_range(g.big[2], g.small[2], g.stride[2], g.pad[2], kw * g.dil[2], lo, hi);
        const index_t shift_w = kw * g.dil[2] - g.pad[2];
        for (index_t od = 0; od < g.small[0]; ++od) {
          const index_t id = od * g.stride[0] - g.pad[0] + kd * g.dil[0];
          for (index_t oh = 0; oh < g.small[1]; ++oh) {
            const index_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dil[1];
            const bool inside = id >= 0 && id < g.big[0] && ih >= 0 && ih < g.big[1];
            fn(k, od, oh, inside ? (id * g.big[1] + ih) * g.big[2] : index_t(-1), lo, hi, shift_w);
          }
        }
      }
}

// cols: this plane's first column element; kernel offset k's columns start `k_stride` elements apart.
template <class T>
FLAMBEAU_CLONES void im2col_plane(const T* x, T* cols, index_t k_stride, const Geometry& g) {
  const index_t ow_n = g.small[2];
  const index_t sw = g.stride[2];
  for_rows(g, [&](index_t k, index_t od, index_t oh, index_t row, index_t lo, index_t hi, index_t shift_w) {
    T* dst = cols + k * k_stride + (od * g.small[1] + oh) * ow_n;
    if (row < 0) {
      std::fill(dst, dst + ow_n, T(0));
      return;
    }
    // ow in [lo, hi) reads x[row + ow * sw + shift_w], inside the plane by valid_range
    std::fill(dst, dst + lo, T(0));
    if (sw == 1) {
      if (hi > lo) std::copy(x + row + lo + shift_w, x + row + hi + shift_w, dst + lo);
    } else {
      for (index_t ow = lo; ow < hi; ++ow) dst[ow] = x[row + ow * sw + shift_w];
    }
    std::fill(dst + hi, dst + ow_n, T(0));
  });
}

template <class T>
FLAMBEAU_CLONES void col2im_plane(const T* cols, index_t k_stride, T* x, const Geometry& g) {
  const index_t ow_n = g.small[2];
  const index_t sw = g.stride[2];
  std::fill(x, x + g.plane_big(), T(0));
  for_rows(g, [&](index_t k, index_t od, index_t oh, index_t row, index_t lo, index_t hi, index_t shift_w) {
    if (row < 0) return;
    const T* src = cols + k * k_stride + (od * g.small[1] + oh) * ow_n;
    const index_t base = row + shift_w;
    if (sw == 1) {
#pragma omp simd
      for (index_t ow = lo; ow < hi; ++ow) x[base + ow] += src[ow];
    } else {
      for (index_t ow = lo; ow < hi; ++ow) x[base + ow * sw] += src[ow];
    }
  });
}

// The array checks every entry point makes (dtype, layout, bounds, element count): nn_args.h's.
void* checked(const char* op, const py::array& a, const char* name, DType dt, index_t size, bool written) {
  return nn_args::pointer(op, a, name, dt, size, false, written);
}

Geometry geometry(const char* op, const std::vector<index_t>& big, const std::vector<index_t>& small,
                  const std::vector<index_t>& kernel, const std::vector<index_t>& stride,
                  const std::vector<index_t>& pad, const std::vector<index_t>& dil) {
  Geometry g{dims(op, big, "big", 0),        dims(op, small, "small", 0), dims(op, kernel, "kernel", 1),
             dims(op, stride, "stride", 1), dims(op, pad, "padding", 0), dims(op, dil, "dilation", 1)};
  // products of sizes up to 2^40 each could overflow: bound the elements of one plane's columns
  const double cells = double(g.kernel_size()) * double(g.plane_small());
  if (cells > 1e15 || double(g.plane_big()) > 1e15) throw py::value_error(std::string(op) + ": sizes too large");
  return g;
}

// Where plane (n, c) of (batch, channels) planes keeps its columns. Two layouts:
// batch_inner = false: cols (N, C, K, L), plane p = n * C + c at p * K * L, k rows L apart;
// batch_inner = true:  cols (C, K, N, L), so that (C * K, N * L) is one matrix for one gemm over the
// whole batch: plane (n, c) at (c * K * N + n) * L, k rows N * L apart.
struct Layout {
  index_t batch, channels, k, l;
  bool batch_inner;
  index_t base(index_t plane) const {
    const index_t n = plane / channels, c = plane % channels;
    return batch_inner ? (c * k * batch + n) * l : plane * k * l;
  }
  index_t k_stride() const { return batch_inner ? batch * l : l; }
};

Layout layout(const char* op, index_t batch, index_t channels, const Geometry& g, bool batch_inner) {
  if (batch < 0 || channels < 0) throw py::value_error(std::string(op) + ": negative batch or channel count");
  return Layout{batch, channels, g.kernel_size(), g.plane_small(), batch_inner};
}

// x: (batch, channels, *big) -> cols in `layout`'s order.
void nn_im2col(const py::array& x, const py::array& cols, index_t batch, index_t channels, bool batch_inner,
               const std::vector<index_t>& big, const std::vector<index_t>& small, const std::vector<index_t>& kernel,
               const std::vector<index_t>& stride, const std::vector<index_t>& pad, const std::vector<index_t>& dil) {
  const char* op = "nn_im2col";
  const Geometry g = geometry(op, big, small, kernel, stride, pad, dil);
  const Layout lay = layout(op, batch, channels, g, batch_inner);
  const index_t planes = batch * channels;
  const DType dt = dtype_of(x);
  if (dt != DType::f32 && dt != DType::f64) throw py::type_error("nn_im2col: expected float32 or float64");
  const index_t in_plane = g.plane_big(), out_plane = lay.k * lay.l;
  const void* px = checked(op, x, "input", dt, planes * in_plane, false);
  void* pc = checked(op, cols, "cols", dt, planes * out_plane, true);
  py::gil_scoped_release nogil;
  parallel_chunks(planes, 1, [&](index_t begin, index_t end) {
    for (index_t p = begin; p < end; ++p) {
      if (dt == DType::f32)
        im2col_plane(static_cast<const float*>(px) + p * in_plane, static_cast<float*>(pc) + lay.base(p),
                     lay.k_stride(), g);
      else
        im2col_plane(static_cast<const double*>(px) + p * in_plane, static_cast<double*>(pc) + lay.base(p),
                     lay.k_stride(), g);
    }
  }, planes * out_plane);
}

// cols in `layout`'s order -> x: (batch, channels, *big), overwritten with the sum of the columns.
void nn_col2im(const py::array& cols, const py::array& x, index_t batch, index_t channels, bool batch_inner,
               const std::vector<index_t>& big, const std::vector<index_t>& small, const std::vector<index_t>& kernel,
               const std::vector<index_t>& stride, const std::vector<index_t>& pad, const std::vector<index_t>& dil) {
  const char* op = "nn_col2im";
  const Geometry g = geometry(op, big, small, kernel, stride, pad, dil);
  const Layout lay = layout(op, batch, channels, g, batch_inner);
  const index_t planes = batch * channels;
  const DType dt = dtype_of(cols);
  if (dt != DType::f32 && dt != DType::f64) throw py::type_error("nn_col2im: expected float32 or float64");
  const index_t in_plane = lay.k * lay.l, out_plane = g.plane_big();
  const void* pc = checked(op, cols, "cols", dt, planes * in_plane, false);
  void* px = checked(op, x, "output", dt, planes * out_plane, true);
  py::gil_scoped_release nogil;
  parallel_chunks(planes, 1, [&](index_t begin, index_t end) {
    for (index_t p = begin; p < end; ++p) {
      if (dt == DType::f32)
        col2im_plane(static_cast<const float*>(pc) + lay.base(p), lay.k_stride(),
                     static_cast<float*>(px) + p * out_plane, g);
      else
        col2im_plane(static_cast<const double*>(pc) + lay.base(p), lay.k_stride(),
                     static_cast<double*>(px) + p * out_plane, g);
    }
  }, planes * in_plane);
}

void register_nn_conv(py::module_& m) {
  m.def("nn_im2col", &nn_im2col, "The windows of (N, C, *big) as columns (N, C, K, L), or (C, K, N, L) with "
        "batch_inner (3-D geometry).");
  m.def("nn_col2im", &nn_col2im, "Columns (N, C, K, L), or (C, K, N, L) with batch_inner, summed back into "
        "(N, C, *big).");
}

}  // namespace
}  // namespace flambeau

FLAMBEAU_REGISTER(flambeau::register_nn_conv);
