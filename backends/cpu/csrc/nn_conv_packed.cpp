// A convolution's three products on its own packed product (conv_gemm.h), one sample at a time:
//
// - forward:        out[n] (O, L)    = W (O, CK) @ cols[n] (CK, L) + bias;
// - input grad:     cols (CK, L)     = W^T (CK, O) @ g[n] (O, L), then col2im into grad_input[n];
// - weight grad:    gW^T (CK, O)    += cols[n] (CK, L) @ g[n]^T (L, O), summed over the samples.
//
// (C input channels, K kernel elements, CK = C * K, L output positions, O output channels; groups of 1.)
// The numpy path (nn_conv.py over nn_conv.cpp's im2col) writes every sample's columns to memory and
// then BLAS packs them again; here each sample's columns (or its output gradient) are packed into a
// thread's buffer that stays in the cache, and the forward result lands in NCHW order directly.
// Threads split the samples; each writes only its samples' outputs (the weight gradient: its own
// partial sum, added up after the team in thread order, so results do not depend on timing).
//
// Every array is checked (dtype, layout, bounds, size from the geometry) before the GIL is released.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "common.h"
#include "conv_gemm.h"
#include "conv_windows.h"
#include "im2col.h"
#include "nn_args.h"

namespace flambeau {
namespace {

using namespace im2col;
using conv_gemm::multiply;
using packed_gemm::kPanel;

struct Sizes {
  Geometry g;
  index_t batch, channels, out_channels, k, l, ck, panels, lp;  // lp: l rounded up to whole panels
  Shifts shifts;    // usable for a "same" convolution with unit strides
  Gathers gathers;  // built by the entries that copy windows, where shifts are not usable
};

// The checked sizes of one call; copies_windows: the call copies windows (forward, weight gradient), so
// build the gather table where the shifted copies do not apply.
Sizes sizes(const char* op, index_t batch, index_t channels, index_t out_channels, const std::vector<index_t>& big,
            const std::vector<index_t>& small, const std::vector<index_t>& kernel, const std::vector<index_t>& stride,
            const std::vector<index_t>& pad, const std::vector<index_t>& dil, DType dt, bool copies_windows) {
  const index_t width = dt == DType::f32 ? kPanel<float> : kPanel<double>;
  const Geometry g = geometry(op, big, small, kernel, stride, pad, dil);
  for (index_t v : {batch, channels, out_channels}) {
    if (v < 0 || v > (index_t(1) << 40))
      throw py::value_error(std::string(op) + ": batch or channel count out of range");
  }
  const index_t k = g.kernel_size(), l = g.plane_small();
  // the batch's packed columns, and every array's element count, must be countable
  const double biggest = std::max({double(channels) * k * (double(batch) * l + width),
                                   double(batch) * channels * g.plane_big(), double(batch) * out_channels * l,
                                   double(out_channels) * channels * k});
  if (biggest > 1e15) throw py::value_error(std::string(op) + ": sizes too large");
  const index_t panels = (l + width - 1) / width;
  Sizes s{g, batch, channels, out_channels, k, l, channels * k, panels, panels * width, shifts(g, width), {}};
  if (copies_windows && !s.shifts.usable) s.gathers = gathers(g, width);
  return s;
}

const void* input_ptr(const char* op, const py::object& a, const char* name, DType dt, index_t size) {
  return nn_args::pointer(op, a, name, dt, size, false, false);
}

DType float_dtype(const char* op, const py::array& a) {
  const DType dt = dtype_of(a);
  if (dt != DType::f32 && dt != DType::f64) throw py::type_error(std::string(op) + ": expected float32 or float64");
  return dt;
}

// Threads for a loop over samples whose products total `macs` multiply-adds.
int sample_threads(index_t batch, index_t macs) {
  return static_cast<int>(std::min<index_t>(threads_for(macs / 8), batch));
}

// Channel c's K rows of columns from its plane, row k at dst + k * row_step (row_step >= lp; positions
// past L zero or unwritten: the callers read positions [0, L)), shifted or gathered where the geometry
// allows, else through im2col_plane.
template <class T>
void channel_rows(const T* plane, const Sizes& s, const Offset* offs, T* dst, index_t row_step) {
  if (s.shifts.usable) {
    for (index_t k = 0; k < s.k; ++k) copy_shifted_any(plane, s.shifts, k, dst + k * row_step);
  } else if (s.gathers.usable) {
    for (index_t k = 0; k < s.k; ++k) copy_gathered_any(plane, s.gathers, k, dst + k * row_step);
  } else {
    im2col_plane(plane, dst, row_step, s.g, offs);
  }
}

// Panels [q0, q1) of sample n's columns (CK, L) (panel q's row r at (q - q0) * CK * W + r * W): panel by
// panel, its rows written in sequence, where the windows are shifted or gathered; else each channel's
// rows through `rows` (K rows of lp; then q0 = 0 and q1 = panels).
template <class T>
void pack_columns(const T* x, const Sizes& s, const Offset* offs, T* rows, T* packed, index_t q0, index_t q1) {
  constexpr index_t W = kPanel<T>;
  const index_t plane = s.g.plane_big();
  if (s.shifts.usable || s.gathers.usable) {
    for (index_t q = q0; q < q1; ++q)
      for (index_t c = 0; c < s.channels; ++c)
        column_any(x + c * plane, s.shifts, s.gathers, q, s.k, packed + ((q - q0) * s.ck + c * s.k) * W);
    return;
  }
  for (index_t c = 0; c < s.channels; ++c) {
    channel_rows(x + c * plane, s, offs, rows, s.lp);
    for (index_t k = 0; k < s.k; ++k) {
      const T* src = rows + k * s.lp;
      T* out = packed + (c * s.k + k) * W;
      for (index_t q = 0; q < s.panels; ++q, src += W, out += s.ck * W) {
        const index_t n = std::min(W, s.l - q * W);
        std::memcpy(out, src, static_cast<std::size_t>(n) * sizeof(T));
        if (n < W) std::fill(out + n, out + W, T(0));
      }
    }
  }
}

// The most panels of one sample's columns packed and multiplied at a time (512 positions), where the
// windows can be copied by chunks: a block's columns stay in L2 for its product, where a large image's
// would not (64 channels of 224x224 pack into 115 MB).
constexpr index_t kBlockPanels = 32;

template <class T>
void forward(const T* x, const T* w, const T* bias, T* out, const Sizes& s, const Offset* offs) {
  constexpr index_t W = kPanel<T>;
  const int threads = sample_threads(s.batch, s.batch * s.out_channels * s.ck * s.l);
  parallel_team(threads, [&](int thread, int team) {
    index_t first = 0, last = 0;
    split_range(s.batch, thread, team, first, last);
    if (first >= last) return;
    const bool by_chunks = s.shifts.usable || s.gathers.usable;  // else whole rows through `rows`
    const index_t block = by_chunks ? std::min(s.panels, kBlockPanels) : s.panels;
    std::vector<T> rows(static_cast<std::size_t>(by_chunks ? 0 : s.k * s.lp));
    std::vector<T> packed(static_cast<std::size_t>(block * s.ck * W));
    for (index_t n = first; n < last; ++n) {
      for (index_t q0 = 0; q0 < s.panels; q0 += block) {
        const index_t q1 = std::min(s.panels, q0 + block), cols = std::min(s.l, q1 * W) - q0 * W;
        pack_columns(x + n * s.channels * s.g.plane_big(), s, offs, rows.data(), packed.data(), q0, q1);
        multiply(s.out_channels, cols, s.ck, w, s.ck, static_cast<const T*>(packed.data()), s.ck * W,
                 out + n * s.out_channels * s.l + q0 * W, s.l, false, bias);
      }
    }
  });
}

// The forward for small outputs (a ResNet's late layers: 2x2 to 8x8 maps of many channels), where the
// weight is larger than the batch's columns and a product per sample would read all of it for a few
// columns (a 2x2 map fills a quarter of one panel). Here the batch's columns are packed once, side by
// side (column j: sample j / L, position j % L; panels span samples), and after a barrier the threads
// split the output channels, so each reads its rows of the weight once.
template <class T>
void forward_batched(const T* x, const T* w, const T* bias, T* out, const Sizes& s, const Offset* offs) {
  constexpr index_t W = kPanel<T>;
  const index_t cols = s.batch * s.l, panels = (cols + W - 1) / W, o_n = s.out_channels;
  const index_t plane = s.g.plane_big(), tiles = (o_n + 5) / 6;
  std::vector<T> packed(static_cast<std::size_t>(panels * s.ck * W), T(0));  // the last panel's tail stays 0
  const int threads = static_cast<int>(std::min<index_t>(threads_for(s.batch * o_n * s.ck * s.l / 8), tiles));
  parallel_team(threads, [&](int thread, int team) {
    index_t first = 0, last = 0;
    split_range(s.batch, thread, team, first, last);
    std::vector<T> rows(static_cast<std::size_t>(s.k * s.lp));
    for (index_t n = first; n < last; ++n) {
      for (index_t c = 0; c < s.channels; ++c) {
        channel_rows(x + (n * s.channels + c) * plane, s, offs, rows.data(), s.lp);
        for (index_t k = 0; k < s.k; ++k) {
          const T* src = rows.data() + k * s.lp;
          T* dst = packed.data() + (c * s.k + k) * W;
          for (index_t l = 0, j = n * s.l; l < s.l; ++l, ++j) dst[(j / W) * s.ck * W + j % W] = src[l];
        }
      }
    }
#ifdef _OPENMP
    if (team > 1) {
#pragma omp barrier
    }
#endif
    index_t t0 = 0, t1 = 0;
    split_range(tiles, thread, team, t0, t1);
    const index_t r0 = t0 * 6, r1 = std::min(o_n, t1 * 6);
    if (r0 >= r1) return;
    // this thread's output channels for every column, then each (channel, sample) row to its place
    std::vector<T> res(static_cast<std::size_t>((r1 - r0) * panels * W));
    multiply(r1 - r0, cols, s.ck, w + r0 * s.ck, s.ck, static_cast<const T*>(packed.data()), s.ck * W, res.data(),
             panels * W, false, bias != nullptr ? bias + r0 : nullptr);
    for (index_t o = r0; o < r1; ++o)
      for (index_t n = 0; n < s.batch; ++n)
        std::memcpy(out + (n * o_n + o) * s.l, res.data() + (o - r0) * panels * W + n * s.l,
                    static_cast<std::size_t>(s.l) * sizeof(T));
  });
}

template <class T>
void input_grad(const T* g, const T* wt, T* gi, const Sizes& s, const Offset* offs) {
  constexpr index_t W = kPanel<T>;
  const index_t o_n = s.out_channels, plane = s.g.plane_big();
  const int threads = sample_threads(s.batch, s.batch * o_n * s.ck * s.l);
  parallel_team(threads, [&](int thread, int team) {
    index_t first = 0, last = 0;
    split_range(s.batch, thread, team, first, last);
    if (first >= last) return;
    std::vector<T> packed(static_cast<std::size_t>(s.panels * o_n * W)), cols(static_cast<std::size_t>(s.ck * s.lp));
    for (index_t n = first; n < last; ++n) {
      const T* gn = g + n * o_n * s.l;
      for (index_t o = 0; o < o_n; ++o) {  // g[n] (O, L) as panels of W positions
        const T* src = gn + o * s.l;
        T* dst = packed.data() + o * W;
        for (index_t q = 0; q < s.panels; ++q, src += W, dst += o_n * W) {
          const index_t m = std::min(W, s.l - q * W);
          std::memcpy(dst, src, static_cast<std::size_t>(m) * sizeof(T));
          if (m < W) std::fill(dst + m, dst + W, T(0));
        }
      }
      // cols (CK, L), rows lp apart: the shifted adds read whole chunks
      multiply(s.ck, s.l, o_n, wt, o_n, packed.data(), o_n * W, cols.data(), s.lp, false,
               static_cast<const T*>(nullptr));
      for (index_t c = 0; c < s.channels; ++c) {
        T* plane_c = gi + (n * s.channels + c) * plane;
        const T* cols_c = cols.data() + c * s.k * s.lp;
        if (!s.shifts.usable) {
          col2im_plane(cols_c, s.lp, plane_c, s.g, offs);
          continue;
        }
        std::fill(plane_c, plane_c + plane, T(0));
        for (index_t k = 0; k < s.k; ++k) add_shifted_any(cols_c + k * s.lp, s.shifts, k, plane_c);
      }
    }
  });
}

template <class T>
void weight_grad(const T* g, const T* x, T* gw, const Sizes& s, const Offset* offs) {
  constexpr index_t W = kPanel<T>;
  const index_t o_n = s.out_channels, plane = s.g.plane_big();
  const index_t o_panels = (o_n + W - 1) / W;
  const int threads = sample_threads(s.batch, s.batch * o_n * s.ck * s.l);
  std::vector<std::vector<T>> parts(static_cast<std::size_t>(std::max(threads, 1)));
  parallel_team(threads, [&](int thread, int team) {
    index_t first = 0, last = 0;
    split_range(s.batch, thread, team, first, last);
    std::vector<T>& part = parts[static_cast<std::size_t>(thread)];
    part.assign(static_cast<std::size_t>(s.ck * o_n), T(0));
    if (first >= last) return;
    // cols (CK, L), rows lp apart (the shifted copies write whole chunks)
    std::vector<T> cols(static_cast<std::size_t>(s.ck * s.lp));
    std::vector<T> packed(static_cast<std::size_t>(o_panels * s.l * W), T(0));
    for (index_t n = first; n < last; ++n) {
      const T* xn = x + n * s.channels * plane;
      for (index_t c = 0; c < s.channels; ++c)
        channel_rows(xn + c * plane, s, offs, cols.data() + c * s.k * s.lp, s.lp);
      const T* gn = g + n * o_n * s.l;
      for (index_t o = 0; o < o_n; ++o) {  // g[n]^T (L, O) as panels of W channels (the padding stays 0)
        T* dst = packed.data() + (o / W) * s.l * W + o % W;
        const T* src = gn + o * s.l;
        for (index_t l = 0; l < s.l; ++l) dst[l * W] = src[l];
      }
      multiply(s.ck, o_n, s.l, cols.data(), s.lp, packed.data(), s.l * W, part.data(), o_n, true,
               static_cast<const T*>(nullptr));
    }
  });
  for (index_t o = 0; o < o_n; ++o)  // gW (O, CK) = sum of the parts (CK, O), transposed
    for (index_t r = 0; r < s.ck; ++r) {
      T sum = T(0);
      for (const std::vector<T>& part : parts)  // a thread OpenMP did not start left its part empty
        if (!part.empty()) sum += part[static_cast<std::size_t>(r * o_n + o)];
      gw[o * s.ck + r] = sum;
    }
}

using Vec3 = std::vector<index_t>;

// fn(T{}) with T the C++ type of dt (float32 or float64, checked by float_dtype).
template <class Fn>
void with_float_type(DType dt, Fn&& fn) {
  if (dt == DType::f32) {
    fn(float{});
  } else {
    fn(double{});
  }
}

// x (N, C, *big), weight (O, C * K), bias (O) or None -> out (N, O, *small).
// batched: forward_batched (the batch's columns packed at once) rather than a product per sample.
void nn_conv_forward_packed(const py::array& x, const py::array& weight, const py::object& bias, const py::array& out,
                            bool batched, index_t batch, index_t channels, index_t out_channels, const Vec3& big,
                            const Vec3& small, const Vec3& kernel, const Vec3& stride, const Vec3& pad,
                            const Vec3& dil) {
  const char* op = "nn_conv_forward_packed";
  const DType dt = float_dtype(op, x);
  const Sizes s = sizes(op, batch, channels, out_channels, big, small, kernel, stride, pad, dil, dt, true);
  const void* px = input_ptr(op, x, "input", dt, batch * channels * s.g.plane_big());
  const void* pw = input_ptr(op, weight, "weight", dt, out_channels * s.ck);
  const void* pb = nn_args::pointer(op, bias, "bias", dt, out_channels, true, false);
  void* po = nn_args::pointer(op, out, "out", dt, batch * out_channels * s.l, false, true);
  const std::vector<Offset> offs = offsets(s.g);
  py::gil_scoped_release nogil;
  with_float_type(dt, [&](auto zero) {
    using T = decltype(zero);
    (batched ? forward_batched<T> : forward<T>)(static_cast<const T*>(px), static_cast<const T*>(pw),
                                                static_cast<const T*>(pb), static_cast<T*>(po), s, offs.data());
  });
}

// grad_out (N, O, *small), weight transposed (C * K, O) -> grad_input (N, C, *big), overwritten.
void nn_conv_input_grad_packed(const py::array& grad_out, const py::array& weight_t, const py::array& grad_input,
                               index_t batch, index_t channels, index_t out_channels, const Vec3& big,
                               const Vec3& small, const Vec3& kernel, const Vec3& stride, const Vec3& pad,
                               const Vec3& dil) {
  const char* op = "nn_conv_input_grad_packed";
  const DType dt = float_dtype(op, grad_out);
  const Sizes s = sizes(op, batch, channels, out_channels, big, small, kernel, stride, pad, dil, dt, false);
  const void* pg = input_ptr(op, grad_out, "grad_out", dt, batch * out_channels * s.l);
  const void* pw = input_ptr(op, weight_t, "weight_t", dt, s.ck * out_channels);
  void* pi = nn_args::pointer(op, grad_input, "grad_input", dt, batch * channels * s.g.plane_big(), false, true);
  const std::vector<Offset> offs = offsets(s.g);
  py::gil_scoped_release nogil;
  with_float_type(dt, [&](auto zero) {
    using T = decltype(zero);
    input_grad(static_cast<const T*>(pg), static_cast<const T*>(pw), static_cast<T*>(pi), s, offs.data());
  });
}

// grad_out (N, O, *small), x (N, C, *big) -> grad_weight (O, C * K), overwritten.
void nn_conv_weight_grad_packed(const py::array& grad_out, const py::array& x, const py::array& grad_weight,
                                index_t batch, index_t channels, index_t out_channels, const Vec3& big,
                                const Vec3& small, const Vec3& kernel, const Vec3& stride, const Vec3& pad,
                                const Vec3& dil) {
  const char* op = "nn_conv_weight_grad_packed";
  const DType dt = float_dtype(op, grad_out);
  const Sizes s = sizes(op, batch, channels, out_channels, big, small, kernel, stride, pad, dil, dt, true);
  const void* pg = input_ptr(op, grad_out, "grad_out", dt, batch * out_channels * s.l);
  const void* px = input_ptr(op, x, "input", dt, batch * channels * s.g.plane_big());
  void* pw = nn_args::pointer(op, grad_weight, "grad_weight", dt, out_channels * s.ck, false, true);
  const std::vector<Offset> offs = offsets(s.g);
  py::gil_scoped_release nogil;
  with_float_type(dt, [&](auto zero) {
    using T = decltype(zero);
    weight_grad(static_cast<const T*>(pg), static_cast<const T*>(px), static_cast<T*>(pw), s, offs.data());
  });
}

// The docstrings' shared tail (string literals: nothing to outlive).
#define FLAMBEAU_CONV_GEO "; then batch, channels, out_channels and the 3-D geometry as nn_im2col's."

void register_nn_conv_packed(py::module_& m) {
  m.def("nn_conv_forward_packed", &nn_conv_forward_packed,
        "out (N, O, *small) = conv(x (N, C, *big), weight (O, C*K)) + bias, groups of 1; batched: the batch's "
        "columns packed at once, else a product per sample" FLAMBEAU_CONV_GEO);
  m.def("nn_conv_input_grad_packed", &nn_conv_input_grad_packed,
        "grad_input (N, C, *big) from grad_out (N, O, *small) and weight^T (C*K, O)" FLAMBEAU_CONV_GEO);
  m.def("nn_conv_weight_grad_packed", &nn_conv_weight_grad_packed,
        "grad_weight (O, C*K) from grad_out (N, O, *small) and x (N, C, *big)" FLAMBEAU_CONV_GEO);
}

}  // namespace
}  // namespace flambeau

FLAMBEAU_REGISTER(flambeau::register_nn_conv_packed);
