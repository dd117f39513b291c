// The embedding lookup and its backward pass, for the ops flambeau-nn declares (nn_embedding,
// nn_embedding_backward).
//
// Forward copies whole rows (any dtype: rows are moved as bytes). Each index is read once, checked
// and used in the same step, so an index that another thread changes while the GIL is released can
// never send a read out of bounds; a bad index makes the call raise IndexError("index out of range
// in self") after the loop.
//
// Backward first copies the indices (checking each) into a private array, which every later pass
// reads. The weight gradient's rows are split between threads statically: each thread walks all
// indices in order and adds only the rows it owns, so every row is summed in index order whatever
// the thread count (deterministic, and no two threads write one row).
#include <atomic>
#include <cstring>
#include <vector>

#include "common.h"

namespace flambeau {
namespace {

void* checked(const char* op, py::array a, const char* name, bool written) {
  if (!c_contiguous(a) || !is_aligned(a)) {
    throw py::value_error(std::string(op) + ": " + name + " must be C-contiguous and aligned");
  }
  check_in_bounds(a, name, written);
  return written ? a.mutable_data() : const_cast<void*>(a.data());
}

template <class I>
bool gather_rows(const I* idx, index_t n, const char* w, char* out, index_t rows, std::size_t row_bytes) {
  std::atomic<bool> bad{false};
  parallel_chunks(n, std::max<index_t>(1, static_cast<index_t>(kParallelChunk * 4 / std::max<std::size_t>(row_bytes, 1))),
                  [&](index_t begin, index_t end) {
    for (index_t i = begin; i < end; ++i) {
      const index_t k = static_cast<index_t>(idx[i]);  // read once: checked and used as this value
      if (k < 0 || k >= rows) {
        bad.store(true, std::memory_order_relaxed);
        std::memset(out + i * row_bytes, 0, row_bytes);
        continue;
      }
      std::memcpy(out + i * row_bytes, w + k * row_bytes, row_bytes);
    }
  }, static_cast<index_t>(n * row_bytes / 4));
  return !bad.load();
}

void nn_embedding(const py::array& weight, const py::array& indices, const py::array& out) {
  const char* op = "nn_embedding";
  if (weight.ndim() != 2) throw py::value_error("nn_embedding: weight must be 2-D");
  const index_t rows = weight.shape(0), dim = weight.shape(1);
  const index_t n = static_cast<index_t>(indices.size());
  if (static_cast<index_t>(out.size()) != n * dim || out.itemsize() != weight.itemsize() ||
      !out.dtype().is(weight.dtype())) {
    throw py::value_error("nn_embedding: out does not match the indices and weight");
  }
  const DType it = dtype_of(indices);
  const bool i32 = indices.dtype().is(py::dtype::of<std::int32_t>());
  if (it != DType::i64 && !i32) throw py::type_error("nn_embedding: indices must be int64 or int32");
  const char* w = static_cast<const char*>(checked(op, weight, "weight", false));
  const void* idx = checked(op, indices, "indices", false);
  char* o = static_cast<char*>(checked(op, out, "out", true));
  if (may_overlap(out, weight) || may_overlap(out, indices)) throw py::value_error("nn_embedding: out overlaps an input");
  const std::size_t row_bytes = static_cast<std::size_t>(dim) * weight.itemsize();
  bool ok;
  {
    py::gil_scoped_release nogil;
    ok = i32 ? gather_rows(static_cast<const std::int32_t*>(idx), n, w, o, rows, row_bytes)
             : gather_rows(static_cast<const std::int64_t*>(idx), n, w, o, rows, row_bytes);
  }
  if (!ok) throw py::index_error("index out of range in self");
}

template <class T>
FLAMBEAU_CLONES void add_rows(const std::vector<index_t>& idx, const T* g, T* out, const std::vector<T>* scale,
                              index_t dim, index_t padding, index_t lo, index_t hi) {
  const index_t n = static_cast<index_t>(idx.size());
  for (index_t i = 0; i < n; ++i) {
    const index_t k = idx[i];
    if (k < lo || k >= hi || k == padding) continue;
    const T* src = g + i * dim;
    T* dst = out + k * dim;
    if (scale != nullptr) {
      const T s = (*scale)[k];
#pragma omp simd
      for (index_t j = 0; j < dim; ++j) dst[j] += src[j] * s;
    } else {
#pragma omp simd
      for (index_t j = 0; j < dim; ++j) dst[j] += src[j];
    }
  }
}

template <class T>
void embedding_backward_typed(const std::vector<index_t>& idx, const T* g, T* out, index_t rows, index_t dim,
                              index_t padding, bool by_freq) {
  std::vector<T> scale;
  if (by_freq) {
    std::vector<index_t> counts(static_cast<std::size_t>(rows), 0);
    for (index_t k : idx) counts[k] += 1;
    scale.resize(static_cast<std::size_t>(rows));
    for (index_t r = 0; r < rows; ++r) scale[r] = counts[r] ? T(1) / static_cast<T>(counts[r]) : T(0);
  }
  const index_t n = static_cast<index_t>(idx.size());
  const int nthreads = static_cast<int>(std::max<index_t>(1, std::min<index_t>(threads_for(std::max(n, rows) * dim), rows)));
  parallel_team(nthreads, [&](int tid, int team) {
    index_t lo = 0, hi = 0;
    split_range(rows, tid, team, lo, hi);
    // Each thread zeroes its own rows: the (fresh) output's pages are first touched in parallel.
    if (hi > lo) std::memset(out + lo * dim, 0, static_cast<std::size_t>((hi - lo) * dim) * sizeof(T));
    add_rows(idx, g, out, by_freq ? &scale : nullptr, dim, padding, lo, hi);
  });
}

template <class I>
bool copy_indices(const I* src, index_t n, index_t rows, std::vector<index_t>& dst) {
  bool ok = true;
  for (index_t i = 0; i < n; ++i) {
    const index_t k = static_cast<index_t>(src[i]);
    if (k < 0 || k >= rows) {
      ok = false;
      dst[i] = -1;  // never added: outside every thread's rows
    } else {
      dst[i] = k;
    }
  }
  return ok;
}

// out ((rows, dim), any contents) = the sum of grad's rows at their indices; the padding row is left out.
void nn_embedding_backward(const py::array& grad, const py::array& indices, const py::array& out, index_t padding,
                           bool by_freq) {
  const char* op = "nn_embedding_backward";
  const DType dt = dtype_of(grad);
  if (dt != DType::f32 && dt != DType::f64) throw py::type_error("nn_embedding_backward: grad must be float32/64");
  if (out.ndim() != 2 || dtype_of(out) != dt) throw py::value_error("nn_embedding_backward: bad out");
  const index_t rows = out.shape(0), dim = out.shape(1);
  const index_t n = static_cast<index_t>(indices.size());
  if (static_cast<index_t>(grad.size()) != n * dim) throw py::value_error("nn_embedding_backward: grad size mismatch");
  const bool i32 = indices.dtype().is(py::dtype::of<std::int32_t>());
  if (dtype_of(indices) != DType::i64 && !i32) throw py::type_error("nn_embedding_backward: indices must be int64/int32");
  const void* g = checked(op, grad, "grad", false);
  const void* ip = checked(op, indices, "indices", false);
  void* o = checked(op, out, "out", true);
  if (may_overlap(out, grad)) throw py::value_error("nn_embedding_backward: out overlaps grad");
  std::vector<index_t> idx(static_cast<std::size_t>(n));
  bool ok;
  {
    py::gil_scoped_release nogil;
    ok = i32 ? copy_indices(static_cast<const std::int32_t*>(ip), n, rows, idx)
             : copy_indices(static_cast<const std::int64_t*>(ip), n, rows, idx);
    if (ok) {
      if (dt == DType::f32)
        embedding_backward_typed(idx, static_cast<const float*>(g), static_cast<float*>(o), rows, dim, padding, by_freq);
      else
        embedding_backward_typed(idx, static_cast<const double*>(g), static_cast<double*>(o), rows, dim, padding,
                                 by_freq);
    }
  }
  if (!ok) throw py::index_error("index out of range in self");
}

void register_nn_embedding(py::module_& m) {
  m.def("nn_embedding", &nn_embedding, "Rows of weight at indices into out (raises IndexError for a bad index).");
  m.def("nn_embedding_backward", &nn_embedding_backward, "Adds grad's rows into out at their indices.");
}

}  // namespace
}  // namespace flambeau

FLAMBEAU_REGISTER(flambeau::register_nn_embedding);
