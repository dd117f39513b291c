// Index-map gathers over the last three dims, for the padding ops flambeau-nn declares
// (nn_reflection_pad, nn_replication_pad and their backward ops) and nearest interpolation.
//
// The input is viewed as (planes, I0, I1, I2) and the output as (planes, O0, O1, O2); map d gives,
// for each output position along dim d, the input position it reads. Reflect and replicate padding,
// and nearest resampling, are all such maps (fewer padded dims are size-1 dims with the map {0}).
// The forward copies elements (any dtype: by item size); the backward adds each output gradient
// into the input position it was read from (float32/float64), one plane per thread so that no two
// threads add into the same element.
//
// The Python side (flambeau_cpu/kernels/nn_padding.py) builds the maps; here every size, layout and
// map entry is checked, and the maps are copied, with the GIL held, before any pointer is used.
#include <array>
#include <cstdint>
#include <vector>

#include "common.h"

namespace flambeau {
namespace {

struct Maps {
  std::array<index_t, 3> in{};
  std::array<index_t, 3> out{};
  std::array<std::vector<index_t>, 3> map;
};

void* checked(const char* op, const py::array& a, const char* name, index_t size, bool written) {
  if (!c_contiguous(a) || !is_aligned(a)) {
    throw py::value_error(std::string(op) + ": " + name + " must be C-contiguous and aligned");
  }
  if (static_cast<index_t>(a.size()) != size) {
    throw py::value_error(std::string(op) + ": " + name + " has " + std::to_string(a.size()) + " elements, expected " +
                          std::to_string(size));
  }
  check_in_bounds(a, name, written);
  return written ? const_cast<py::array&>(a).mutable_data() : const_cast<void*>(a.data());
}

// Copies the three int64 maps, checking each entry against its input size.
Maps read_maps(const char* op, const std::array<index_t, 3>& in_sizes, const std::vector<py::array>& maps) {
  if (maps.size() != 3) throw py::value_error(std::string(op) + ": expected 3 index maps");
  Maps m;
  for (int d = 0; d < 3; ++d) {
    const py::array& a = maps[static_cast<std::size_t>(d)];
    if (in_sizes[d] <= 0) throw py::value_error(std::string(op) + ": input sizes must be positive");
    if (dtype_of(a) != DType::i64 || a.ndim() != 1) throw py::type_error(std::string(op) + ": maps must be 1-D int64");
    if (!c_contiguous(a) || !is_aligned(a)) throw py::value_error(std::string(op) + ": maps must be contiguous");
    check_in_bounds(a, "map", false);
    const auto* p = static_cast<const std::int64_t*>(a.data());
    m.in[d] = in_sizes[d];
    m.out[d] = static_cast<index_t>(a.size());
    m.map[d].assign(p, p + a.size());
    for (index_t v : m.map[d]) {
      if (v < 0 || v >= in_sizes[d]) {
        throw py::index_error(std::string(op) + ": map entry " + std::to_string(v) + " is out of range for size " +
                              std::to_string(in_sizes[d]));
      }
    }
  }
  return m;
}

template <class T>
void gather_rows(const T* x, T* y, const Maps& m, index_t begin, index_t end) {
  const index_t I1 = m.in[1], I2 = m.in[2], O0 = m.out[0], O1 = m.out[1], O2 = m.out[2];
  const index_t in_plane = m.in[0] * I1 * I2;
  const index_t* m2 = m.map[2].data();
  for (index_t r = begin; r < end; ++r) {  // r = (plane, a, b) over the output's rows
    const index_t b = r % O1, a = (r / O1) % O0, p = r / (O1 * O0);
    const T* xr = x + p * in_plane + (m.map[0][a] * I1 + m.map[1][b]) * I2;
    T* yr = y + r * O2;
    for (index_t c = 0; c < O2; ++c) yr[c] = xr[m2[c]];
  }
}

template <class T>
FLAMBEAU_CLONES void scatter_planes(const T* g, T* gx, const Maps& m, index_t begin, index_t end) {
  const index_t I1 = m.in[1], I2 = m.in[2], O0 = m.out[0], O1 = m.out[1], O2 = m.out[2];
  const index_t in_plane = m.in[0] * I1 * I2, out_plane = O0 * O1 * O2;
  const index_t* m2 = m.map[2].data();
  for (index_t p = begin; p < end; ++p) {
    T* xp = gx + p * in_plane;
    std::fill(xp, xp + in_plane, T(0));
    const T* gp = g + p * out_plane;
    for (index_t a = 0; a < O0; ++a) {
      for (index_t b = 0; b < O1; ++b) {
        T* xr = xp + (m.map[0][a] * I1 + m.map[1][b]) * I2;
        const T* gr = gp + (a * O1 + b) * O2;
        for (index_t c = 0; c < O2; ++c) xr[m2[c]] += gr[c];
      }
    }
  }
}

// out[p, a, b, c] = x[p, map0[a], map1[b], map2[c]], for arrays of any dtype.
void nn_index_gather(const py::array& x, const py::array& out, index_t planes, std::array<index_t, 3> in_sizes,
                     const std::vector<py::array>& maps) {
  const char* op = "nn_index_gather";
  if (planes < 0) throw py::value_error("nn_index_gather: bad sizes");
  const Maps m = read_maps(op, in_sizes, maps);
  if (!x.dtype().is(out.dtype())) throw py::type_error("nn_index_gather: input and output dtypes differ");
  const index_t rows = planes * m.out[0] * m.out[1];
  const void* px = checked(op, x, "input", planes * m.in[0] * m.in[1] * m.in[2], false);
  void* py_ = checked(op, out, "output", rows * m.out[2], true);
  if (may_overlap(x, out)) throw py::value_error("nn_index_gather: input and output overlap");
  const auto itemsize = x.itemsize();
  const index_t per_chunk = std::max<index_t>(1, kParallelChunk / std::max<index_t>(1, m.out[2]));
  py::gil_scoped_release nogil;
  parallel_chunks(rows, per_chunk, [&](index_t begin, index_t end) {
    switch (itemsize) {
      case 1: gather_rows(static_cast<const std::uint8_t*>(px), static_cast<std::uint8_t*>(py_), m, begin, end); break;
      case 2: gather_rows(static_cast<const std::uint16_t*>(px), static_cast<std::uint16_t*>(py_), m, begin, end); break;
      case 4: gather_rows(static_cast<const std::uint32_t*>(px), static_cast<std::uint32_t*>(py_), m, begin, end); break;
      case 8: gather_rows(static_cast<const std::uint64_t*>(px), static_cast<std::uint64_t*>(py_), m, begin, end); break;
      default: {
        const auto* xs = static_cast<const char*>(px);
        auto* ys = static_cast<char*>(py_);
        const index_t I1 = m.in[1], I2 = m.in[2], O0 = m.out[0], O1 = m.out[1], O2 = m.out[2];
        for (index_t r = begin; r < end; ++r) {
          const index_t b = r % O1, a = (r / O1) % O0, p = r / (O1 * O0);
          const index_t base = p * m.in[0] * I1 * I2 + (m.map[0][a] * I1 + m.map[1][b]) * I2;
          for (index_t c = 0; c < O2; ++c) {
            std::memcpy(ys + (r * O2 + c) * itemsize, xs + (base + m.map[2][c]) * itemsize, itemsize);
          }
        }
      }
    }
  }, rows * m.out[2]);
}

// grad_input[p, i, j, k] = sum of grad_output[p, a, b, c] over map0[a] = i, map1[b] = j, map2[c] = k.
void nn_index_scatter_add(const py::array& g, const py::array& gx, index_t planes, std::array<index_t, 3> in_sizes,
                          const std::vector<py::array>& maps) {
  const char* op = "nn_index_scatter_add";
  if (planes < 0) throw py::value_error("nn_index_scatter_add: bad sizes");
  const Maps m = read_maps(op, in_sizes, maps);
  const DType dt = dtype_of(g);
  if ((dt != DType::f32 && dt != DType::f64) || dtype_of(gx) != dt) {
    throw py::type_error("nn_index_scatter_add: expected float32 or float64 arrays of one dtype");
  }
  const index_t in_plane = m.in[0] * m.in[1] * m.in[2], out_plane = m.out[0] * m.out[1] * m.out[2];
  const void* pg = checked(op, g, "grad_output", planes * out_plane, false);
  void* px = checked(op, gx, "grad_input", planes * in_plane, true);
  if (may_overlap(g, gx)) throw py::value_error("nn_index_scatter_add: input and output overlap");
  py::gil_scoped_release nogil;
  parallel_chunks(planes, 1, [&](index_t begin, index_t end) {
    if (dt == DType::f32)
      scatter_planes(static_cast<const float*>(pg), static_cast<float*>(px), m, begin, end);
    else
      scatter_planes(static_cast<const double*>(pg), static_cast<double*>(px), m, begin, end);
  }, planes * (in_plane + out_plane));
}

void register_nn_padding(py::module_& m) {
  m.def("nn_index_gather", &nn_index_gather, "out[p, a, b, c] = x[p, map0[a], map1[b], map2[c]] (any dtype).");
  m.def("nn_index_scatter_add", &nn_index_scatter_add, "The gradient of nn_index_gather (float32/float64).");
}

}  // namespace
}  // namespace flambeau

FLAMBEAU_REGISTER(flambeau::register_nn_padding);
