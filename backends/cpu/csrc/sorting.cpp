// sort, topk and median along the last dim, threaded over rows (and, for topk, within a long row).
//
// Every element gets an unsigned key that orders like PyTorch compares: NaN above +inf, -0.0 equal to
// +0.0, and, for a descending order, the bitwise complement. Ordering by (key, position) is then the
// stable order, which is what both ops return:
// - sort: short rows sort (key, position) pairs; long rows run an LSD radix sort on the keys (stable by
//   construction), skipping the byte passes in which every key has the same digit;
// - topk: one pass keeps the k best (key, position) pairs in a heap; a long row is split among the
//   threads and their heaps merged. Large k falls back to sorting the row.
//
// The caller (flambeau_cpu/kernels/sorting.py) hands C-contiguous arrays; every shape, dtype and bound
// is checked here again before any write.
#include <cmath>
#include <type_traits>
#include <vector>

#include "common.h"

namespace flambeau {
namespace {

enum class Kind { f32, f64, i32, i64 };

Kind kind_of(const py::array& a, const char* name) {
  const auto dt = a.dtype();
  const char k = dt.kind();
  const auto size = dt.itemsize();
  if (k == 'f' && size == 4) return Kind::f32;
  if (k == 'f' && size == 8) return Kind::f64;
  if (k == 'i' && size == 4) return Kind::i32;
  if (k == 'i' && size == 8) return Kind::i64;
  throw py::type_error(std::string(name) + ": expected float32, float64, int32 or int64");
}

// -- keys --------------------------------------------------------------------------------------

inline std::uint32_t key_of(float v) {
  if (std::isnan(v)) return 0xFFFFFFFFu;
  if (v == 0.0f) return 0x80000000u;  // -0.0 and +0.0 compare equal
  std::uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

inline std::uint64_t key_of(double v) {
  if (std::isnan(v)) return ~std::uint64_t(0);
  if (v == 0.0) return std::uint64_t(1) << 63;
  std::uint64_t u;
  std::memcpy(&u, &v, sizeof u);
  return (u >> 63) ? ~u : (u | (std::uint64_t(1) << 63));
}

inline std::uint32_t key_of(std::int32_t v) { return static_cast<std::uint32_t>(v) ^ 0x80000000u; }
inline std::uint64_t key_of(std::int64_t v) { return static_cast<std::uint64_t>(v) ^ (std::uint64_t(1) << 63); }

template <class T>
using key_t = decltype(key_of(T()));

// -- sort ----------------------------------------------------------------------------------------

constexpr index_t kSmallRow = 256;

// Positions 0..n-1 of row `x` in ascending key order (ties by position); `flip` complements the keys.
template <class T>
struct RowSorter {
  using K = key_t<T>;
  std::vector<K> keys, keys_tmp;
  std::vector<std::uint32_t> pos, pos_tmp;
  std::vector<std::pair<K, std::uint32_t>> pairs;

  const std::uint32_t* run(const T* x, index_t n, bool flip) {
    const K mask = flip ? ~K(0) : K(0);
    if (n <= kSmallRow) {
      pairs.resize(n);
      for (index_t i = 0; i < n; ++i) pairs[i] = {key_of(x[i]) ^ mask, static_cast<std::uint32_t>(i)};
      std::sort(pairs.begin(), pairs.end());
      pos.resize(n);
      for (index_t i = 0; i < n; ++i) pos[i] = pairs[i].second;
      return pos.data();
    }
    keys.resize(n);
    keys_tmp.resize(n);
    pos.resize(n);
    pos_tmp.resize(n);
    constexpr int kBytes = sizeof(K);
    std::vector<index_t> hist(kBytes * 256, 0);
    for (index_t i = 0; i < n; ++i) {
      const K k = key_of(x[i]) ^ mask;
      keys[i] = k;
      pos[i] = static_cast<std::uint32_t>(i);
      for (int b = 0; b < kBytes; ++b) ++hist[b * 256 + ((k >> (8 * b)) & 0xFF)];
    }
    K* src = keys.data();
    K* dst = keys_tmp.data();
    std::uint32_t* psrc = pos.data();
    std::uint32_t* pdst = pos_tmp.data();
    for (int b = 0; b < kBytes; ++b) {
      index_t* h = &hist[b * 256];
      if (h[(src[0] >> (8 * b)) & 0xFF] == n) continue;  // every key has this digit: nothing moves
      index_t offset = 0;
      for (int d = 0; d < 256; ++d) {
        const index_t c = h[d];
        h[d] = offset;
        offset += c;
      }
      for (index_t i = 0; i < n; ++i) {
        const index_t at = h[(src[i] >> (8 * b)) & 0xFF]++;
        dst[at] = src[i];
        pdst[at] = psrc[i];
      }
      std::swap(src, dst);
      std::swap(psrc, pdst);
    }
    return psrc;
  }
};

template <class T>
void sort_rows(const T* x, T* values, std::int64_t* indices, index_t rows, index_t n, bool descending) {
  auto one_row = [&](RowSorter<T>& sorter, index_t r) {
    const T* row = x + r * n;
    const std::uint32_t* order = sorter.run(row, n, descending);
    T* v = values + r * n;
    std::int64_t* ix = indices + r * n;
    for (index_t i = 0; i < n; ++i) {
      v[i] = row[order[i]];
      ix[i] = order[i];
    }
  };
  // Chunks of whole rows, about kParallelChunk elements each, a contiguous run of them per thread.
  const index_t per_chunk = std::max<index_t>(1, kParallelChunk / n);
  parallel_chunks(
      rows, per_chunk,
      [&](index_t begin, index_t end) {
        RowSorter<T> sorter;
        for (index_t r = begin; r < end; ++r) one_row(sorter, r);
      },
      rows * n);
}

// -- topk -----------------------------------------------------------------------------------------

template <class K>
struct Entry {
  K key;
  index_t pos;
};

// a before b: a larger key, or an equal key found earlier.
template <class K>
inline bool better(const Entry<K>& a, const Entry<K>& b) {
  return a.key > b.key || (a.key == b.key && a.pos < b.pos);
}

// The k best entries of x[begin, end) (keys complemented when `flip`), as a heap with the worst on top.
template <class T>
void best_k(const T* x, index_t begin, index_t end, index_t k, bool flip, std::vector<Entry<key_t<T>>>& heap) {
  using K = key_t<T>;
  const K mask = flip ? ~K(0) : K(0);
  auto cmp = [](const Entry<K>& a, const Entry<K>& b) { return better(a, b); };
  heap.clear();
  index_t i = begin;
  for (; i < end && static_cast<index_t>(heap.size()) < k; ++i) {
    heap.push_back({key_of(x[i]) ^ mask, i});
    std::push_heap(heap.begin(), heap.end(), cmp);
  }
  if (heap.empty()) return;
  K worst = heap.front().key;
  for (; i < end; ++i) {
    const K key = key_of(x[i]) ^ mask;
    if (key <= worst) continue;  // not better (equal keys found later lose the tie)
    std::pop_heap(heap.begin(), heap.end(), cmp);
    heap.back() = {key, i};
    std::push_heap(heap.begin(), heap.end(), cmp);
    worst = heap.front().key;
  }
}

template <class T>
void write_best(const T* row, std::vector<Entry<key_t<T>>>& heap, index_t k, T* values, std::int64_t* indices) {
  using K = key_t<T>;
  std::sort(heap.begin(), heap.end(), [](const Entry<K>& a, const Entry<K>& b) { return better(a, b); });
  for (index_t j = 0; j < k; ++j) {
    values[j] = row[heap[j].pos];
    indices[j] = heap[j].pos;
  }
}

constexpr index_t kTopkParallelMin = index_t(1) << 18;  // ~0.25 ms of heap pass

template <class T>
void topk_rows(const T* x, T* values, std::int64_t* indices, index_t rows, index_t n, index_t k, bool largest) {
  using K = key_t<T>;
  const bool flip = !largest;  // smallest first: complemented keys, then "largest" again
  const bool by_heap = k <= 64 || k * 16 <= n;
  const int threads = threads_for(rows * n);
  if (by_heap && rows < threads && n >= 16 * kParallelChunk) {
    // Few long rows: each stretch of a row keeps its own k best, and the heaps are merged.
    for (index_t r = 0; r < rows; ++r) {
      const T* row = x + r * n;
      const index_t pieces = n / kParallelChunk;
      std::vector<std::vector<Entry<K>>> partial(pieces);
#pragma omp parallel for schedule(static) num_threads(threads)
      for (index_t p = 0; p < pieces; ++p) {
        index_t begin, end;
        split_range(n, static_cast<int>(p), static_cast<int>(pieces), begin, end);
        best_k(row, begin, end, k, flip, partial[p]);
      }
      std::vector<Entry<K>> merged;
      for (auto& part : partial) merged.insert(merged.end(), part.begin(), part.end());
      write_best(row, merged, k, values + r * k, indices + r * k);
    }
    return;
  }
  auto one_row = [&](std::vector<Entry<K>>& heap, RowSorter<T>& sorter, index_t r) {
    const T* row = x + r * n;
    if (by_heap) {
      best_k(row, 0, n, k, flip, heap);
      write_best(row, heap, k, values + r * k, indices + r * k);
      return;
    }
    const std::uint32_t* order = sorter.run(row, n, largest);
    for (index_t j = 0; j < k; ++j) {
      values[r * k + j] = row[order[j]];
      indices[r * k + j] = order[j];
    }
  };
  // The heap pass streams at about 2 ns per element: thread it only for a quarter millisecond or more.
  if (by_heap && rows * n < kTopkParallelMin) {
    std::vector<Entry<K>> heap;
    RowSorter<T> sorter;
    for (index_t r = 0; r < rows; ++r) one_row(heap, sorter, r);
    return;
  }
  const index_t per_chunk = std::max<index_t>(1, kParallelChunk / n);
  parallel_chunks(
      rows, per_chunk,
      [&](index_t begin, index_t end) {
        std::vector<Entry<K>> heap;
        RowSorter<T> sorter;
        for (index_t r = begin; r < end; ++r) one_row(heap, sorter, r);
      },
      rows * n);
}

// -- median -------------------------------------------------------------------------------------

// The median of each row (the element of rank (m - 1) / 2 in the stable order, m counting the
// elements that take part) and its position, by selection rather than a sort. A row holding NaN has
// median NaN at its first NaN; with `ignore_nan` (nanmedian) NaN takes no part, and a row of NaN
// only gives its first NaN. NaN's key is the largest, so the selection never reaches it when ignored.
template <class T>
void median_rows(const T* x, T* values, std::int64_t* indices, index_t rows, index_t n, bool ignore_nan) {
  using K = key_t<T>;
  auto one_row = [&](std::vector<std::pair<K, std::uint32_t>>& pairs, index_t r) {
    const T* row = x + r * n;
    index_t first_nan = -1, nans = 0;
    if (std::is_floating_point<T>::value) {
      for (index_t i = 0; i < n; ++i) {
        if (row[i] != row[i]) {
          if (first_nan < 0) first_nan = i;
          ++nans;
        }
      }
    }
    if (first_nan >= 0 && (!ignore_nan || nans == n)) {
      values[r] = row[first_nan];
      indices[r] = first_nan;
      return;
    }
    const index_t counted = n - (ignore_nan ? nans : 0);
    pairs.resize(n);
    for (index_t i = 0; i < n; ++i) pairs[i] = {key_of(row[i]), static_cast<std::uint32_t>(i)};
    const auto kth = pairs.begin() + (counted - 1) / 2;
    std::nth_element(pairs.begin(), kth, pairs.end());
    values[r] = row[kth->second];
    indices[r] = kth->second;
  };
  const index_t per_chunk = std::max<index_t>(1, kParallelChunk / n);
  parallel_chunks(
      rows, per_chunk,
      [&](index_t begin, index_t end) {
        std::vector<std::pair<K, std::uint32_t>> pairs;
        for (index_t r = begin; r < end; ++r) one_row(pairs, r);
      },
      rows * n);
}

// -- unique of integers over a dense range ------------------------------------------------------

// The sorted unique values of integers whose span max - min is small next to their count (labels,
// class ids, token ids: the common case of unique) come from a counting pass instead of a sort: one
// pass for min and max, one that counts each value, one over the span that lists the values present
// and numbers them, and, for the inverse, one that looks each element's number up. The result is the
// sort's exactly (integers have no -0.0 or NaN to tell apart).
template <class T>
void dense_min_max(const T* x, index_t n, T& lo, T& hi) {
  T a = x[0], b = x[0];
  for (index_t i = 1; i < n; ++i) {
    a = x[i] < a ? x[i] : a;
    b = x[i] > b ? x[i] : b;
  }
  lo = a;
  hi = b;
}

// Unsigned distance from lo: exact for every value of every integer type (two's complement).
template <class T>
inline std::uint64_t offset_of(T v, T lo) {
  return static_cast<std::uint64_t>(static_cast<std::int64_t>(v)) - static_cast<std::uint64_t>(static_cast<std::int64_t>(lo));
}

template <class T>
py::object unique_dense_typed(const py::array& input, std::int64_t* inverse, std::uint64_t max_span) {
  const T* x = static_cast<const T*>(input.data());
  const index_t n = static_cast<index_t>(input.size());
  T lo, hi;
  {
    py::gil_scoped_release nogil;
    dense_min_max(x, n, lo, hi);
  }
  const std::uint64_t span = offset_of(hi, lo);  // the number of slots less one
  if (span >= max_span) return py::none();
  std::vector<std::int64_t> slots(static_cast<std::size_t>(span) + 1, 0);
  index_t k = 0;
  bool raced = false;
  {
    py::gil_scoped_release nogil;
    // Each slot is checked again: another thread may write the input between the passes.
    for (index_t i = 0; i < n; ++i) {
      const std::uint64_t at = offset_of(x[i], lo);
      if (at > span) {
        raced = true;
        break;
      }
      ++slots[at];
    }
    if (!raced)
      for (const std::int64_t c : slots) k += c != 0;
  }
  if (raced) return py::none();  // the sort takes it
  py::array_t<T> values(k);
  py::array_t<std::int64_t> counts(k);
  T* v = values.mutable_data();
  std::int64_t* c = counts.mutable_data();
  {
    py::gil_scoped_release nogil;
    index_t j = 0;
    for (std::uint64_t s = 0; s <= span; ++s) {
      if (slots[s] == 0) continue;
      v[j] = static_cast<T>(static_cast<std::uint64_t>(static_cast<std::int64_t>(lo)) + s);
      c[j] = slots[s];
      slots[s] = j++;  // from here on: the value's number among the unique ones
    }
    if (inverse) {
      parallel_chunks(n, kParallelChunk, [&](index_t begin, index_t end) {
        for (index_t i = begin; i < end; ++i) {
          const std::uint64_t at = offset_of(x[i], lo);
          inverse[i] = at <= span ? slots[at] : -1;  // -1 only for an input written meanwhile
        }
      });
    }
  }
  return py::make_tuple(values, counts);
}

// (values, counts) of a non-empty 1-D C-contiguous integer array, and its inverse into `inverse`
// (int64, same length) unless None; None, touching nothing, when max - min >= max_span.
py::object unique_dense_ints(const py::array& input, const py::object& inverse_obj, std::uint64_t max_span) {
  const auto dt = input.dtype();
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  if (input.ndim() != 1 || !c_contiguous(input) || !is_aligned(input)) {
    throw py::value_error("unique_dense_ints: expected a 1-D C-contiguous aligned array");
  }
  if (!(kind == 'i' || (kind == 'u' && size < 8))) {
    throw py::type_error("unique_dense_ints: expected a signed integer array, or an unsigned one narrower than 64 bits");
  }
  const index_t n = static_cast<index_t>(input.size());
  if (n == 0) throw py::value_error("unique_dense_ints: the input must not be empty");
  check_in_bounds(input, "input", false);
  std::int64_t* inverse = nullptr;
  if (!inverse_obj.is_none()) {
    py::array inv = inverse_obj.cast<py::array>();
    if (inv.ndim() != 1 || inv.shape(0) != n || dtype_of(inv) != DType::i64 || !c_contiguous(inv) ||
        !is_aligned(inv)) {
      throw py::value_error("unique_dense_ints: inverse must be a C-contiguous int64 array of the input's length");
    }
    check_in_bounds(inv, "inverse", true);
    if (may_overlap(input, inv)) throw py::value_error("unique_dense_ints: inverse must not overlap the input");
    inverse = static_cast<std::int64_t*>(inv.mutable_data());
  }
  if (kind == 'u') {
    if (size == 1) return unique_dense_typed<std::uint8_t>(input, inverse, max_span);
    if (size == 2) return unique_dense_typed<std::uint16_t>(input, inverse, max_span);
    return unique_dense_typed<std::uint32_t>(input, inverse, max_span);
  }
  switch (size) {
    case 1: return unique_dense_typed<std::int8_t>(input, inverse, max_span);
    case 2: return unique_dense_typed<std::int16_t>(input, inverse, max_span);
    case 4: return unique_dense_typed<std::int32_t>(input, inverse, max_span);
    default: return unique_dense_typed<std::int64_t>(input, inverse, max_span);
  }
}

// -- entry points -----------------------------------------------------------------------------------

void check_rows(const char* name, const py::array& input, const py::array& values, const py::array& indices,
                index_t n, index_t width) {
  if (input.ndim() < 1 || input.shape(input.ndim() - 1) != n) {
    throw py::value_error(std::string(name) + ": n must be the size of the input's last dim");
  }
  if (n >= (index_t(1) << 32)) throw py::value_error(std::string(name) + ": rows longer than 2**32 elements");
  const index_t rows = n ? static_cast<index_t>(input.size()) / n : 0;
  if (values.ndim() != input.ndim() || indices.ndim() != input.ndim()) {
    throw py::value_error(std::string(name) + ": values and indices must have the input's number of dims");
  }
  for (py::ssize_t d = 0; d < input.ndim(); ++d) {
    const index_t want = d == input.ndim() - 1 ? width : input.shape(d);
    if (values.shape(d) != want || indices.shape(d) != want) {
      throw py::value_error(std::string(name) + ": values/indices have the wrong shape");
    }
  }
  (void)rows;
  for (const py::array* a : {&input, &values, &indices}) {
    if (!(a->flags() & py::array::c_style) || !is_aligned(*a)) {
      throw py::value_error(std::string(name) + ": expected C-contiguous aligned arrays");
    }
  }
  if (values.dtype().kind() != input.dtype().kind() || values.dtype().itemsize() != input.dtype().itemsize()) {
    throw py::type_error(std::string(name) + ": values must have the input's dtype");
  }
  if (indices.dtype().kind() != 'i' || indices.dtype().itemsize() != 8) {
    throw py::type_error(std::string(name) + ": indices must be int64");
  }
  check_in_bounds(input, "input", false);
  check_in_bounds(values, "values", true);
  check_in_bounds(indices, "indices", true);
  if (may_overlap(input, values) || may_overlap(input, indices) || may_overlap(values, indices)) {
    throw py::value_error(std::string(name) + ": outputs must not overlap the input or each other");
  }
}

template <class Fn>
void by_kind(Kind kind, Fn&& fn) {
  switch (kind) {
    case Kind::f32: fn(float()); break;
    case Kind::f64: fn(double()); break;
    case Kind::i32: fn(std::int32_t()); break;
    case Kind::i64: fn(std::int64_t()); break;
  }
}

void sort_lastdim(const py::array& input, py::array& values, py::array& indices, bool descending, index_t n) {
  const Kind kind = kind_of(input, "sort_lastdim");
  check_rows("sort_lastdim", input, values, indices, n, n);
  if (input.size() == 0) return;
  const index_t rows = static_cast<index_t>(input.size()) / n;
  const void* src = input.data();
  void* vdst = values.mutable_data();
  auto* idst = static_cast<std::int64_t*>(indices.mutable_data());
  py::gil_scoped_release nogil;
  by_kind(kind, [&](auto tag) {
    using T = decltype(tag);
    sort_rows<T>(static_cast<const T*>(src), static_cast<T*>(vdst), idst, rows, n, descending);
  });
}

void topk_lastdim(const py::array& input, py::array& values, py::array& indices, index_t k, bool largest,
                  index_t n) {
  const Kind kind = kind_of(input, "topk_lastdim");
  if (k < 1 || k > n) throw py::value_error("topk_lastdim: k out of range");
  check_rows("topk_lastdim", input, values, indices, n, k);
  if (input.size() == 0) return;
  const index_t rows = static_cast<index_t>(input.size()) / n;
  const void* src = input.data();
  void* vdst = values.mutable_data();
  auto* idst = static_cast<std::int64_t*>(indices.mutable_data());
  py::gil_scoped_release nogil;
  by_kind(kind, [&](auto tag) {
    using T = decltype(tag);
    topk_rows<T>(static_cast<const T*>(src), static_cast<T*>(vdst), idst, rows, n, k, largest);
  });
}

void median_lastdim(const py::array& input, py::array& values, py::array& indices, bool ignore_nan, index_t n) {
  const Kind kind = kind_of(input, "median_lastdim");
  if (n < 1) throw py::value_error("median_lastdim: rows must not be empty");
  check_rows("median_lastdim", input, values, indices, n, 1);
  if (input.size() == 0) return;
  const index_t rows = static_cast<index_t>(input.size()) / n;
  const void* src = input.data();
  void* vdst = values.mutable_data();
  auto* idst = static_cast<std::int64_t*>(indices.mutable_data());
  py::gil_scoped_release nogil;
  by_kind(kind, [&](auto tag) {
    using T = decltype(tag);
    median_rows<T>(static_cast<const T*>(src), static_cast<T*>(vdst), idst, rows, n, ignore_nan);
  });
}

void register_sorting(py::module_& m) {
  m.def("median_lastdim", &median_lastdim, py::arg("input"), py::arg("values"), py::arg("indices"),
        py::arg("ignore_nan"), py::arg("n"),
        "The median of each row (last dim, length n >= 1) of a C-contiguous array and its position, into "
        "values and int64 indices whose last dim is 1; NaN as median/nanmedian treat it.");
  m.def("sort_lastdim", &sort_lastdim, py::arg("input"), py::arg("values"), py::arg("indices"),
        py::arg("descending"), py::arg("n"),
        "Stable sort of each row (last dim, length n) of a C-contiguous array into values and int64 indices.");
  m.def("unique_dense_ints", &unique_dense_ints, py::arg("input"), py::arg("inverse"), py::arg("max_span"),
        "(sorted unique values, counts) of a non-empty 1-D integer array by counting, and the inverse into "
        "`inverse` (int64) unless None; None, touching nothing, when max - min >= max_span.");
  m.def("topk_lastdim", &topk_lastdim, py::arg("input"), py::arg("values"), py::arg("indices"), py::arg("k"),
        py::arg("largest"), py::arg("n"),
        "The k largest (or smallest) of each row, best first, ties by position, into values and indices.");
}

}  // namespace

FLAMBEAU_REGISTER(register_sorting);

}  // namespace flambeau
