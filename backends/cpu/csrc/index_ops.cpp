// Index ops along one dim: gather and index_select (read at an index), scatter and index_copy
// (write at an index), scatter_add and index_add (add at an index).
//
// All of them walk the same space: every position off the indexed dim (P of them), and K steps
// along it. A task takes a block of positions, works out their byte offsets once, then runs the
// K steps over the whole block, so that the inner loop walks neighbouring memory whichever dim
// is indexed. Writes at an index can only collide between steps of the same position, so the
// writing modes split the work over positions only (never over K: repeated indices in
// scatter_add must add up one after the other); gathers may also split K.
//
// Index memory belongs to Python: with the GIL released another thread may change it while a
// kernel runs, so an index is never checked in one pass and trusted in another. Every loop loads
// each index once into a local, checks that local and uses only it; a bad one stops the loop and
// is reported (the smallest position seen, with its value). Such a fused kernel may leave `out`
// half-written, so it is for fresh outputs only. Where `out` is a user's tensor (in-place forms,
// out=), the caller hands over a private copy of the index and asks for `precheck`: the whole
// copy is checked before anything is written, and nothing else can change it. Every array's
// strided extent is checked against its buffer too, so no argument makes these kernels touch
// memory outside the arrays.
#include "common.h"
#include "copy.h"

#include <atomic>
#include <limits>
#include <memory>
#include <mutex>
#include <type_traits>

namespace flambeau {
namespace {

enum Mode : int { kGather = 0, kAssign = 1, kAdd = 2 };

constexpr int kMaxDims = 64;
constexpr index_t kBlock = 512;  // positions whose offsets a task computes at once
constexpr index_t kRun = 4096;   // steps a one-position loop runs between looks at the fault flag
constexpr index_t kNone = std::numeric_limits<index_t>::max();

struct Plan {
  int nd = 0;  // dims off the indexed one
  index_t size[kMaxDims];
  index_t out_st[kMaxDims], src_st[kMaxDims], idx_st[kMaxDims];  // byte strides over those dims
  index_t out_d = 0, src_d = 0, idx_d = 0;  // byte strides along the indexed dim
  index_t positions = 1, steps = 0;
  bool vector = false;  // one index per step (index_select...): whole runs move with memcpy
};

// The index values accepted along a dim of `limit` elements and where they point: [0, limit), or,
// with `wrap` (advanced indexing), [-limit, limit) with negatives counting from the end.
struct Range {
  index_t limit;
  std::uint64_t shift, bound;  // v is accepted when v + shift (as unsigned) < bound
  Range(index_t n, bool wrap)
      : limit(n), shift(wrap ? static_cast<std::uint64_t>(n) : 0),
        bound(wrap ? 2 * static_cast<std::uint64_t>(n) : static_cast<std::uint64_t>(n)) {}
  // One unsigned compare: a value below the range wraps around to a huge one.
  bool ok(index_t v) const { return static_cast<std::uint64_t>(v) + shift < bound; }
  index_t at(index_t v) const { return v < 0 ? v + limit : v; }  // for an accepted v
};

// The first bad index the loops met: the smallest key (its position in the index's own order) and
// its value. Loops report and stop; the others stop at their next look at seen().
class Fault {
 public:
  void report(index_t key, index_t value) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (key < key_.load(std::memory_order_relaxed)) {
      value_ = value;
      key_.store(key, std::memory_order_relaxed);
    }
  }
  bool seen() const { return key_.load(std::memory_order_relaxed) != kNone; }
  index_t value() const { return value_; }  // read once the loops are over

 private:
  std::mutex mutex_;
  std::atomic<index_t> key_{kNone};
  index_t value_ = 0;
};

// One load of an index from memory another thread may be writing. A relaxed atomic load is a
// plain load on x86-64, but the compiler may neither tear it nor load again for the address.
template <class I>
inline index_t load_index(const char* p) {
  return static_cast<index_t>(__atomic_load_n(reinterpret_cast<const I*>(p), __ATOMIC_RELAXED));
}

struct Wide {  // a 16-byte element (complex128) moved as a unit
  std::uint64_t lo, hi;
};

// The byte offsets of positions [begin, begin + n) of the plan, for the three operands.
void offsets(const Plan& p, index_t begin, index_t n, index_t* oo, index_t* so, index_t* io) {
  index_t coord[kMaxDims];
  index_t rem = begin, o = 0, s = 0, i = 0;
  for (int d = p.nd - 1; d >= 0; --d) {
    coord[d] = rem % p.size[d];
    rem /= p.size[d];
    o += coord[d] * p.out_st[d];
    s += coord[d] * p.src_st[d];
    i += coord[d] * p.idx_st[d];
  }
  for (index_t j = 0; j < n; ++j) {
    oo[j] = o;
    so[j] = s;
    io[j] = i;
    for (int d = p.nd - 1; d >= 0; --d) {  // odometer step to the next position
      if (++coord[d] < p.size[d]) {
        o += p.out_st[d];
        s += p.src_st[d];
        i += p.idx_st[d];
        break;
      }
      o -= (coord[d] - 1) * p.out_st[d];
      s -= (coord[d] - 1) * p.src_st[d];
      i -= (coord[d] - 1) * p.idx_st[d];
      coord[d] = 0;
    }
  }
}

// One element moved (or added) from s to o.
template <class T, int M>
inline void put(char* o, const char* s, T alpha) {
  T* dst = reinterpret_cast<T*>(o);
  const T value = *reinterpret_cast<const T*>(s);
  if constexpr (M == kAdd) {
    *dst += alpha * value;
  } else {
    *dst = value;
  }
}

// One run of `r` positions along the innermost position dim (byte strides os, ss, is), at one step.
// Returns -1, or the j of the first bad index (its value in `bad`), having stopped there.
template <class T, class I, int M>
inline index_t run_span(char* o, const char* s, const char* i, index_t r, index_t os, index_t ss, index_t is,
                        index_t out_d, index_t src_d, T alpha, const Range& rg, index_t& bad) {
  constexpr index_t tsz = sizeof(T), isz = sizeof(I);
  if (is == 0) {  // one index for the whole run (index_select, index_add, index_copy)
    const index_t raw = load_index<I>(i);
    if (!rg.ok(raw)) {
      bad = raw;
      return 0;
    }
    const index_t v = rg.at(raw);
    if (M == kGather) {
      s += v * src_d;
    } else {
      o += v * out_d;
    }
    if (os == tsz && ss == tsz) {
      if constexpr (M != kAdd) {
        std::memcpy(o, s, static_cast<size_t>(r) * sizeof(T));
      } else {
        T* po = reinterpret_cast<T*>(o);
        const T* ps = reinterpret_cast<const T*>(s);
        for (index_t j = 0; j < r; ++j) po[j] += alpha * ps[j];
      }
      return -1;
    }
    for (index_t j = 0; j < r; ++j) put<T, M>(o + j * os, s + j * ss, alpha);
    return -1;
  }
  if (os == tsz && ss == tsz && is == isz && out_d % tsz == 0 && src_d % tsz == 0) {
    // Everything contiguous along the run: element pointers, so the loop compiles to plain indexed loads.
    T* po = reinterpret_cast<T*>(o);
    const T* ps = reinterpret_cast<const T*>(s);
    const index_t d = (M == kGather ? src_d : out_d) / tsz;
    for (index_t j = 0; j < r; ++j) {
      const index_t raw = load_index<I>(i + j * isz);
      if (!rg.ok(raw)) {
        bad = raw;
        return j;
      }
      const index_t v = rg.at(raw) * d;
      if constexpr (M == kGather) {
        po[j] = ps[j + v];
      } else if constexpr (M == kAdd) {
        po[j + v] += alpha * ps[j];
      } else {
        po[j + v] = ps[j];
      }
    }
    return -1;
  }
  for (index_t j = 0; j < r; ++j) {
    const index_t raw = load_index<I>(i + j * is);
    if (!rg.ok(raw)) {
      bad = raw;
      return j;
    }
    const index_t v = rg.at(raw);
    if (M == kGather) {
      put<T, M>(o + j * os, s + j * ss + v * src_d, alpha);
    } else {
      put<T, M>(o + j * os + v * out_d, s + j * ss, alpha);
    }
  }
  return -1;
}

// out[k] = src[idx[k]] over one contiguous row, compiled per ISA. The check rides along: each index
// is loaded once, an index out of range reads element 0 instead and clears the flag returned, so
// that the caller redoes the row one index at a time to name the bad one. `shift` and `bound` are a
// Range's; the plain form (no negative indices) spares the wrap-around's two selects per element.
#define FLAMBEAU_GATHER_ROW(T)                                                                            \
  FLAMBEAU_CLONES bool gather_row(T* o, const T* s, const std::int64_t* idx, index_t n, std::uint64_t bound) { \
    bool ok = true;                                                                                       \
    for (index_t k = 0; k < n; ++k) {                                                                     \
      const std::uint64_t u = static_cast<std::uint64_t>(idx[k]);                                         \
      const bool in = u < bound;                                                                          \
      ok &= in;                                                                                           \
      o[k] = s[in ? u : 0];                                                                               \
    }                                                                                                     \
    return ok;                                                                                            \
  }                                                                                                       \
  FLAMBEAU_CLONES bool gather_row(T* o, const T* s, const std::int64_t* idx, index_t n, std::uint64_t shift, \
                                  std::uint64_t bound) {                                                 \
    bool ok = true;                                                                                       \
    for (index_t k = 0; k < n; ++k) {                                                                     \
      const std::uint64_t u = static_cast<std::uint64_t>(idx[k]) + shift;                                 \
      const bool in = u < bound;                                                                          \
      ok &= in;                                                                                           \
      o[k] = s[in ? u - (u >= shift ? shift : 0) : 0];                                                    \
    }                                                                                                     \
    return ok;                                                                                            \
  }
FLAMBEAU_GATHER_ROW(std::uint32_t)
FLAMBEAU_GATHER_ROW(std::uint64_t)
#undef FLAMBEAU_GATHER_ROW

// All `steps` steps of one position, k innermost: used when the indexed dim is the one laid out
// contiguously (gather or scatter along the last dim), where walking positions innermost would
// jump a whole row per element, and for a single position (1-d). Returns -1 or the bad step.
template <class T, class I, int M>
inline index_t run_steps(char* o, const char* s, const char* i, index_t steps, index_t out_d, index_t src_d,
                         index_t idx_d, T alpha, const Range& rg, index_t& bad) {
  constexpr index_t tsz = sizeof(T), isz = sizeof(I);
  const index_t stream_d = M == kGather ? out_d : src_d, random_d = M == kGather ? src_d : out_d;
  if constexpr (M == kGather && std::is_same_v<I, std::int64_t> &&
                (std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::uint64_t>)) {
    if (idx_d == isz && stream_d == tsz && random_d == tsz && rg.limit > 0) {
      T* po = reinterpret_cast<T*>(o);
      const T* ps = reinterpret_cast<const T*>(s);
      const I* pi = reinterpret_cast<const I*>(i);
      if (rg.shift ? gather_row(po, ps, pi, steps, rg.shift, rg.bound) : gather_row(po, ps, pi, steps, rg.bound))
        return -1;
    }
    // A bad index somewhere in the row (or another layout): the checked loop below names it.
  }
  for (index_t k = 0; k < steps; ++k) {
    const index_t raw = load_index<I>(i + k * idx_d);
    if (!rg.ok(raw)) {
      bad = raw;
      return k;
    }
    const index_t v = rg.at(raw);
    if constexpr (M == kGather) {
      put<T, M>(o + k * out_d, s + v * src_d, alpha);
    } else {
      put<T, M>(o + v * out_d, s + k * src_d, alpha);
    }
  }
  return -1;
}

inline index_t magnitude(index_t x) { return x < 0 ? -x : x; }

// Whether to run steps innermost (run_steps): a per-element index whose steps, and the streamed
// operand's (out for gathers, src for writes), lie closer together than neighbouring positions.
template <int M>
bool steps_innermost(const Plan& p) {
  if (p.vector || p.nd == 0 || p.positions < 2) return false;
  const int last = p.nd - 1;
  const index_t stream_d = M == kGather ? p.out_d : p.src_d;
  const index_t stream_pos = M == kGather ? p.out_st[last] : p.src_st[last];
  return magnitude(stream_d) < magnitude(stream_pos) && magnitude(p.idx_d) < magnitude(p.idx_st[last]);
}

template <class T, class I, int M>
void run(const Plan& p, char* out, const char* src, const char* idx, T alpha, const Range& rg, Fault& fault) {
  if (p.nd == 0) {
    // One position (a 1-d op): a single loop over the steps. Gathers split it over threads; writes
    // stay on one (repeated indices must add up in order).
    auto steps = [&](index_t k0, index_t k1) {
      for (index_t c = k0; c < k1; c += kRun) {
        if (fault.seen()) return;
        const index_t n = std::min(kRun, k1 - c), o = M == kGather ? c * p.out_d : 0, s = M == kGather ? 0 : c * p.src_d;
        index_t value = 0;
        const index_t k = run_steps<T, I, M>(out + o, src + s, idx + c * p.idx_d, n, p.out_d, p.src_d, p.idx_d,
                                             alpha, rg, value);
        if (k >= 0) {
          fault.report(c + k, value);
          return;
        }
      }
    };
    if (M == kGather) {
      parallel_chunks(p.steps, kParallelChunk, steps);
    } else {
      steps(0, p.steps);
    }
    return;
  }
  if (steps_innermost<M>(p)) {
    // Threads split the positions (each position's steps stay on one thread, so repeated indices of
    // scatter_add add up in order).
    auto positions = [&](index_t b0, index_t b1) {
      index_t oo[kBlock], so[kBlock], io[kBlock];
      for (index_t begin = b0; begin < b1; begin += kBlock) {
        if (fault.seen()) return;
        const index_t n = std::min(kBlock, b1 - begin);
        offsets(p, begin, n, oo, so, io);
        for (index_t j = 0; j < n; ++j) {
          index_t value = 0;
          const index_t k = run_steps<T, I, M>(out + oo[j], src + so[j], idx + io[j], p.steps, p.out_d, p.src_d,
                                               p.idx_d, alpha, rg, value);
          if (k >= 0) {
            fault.report((begin + j) * p.steps + k, value);
            return;
          }
        }
      }
    };
    parallel_chunks(p.positions, std::max<index_t>(1, kParallelChunk / std::max<index_t>(p.steps, 1)), positions,
                    p.positions * p.steps);
    return;
  }
  // Positions go in runs along the innermost position dim (the plan's last), each run one tight loop.
  const index_t inner = p.size[p.nd - 1];
  const index_t ios = p.out_st[p.nd - 1], iss = p.src_st[p.nd - 1], iis = p.idx_st[p.nd - 1];
  if (M == kGather && p.vector && p.nd == 1 && ios == static_cast<index_t>(sizeof(T)) &&
      iss == static_cast<index_t>(sizeof(T))) {
    // index_select of whole contiguous slabs (rows of a matrix): one memcpy per index, split over the
    // indices only, so that no slab is cut between threads.
    const size_t bytes = static_cast<size_t>(inner) * sizeof(T);
    auto slabs = [&](index_t k0, index_t k1) {
      for (index_t k = k0; k < k1; ++k) {
        const index_t raw = load_index<I>(idx + k * p.idx_d);
        if (!rg.ok(raw)) {
          fault.report(k, raw);
          return;
        }
        std::memcpy(out + k * p.out_d, src + rg.at(raw) * p.src_d, bytes);
      }
    };
    parallel_chunks(p.steps, std::max<index_t>(1, kParallelChunk / std::max<index_t>(inner, 1)), slabs,
                    p.positions * p.steps / 8);
    return;
  }
  const index_t blocks = (p.positions + kBlock - 1) / kBlock;
  const index_t per_block = std::min(p.positions, kBlock);
  // Gathers split K too when there are few positions.
  index_t kchunk = p.steps;
  if (M == kGather && p.steps > 0) kchunk = std::max<index_t>(1, kParallelChunk / std::max<index_t>(per_block, 1));
  const index_t ksplits = p.steps > 0 ? (p.steps + kchunk - 1) / kchunk : 1;
  const index_t tasks = blocks * ksplits;
  // Copying whole runs costs a fraction of per-element index arithmetic: such work is worth threads
  // only when much larger (on a busy machine an extra thread that wakes late costs more than it saves).
  const index_t work = p.positions * p.steps / (p.vector && M != kAdd ? 8 : 1);
  const int nthreads = static_cast<int>(std::min<index_t>(threads_for(work), tasks));
  auto task = [&](index_t t) {
    if (fault.seen()) return;
    const index_t b = t / ksplits, ks = t % ksplits;
    const index_t begin = b * kBlock, n = std::min(kBlock, p.positions - begin);
    const index_t k0 = ks * kchunk, k1 = std::min(p.steps, k0 + kchunk);
    index_t oo[kBlock], so[kBlock], io[kBlock];
    offsets(p, begin, n, oo, so, io);
    for (index_t k = k0; k < k1; ++k) {
      char* ok = out + k * (M == kGather ? p.out_d : 0);
      const char* sk = src + k * (M == kGather ? 0 : p.src_d);
      const char* ik = idx + k * p.idx_d;
      for (index_t j = 0; j < n;) {
        const index_t r = std::min(n - j, inner - (begin + j) % inner);
        index_t value = 0;
        const index_t at = run_span<T, I, M>(ok + oo[j], sk + so[j], ik + io[j], r, ios, iss, iis, p.out_d, p.src_d,
                                             alpha, rg, value);
        if (at >= 0) {
          fault.report((begin + j + at) * p.steps + k, value);
          return;
        }
        j += r;
      }
    }
  };
  if (nthreads <= 1) {  // no OpenMP team at all: starting one costs more than a small op
    for (index_t t = 0; t < tasks; ++t) task(t);
    return;
  }
#pragma omp parallel for schedule(static) num_threads(nthreads)
  for (index_t t = 0; t < tasks; ++t) task(t);
}

// Whether all of n contiguous indices are accepted (v + shift < bound, unsigned): branch-free and
// compiled per ISA, so that the check runs at memory speed (a plain x86-64 build has no 64-bit vector
// compare). Only for a private copy of the indices (`precheck`), which nothing else can change.
FLAMBEAU_CLONES bool all_in(const std::int64_t* q, index_t n, std::uint64_t shift, std::uint64_t bound) {
  bool ok = true;
  for (index_t j = 0; j < n; ++j) ok &= static_cast<std::uint64_t>(q[j]) + shift < bound;
  return ok;
}
FLAMBEAU_CLONES bool all_in(const std::int32_t* q, index_t n, std::uint64_t shift, std::uint64_t bound) {
  bool ok = true;
  for (index_t j = 0; j < n; ++j) ok &= static_cast<std::uint64_t>(static_cast<std::int64_t>(q[j])) + shift < bound;
  return ok;
}

// Whether every entry of one run of `n` indices (stride `step` bytes) is accepted.
template <class I>
bool run_ok(const char* p, index_t n, index_t step, const Range& rg) {
  if (step == static_cast<index_t>(sizeof(I))) return all_in(reinterpret_cast<const I*>(p), n, rg.shift, rg.bound);
  bool ok = true;
  for (index_t j = 0; j < n; ++j) ok &= rg.ok(static_cast<index_t>(*reinterpret_cast<const I*>(p + j * step)));
  return ok;
}

// The first index not accepted by `rg`, scanning the (private) index array in its own order; `found`
// says if any. Rows (the innermost dim) are checked whole; only a row with a bad entry is searched.
template <class I>
index_t first_bad(const py::array& index, const Range& rg, bool& found) {
  const int nd = static_cast<int>(index.ndim());
  const index_t row = nd ? index.shape(nd - 1) : 1, step = nd ? index.strides(nd - 1) : 0;
  Plan p;  // the odometer over the outer dims (the innermost is the run)
  p.nd = std::max(nd - 1, 0);
  for (int d = 0; d + 1 < nd; ++d) {
    p.size[d] = index.shape(d);
    p.idx_st[d] = index.strides(d);
    p.out_st[d] = p.src_st[d] = 0;
    p.positions *= index.shape(d);
  }
  found = false;
  if (row == 0 || p.positions == 0) return 0;
  const char* base = static_cast<const char*>(index.data());
  std::atomic<index_t> first{kNone};  // the first bad row
  const index_t blocks = (p.positions + kBlock - 1) / kBlock;
  const int nthreads = static_cast<int>(std::min<index_t>(threads_for(p.positions * row), blocks));
  auto block = [&](index_t b) {
    const index_t begin = b * kBlock, n = std::min(kBlock, p.positions - begin);
    if (begin > first.load(std::memory_order_relaxed)) return;
    index_t oo[kBlock], so[kBlock], io[kBlock];
    offsets(p, begin, n, oo, so, io);
    for (index_t j = 0; j < n; ++j) {
      if (!run_ok<I>(base + io[j], row, step, rg)) {
        index_t seen = first.load();
        while (begin + j < seen && !first.compare_exchange_weak(seen, begin + j)) {
        }
        break;
      }
    }
  };
  if (nthreads <= 1) {
    for (index_t b = 0; b < blocks; ++b) block(b);
  } else {
#pragma omp parallel for schedule(static) num_threads(nthreads)
    for (index_t b = 0; b < blocks; ++b) block(b);
  }
  const index_t at = first.load();
  if (at == kNone) return 0;
  found = true;
  index_t oo[1], so[1], io[1];
  offsets(p, at, 1, oo, so, io);
  for (index_t j = 0; j < row; ++j) {
    const index_t v = static_cast<index_t>(*reinterpret_cast<const I*>(base + io[0] + j * step));
    if (!rg.ok(v)) return v;
  }
  return 0;  // unreachable: the copy is private, and its row had a bad entry
}

void fail(const char* what) { throw std::invalid_argument(std::string("dim_index: ") + what); }

bool kind_is(const py::array& a, char kind, int itemsize) {
  return a.dtype().kind() == kind && a.itemsize() == itemsize;
}

template <class T, class I>
void dispatch_mode(int mode, const Plan& p, char* out, const char* src, const char* idx, T alpha, const Range& rg,
                   Fault& fault) {
  if (mode == kGather) run<T, I, kGather>(p, out, src, idx, alpha, rg, fault);
  else if (mode == kAssign) run<T, I, kAssign>(p, out, src, idx, alpha, rg, fault);
  else run<T, I, kAdd>(p, out, src, idx, alpha, rg, fault);
}

template <class I>
bool dispatch_type(int mode, const py::array& out, const Plan& p, char* po, const char* ps, const char* pi,
                   double alpha, const Range& rg, Fault& fault) {
  if (mode == kAdd) {  // arithmetic needs the real type
    if (kind_is(out, 'f', 4)) dispatch_mode<float, I>(mode, p, po, ps, pi, static_cast<float>(alpha), rg, fault);
    else if (kind_is(out, 'f', 8)) dispatch_mode<double, I>(mode, p, po, ps, pi, alpha, rg, fault);
    else if (kind_is(out, 'i', 8))
      dispatch_mode<std::int64_t, I>(mode, p, po, ps, pi, static_cast<std::int64_t>(alpha), rg, fault);
    else if (kind_is(out, 'i', 4))
      dispatch_mode<std::int32_t, I>(mode, p, po, ps, pi, static_cast<std::int32_t>(alpha), rg, fault);
    else return false;
    return true;
  }
  switch (out.itemsize()) {  // copies move bytes: any dtype of the size will do
    case 1: dispatch_mode<std::uint8_t, I>(mode, p, po, ps, pi, 0, rg, fault); break;
    case 2: dispatch_mode<std::uint16_t, I>(mode, p, po, ps, pi, 0, rg, fault); break;
    case 4: dispatch_mode<std::uint32_t, I>(mode, p, po, ps, pi, 0, rg, fault); break;
    case 8: dispatch_mode<std::uint64_t, I>(mode, p, po, ps, pi, 0, rg, fault); break;
    default: return false;
  }
  return true;
}

[[noreturn]] void out_of_bounds(index_t value, int dim, index_t limit) {
  throw py::index_error("index " + std::to_string(value) + " is out of bounds for dimension " + std::to_string(dim) +
                        " with size " + std::to_string(limit));
}

// mode: 0 gather (out at k <- src at index), 1 assign (out at index <- src at k), 2 add (out at index += alpha *
// src at k). vector: `index` is 1-d and applies to every position (index_select, index_add, index_copy);
// otherwise it has a value per position and step (gather, scatter). `prefill`: an array copied into `out`
// first (the functional forms), or None. `wrap`: negative indices count from the end (advanced indexing).
// `precheck`: every index is checked before anything is written; `index` must then be the caller's private
// copy. Without it each index is checked as it is used, and a bad one may leave `out` half-written: only
// for a fresh `out`. Returns False when the dtypes or layout are not handled here (the caller then uses
// numpy), having written nothing; raises IndexError naming a bad index.
bool dim_index(int mode, py::array out, py::array src, py::array index, int dim, bool vector, double alpha,
               py::object prefill, bool precheck, bool wrap) {
  if (mode < kGather || mode > kAdd) fail("unknown mode");
  const int nd = static_cast<int>(out.ndim());
  if (nd < 1 || nd > kMaxDims || src.ndim() != nd) fail("out and src must have the same number of dims (1 to 64)");
  if (dim < 0 || dim >= nd) fail("dim out of range");
  if (vector ? index.ndim() != 1 : index.ndim() != nd) fail("index has the wrong number of dims");
  if (out.dtype().num() != src.dtype().num() || out.itemsize() != src.itemsize()) return false;
  if (mode == kAdd ? !(kind_is(out, 'f', 4) || kind_is(out, 'f', 8) || kind_is(out, 'i', 8) || kind_is(out, 'i', 4))
                   : !(out.itemsize() == 1 || out.itemsize() == 2 || out.itemsize() == 4 || out.itemsize() == 8))
    return false;
  const bool i64 = kind_is(index, 'i', 8), i32 = kind_is(index, 'i', 4);
  if (!(i64 || i32)) return false;
  if (out.dtype().byteorder() == '>' || index.dtype().byteorder() == '>') return false;
  if (!is_aligned(out) || !is_aligned(src) || !is_aligned(index)) return false;
  check_in_bounds(out, "out", true);
  check_in_bounds(src, "src", false);
  check_in_bounds(index, "index", false);
  if (has_internal_overlap(out)) return false;
  if (may_overlap(out, index) || may_overlap(out, src)) return false;  // the caller copies and retries

  // Which array's shape spans the positions and steps, and the size each index must stay under.
  const py::array& space = vector ? (mode == kGather ? out : src) : index;
  const index_t limit = mode == kGather ? src.shape(dim) : out.shape(dim);
  for (int d = 0; d < nd; ++d) {
    const index_t n = space.shape(d);
    if (vector) {
      const py::array& other = mode == kGather ? src : out;
      if (d != dim && other.shape(d) != n) fail("shapes differ off the indexed dim");
      if (d == dim && index.shape(0) != n) fail("index length differs from the indexed dim");
    } else {
      if (mode == kGather ? out.shape(d) != n : src.shape(d) < n) fail("index larger than src");
      const py::array& other = mode == kGather ? src : out;
      if (d != dim && other.shape(d) < n) fail("index larger than the indexed array off dim");
    }
  }
  if (prefill.is_none() == false) {
    const py::array pre = prefill.cast<py::array>();
    if (pre.ndim() != nd) fail("prefill must have out's shape");
    for (int d = 0; d < nd; ++d)
      if (pre.shape(d) != out.shape(d)) fail("prefill must have out's shape");
  }

  Plan p;
  p.steps = space.shape(dim);
  p.out_d = out.strides(dim);
  p.src_d = src.strides(dim);
  p.idx_d = vector ? index.strides(0) : index.strides(dim);
  p.vector = vector;
  for (int d = 0; d < nd; ++d) {
    if (d == dim) continue;
    const index_t n = space.shape(d);
    if (n == 1) continue;  // a dim of one adds nothing to the offsets
    p.size[p.nd] = n;
    p.out_st[p.nd] = out.strides(d);
    p.src_st[p.nd] = src.strides(d);
    p.idx_st[p.nd] = vector ? 0 : index.strides(d);
    p.positions *= n;
    ++p.nd;
  }
  for (int d = 0; d < nd; ++d)
    if (space.shape(d) == 0) p.positions = 0;

  const Range rg(limit, wrap);
  const bool big = p.positions * p.steps >= kParallelGrain || index.size() >= kParallelGrain;
  if (precheck) {
    bool found = false;
    index_t bad = 0;
    {
      std::unique_ptr<py::gil_scoped_release> nogil(big ? new py::gil_scoped_release : nullptr);
      bad = i64 ? first_bad<std::int64_t>(index, rg, found) : first_bad<std::int32_t>(index, rg, found);
    }
    if (found) out_of_bounds(bad, dim, limit);
  }
  if (!prefill.is_none() && prefill.ptr() != out.ptr()) {
    const py::array pre = prefill.cast<py::array>();
    if (!copy_into(out, pre)) {
      // Another dtype or layout: numpy's copy (looked up once, kept for the life of the process).
      static py::object* copyto = new py::object(py::module_::import("numpy").attr("copyto"));
      (*copyto)(out, prefill, py::arg("casting") = "unsafe");
    }
  }
  if (p.positions == 0 || p.steps == 0) return true;
  char* po = static_cast<char*>(out.mutable_data());
  const char* ps = static_cast<const char*>(src.data());
  const char* pi = static_cast<const char*>(index.data());
  Fault fault;
  bool handled;
  {
    std::unique_ptr<py::gil_scoped_release> nogil(big ? new py::gil_scoped_release : nullptr);
    handled = i64 ? dispatch_type<std::int64_t>(mode, out, p, po, ps, pi, alpha, rg, fault)
                  : dispatch_type<std::int32_t>(mode, out, p, po, ps, pi, alpha, rg, fault);
  }
  if (fault.seen()) out_of_bounds(fault.value(), dim, limit);
  return handled;
}

void register_index_ops(py::module_& m) {
  m.def("dim_index", &dim_index, py::arg("mode"), py::arg("out"), py::arg("src"), py::arg("index"), py::arg("dim"),
        py::arg("vector"), py::arg("alpha") = 1.0, py::arg("prefill") = py::none(), py::arg("precheck") = true,
        py::arg("wrap") = false,
        "gather / index_select (mode 0), scatter / index_copy (1), scatter_add / index_add (2) along `dim`; "
        "`precheck=False` only for a fresh `out` (each index is then checked as it is used).");
}

FLAMBEAU_REGISTER(register_index_ops);

}  // namespace
}  // namespace flambeau
