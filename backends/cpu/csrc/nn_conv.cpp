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
#include <cstring>
#include <string>
#include <vector>

#include "common.h"
#include "im2col.h"
#include "nn_args.h"

namespace flambeau {
namespace {

using namespace im2col;


// The array checks every entry point makes (dtype, layout, bounds, element count): nn_args.h's.
void* checked(const char* op, const py::array& a, const char* name, DType dt, index_t size, bool written) {
  return nn_args::pointer(op, a, name, dt, size, false, written);
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
  const std::vector<Offset> offs = offsets(g);
  py::gil_scoped_release nogil;
  parallel_chunks(planes, 1, [&](index_t begin, index_t end) {
    for (index_t p = begin; p < end; ++p) {
      if (dt == DType::f32)
        im2col_plane(static_cast<const float*>(px) + p * in_plane, static_cast<float*>(pc) + lay.base(p),
                     lay.k_stride(), g, offs.data());
      else
        im2col_plane(static_cast<const double*>(px) + p * in_plane, static_cast<double*>(pc) + lay.base(p),
                     lay.k_stride(), g, offs.data());
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
  const std::vector<Offset> offs = offsets(g);
  py::gil_scoped_release nogil;
  parallel_chunks(planes, 1, [&](index_t begin, index_t end) {
    for (index_t p = begin; p < end; ++p) {
      if (dt == DType::f32)
        col2im_plane(static_cast<const float*>(pc) + lay.base(p), lay.k_stride(),
                     static_cast<float*>(px) + p * out_plane, g, offs.data());
      else
        col2im_plane(static_cast<const double*>(pc) + lay.base(p), lay.k_stride(),
                     static_cast<double*>(px) + p * out_plane, g, offs.data());
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
