// bincount's two passes over a 1-d contiguous int64 or int32 array: the smallest and largest value
// (which the caller checks, and from which it sizes and allocates the result), then the count.
//
// The values are the caller's memory, which another Python thread may change while these loops
// run with the GIL released: the counting pass loads each value once, checks it against the
// result's length and uses only that load, so a value changed since the first pass is reported
// instead of being written through.
#include "common.h"

#include <limits>
#include <mutex>
#include <vector>

namespace flambeau {
namespace {

void require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(std::string("bincount: ") + what);
}

// The values as a pointer after the checks every entry point makes (1-d, contiguous, int64/int32).
const char* values_of(const py::array& values, bool& i64) {
  require(values.ndim() == 1, "values must be 1-d");
  i64 = values.dtype().kind() == 'i' && values.itemsize() == 8;
  require(i64 || (values.dtype().kind() == 'i' && values.itemsize() == 4), "values must be int64 or int32");
  require(values.dtype().byteorder() != '>', "values must be in native byte order");
  require(values.shape(0) < 2 || values.strides(0) == values.itemsize(), "values must be contiguous");
  require(is_aligned(values), "values must be aligned");
  check_in_bounds(values, "values", false);
  return static_cast<const char*>(values.data());
}

// Compiled per ISA (AVX-512 has 64-bit vector min/max): overloads, as clones cannot be templates.
#define FLAMBEAU_MINMAX_RUN(I)                                                   \
  FLAMBEAU_CLONES void minmax_run(const I* v, index_t n, index_t& lo, index_t& hi) { \
    I a = v[0], b = v[0];                                                        \
    for (index_t k = 1; k < n; ++k) {                                            \
      a = v[k] < a ? v[k] : a;                                                   \
      b = v[k] > b ? v[k] : b;                                                   \
    }                                                                            \
    lo = a;                                                                      \
    hi = b;                                                                      \
  }
FLAMBEAU_MINMAX_RUN(std::int64_t)
FLAMBEAU_MINMAX_RUN(std::int32_t)
#undef FLAMBEAU_MINMAX_RUN

template <class I>
void minmax(const I* v, index_t n, index_t& lo, index_t& hi) {
  std::mutex m;
  lo = std::numeric_limits<index_t>::max();
  hi = std::numeric_limits<index_t>::min();
  parallel_chunks(n, kParallelChunk, [&](index_t b, index_t e) {
    index_t a = 0, z = 0;
    minmax_run(v + b, e - b, a, z);
    std::lock_guard<std::mutex> lock(m);
    lo = std::min(lo, a);
    hi = std::max(hi, z);
  });
}

// The smallest and largest of `values` (n > 0).
py::tuple bincount_range(const py::array& values) {
  bool i64 = false;
  const char* p = values_of(values, i64);
  const index_t n = values.shape(0);
  require(n > 0, "values must not be empty");
  index_t lo = 0, hi = 0;
  {
    py::gil_scoped_release nogil;
    if (i64) minmax(reinterpret_cast<const std::int64_t*>(p), n, lo, hi);
    else minmax(reinterpret_cast<const std::int32_t*>(p), n, lo, hi);
  }
  return py::make_tuple(lo, hi);
}

template <class I>
inline index_t load_value(const I* p) {
  return static_cast<index_t>(__atomic_load_n(p, __ATOMIC_RELAXED));
}

// counts[v] += 1 (or w[k]) over [b, e); returns -1, or the k of a value outside [0, nbins).
template <class I, class C>
index_t count_run(const I* v, const double* w, index_t b, index_t e, C* counts, index_t nbins) {
  const std::uint64_t bound = static_cast<std::uint64_t>(nbins);
  for (index_t k = b; k < e; ++k) {
    const index_t x = load_value(v + k);
    if (static_cast<std::uint64_t>(x) >= bound) return k;  // a negative value wraps to a huge one
    if (w) counts[x] += static_cast<C>(w[k]);
    else counts[x] += 1;
  }
  return -1;
}

constexpr index_t kSplitBins = 1 << 14;  // up to this many bins, counts go to four interleaved copies

// count_run with four histograms taking every fourth value: runs of one value (sorted or clustered
// input) would otherwise wait on the previous add to the same counter at every step.
template <class I, class C>
index_t count_run4(const I* v, const double* w, index_t b, index_t e, C* counts, index_t nbins) {
  const std::uint64_t bound = static_cast<std::uint64_t>(nbins);
  std::vector<C> extra(3 * static_cast<size_t>(nbins), C(0));
  C* h[4] = {counts, extra.data(), extra.data() + nbins, extra.data() + 2 * nbins};
  index_t k = b;
  for (; k + 4 <= e; k += 4) {
    const index_t x0 = load_value(v + k), x1 = load_value(v + k + 1), x2 = load_value(v + k + 2),
                  x3 = load_value(v + k + 3);
    const bool ok = (static_cast<std::uint64_t>(x0) < bound) & (static_cast<std::uint64_t>(x1) < bound) &
                    (static_cast<std::uint64_t>(x2) < bound) & (static_cast<std::uint64_t>(x3) < bound);
    if (!ok) break;  // the plain loop below finds which
    if (w) {
      h[0][x0] += static_cast<C>(w[k]);
      h[1][x1] += static_cast<C>(w[k + 1]);
      h[2][x2] += static_cast<C>(w[k + 2]);
      h[3][x3] += static_cast<C>(w[k + 3]);
    } else {
      h[0][x0] += 1;
      h[1][x1] += 1;
      h[2][x2] += 1;
      h[3][x3] += 1;
    }
  }
  const index_t bad = count_run(v, w, k, e, counts, nbins);
  for (int c = 1; c < 4; ++c)
    for (index_t j = 0; j < nbins; ++j) counts[j] += h[c][j];
  return bad;
}

template <class I, class C>
index_t count_any(const I* v, const double* w, index_t b, index_t e, C* counts, index_t nbins) {
  if (nbins <= kSplitBins && e - b >= 16 * nbins) return count_run4(v, w, b, e, counts, nbins);
  return count_run(v, w, b, e, counts, nbins);
}

template <class I, class C>
bool count_all(const I* v, const double* w, index_t n, C* counts, index_t nbins) {
  // Threads count into private histograms when those are small next to the input, then add up.
  const int nthreads = nbins <= n / 8 ? threads_for(n) : 1;
  if (nthreads <= 1) return count_any(v, w, 0, n, counts, nbins) < 0;
  std::vector<std::vector<C>> local(nthreads);
  bool ok = true;
  std::mutex m;
  parallel_team(nthreads, [&](int t, int team) {
    index_t b = 0, e = 0;
    split_range(n, t, team, b, e);
    std::vector<C>& mine = local[t];
    mine.assign(static_cast<size_t>(nbins), C(0));
    if (count_any(v, w, b, e, mine.data(), nbins) >= 0) {
      std::lock_guard<std::mutex> lock(m);
      ok = false;
    }
  });
  if (!ok) return false;
  for (const std::vector<C>& part : local) {
    if (part.empty()) continue;
    for (index_t j = 0; j < nbins; ++j) counts[j] += part[static_cast<size_t>(j)];
  }
  return true;
}

// Adds the values' counts (or their weights) into `counts` (int64, or float64 with weights; zeroed,
// nbins long). Returns False when a value outside [0, nbins) was met (changed by another thread since
// the caller's check); `counts` is then partly written.
bool bincount_into(py::array counts, const py::array& values, py::object weights) {
  bool i64 = false;
  const char* p = values_of(values, i64);
  const index_t n = values.shape(0);
  require(counts.ndim() == 1 && (counts.shape(0) < 2 || counts.strides(0) == counts.itemsize()),
          "counts must be 1-d and contiguous");
  check_in_bounds(counts, "counts", true);
  require(is_aligned(counts), "counts must be aligned");
  const double* w = nullptr;
  py::array wa;
  if (!weights.is_none()) {
    wa = weights.cast<py::array>();
    require(wa.ndim() == 1 && wa.shape(0) == n && wa.dtype().kind() == 'f' && wa.itemsize() == 8 &&
                (n < 2 || wa.strides(0) == 8) && is_aligned(wa),
            "weights must be contiguous float64 of the values' length");
    check_in_bounds(wa, "weights", false);
    require(counts.dtype().kind() == 'f' && counts.itemsize() == 8, "counts must be float64 with weights");
    w = static_cast<const double*>(wa.data());
  } else {
    require(counts.dtype().kind() == 'i' && counts.itemsize() == 8, "counts must be int64");
  }
  const index_t nbins = counts.shape(0);
  char* c = static_cast<char*>(counts.mutable_data());
  if (n == 0) return true;
  py::gil_scoped_release nogil;
  if (w) {
    return i64 ? count_all(reinterpret_cast<const std::int64_t*>(p), w, n, reinterpret_cast<double*>(c), nbins)
               : count_all(reinterpret_cast<const std::int32_t*>(p), w, n, reinterpret_cast<double*>(c), nbins);
  }
  return i64 ? count_all(reinterpret_cast<const std::int64_t*>(p), w, n, reinterpret_cast<std::int64_t*>(c), nbins)
             : count_all(reinterpret_cast<const std::int32_t*>(p), w, n, reinterpret_cast<std::int64_t*>(c), nbins);
}

void register_bincount(py::module_& m) {
  m.def("bincount_range", &bincount_range, py::arg("values"),
        "(smallest, largest) of a non-empty 1-d contiguous int64/int32 array.");
  m.def("bincount_into", &bincount_into, py::arg("counts"), py::arg("values"), py::arg("weights") = py::none(),
        "Adds each value's count (or weight) into `counts`; False if a value lies outside it.");
}

FLAMBEAU_REGISTER(register_bincount);

}  // namespace
}  // namespace flambeau
