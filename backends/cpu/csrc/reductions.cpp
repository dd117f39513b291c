// Reductions over any set of dims (float32, float64): sum, mean, amax, amin, and the sum of squares
// (for the 2-norm).
//
// Two shapes of work. When a reduced dim is the input's innermost (smallest stride), each output
// reduces its own rows ("inner" mode; sums are pairwise along the row). Otherwise the innermost dim
// is kept, and a block of neighbouring outputs is accumulated together while walking the reduced
// dims ("outer" mode), so memory is still read in order. With few outputs the reduced elements are
// split over threads and the partial results combined. Sums accumulate in double, so a float32 sum
// of millions of elements stays within float32 rounding of the exact sum.
#include "common.h"
#include "vecmath.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace flambeau {
namespace {

enum class Reduce : int { sum, mean, amax, amin, sumsq };

// Sums, and with `Square` the sum of squares (the 2-norm in one pass, without a squared copy of the
// input): each element enters as term(x), squared in the input's dtype as PyTorch's float norm does.
template <class T, bool Square = false>
struct SumOp {
  using acc_t = double;
  // Whether float32 input may be summed four rows at a time in float (reduce_outer's fast path,
  // which adds the elements as they are).
  static constexpr bool kFourRows = !Square;
  static FLAMBEAU_INLINE T term(T x) { return Square ? x * x : x; }
  static acc_t init() { return 0.0; }
  static acc_t step(acc_t a, T x) { return a + static_cast<acc_t>(term(x)); }
  static acc_t combine(acc_t a, acc_t b) { return a + b; }
  static acc_t row(const T* p, index_t n, index_t s) {
    if (n > 4096) {  // pairwise: the error grows with log(n), not n
      const index_t h = n / 2;
      return row(p, h, s) + row(p + h * s, n - h, s);
    }
    if (s == 1) return contiguous(p, n);
    acc_t acc = 0.0;
    for (index_t i = 0; i < n; ++i) acc = step(acc, p[i * s]);
    return acc;
  }
  // 16 independent double accumulators: one vector accumulator would wait on each add's latency.
  // float32 input is first summed four at a time in float (an error of at most 3 float ulps of
  // those four values), which halves the conversions to double.
  FLAMBEAU_CLONES static acc_t contiguous(const T* p, index_t n) {
    double a[16] = {0};
    index_t i = 0;
    if constexpr (std::is_same_v<T, float>) {
      for (; i + 64 <= n; i += 64) {
        float b[16];
#pragma omp simd
        for (int j = 0; j < 16; ++j) {
          b[j] = (term(p[i + j]) + term(p[i + 16 + j])) + (term(p[i + 32 + j]) + term(p[i + 48 + j]));
        }
#pragma omp simd
        for (int j = 0; j < 16; ++j) a[j] += static_cast<double>(b[j]);
      }
    } else {
      for (; i + 16 <= n; i += 16) {
#pragma omp simd
        for (int j = 0; j < 16; ++j) a[j] += static_cast<double>(term(p[i + j]));
      }
    }
    double tail = 0.0;
    for (; i < n; ++i) tail = step(tail, p[i]);
    for (int w = 8; w > 0; w /= 2) {
      for (int j = 0; j < w; ++j) a[j] += a[j + w];
    }
    return a[0] + tail;
  }
  static T finish(acc_t a, index_t) { return static_cast<T>(a); }
};

template <class T>
using SumSqOp = SumOp<T, true>;

template <class T>
struct MeanOp : SumOp<T> {
  static T finish(double a, index_t n) { return static_cast<T>(a / static_cast<double>(n)); }
};

// Max and min let NaN win, as torch.amax / torch.amin do.
template <class T, bool IsMax>
struct ExtremeOp {
  using acc_t = T;
  static constexpr bool kFourRows = false;
  static acc_t init() { return IsMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity(); }
  // `|` rather than `||`: no branch, so the lanes below compile to compares and a blend.
  static FLAMBEAU_INLINE acc_t step(acc_t a, T x) { return ((IsMax ? x > a : x < a) | (x != x)) ? x : a; }
  static acc_t combine(acc_t a, acc_t b) { return step(a, b); }
  static acc_t row(const T* p, index_t n, index_t s) {
    if (s == 1) return contiguous(p, n);
    acc_t acc = init();
    for (index_t i = 0; i < n; ++i) acc = step(acc, p[i * s]);
    return acc;
  }
  // 64 independent lanes, several vectors wide, so that no one compare-and-select chain sets the
  // pace. NaN is tracked apart (a flag per lane, or-ed in) instead of inside the select: the
  // select then compiles to a plain vector max/min, and the flags say at the end whether NaN wins.
  FLAMBEAU_CLONES static acc_t contiguous(const T* p, index_t n) {
    constexpr int kLanes = 64;
    T lane[kLanes];
    std::uint32_t nan[kLanes];
    for (int j = 0; j < kLanes; ++j) {
      lane[j] = init();
      nan[j] = 0;
    }
    index_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
#pragma omp simd
      for (int j = 0; j < kLanes; ++j) {
        const T x = p[i + j];
        lane[j] = (IsMax ? x > lane[j] : x < lane[j]) ? x : lane[j];
        nan[j] |= static_cast<std::uint32_t>(x != x);
      }
    }
    // The tail eight at a time into the first lanes, then the lanes folded in halves (vector ops
    // too): a 1000-element row would otherwise spend as long on ~100 scalar steps as on its body.
    for (; i + 8 <= n; i += 8) {
#pragma omp simd
      for (int j = 0; j < 8; ++j) {
        const T x = p[i + j];
        lane[j] = (IsMax ? x > lane[j] : x < lane[j]) ? x : lane[j];
        nan[j] |= static_cast<std::uint32_t>(x != x);
      }
    }
    for (int w = kLanes / 2; w >= 8; w /= 2) {
#pragma omp simd
      for (int j = 0; j < w; ++j) {
        lane[j] = (IsMax ? lane[j + w] > lane[j] : lane[j + w] < lane[j]) ? lane[j + w] : lane[j];
        nan[j] |= nan[j + w];
      }
    }
    std::uint32_t any_nan = 0;
    acc_t acc = init();
    for (int j = 0; j < 8; ++j) {
      acc = step(acc, lane[j]);
      any_nan |= nan[j];
    }
    if (any_nan) return std::numeric_limits<T>::quiet_NaN();
    for (; i < n; ++i) acc = step(acc, p[i]);
    return acc;
  }
  static T finish(acc_t a, index_t) { return a; }
};

template <class T>
using MaxOp = ExtremeOp<T, true>;
template <class T>
using MinOp = ExtremeOp<T, false>;

// Dims as (size, input stride, output stride), strides in elements.
struct Dims {
  int n = 0;
  index_t size[64], xs[64], os[64];
  index_t numel() const {
    index_t p = 1;
    for (int i = 0; i < n; ++i) p *= size[i];
    return p;
  }
  // Sort by input stride, largest outermost, then merge dims contiguous in both strides.
  void normalise(bool use_out) {
    for (int i = 1; i < n; ++i) {
      for (int j = i; j > 0 && std::llabs(xs[j - 1]) < std::llabs(xs[j]); --j) {
        std::swap(size[j - 1], size[j]);
        std::swap(xs[j - 1], xs[j]);
        std::swap(os[j - 1], os[j]);
      }
    }
    int m = 0;
    for (int i = 0; i < n; ++i) {
      if (m > 0 && xs[m - 1] == xs[i] * size[i] && (!use_out || os[m - 1] == os[i] * size[i])) {
        size[m - 1] *= size[i];
        xs[m - 1] = xs[i];
        os[m - 1] = os[i];
        continue;
      }
      size[m] = size[i];
      xs[m] = xs[i];
      os[m] = os[i];
      ++m;
    }
    n = m;
  }
  // Offsets of the flat index `flat` over dims [0, upto).
  void offsets(index_t flat, int upto, index_t& xo, index_t& oo) const {
    xo = oo = 0;
    for (int d = upto - 1; d >= 0; --d) {
      const index_t i = flat % size[d];
      flat /= size[d];
      xo += i * xs[d];
      oo += i * os[d];
    }
  }
};

// The reduction of the reduced elements [begin, end) (flat, over `red`) starting at x.
template <class T, class Op>
typename Op::acc_t reduce_span(const T* x, const Dims& red, index_t begin, index_t end) {
  using acc_t = typename Op::acc_t;
  acc_t acc = Op::init();
  if (red.n == 0) return Op::step(acc, *x);
  const int last = red.n - 1;
  const index_t inner = red.size[last], s = red.xs[last];
  index_t pos = begin;
  while (pos < end) {
    const index_t c = pos % inner;
    const index_t len = std::min(inner - c, end - pos);
    index_t xo, oo;
    red.offsets(pos / inner, last, xo, oo);
    acc = Op::combine(acc, Op::row(x + xo + c * s, len, s));
    pos += len;
  }
  return acc;
}

template <class T, class Op>
void reduce_inner(const T* x, T* out, const Dims& kept, const Dims& red, index_t M, index_t N) {
  using acc_t = typename Op::acc_t;
  const int nthreads = threads_for(M * N);
  if (nthreads <= 1 || M >= 4 * nthreads) {
#pragma omp parallel for schedule(static) num_threads(nthreads) if (nthreads > 1)
    for (index_t m = 0; m < M; ++m) {
      index_t xo, oo;
      kept.offsets(m, kept.n, xo, oo);
      out[oo] = Op::finish(reduce_span<T, Op>(x + xo, red, 0, N), N);
    }
    return;
  }
  // Few outputs: split each one's reduced elements into chunks, a contiguous run of them per thread
  // (static, as everywhere: see parallel_chunks), combined in chunk order (so the result does not
  // depend on the thread count).
  const index_t nchunks = (N + kParallelChunk - 1) / kParallelChunk;
  std::vector<acc_t> partial(nchunks);
  for (index_t m = 0; m < M; ++m) {
    index_t xo, oo;
    kept.offsets(m, kept.n, xo, oo);
#pragma omp parallel for schedule(static) num_threads(nthreads)
    for (index_t c = 0; c < nchunks; ++c) {
      partial[c] = reduce_span<T, Op>(x + xo, red, c * kParallelChunk, std::min(N, (c + 1) * kParallelChunk));
    }
    acc_t acc = Op::init();
    for (index_t c = 0; c < nchunks; ++c) acc = Op::combine(acc, partial[c]);
    out[oo] = Op::finish(acc, N);
  }
}

constexpr index_t kBlock = 256;  // outputs accumulated together in outer mode

// acc[j] (j < len) combined with the reduced elements [begin, end) of output column j, x at column 0.
template <class T, class Op>
FLAMBEAU_CLONES void accumulate_block(const T* x, index_t ks, const Dims& red, index_t begin, index_t end,
                      typename Op::acc_t* acc, index_t len) {
  index_t xo = 0, oo = 0;
  index_t r = begin;
  if constexpr (std::is_same_v<T, float> && std::is_same_v<typename Op::acc_t, double> && Op::kFourRows) {
    // float32 sums: four rows added in float first (two roundings, within the reductions' error
    // bound), so that each double accumulator takes one conversion and one add per four values.
    if (ks == 1) {
      for (; r + 4 <= end; r += 4) {
        const T* q[4];
        for (int t = 0; t < 4; ++t) {
          red.offsets(r + t, red.n, xo, oo);
          q[t] = x + xo;
        }
#pragma omp simd
        for (index_t j = 0; j < len; ++j) acc[j] += static_cast<double>((q[0][j] + q[1][j]) + (q[2][j] + q[3][j]));
      }
    }
  }
  for (; r < end; ++r) {
    red.offsets(r, red.n, xo, oo);
    const T* p = x + xo;
    if (ks == 1) {
#pragma omp simd
      for (index_t j = 0; j < len; ++j) acc[j] = Op::step(acc[j], p[j]);
    } else {
      for (index_t j = 0; j < len; ++j) acc[j] = Op::step(acc[j], p[j * ks]);
    }
  }
}

template <class T, class Op>
void reduce_outer(const T* x, T* out, const Dims& kept, const Dims& red, index_t M, index_t N) {
  using acc_t = typename Op::acc_t;
  const int last = kept.n - 1;
  const index_t k = kept.size[last], ks = kept.xs[last], kos = kept.os[last];
  const index_t rows = M / k, blocks = (k + kBlock - 1) / kBlock;
  const index_t tasks = rows * blocks;
  const int nthreads = threads_for(M * N);
  if (nthreads <= 1 || tasks >= 4 * nthreads) {
#pragma omp parallel for schedule(static) num_threads(nthreads) if (nthreads > 1)
    for (index_t t = 0; t < tasks; ++t) {
      const index_t row = t / blocks, j0 = (t % blocks) * kBlock;
      const index_t len = std::min(kBlock, k - j0);
      index_t xo, oo;
      kept.offsets(row, last, xo, oo);
      acc_t acc[kBlock];
      for (index_t j = 0; j < len; ++j) acc[j] = Op::init();
      accumulate_block<T, Op>(x + xo + j0 * ks, ks, red, 0, N, acc, len);
      for (index_t j = 0; j < len; ++j) out[oo + (j0 + j) * kos] = Op::finish(acc[j], N);
    }
    return;
  }
  // Few outputs (fewer than 4 * threads * kBlock): split the reduced elements, combine partials.
  std::vector<acc_t> partial(static_cast<size_t>(nthreads) * M, Op::init());
#pragma omp parallel num_threads(nthreads)
  {
    index_t begin, end;
    const int tid = thread_id();
    split_range(N, tid, team_size(), begin, end);
    acc_t* mine = partial.data() + static_cast<size_t>(tid) * M;
    for (index_t row = 0; row < rows; ++row) {
      index_t xo, oo;
      kept.offsets(row, last, xo, oo);
      for (index_t j0 = 0; j0 < k; j0 += kBlock) {
        accumulate_block<T, Op>(x + xo + j0 * ks, ks, red, begin, end, mine + row * k + j0, std::min(kBlock, k - j0));
      }
    }
  }
  for (index_t row = 0; row < rows; ++row) {
    index_t xo, oo;
    kept.offsets(row, last, xo, oo);
    for (index_t j = 0; j < k; ++j) {
      acc_t acc = Op::init();
      for (int t = 0; t < nthreads; ++t) acc = Op::combine(acc, partial[static_cast<size_t>(t) * M + row * k + j]);
      out[oo + j * kos] = Op::finish(acc, N);
    }
  }
}

template <class T, class Op>
void run_reduce(const py::array& x, py::array& out, const std::vector<bool>& reduced, bool keepdim) {
  Dims kept, red;
  const index_t item = x.itemsize();
  int od = 0;
  index_t N = 1;
  for (int d = 0; d < x.ndim(); ++d) {
    const index_t size = x.shape(d), xs = x.strides(d) / item;
    if (reduced[d]) {
      N *= size;
      if (size != 1) {
        red.size[red.n] = size;
        red.xs[red.n] = xs;
        red.os[red.n] = 0;
        ++red.n;
      }
      if (keepdim) ++od;
      continue;
    }
    if (size != 1) {
      kept.size[kept.n] = size;
      kept.xs[kept.n] = xs;
      kept.os[kept.n] = out.strides(od) / item;
      ++kept.n;
    }
    ++od;
  }
  const index_t M = out.size();
  if (M == 0) return;
  T* o = static_cast<T*>(out.mutable_data());
  const T* px = static_cast<const T*>(x.data());
  kept.normalise(true);
  red.normalise(false);
  py::gil_scoped_release nogil;
  if (N == 0) {  // sum of nothing is 0; mean of nothing is 0/0 = NaN (amax/amin are refused earlier)
    for (index_t m = 0; m < M; ++m) {
      index_t xo, oo;
      kept.offsets(m, kept.n, xo, oo);
      o[oo] = Op::finish(Op::init(), 0);
    }
    return;
  }
  const bool inner = kept.n == 0 || (red.n > 0 && std::llabs(red.xs[red.n - 1]) <= std::llabs(kept.xs[kept.n - 1]));
  if (inner) reduce_inner<T, Op>(px, o, kept, red, M, N);
  else reduce_outer<T, Op>(px, o, kept, red, M, N);
}

template <class T>
void dispatch_reduce(Reduce op, const py::array& x, py::array& out, const std::vector<bool>& reduced, bool keepdim) {
  switch (op) {
    case Reduce::sum: return run_reduce<T, SumOp<T>>(x, out, reduced, keepdim);
    case Reduce::mean: return run_reduce<T, MeanOp<T>>(x, out, reduced, keepdim);
    case Reduce::amax: return run_reduce<T, MaxOp<T>>(x, out, reduced, keepdim);
    case Reduce::amin: return run_reduce<T, MinOp<T>>(x, out, reduced, keepdim);
    case Reduce::sumsq: return run_reduce<T, SumSqOp<T>>(x, out, reduced, keepdim);
  }
}

bool reduce(int op_code, const py::array& x, py::array& out, const std::vector<int>& dims, bool keepdim) {
  if (op_code < 0 || op_code > static_cast<int>(Reduce::sumsq)) throw py::value_error("unknown reduction op code");
  const Reduce op = static_cast<Reduce>(op_code);
  const DType dt = dtype_of(x);
  if (dt != DType::f32 && dt != DType::f64) {
    throw py::type_error(std::string("reduce kernel: input must be float32 or float64, got ") + dtype_name(dt));
  }
  if (dtype_of(out) != dt) {
    throw py::type_error(std::string("reduce kernel: out must be ") + dtype_name(dt) + ", got " +
                         dtype_name(dtype_of(out)));
  }
  const int nd = static_cast<int>(x.ndim());
  std::vector<bool> reduced(nd, false);
  for (int d : dims) {
    if (d < 0 || d >= nd) throw py::index_error("reduce kernel: dim " + std::to_string(d) + " out of range");
    if (reduced[d]) throw py::value_error("reduce kernel: dim " + std::to_string(d) + " appears more than once");
    reduced[d] = true;
  }
  // out's shape must be exactly the reduced shape.
  std::vector<index_t> want;
  bool empty_reduction = false;
  for (int d = 0; d < nd; ++d) {
    if (reduced[d]) {
      empty_reduction = empty_reduction || x.shape(d) == 0;
      if (keepdim) want.push_back(1);
    } else {
      want.push_back(x.shape(d));
    }
  }
  bool ok = static_cast<index_t>(want.size()) == out.ndim();
  for (size_t d = 0; ok && d < want.size(); ++d) ok = want[d] == out.shape(static_cast<int>(d));
  if (!ok) throw py::value_error("reduce kernel: out has shape " + shape_str(out) + ", expected a different shape");
  check_in_bounds(out, "out", true);
  check_in_bounds(x, "input", false);
  if (empty_reduction && (op == Reduce::amax || op == Reduce::amin) && out.size() > 0) {
    throw py::value_error("reduce kernel: amax/amin of an empty dim has no identity");
  }
  if (!is_aligned(out) || !is_aligned(x)) return false;
  if (out.size() > 1 && has_internal_overlap(out)) return false;
  if (may_overlap(x, out)) return false;
  if (dt == DType::f32) dispatch_reduce<float>(op, x, out, reduced, keepdim);
  else dispatch_reduce<double>(op, x, out, reduced, keepdim);
  return true;
}

void register_reductions(py::module_& m) {
  m.def("reduce", &reduce, py::arg("op"), py::arg("input"), py::arg("out"), py::arg("dims"), py::arg("keepdim"),
        "out = op over `dims` of input (float32/float64); out must have the reduced shape. Returns False when "
        "the layout is left to numpy (unaligned, or out overlapping input).");
  py::dict codes;
  const char* names[] = {"sum", "mean", "amax", "amin", "sumsq"};
  for (int i = 0; i <= static_cast<int>(Reduce::sumsq); ++i) codes[names[i]] = i;
  m.attr("REDUCE_OPS") = codes;
}

}  // namespace

FLAMBEAU_REGISTER(register_reductions);

}  // namespace flambeau
