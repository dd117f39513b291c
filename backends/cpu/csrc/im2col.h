// im2col and col2im of one plane, shared by the convolution kernels (nn_conv.cpp: columns for numpy's
// BLAS; nn_conv_packed.cpp: columns packed for the convolution's own product).
//
// Everything is 3-D here: a 1-D or 2-D convolution comes with unit leading dims. Every read and write
// stays inside [0, size) of its dim by construction: the range of output positions whose input
// position is inside the image is computed first, the rest is padding. Callers check the arrays'
// sizes against the Geometry before a pointer is taken.
#pragma once

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "common.h"

namespace flambeau {
namespace im2col {
namespace {  // internal linkage: each translation unit gets its own target_clones resolvers

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

// Copies and zero fills of one row's few elements (a ResNet's late rows hold 2-16). A memcpy or
// memset call costs more than the copy at these sizes, and GCC turns a plain loop back into such a
// call; fixed-size pieces (8, 4, 2, 1 elements) are expanded inline into vector moves instead.
template <class T>
inline __attribute__((always_inline)) void short_copy(T* dst, const T* src, index_t n) {
  if (n > 64) {
    std::memcpy(dst, src, static_cast<std::size_t>(n) * sizeof(T));
    return;
  }
  index_t i = 0;
  for (; i + 8 <= n; i += 8) std::memcpy(dst + i, src + i, 8 * sizeof(T));
  if (n - i >= 4) { std::memcpy(dst + i, src + i, 4 * sizeof(T)); i += 4; }
  if (n - i >= 2) { std::memcpy(dst + i, src + i, 2 * sizeof(T)); i += 2; }
  if (n - i >= 1) dst[i] = src[i];
}
template <class T>
inline __attribute__((always_inline)) void short_zero(T* dst, index_t n) {
  if (n > 64) {
    std::memset(dst, 0, static_cast<std::size_t>(n) * sizeof(T));
    return;
  }
  index_t i = 0;
  for (; i + 8 <= n; i += 8) std::memset(dst + i, 0, 8 * sizeof(T));
  if (n - i >= 4) { std::memset(dst + i, 0, 4 * sizeof(T)); i += 4; }
  if (n - i >= 2) { std::memset(dst + i, 0, 2 * sizeof(T)); i += 2; }
  if (n - i >= 1) dst[i] = T(0);
}

// What kernel offset k reads, the same in every plane (computed once per call: the divisions in
// valid_range cost more than a small plane's copying): output rows [oh_lo, oh_hi) and columns [lo, hi)
// read inside the image, input row oh * sh + shift_h and column ow * sw + shift_w.
struct Offset {
  index_t kd, lo, hi, oh_lo, oh_hi, shift_h, shift_w;
};

std::vector<Offset> offsets(const Geometry& g) {
  std::vector<Offset> out;
  out.reserve(static_cast<std::size_t>(g.kernel_size()));
  for (index_t kd = 0; kd < g.kernel[0]; ++kd)
    for (index_t kh = 0; kh < g.kernel[1]; ++kh)
      for (index_t kw = 0; kw < g.kernel[2]; ++kw) {
        Offset o{kd, 0, 0, 0, 0, kh * g.dil[1] - g.pad[1], kw * g.dil[2] - g.pad[2]};
        valid_range(g.big[2], g.small[2], g.stride[2], g.pad[2], kw * g.dil[2], o.lo, o.hi);
        valid_range(g.big[1], g.small[1], g.stride[1], g.pad[1], kh * g.dil[1], o.oh_lo, o.oh_hi);
        out.push_back(o);
      }
  return out;
}

// cols: this plane's first column element; kernel offset k's columns start `k_stride` elements apart.
//
// When input and output rows are equally long and both strides are 1 (a "same" convolution), the
// rows an offset reads are one contiguous run of the input, shifted: it is copied in one piece and
// only the columns that hang over the padding are zeroed afterwards.
template <class T>
FLAMBEAU_CLONES void im2col_plane(const T* x, T* cols, index_t k_stride, const Geometry& g, const Offset* offs) {
  const index_t ow_n = g.small[2], oh_n = g.small[1], od_n = g.small[0];
  const index_t w_n = g.big[2], h_n = g.big[1], d_n = g.big[0];
  const index_t sw = g.stride[2], sh = g.stride[1];
  const index_t rows_plane = oh_n * ow_n;
  const bool runs = sw == 1 && sh * w_n == ow_n;
  const index_t kk = g.kernel_size();
  for (index_t k = 0; k < kk; ++k) {
    const Offset& o = offs[k];
    const index_t lo = o.lo, hi = o.hi, oh_lo = o.oh_lo, oh_hi = o.oh_hi;
    for (index_t od = 0; od < od_n; ++od) {
      T* dst = cols + k * k_stride + od * rows_plane;
      const index_t id = od * g.stride[0] - g.pad[0] + o.kd * g.dil[0];
      if (id < 0 || id >= d_n || oh_lo >= oh_hi || lo >= hi) {
        short_zero(dst, rows_plane);
        continue;
      }
      short_zero(dst, oh_lo * ow_n);
      short_zero(dst + oh_hi * ow_n, rows_plane - oh_hi * ow_n);
      // row oh reads x[first + (oh - oh_lo) * sh * w_n + ow * sw] for ow in [lo, hi): inside the plane by valid_range
      const index_t first = (id * h_n + oh_lo * sh + o.shift_h) * w_n + o.shift_w;
      if (runs) {
        // from (oh_lo, lo) to (oh_hi - 1, hi), read from first + lo on
        const index_t begin = oh_lo * ow_n + lo, end = (oh_hi - 1) * ow_n + hi;
        short_copy(dst + begin, x + first + lo, end - begin);
        if (lo > 0 || hi < ow_n) {
          for (index_t oh = oh_lo; oh < oh_hi; ++oh) {
            short_zero(dst + oh * ow_n, lo);
            short_zero(dst + oh * ow_n + hi, ow_n - hi);
          }
        }
        continue;
      }
      for (index_t oh = oh_lo; oh < oh_hi; ++oh) {
        T* row = dst + oh * ow_n;
        const T* src = x + first + (oh - oh_lo) * sh * w_n;
        short_zero(row, lo);
        if (sw == 1) {
          short_copy(row + lo, src + lo, hi - lo);
        } else {
          // a few strided reads: kept scalar (the empty asm stops GCC's gather vectorisation, whose
          // set-up costs more than these rows' 1-32 elements; gathers are slow on AMD Zen besides)
          const T* s = src + lo * sw;
          for (index_t ow = lo; ow < hi; ++ow, s += sw) {
            row[ow] = *s;
            __asm__ volatile("");
          }
        }
        short_zero(row + hi, ow_n - hi);
      }
    }
  }
}

// Adds each column back into the input element it was read from (the same offsets, rows and order as
// im2col_plane's reads; the padding's columns are dropped).
template <class T>
FLAMBEAU_CLONES void col2im_plane(const T* cols, index_t k_stride, T* x, const Geometry& g, const Offset* offs) {
  const index_t ow_n = g.small[2], oh_n = g.small[1], od_n = g.small[0];
  const index_t w_n = g.big[2], h_n = g.big[1], d_n = g.big[0];
  const index_t sw = g.stride[2], sh = g.stride[1];
  std::fill(x, x + g.plane_big(), T(0));
  for (index_t k = 0; k < g.kernel_size(); ++k) {
    const Offset& o = offs[k];
    for (index_t od = 0; od < od_n; ++od) {
      const index_t id = od * g.stride[0] - g.pad[0] + o.kd * g.dil[0];
      if (id < 0 || id >= d_n) continue;
      for (index_t oh = o.oh_lo; oh < o.oh_hi; ++oh) {
        const T* src = cols + k * k_stride + (od * oh_n + oh) * ow_n;
        const index_t base = (id * h_n + oh * sh + o.shift_h) * w_n + o.shift_w;
        if (sw == 1) {
#pragma omp simd
          for (index_t ow = o.lo; ow < o.hi; ++ow) x[base + ow] += src[ow];
        } else {
          for (index_t ow = o.lo; ow < o.hi; ++ow) x[base + ow * sw] += src[ow];
        }
      }
    }
  }
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

}  // namespace
}  // namespace im2col
}  // namespace flambeau
