// The checks from common.h: dtypes, bounds of strided views, overlap between operands.
#include "common.h"

#include <pthread.h>

#include <atomic>

namespace flambeau {

namespace {
std::atomic<int> g_threads{0};  // 0: not set yet, use OpenMP's default

// libgomp's pool does not survive fork(): the child's first parallel region waits forever for the
// parent's worker threads. So a forked child runs every kernel on its calling thread.
std::atomic<bool> g_forked_child{false};
void mark_forked_child() { g_forked_child.store(true, std::memory_order_relaxed); }
const int g_fork_handler = pthread_atfork(nullptr, nullptr, mark_forked_child);
}  // namespace

bool in_forked_child() { return g_forked_child.load(std::memory_order_relaxed); }

int max_threads() {
  if (in_forked_child()) return 1;
  const int n = g_threads.load(std::memory_order_relaxed);
  if (n > 0) return n;
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void set_max_threads(int n) {
  g_threads.store(n, std::memory_order_relaxed);
#ifdef _OPENMP
  omp_set_num_threads(n);  // for kernels elsewhere that ask OpenMP directly
#endif
}

std::vector<Registration>& registrations() {
  static std::vector<Registration> fns;  // a function-local static: safe whatever the init order
  return fns;
}

DType dtype_of(const py::array& a) {
  const py::dtype dt = a.dtype();
  const char order = dt.byteorder();
  if (order == '>') return DType::other;  // byte-swapped data: numpy's problem, not ours
  switch (dt.num()) {
    case py::detail::npy_api::NPY_FLOAT_: return DType::f32;
    case py::detail::npy_api::NPY_DOUBLE_: return DType::f64;
    case py::detail::npy_api::NPY_BOOL_: return DType::boolean;
    case py::detail::npy_api::NPY_LONG_:
      return dt.itemsize() == 8 ? DType::i64 : DType::other;
    case py::detail::npy_api::NPY_LONGLONG_:
      return dt.itemsize() == 8 ? DType::i64 : DType::other;
    default: return DType::other;
  }
}

const char* dtype_name(DType d) {
  switch (d) {
    case DType::f32: return "float32";
    case DType::f64: return "float64";
    case DType::boolean: return "bool";
    case DType::i64: return "int64";
    default: return "an unsupported dtype";
  }
}

void byte_extent(const py::array& a, index_t& lo, index_t& hi) {
  lo = hi = 0;
  if (a.size() == 0) return;
  const index_t nd = a.ndim();
  bool overflow = false;
  for (index_t d = 0; d < nd; ++d) {
    // as_strided accepts any shape and strides: the products may not fit in 64 bits.
    index_t span;
    overflow |= __builtin_mul_overflow(static_cast<index_t>(a.shape(d)) - 1, static_cast<index_t>(a.strides(d)), &span);
    overflow |= span < 0 ? __builtin_add_overflow(lo, span, &lo) : __builtin_add_overflow(hi, span, &hi);
  }
  overflow |= __builtin_add_overflow(hi, static_cast<index_t>(a.itemsize()), &hi);
  if (overflow) throw py::value_error("an array's shape and strides span more memory than can be addressed");
}

namespace {

// The memory [begin, end) that the object at the root of `a`'s base chain owns, or false when that
// cannot be known (then the root array's own extent, which numpy built, is the bound).
bool owner_range(const py::array& a, const char*& begin, const char*& end) {
  py::array cur = a;
  for (int hops = 0; hops < 64; ++hops) {
    py::object base = cur.base();
    if (!base || base.is_none()) break;
    if (py::isinstance<py::array>(base)) {
      cur = py::reinterpret_borrow<py::array>(base);
      continue;
    }
    // A raw buffer (bytes, bytearray, mmap, memoryview): its length is the bound.
    Py_buffer view;
    if (PyObject_GetBuffer(base.ptr(), &view, PyBUF_SIMPLE) == 0) {
      begin = static_cast<const char*>(view.buf);
      end = begin + view.len;
      PyBuffer_Release(&view);
      return true;
    }
    PyErr_Clear();
    // as_strided wraps its source in a helper object whose `base` attribute is the real array.
    if (py::hasattr(base, "base")) {
      py::object inner = base.attr("base");
      if (py::isinstance<py::array>(inner)) {
        cur = py::reinterpret_borrow<py::array>(inner);
        continue;
      }
    }
    break;  // some other owner (a DLPack capsule, ...): trust the array numpy made over it
  }
  index_t lo, hi;
  byte_extent(cur, lo, hi);
  begin = static_cast<const char*>(cur.data()) + lo;
  end = static_cast<const char*>(cur.data()) + hi;
  return true;
}

}  // namespace

void check_in_bounds(const py::array& a, const char* name, bool writeable) {
  if (writeable && !a.writeable()) throw py::value_error(std::string(name) + " is read-only");
  if (a.size() == 0) return;
  index_t lo, hi;
  byte_extent(a, lo, hi);
  const char* data = static_cast<const char*>(a.data());
  const char *begin, *end;
  owner_range(a, begin, end);
  if (data + lo < begin || data + hi > end) {
    throw py::value_error(std::string(name) + ": its shape and strides reach outside the memory it views");
  }
}

bool is_aligned(const py::array& a) {
  const index_t item = a.itemsize();
  if (reinterpret_cast<std::uintptr_t>(a.data()) % item != 0) return false;
  for (index_t d = 0; d < a.ndim(); ++d) {
    if (a.shape(d) > 1 && a.strides(d) % item != 0) return false;
  }
  return true;
}

bool may_overlap(const py::array& a, const py::array& b) {
  if (a.size() == 0 || b.size() == 0) return false;
  index_t alo, ahi, blo, bhi;
  byte_extent(a, alo, ahi);
  byte_extent(b, blo, bhi);
  const char* pa = static_cast<const char*>(a.data());
  const char* pb = static_cast<const char*>(b.data());
  return pa + alo < pb + bhi && pb + blo < pa + ahi;
}

bool same_elements(const py::array& a, const py::array& out) {
  if (a.data() != out.data() || a.itemsize() != out.itemsize() || a.ndim() > out.ndim()) return false;
  const index_t shift = out.ndim() - a.ndim();
  for (index_t d = 0; d < out.ndim(); ++d) {
    if (out.shape(d) <= 1) continue;
    const index_t sa = d < shift || a.shape(d - shift) == 1 ? 0 : a.strides(d - shift);
    if (sa != out.strides(d)) return false;
  }
  return true;
}

bool has_internal_overlap(const py::array& a) {
  for (index_t d = 0; d < a.ndim(); ++d) {
    if (a.shape(d) > 1 && a.strides(d) == 0) return true;
  }
  return false;
}

std::string shape_str(const py::array& a) {
  std::string s = "[";
  for (index_t d = 0; d < a.ndim(); ++d) {
    if (d) s += ", ";
    s += std::to_string(a.shape(d));
  }
  return s + "]";
}

}  // namespace flambeau
