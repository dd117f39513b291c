// max/min along one dim with the index where it is reached (torch.max(x, dim), argmax, argmin),
// for float32 and float64. As in PyTorch, NaN is the extreme (the first NaN wins) and ties go to
// the first index.
#include "common.h"

#include <cmath>

namespace flambeau {
namespace {

// True when v replaces the best value so far, scanning in index order.
template <class T, bool Max>
inline bool better(T v, T best) {
  if (best != best) return false;  // a NaN already found stays
  if (v != v) return true;
  return Max ? v > best : v < best;
}

constexpr index_t kArgBlock = 128;

template <class T, bool Max>
void run_arg(const py::array& x, py::array* values, py::array& indices, int dim, bool keepdim) {
  const index_t item = x.itemsize();
  const int nd = static_cast<int>(x.ndim());
  const index_t R = x.shape(dim), rs = x.strides(dim) / item;
  // Kept dims: sizes, input strides, value and index strides (elements), innermost last by input stride.
  index_t size[64], xs[64], vs[64], is[64];
  int nk = 0, od = 0;
  for (int d = 0; d < nd; ++d) {
    if (d == dim) {
      if (keepdim) ++od;
      continue;
    }
    if (x.shape(d) != 1) {
      size[nk] = x.shape(d);
      xs[nk] = x.strides(d) / item;
      vs[nk] = values ? values->strides(od) / item : 0;
      is[nk] = indices.strides(od) / 8;
      ++nk;
    }
    ++od;
  }
  for (int i = 1; i < nk; ++i) {  // largest input stride outermost
    for (int j = i; j > 0 && std::llabs(xs[j - 1]) < std::llabs(xs[j]); --j) {
      std::swap(size[j - 1], size[j]);
      std::swap(xs[j - 1], xs[j]);
      std::swap(vs[j - 1], vs[j]);
      std::swap(is[j - 1], is[j]);
    }
  }
  const T* px = static_cast<const T*>(x.data());
  T* pv = values ? static_cast<T*>(values->mutable_data()) : nullptr;
  std::int64_t* pi = static_cast<std::int64_t*>(indices.mutable_data());
  const index_t M = indices.size();
  // Outputs in blocks along the innermost kept dim when the reduced dim is not the innermost,
  // so each step over the reduced dim reads neighbouring elements.
  const bool blocked = nk > 0 && std::llabs(xs[nk - 1]) < std::llabs(rs);
  const index_t k = blocked ? size[nk - 1] : 1;
  const int outer_dims = blocked ? nk - 1 : nk;
  const index_t rows = M / k, blocks = (k + kArgBlock - 1) / kArgBlock;
  const index_t ks = blocked ? xs[nk - 1] : 0;
  const int nthreads = threads_for(M * R);
  py::gil_scoped_release nogil;
#pragma omp parallel for schedule(static) num_threads(nthreads) if (nthreads > 1)
  for (index_t t = 0; t < rows * blocks; ++t) {
    const index_t row = t / blocks, j0 = (t % blocks) * kArgBlock, len = std::min(kArgBlock, k - j0);
    index_t xo = 0, vo = 0, io = 0, rem = row;
    for (int d = outer_dims - 1; d >= 0; --d) {
      const index_t i = rem % size[d];
      rem /= size[d];
      xo += i * xs[d];
      vo += i * vs[d];
      io += i * is[d];
    }
    T best[kArgBlock];
    std::int64_t where[kArgBlock];
    const T* base = px + xo + j0 * ks;
    for (index_t j = 0; j < len; ++j) {
      best[j] = base[j * ks];
      where[j] = 0;
    }
    for (index_t r = 1; r < R; ++r) {
      const T* p = base + r * rs;
      for (index_t j = 0; j < len; ++j) {
        const T v = p[j * ks];
        if (better<T, Max>(v, best[j])) {
          best[j] = v;
          where[j] = r;
        }
      }
    }
    const index_t vstep = blocked ? vs[nk - 1] : 0, istep = blocked ? is[nk - 1] : 0;
    for (index_t j = 0; j < len; ++j) {
      if (pv) pv[vo + (j0 + j) * vstep] = best[j];
      pi[io + (j0 + j) * istep] = where[j];
    }
  }
}

void check_out(const py::array& out, const py::array& x, int dim, bool keepdim, const char* name) {
  bool ok = out.ndim() == x.ndim() - (keepdim ? 0 : 1);
  int od = 0;
  for (int d = 0; ok && d < x.ndim(); ++d) {
    if (d == dim) {
      if (keepdim) ok = out.shape(od++) == 1;
      continue;
    }
    ok = out.shape(od++) == x.shape(d);
  }
  if (!ok) throw py::value_error(std::string("arg reduce kernel: ") + name + " has shape " + shape_str(out) +
                                 ", which is not input's shape reduced over dim " + std::to_string(dim));
  check_in_bounds(out, name, true);
}

// values may be None (argmax / argmin). Returns False for layouts left to numpy.
bool arg_reduce(bool is_max, const py::array& x, const py::object& values_obj, py::array& indices, int dim,
                bool keepdim) {
  const DType dt = dtype_of(x);
  if (dt != DType::f32 && dt != DType::f64) {
    throw py::type_error(std::string("arg reduce kernel: input must be float32 or float64, got ") + dtype_name(dt));
  }
  if (dtype_of(indices) != DType::i64) throw py::type_error("arg reduce kernel: indices must be int64");
  if (dim < 0 || dim >= x.ndim()) throw py::index_error("arg reduce kernel: dim " + std::to_string(dim) + " out of range");
  if (x.shape(dim) == 0) throw py::value_error("arg reduce kernel: cannot reduce an empty dim");
  py::array values;
  const bool has_values = !values_obj.is_none();
  if (has_values) {
    if (!py::isinstance<py::array>(values_obj)) throw py::type_error("arg reduce kernel: values must be an array");
    values = py::reinterpret_borrow<py::array>(values_obj);
    if (dtype_of(values) != dt) throw py::type_error("arg reduce kernel: values must have input's dtype");
    check_out(values, x, dim, keepdim, "values");
  }
  check_out(indices, x, dim, keepdim, "indices");
  check_in_bounds(x, "input", false);
  if (!is_aligned(x) || !is_aligned(indices) || (has_values && !is_aligned(values))) return false;
  if (indices.size() > 1 && has_internal_overlap(indices)) return false;
  if (has_values && ((values.size() > 1 && has_internal_overlap(values)) || may_overlap(values, x) ||
                     may_overlap(values, indices))) {
    return false;
  }
  if (may_overlap(indices, x)) return false;
  if (indices.size() == 0) return true;
  py::array* pv = has_values ? &values : nullptr;
  if (dt == DType::f32) {
    if (is_max) run_arg<float, true>(x, pv, indices, dim, keepdim);
    else run_arg<float, false>(x, pv, indices, dim, keepdim);
  } else {
    if (is_max) run_arg<double, true>(x, pv, indices, dim, keepdim);
    else run_arg<double, false>(x, pv, indices, dim, keepdim);
  }
  return true;
}

void register_argreduce(py::module_& m) {
  m.def("arg_reduce", &arg_reduce, py::arg("is_max"), py::arg("input"), py::arg("values"), py::arg("indices"),
        py::arg("dim"), py::arg("keepdim"),
        "values (or None) and int64 indices of the max (is_max) or min of input along dim (non-negative), "
        "float32/float64. Returns False when the layout is left to numpy.");
}

}  // namespace

FLAMBEAU_REGISTER(register_argreduce);

}  // namespace flambeau
