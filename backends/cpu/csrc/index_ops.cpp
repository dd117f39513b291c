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
// Every index is checked against the indexed dim's size before anything is written, and every
// array's strided extent is checked against its buffer, so no argument can make these kernels
// touch memory outside the arrays.
#include "common.h"
#include "copy.h"

#include <atomic>
#include <limits>
#include <memory>
#include <type_traits>

namespace flambeau {
namespace {

enum Mode : int { kGather = 0, kAssign = 1, kAdd = 2 };

constexpr int kMaxDims = 64;
constexpr index_t kBlock = 512;  // positions whose offsets a task computes at once

struct Plan {
  int nd = 0;  // dims off the indexed one
  index_t size[kMaxDims];
  index_t out_st[kMaxDims], src_st[kMaxDims], idx_st[kMaxDims];  // byte strides over those dims
  index_t out_d = 0, src_d = 0, idx_d = 0;  // byte strides along the indexed dim
  index_t positions = 1, steps = 0;
  bool vector = false;  // one index per step (index_select...): whole runs move with memcpy
};

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

// One run of `r` positions along the innermost position dim (byte strides os, ss, is), at step k.
template <class T, class I, int M>
inline void run_span(char* o, const char* s, const char* i, index_t r, index_t os, index_t ss, index_t is,
                     index_t out_d, index_t src_d, T alpha) {
  if (is == 0) {  // one index for the whole run (index_select, index_add, index_copy)
    const index_t v = static_cast<index_t>(*reinterpret_cast<const I*>(i));
    if (M == kGather) {
      s += v * src_d;
    } else {
      o += v * out_d;
    }
    if (M != kAdd && os == static_cast<index_t>(sizeof(T)) && ss == static_cast<index_t>(sizeof(T))) {
      std::memcpy(o, s, static_cast<size_t>(r) * sizeof(T));
      return;
    }
    if (os == static_cast<index_t>(sizeof(T)) && ss == static_cast<index_t>(sizeof(T))) {
      T* po = reinterpret_cast<T*>(o);
      const T* ps = reinterpret_cast<const T*>(s);
      for (index_t j = 0; j < r; ++j) po[j] += alpha * ps[j];
      return;
    }
    for (index_t j = 0; j < r; ++j) {
      T* dst = reinterpret_cast<T*>(o + j * os);
      const T value = *reinterpret_cast<const T*>(s + j * ss);
      if constexpr (M == kAdd) {
        *dst += alpha * value;
      } else {
        *dst = value;
      }
    }
    return;
  }
  constexpr index_t tsz = sizeof(T), isz = sizeof(I);
  if (os == tsz && ss == tsz && is == isz && out_d % tsz == 0 && src_d % tsz == 0) {
    // Everything contiguous along the run: element pointers, so the loop compiles to plain indexed loads.
    T* po = reinterpret_cast<T*>(o);
    const T* ps = reinterpret_cast<const T*>(s);
    const I* pi = reinterpret_cast<const I*>(i);
    if (M == kGather) {
      const index_t sd = src_d / tsz;
      for (index_t j = 0; j < r; ++j) po[j] = ps[j + static_cast<index_t>(pi[j]) * sd];
    } else {
      const index_t od = out_d / tsz;
      for (index_t j = 0; j < r; ++j) {
        if constexpr (M == kAdd) {
          po[j + static_cast<index_t>(pi[j]) * od] += alpha * ps[j];
        } else {
          po[j + static_cast<index_t>(pi[j]) * od] = ps[j];
        }
      }
    }
    return;
  }
  for (index_t j = 0; j < r; ++j) {
    const index_t v = static_cast<index_t>(*reinterpret_cast<const I*>(i + j * is));
    if (M == kGather) {
      *reinterpret_cast<T*>(o + j * os) = *reinterpret_cast<const T*>(s + j * ss + v * src_d);
    } else {
      T* dst = reinterpret_cast<T*>(o + j * os + v * out_d);
      const T value = *reinterpret_cast<const T*>(s + j * ss);
      if constexpr (M == kAdd) {
        *dst += alpha * value;
      } else {
        *dst = value;
      }
    }
  }
}

// out[k] = src[idx[k]] over one contiguous row, compiled per ISA (AVX2 and AVX-512 have vector
// gathers); the indices were checked beforehand.
FLAMBEAU_CLONES void gather_row(std::uint32_t* o, const std::uint32_t* s, const std::int64_t* idx, index_t n) {
  for (index_t k = 0; k < n; ++k) o[k] = s[idx[k]];
}
FLAMBEAU_CLONES void gather_row(std::uint64_t* o, const std::uint64_t* s, const std::int64_t* idx, index_t n) {
  for (index_t k = 0; k < n; ++k) o[k] = s[idx[k]];
}

// All K steps of one position, k innermost: used when the indexed dim is the one laid out
// contiguously (gather or scatter along the last dim), where walking positions innermost would
// jump a whole row per element.
template <class T, class I, int M>
inline void run_steps(char* o, const char* s, const char* i, index_t steps, index_t out_d, index_t src_d,
                      index_t idx_d, T alpha) {
  constexpr index_t tsz = sizeof(T), isz = sizeof(I);
  const index_t stream_d = M == kGather ? out_d : src_d, random_d = M == kGather ? src_d : out_d;
  if (idx_d == isz && stream_d == tsz && random_d % tsz == 0) {
    T* po = reinterpret_cast<T*>(o);
    const T* ps = reinterpret_cast<const T*>(s);
    const I* pi = reinterpret_cast<const I*>(i);
    const index_t rd = random_d / tsz;
    if constexpr (M == kGather && std::is_same_v<I, std::int64_t> &&
                  (std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::uint64_t>)) {
      if (rd == 1) {
        gather_row(po, ps, pi, steps);
        return;
      }
    }
    for (index_t k = 0; k < steps; ++k) {
      const index_t v = static_cast<index_t>(pi[k]) * rd;
      if constexpr (M == kGather) {
        po[k] = ps[v];
      } else if constexpr (M == kAdd) {
        po[v] += alpha * ps[k];
      } else {
        po[v] = ps[k];
      }
    }
    return;
  }
  for (index_t k = 0; k < steps; ++k) {
    const index_t v = static_cast<index_t>(*reinterpret_cast<const I*>(i + k * idx_d));
    if constexpr (M == kGather) {
      *reinterpret_cast<T*>(o + k * out_d) = *reinterpret_cast<const T*>(s + v * src_d);
    } else {
      T* dst = reinterpret_cast<T*>(o + v * out_d);
      const T value = *reinterpret_cast<const T*>(s + k * src_d);
      if constexpr (M == kAdd) {
        *dst += alpha * value;
      } else {
        *dst = value;
      }
    }
  }
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
void run(const Plan& p, char* out, const char* src, const char* idx, T alpha) {
  if (steps_innermost<M>(p)) {
    // Threads split the positions (each position's steps stay on one thread, so repeated indices of
    // scatter_add add up in order).
    auto positions = [&](index_t b0, index_t b1) {
      index_t oo[kBlock], so[kBlock], io[kBlock];
      for (index_t begin = b0; begin < b1; begin += kBlock) {
        const index_t n = std::min(kBlock, b1 - begin);
        offsets(p, begin, n, oo, so, io);
        for (index_t j = 0; j < n; ++j) {
          run_steps<T, I, M>(out + oo[j], src + so[j], idx + io[j], p.steps, p.out_d, p.src_d, p.idx_d, alpha);
        }
      }
    };
    parallel_chunks(p.positions, std::max<index_t>(1, kParallelChunk / std::max<index_t>(p.steps, 1)), positions,
                    p.positions * p.steps);
    return;
  }
  // Positions go in runs along the innermost position dim (the plan's last), each run one tight loop.
  const index_t inner = p.nd ? p.size[p.nd - 1] : 1;
  const index_t ios = p.nd ? p.out_st[p.nd - 1] : 0, iss = p.nd ? p.src_st[p.nd - 1] : 0,
                iis = p.nd ? p.idx_st[p.nd - 1] : 0;
  if (M == kGather && p.vector && p.nd <= 1 && ios == static_cast<index_t>(sizeof(T)) &&
      iss == static_cast<index_t>(sizeof(T))) {
    // index_select of whole contiguous slabs (rows of a matrix): one memcpy per index, split over the
    // indices only, so that no slab is cut between threads.
    const size_t bytes = static_cast<size_t>(inner) * sizeof(T);
    auto slabs = [&](index_t k0, index_t k1) {
      for (index_t k = k0; k < k1; ++k) {
        const index_t v = static_cast<index_t>(*reinterpret_cast<const I*>(idx + k * p.idx_d));
        std::memcpy(out + k * p.out_d, src + v * p.src_d, bytes);
      }
    };
    parallel_chunks(p.steps, std::max<index_t>(1, kParallelChunk / std::max<index_t>(inner, 1)), slabs,
                    p.positions * p.steps / 8);
    return;
  }
  const index_t blocks = (p.positions + kBlock - 1) / kBlock;
  const index_t per_block = std::min(p.positions, kBlock);
  // Gathers split K too when there are few positions (a 1-d gather has one).
  index_t kchunk = p.steps;
  if (M == kGather && p.steps > 0) kchunk = std::max<index_t>(1, kParallelChunk / std::max<index_t>(per_block, 1));
  const index_t ksplits = p.steps > 0 ? (p.steps + kchunk - 1) / kchunk : 1;
  const index_t tasks = blocks * ksplits;
  // Copying whole runs costs a fraction of per-element index arithmetic: such work is worth threads
  // only when much larger (on a busy machine an extra thread that wakes late costs more than it saves).
  const index_t work = p.positions * p.steps / (p.vector && M != kAdd ? 8 : 1);
  const int nthreads = static_cast<int>(std::min<index_t>(threads_for(work), tasks));
  auto task = [&](index_t t) {
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
        run_span<T, I, M>(ok + oo[j], sk + so[j], ik + io[j], r, ios, iss, iis, p.out_d, p.src_d, alpha);
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

// Whether all of n contiguous indices lie in [0, limit): one unsigned compare each (a negative index
// becomes huge), branch-free and compiled per ISA, so that the check runs at memory speed (a plain
// x86-64 build has no 64-bit vector compare; the scalar loop cost more than the gather itself).
FLAMBEAU_CLONES bool all_below(const std::int64_t* q, index_t n, index_t limit) {
  const std::uint64_t bound = static_cast<std::uint64_t>(limit);
  bool ok = true;
  for (index_t j = 0; j < n; ++j) ok &= static_cast<std::uint64_t>(q[j]) < bound;
  return ok;
}
FLAMBEAU_CLONES bool all_below(const std::int32_t* q, index_t n, index_t limit) {
  const std::uint64_t bound = static_cast<std::uint64_t>(limit);
  bool ok = true;
  for (index_t j = 0; j < n; ++j) ok &= static_cast<std::uint64_t>(static_cast<std::int64_t>(q[j])) < bound;
  return ok;
}

// Whether every entry of one run of `n` indices (stride `step` bytes) lies in [0, limit).
template <class I>
bool run_ok(const char* p, index_t n, index_t step, index_t limit) {
  bool ok = true;
  if (step == static_cast<index_t>(sizeof(I))) {
    ok = all_below(reinterpret_cast<const I*>(p), n, limit);
  } else {
    for (index_t j = 0; j < n; ++j) {
      const index_t v = static_cast<index_t>(*reinterpret_cast<const I*>(p + j * step));
      ok &= v >= 0 && v < limit;
    }
  }
  return ok;
}

// The first index outside [0, limit), scanning the index array in its own order; `found` says if any.
// Rows (the innermost dim) are checked whole; only a row with a bad entry is searched.
template <class I>
index_t first_bad(const py::array& index, index_t limit, bool& found) {
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
  std::atomic<index_t> first{std::numeric_limits<index_t>::max()};  // the first bad row
  const index_t blocks = (p.positions + kBlock - 1) / kBlock;
  const int nthreads = static_cast<int>(std::min<index_t>(threads_for(p.positions * row), blocks));
  auto block = [&](index_t b) {
    const index_t begin = b * kBlock, n = std::min(kBlock, p.positions - begin);
    if (begin > first.load(std::memory_order_relaxed)) return;
    index_t oo[kBlock], so[kBlock], io[kBlock];
    offsets(p, begin, n, oo, so, io);
    for (index_t j = 0; j < n; ++j) {
      if (!run_ok<I>(base + io[j], row, step, limit)) {
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
  if (at == std::numeric_limits<index_t>::max()) return 0;
  found = true;
  index_t oo[1], so[1], io[1];
  offsets(p, at, 1, oo, so, io);
  for (index_t j = 0; j < row; ++j) {
    const index_t v = static_cast<index_t>(*reinterpret_cast<const I*>(base + io[0] + j * step));
    if (v < 0 || v >= limit) return v;
  }
  return 0;  // unreachable: the row had a bad entry
}

void fail(const char* what) { throw std::invalid_argument(std::string("dim_index: ") + what); }

bool kind_is(const py::array& a, char kind, int itemsize) {
  return a.dtype().kind() == kind && a.itemsize() == itemsize;
}

template <class T, class I>
void dispatch_mode(int mode, const Plan& p, char* out, const char* src, const char* idx, T alpha) {
  if (mode == kGather) run<T, I, kGather>(p, out, src, idx, alpha);
  else if (mode == kAssign) run<T, I, kAssign>(p, out, src, idx, alpha);
  else run<T, I, kAdd>(p, out, src, idx, alpha);
}

template <class I>
bool dispatch_type(int mode, const py::array& out, const Plan& p, char* po, const char* ps, const char* pi,
                   double alpha) {
  if (mode == kAdd) {  // arithmetic needs the real type
    if (kind_is(out, 'f', 4)) dispatch_mode<float, I>(mode, p, po, ps, pi, static_cast<float>(alpha));
    else if (kind_is(out, 'f', 8)) dispatch_mode<double, I>(mode, p, po, ps, pi, alpha);
    else if (kind_is(out, 'i', 8)) dispatch_mode<std::int64_t, I>(mode, p, po, ps, pi, static_cast<std::int64_t>(alpha));
    else if (kind_is(out, 'i', 4)) dispatch_mode<std::int32_t, I>(mode, p, po, ps, pi, static_cast<std::int32_t>(alpha));
    else return false;
    return true;
  }
  switch (out.itemsize()) {  // copies move bytes: any dtype of the size will do
    case 1: dispatch_mode<std::uint8_t, I>(mode, p, po, ps, pi, 0); break;
    case 2: dispatch_mode<std::uint16_t, I>(mode, p, po, ps, pi, 0); break;
    case 4: dispatch_mode<std::uint32_t, I>(mode, p, po, ps, pi, 0); break;
    case 8: dispatch_mode<std::uint64_t, I>(mode, p, po, ps, pi, 0); break;
    default: return false;
  }
  return true;
}

// mode: 0 gather (out at k <- src at index), 1 assign (out at index <- src at k), 2 add (out at index += alpha *
// src at k). vector: `index` is 1-d and applies to every position (index_select, index_add, index_copy);
// otherwise it has a value per position and step (gather, scatter). `prefill`: an array copied into `out` once
// every index has been checked (the functional forms), or None. Returns False when the dtypes or layout are not
// handled here (the caller then uses numpy); raises IndexError naming a bad index before writing anything.
bool dim_index(int mode, py::array out, py::array src, py::array index, int dim, bool vector, double alpha,
               py::object prefill) {
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

  bool found = false;
  index_t bad = 0;
  const bool big = p.positions * p.steps >= kParallelGrain || index.size() >= kParallelGrain;
  {
    std::unique_ptr<py::gil_scoped_release> nogil(big ? new py::gil_scoped_release : nullptr);
    bad = i64 ? first_bad<std::int64_t>(index, limit, found) : first_bad<std::int32_t>(index, limit, found);
  }
  if (found) {
    throw py::index_error("index " + std::to_string(bad) + " is out of bounds for dimension " + std::to_string(dim) +
                          " with size " + std::to_string(limit));
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
  bool handled;
  {
    std::unique_ptr<py::gil_scoped_release> nogil(big ? new py::gil_scoped_release : nullptr);
    handled = i64 ? dispatch_type<std::int64_t>(mode, out, p, po, ps, pi, alpha)
                  : dispatch_type<std::int32_t>(mode, out, p, po, ps, pi, alpha);
  }
  return handled;
}

void register_index_ops(py::module_& m) {
  m.def("dim_index", &dim_index, py::arg("mode"), py::arg("out"), py::arg("src"), py::arg("index"), py::arg("dim"),
        py::arg("vector"), py::arg("alpha") = 1.0, py::arg("prefill") = py::none(),
        "gather / index_select (mode 0), scatter / index_copy (1), scatter_add / index_add (2) along `dim`.");
}

FLAMBEAU_REGISTER(register_index_ops);

}  // namespace
}  // namespace flambeau
