// Threaded copies between strided arrays of one dtype: the data movement behind cat, stack, flip,
// roll and repeat (copy_into, copy_many), and tril/triu (triangle_into).
//
// numpy moves these with one thread, and walks negative strides (flip) one element at a time;
// here the work is split over the kernel threads, rows copy with memcpy when both sides are
// contiguous, and a reversed row is a loop the compiler vectorises. Each returns false,
// leaving the copy to numpy, for anything they do not handle (different dtypes, byte-swapped or
// unaligned arrays, overlapping memory); they never write before every check has passed.
#include "copy.h"

#include "strided.h"

#include <algorithm>
#include <memory>
#include <type_traits>

namespace flambeau {
namespace {

struct Wide {  // a 16-byte element (complex128) moved as a unit
  std::uint64_t lo, hi;
};

// Reversed rows (flip's inner loop), compiled per ISA: wider vectors reverse more elements per shuffle.
FLAMBEAU_CLONES void reverse_row(std::uint32_t* o, const std::uint32_t* s, index_t n) {
  for (index_t j = 0; j < n; ++j) o[j] = s[-j];
}
FLAMBEAU_CLONES void reverse_row(std::uint64_t* o, const std::uint64_t* s, index_t n) {
  for (index_t j = 0; j < n; ++j) o[j] = s[-j];
}

// One row of n elements: out stride `os`, source stride `ss`, in elements.
template <class T>
inline void copy_row(char* out, const char* src, index_t n, index_t os, index_t ss) {
  T* o = reinterpret_cast<T*>(out);
  const T* s = reinterpret_cast<const T*>(src);
  if (os == 1 && ss == 1) {
    std::memcpy(o, s, static_cast<size_t>(n) * sizeof(T));
  } else if (os == 1 && ss == 0) {
    std::fill(o, o + n, *s);
  } else if (os == 1 && ss == -1) {
    if constexpr (std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::uint64_t>) {
      reverse_row(o, s, n);
    } else {
      for (index_t j = 0; j < n; ++j) o[j] = s[-j];
    }
  } else {
    for (index_t j = 0; j < n; ++j) o[j * os] = s[j * ss];
  }
}

// Same dtype, native byte order, aligned: the arrays these kernels can move as raw bytes.
bool movable(const py::array& out, const py::array& src) {
  if (src.dtype().num() != out.dtype().num() || src.itemsize() != out.itemsize()) return false;
  if (out.dtype().byteorder() == '>' || src.dtype().byteorder() == '>') return false;
  switch (out.itemsize()) {
    case 1: case 2: case 4: case 8: case 16: break;
    default: return false;
  }
  return is_aligned(out) && is_aligned(src);
}

template <class T>
void copy_rows(const StridedLoop& L, index_t begin, index_t end) {
  run_rows(L, begin, end, [](char** p, index_t n, const index_t* st) { copy_row<T>(p[0], p[1], n, st[0], st[1]); });
}

// Copies elements [begin, end) of the loop (in its iteration order), typed by its item size.
void copy_range(const StridedLoop& L, index_t begin, index_t end) {
  switch (L.item[0]) {
    case 1: copy_rows<std::uint8_t>(L, begin, end); break;
    case 2: copy_rows<std::uint16_t>(L, begin, end); break;
    case 4: copy_rows<std::uint32_t>(L, begin, end); break;
    case 8: copy_rows<std::uint64_t>(L, begin, end); break;
    default: copy_rows<Wide>(L, begin, end); break;
  }
}

// Checks one (out, src) pair and builds its loop. Raises for shapes that do not broadcast and for
// read-only or out-of-bounds views; false when the pair is not a raw-bytes move (numpy's job then).
bool plan_copy(StridedLoop& L, const py::array& out, const py::array& src) {
  if (src.ndim() > out.ndim()) throw py::value_error("copy_into: src has more dims than out");
  const int shift = static_cast<int>(out.ndim() - src.ndim());
  for (int d = 0; d < src.ndim(); ++d) {
    if (src.shape(d) != 1 && src.shape(d) != out.shape(d + shift)) {
      throw py::value_error("copy_into: src of shape " + shape_str(src) + " does not broadcast to " + shape_str(out));
    }
  }
  check_in_bounds(out, "out", true);
  check_in_bounds(src, "src", false);
  if (out.size() == 0) {
    L.numel = 0;
    return true;
  }
  if (!movable(out, src) || has_internal_overlap(out) || may_overlap(out, src)) return false;
  build_loop(L, out, &src, 1);
  return true;
}

// outs[i] <- srcs[i] for every pair in one parallel region (cat: a pair per input, so the threads
// wake once per call rather than once per input). Every pair is checked before anything is copied:
// false, having copied nothing, when any pair is not a raw-bytes move or a source may share memory
// with another pair's out. The outs themselves are the caller's to keep apart (cat's are disjoint
// slices of one array, which an extent check would take for overlapping); overlapping outs could
// only make the result order-dependent, never take a copy outside its arrays.
bool copy_many(const std::vector<py::array>& outs, const std::vector<py::array>& srcs) {
  if (outs.size() != srcs.size()) throw py::value_error("copy_many: needs as many outs as srcs");
  const size_t n = outs.size();
  std::vector<StridedLoop> loops(n);
  index_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!plan_copy(loops[i], outs[i], srcs[i])) return false;
    for (size_t j = 0; j < i; ++j) {
      if (may_overlap(outs[i], srcs[j]) || may_overlap(srcs[i], outs[j])) {
        return false;
      }
    }
    total += loops[i].numel;
  }
  if (total == 0) return true;
  std::unique_ptr<py::gil_scoped_release> nogil(total >= kParallelGrain ? new py::gil_scoped_release : nullptr);
  // Each thread takes the same share of every pair: for cat, thread t fills the same band of output
  // rows from every input. Handing out the combined range instead gave each thread whole inputs, so
  // both threads wrote every output row and fought over the cache line where the inputs meet
  // (cat of two 1000 x 500 inputs ran at a third of PyTorch's speed in the machine's slow mode:
  // see parallel_chunks).
  const int nthreads = static_cast<int>(std::min<index_t>(threads_for(total), (total + kParallelChunk - 1) / kParallelChunk));
  parallel_team(nthreads, [&](int thread, int team) {
    for (size_t i = 0; i < n; ++i) {
      index_t lo = 0, hi = 0;
      split_range(loops[i].numel, thread, team, lo, hi);
      if (hi > lo) copy_range(loops[i], lo, hi);
    }
  });
  return true;
}

// The byte offset of row q (over all dims but the last) of `a`.
inline index_t row_offset(const py::array& a, index_t q) {
  index_t off = 0;
  for (int d = static_cast<int>(a.ndim()) - 2; d >= 0; --d) {
    const index_t size = a.shape(d);
    off += (q % size) * a.strides(d);
    q /= size;
  }
  return off;
}

template <class T>
void run_triangle(py::array& out, const py::array& src, index_t diagonal, bool lower, bool in_place) {
  const int nd = static_cast<int>(out.ndim());
  const index_t rows = out.shape(nd - 2), cols = out.shape(nd - 1);
  const index_t all_rows = out.size() / cols;
  const index_t item = sizeof(T);
  const index_t os = out.strides(nd - 1) / item, ss = src.strides(nd - 1) / item;
  char* po = static_cast<char*>(out.mutable_data());
  const char* ps = static_cast<const char*>(src.data());
  auto work = [&](index_t begin, index_t end) {
    for (index_t q = begin; q < end; ++q) {
      const index_t r = q % rows;
      // The row keeps columns [keep_lo, keep_hi) and zeroes the rest.
      const index_t edge = std::min(cols, std::max<index_t>(0, lower ? r + diagonal + 1 : r + diagonal));
      const index_t keep_lo = lower ? 0 : edge, keep_hi = lower ? edge : cols;
      T* o = reinterpret_cast<T*>(po + row_offset(out, q));
      const T* s = reinterpret_cast<const T*>(ps + row_offset(src, q));
      if (!in_place && keep_hi > keep_lo) {
        copy_row<T>(reinterpret_cast<char*>(o + keep_lo * os), reinterpret_cast<const char*>(s + keep_lo * ss),
                    keep_hi - keep_lo, os, ss);
      }
      const T zero{};
      for (index_t j = 0; j < keep_lo; ++j) o[j * os] = zero;
      for (index_t j = keep_hi; j < cols; ++j) o[j * os] = zero;
    }
  };
  const index_t chunk = std::max<index_t>(1, kParallelChunk / std::max<index_t>(cols, 1));
  parallel_chunks(all_rows, chunk, work, out.size());
}

// out <- tril(src, diagonal) (lower) or triu(src, diagonal), over the last two dims; out may be src.
bool triangle_into(py::array out, const py::array& src, index_t diagonal, bool lower) {
  if (out.ndim() < 2 || src.ndim() != out.ndim()) throw py::value_error("triangle_into: needs two arrays of >= 2 dims");
  for (int d = 0; d < out.ndim(); ++d) {
    if (src.shape(d) != out.shape(d)) {
      throw py::value_error("triangle_into: shapes " + shape_str(src) + " and " + shape_str(out) + " differ");
    }
  }
  check_in_bounds(out, "out", true);
  check_in_bounds(src, "src", false);
  if (out.size() == 0) return true;
  if (!movable(out, src) || has_internal_overlap(out)) return false;
  // Past these the triangle is empty or whole: clamped, so that `row + diagonal` cannot overflow.
  const index_t rows = out.shape(out.ndim() - 2), cols = out.shape(out.ndim() - 1);
  diagonal = std::min(std::max(diagonal, -rows - 1), cols + 1);
  const bool in_place = out.data() == src.data() && same_elements(src, out);
  if (!in_place && may_overlap(out, src)) return false;
  std::unique_ptr<py::gil_scoped_release> nogil(out.size() >= kParallelGrain ? new py::gil_scoped_release : nullptr);
  switch (out.itemsize()) {
    case 1: run_triangle<std::uint8_t>(out, src, diagonal, lower, in_place); break;
    case 2: run_triangle<std::uint16_t>(out, src, diagonal, lower, in_place); break;
    case 4: run_triangle<std::uint32_t>(out, src, diagonal, lower, in_place); break;
    case 8: run_triangle<std::uint64_t>(out, src, diagonal, lower, in_place); break;
    default: run_triangle<Wide>(out, src, diagonal, lower, in_place); break;
  }
  return true;
}

// -- where: out <- cond ? a : b ---------------------------------------------------------------

// One contiguous run; a_step and b_step are 1 (an array) or 0 (a 0-d value). The select is written
// as masks (T is an unsigned integer of the element's size), so it has no branch and vectorises: an
// unpredictable mask costs nothing. numpy's where, and a ternary here, branch per element: a random
// 1000x1000 mask took them 3.6 and 1.7 ms.
template <class T>
FLAMBEAU_CLONES void select_run(T* o, const bool* c, const T* a, index_t a_step, const T* b, index_t b_step,
                                index_t n) {
  const std::uint8_t* flag = reinterpret_cast<const std::uint8_t*>(c);
  if (a_step && b_step) {
    for (index_t i = 0; i < n; ++i) {
      const T m = static_cast<T>(0) - static_cast<T>(flag[i] != 0);
      o[i] = (a[i] & m) | (b[i] & ~m);
    }
  } else if (a_step) {
    const T bv = *b;
    for (index_t i = 0; i < n; ++i) {
      const T m = static_cast<T>(0) - static_cast<T>(flag[i] != 0);
      o[i] = (a[i] & m) | (bv & ~m);
    }
  } else if (b_step) {
    const T av = *a;
    for (index_t i = 0; i < n; ++i) {
      const T m = static_cast<T>(0) - static_cast<T>(flag[i] != 0);
      o[i] = (av & m) | (b[i] & ~m);
    }
  } else {
    const T av = *a, bv = *b;
    for (index_t i = 0; i < n; ++i) {
      const T m = static_cast<T>(0) - static_cast<T>(flag[i] != 0);
      o[i] = (av & m) | (bv & ~m);
    }
  }
}

// Whether `x` can feed select_into for `out`: out's dtype, aligned, and either C-contiguous of
// out's shape or 0-d; sets the step (1 or 0).
bool select_operand(const py::array& out, const py::array& x, index_t& step) {
  if (x.dtype().num() != out.dtype().num() || x.itemsize() != out.itemsize() || !is_aligned(x)) return false;
  if (x.dtype().byteorder() == '>') return false;
  if (x.ndim() == 0) {
    step = 0;
    return true;
  }
  if (x.ndim() != out.ndim() || !c_contiguous(x)) return false;
  for (int d = 0; d < out.ndim(); ++d)
    if (x.shape(d) != out.shape(d)) return false;
  step = 1;
  return true;
}

// out <- where(cond, a, b) for a bool cond and out, C-contiguous and of one shape, with a and b of
// out's dtype, each of that shape or 0-d (either may be out itself). False, having written nothing,
// for anything else (broadcasting, strides, casts, overlapping memory): numpy is the fallback.
bool select_into(py::array out, const py::array& cond, const py::array& a, const py::array& b) {
  check_in_bounds(out, "out", true);
  check_in_bounds(cond, "condition", false);
  check_in_bounds(a, "input", false);
  check_in_bounds(b, "other", false);
  if (!c_contiguous(out) || !c_contiguous(cond) || cond.dtype().kind() != 'b' || cond.ndim() != out.ndim()) return false;
  for (int d = 0; d < out.ndim(); ++d)
    if (cond.shape(d) != out.shape(d)) return false;
  index_t a_step = 0, b_step = 0;
  if (!select_operand(out, a, a_step) || !select_operand(out, b, b_step) || !is_aligned(out)) return false;
  if (out.dtype().byteorder() == '>') return false;
  // An operand may be out itself (masked_fill_ writes in place): each element is read before it is
  // written, at the same index. Any other overlap is numpy's to handle.
  auto apart = [&](const py::array& x) { return !may_overlap(out, x) || (x.data() == out.data() && same_elements(x, out)); };
  if (may_overlap(out, cond) || !apart(a) || !apart(b)) return false;
  const index_t n = out.size();
  if (n == 0) return true;
  char* po = static_cast<char*>(out.mutable_data());
  const bool* pc = static_cast<const bool*>(cond.data());
  const char *pa = static_cast<const char*>(a.data()), *pb = static_cast<const char*>(b.data());
  const index_t item = out.itemsize();
  auto run = [&](auto tag) {
    using T = decltype(tag);
    std::unique_ptr<py::gil_scoped_release> nogil(n >= kParallelGrain ? new py::gil_scoped_release : nullptr);
    parallel_chunks(n, kParallelChunk, [&](index_t begin, index_t end) {
      select_run<T>(reinterpret_cast<T*>(po) + begin, pc + begin,
                    reinterpret_cast<const T*>(pa) + begin * a_step, a_step,
                    reinterpret_cast<const T*>(pb) + begin * b_step, b_step, end - begin);
    });
  };
  switch (item) {
    case 1: run(std::uint8_t{}); break;
    case 2: run(std::uint16_t{}); break;
    case 4: run(std::uint32_t{}); break;
    case 8: run(std::uint64_t{}); break;
    default: return false;
  }
  return true;
}

void register_copy(py::module_& m) {
  m.def("select_into", &select_into, py::arg("out"), py::arg("condition"), py::arg("input"), py::arg("other"),
        "out <- where(condition, input, other), threaded, for same-shape contiguous arrays (input/other may be "
        "0-d); False when it declines.");
  m.def("copy_into", &copy_into, py::arg("out"), py::arg("src"),
        "out <- src (broadcast to out's shape), threaded; False when it declines (dtype, alignment, overlap).");
  m.def("copy_many", &copy_many, py::arg("outs"), py::arg("srcs"),
        "outs[i] <- srcs[i] for each pair in one threaded pass; False, copying nothing, when any pair declines.");
  m.def("triangle_into", &triangle_into, py::arg("out"), py::arg("src"), py::arg("diagonal"), py::arg("lower"),
        "out <- tril(src) (lower) or triu(src) over the last two dims; False when it declines.");
}

}  // namespace

bool copy_into(py::array out, const py::array& src) {
  StridedLoop L;
  if (!plan_copy(L, out, src)) return false;
  if (L.numel == 0) return true;
  std::unique_ptr<py::gil_scoped_release> nogil(L.numel >= kParallelGrain ? new py::gil_scoped_release : nullptr);
  parallel_chunks(L.numel, kParallelChunk, [&](index_t begin, index_t end) { copy_range(L, begin, end); });
  return true;
}

FLAMBEAU_REGISTER(register_copy);

}  // namespace flambeau
