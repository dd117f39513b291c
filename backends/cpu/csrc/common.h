// Shared pieces of flambeau_cpu._C: registration, threading, and the checks every kernel runs
// before touching memory (dtypes, shapes, and that each strided view stays inside its buffer).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace flambeau {

namespace py = pybind11;
using index_t = std::int64_t;

// Below this many elements a kernel runs on one thread: waking the team costs more than it saves.
constexpr index_t kParallelGrain = 32768;

// -- registration: each .cpp adds its functions to the module without editing module.cpp -----------

using Registration = void (*)(py::module_&);
std::vector<Registration>& registrations();

struct Registrar {
  explicit Registrar(Registration fn) { registrations().push_back(fn); }
};

#define FLAMBEAU_CONCAT_INNER(a, b) a##b
#define FLAMBEAU_CONCAT(a, b) FLAMBEAU_CONCAT_INNER(a, b)
// Use once per translation unit: FLAMBEAU_REGISTER(register_my_kernels);
#define FLAMBEAU_REGISTER(fn) static ::flambeau::Registrar FLAMBEAU_CONCAT(flambeau_registrar_, __LINE__)(fn)

// -- CPU-specific code paths ------------------------------------------------------------------------

// Hot loops are compiled several times: for AVX-512 and AVX2 machines, and for any x86-64 (the
// default); the loader picks one when the module is imported (GCC function multi-versioning), so
// the package still runs on every x86-64 CPU. With FLAMBEAU_NATIVE_ARCH=1 the whole build targets
// this CPU instead, and elsewhere (other compilers, other architectures) there is one version.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(__AVX2__) && __GNUC__ >= 12
#define FLAMBEAU_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define FLAMBEAU_CLONES
#endif

// -- threads --------------------------------------------------------------------------------------

// The thread count the kernels use: process-wide (omp_set_num_threads alone is per calling thread,
// and PyTorch's set_num_threads is global). Starts at OpenMP's default (OMP_NUM_THREADS or cores).
// 1 in a child process forked from this one (libgomp's pool does not survive fork).
int max_threads();
void set_max_threads(int n);
// True in a process forked from the one that loaded the module: OpenMP regions would hang there.
bool in_forked_child();

// Threads to use for `work` elements: one below the grain, else at most one per grain of work.
inline int threads_for(index_t work) {
  if (work < kParallelGrain) return 1;
  const index_t by_size = work / (kParallelGrain / 2);
  return static_cast<int>(std::max<index_t>(1, std::min<index_t>(max_threads(), by_size)));
}

inline int thread_id() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

inline int team_size() {
#ifdef _OPENMP
  return omp_get_num_threads();
#else
  return 1;
#endif
}

// The part [begin, end) of [0, total) that thread `tid` of `nthreads` takes.
inline void split_range(index_t total, int tid, int nthreads, index_t& begin, index_t& end) {
  const index_t base = total / nthreads, extra = total % nthreads;
  begin = tid * base + std::min<index_t>(tid, extra);
  end = begin + base + (tid < extra ? 1 : 0);
}

// Elements per unit of work handed to a thread.
constexpr index_t kParallelChunk = 65536;

// Runs fn(thread, nthreads) on each thread of a team of `nthreads` (inline as fn(0, 1) for one).
template <class Fn>
void parallel_team(int nthreads, Fn&& fn) {
  if (nthreads <= 1) {
    fn(0, 1);
    return;
  }
#pragma omp parallel num_threads(nthreads)
  fn(thread_id(), team_size());
}

// Runs fn(task) for each task in [0, tasks) on a team of `nthreads`, handed out one at a time: a
// thread that finishes early takes the next task. For compute-bound tasks whose data is not tied to a
// thread (an LSTM's sequences, tiles of a product). On a shared host the two vCPUs often run at
// different speeds for seconds at a time (perf: one thread's share of a static split took 20% more
// samples than the other's, which then waited at the region's end); handing out 2+ tasks per thread
// lets the faster one take more. Memory-bound loops keep parallel_chunks' static split (see there).
//
// `setup(thread, nthreads)`, where given, runs first on every thread, and all finish it before any task
// starts (each thread packs its share of an operand every task reads).
template <class Setup, class Fn>
void parallel_tasks(int nthreads, index_t tasks, Setup&& setup, Fn&& fn) {
  if (tasks <= 0) return;
  nthreads = static_cast<int>(std::min<index_t>(std::max(nthreads, 1), tasks));
  if (nthreads == 1) {
    setup(0, 1);
    for (index_t t = 0; t < tasks; ++t) fn(t);
    return;
  }
  std::atomic<index_t> next{0};
  parallel_team(nthreads, [&](int thread, int team) {
    setup(thread, team);
#pragma omp barrier
    for (index_t t = next.fetch_add(1, std::memory_order_relaxed); t < tasks;
         t = next.fetch_add(1, std::memory_order_relaxed))
      fn(t);
  });
}

template <class Fn>
void parallel_tasks(int nthreads, index_t tasks, Fn&& fn) {
  parallel_tasks(nthreads, tasks, [](int, int) {}, fn);
}

// Runs fn(begin, end) over [0, n): in one piece on one thread when small, else split into one
// contiguous run of whole chunks per thread. The split is static on purpose: the same thread then
// touches the same memory at every call, so its part stays in the cache near its core. On the
// shared 2-vCPU machine this was measured on, a dynamic hand-out (a different thread per chunk at
// each call) made 1M-element copies run at half speed for minutes at a time, while PyTorch's static
// split did not (docs/performance.md, third session); most likely the host had put the two vCPUs
// under different L3 caches.
// `work` is the number of elements the whole loop touches when [0, n) counts something larger (rows):
// the thread count follows the work, not the number of items handed out.
template <class Fn>
void parallel_chunks(index_t n, index_t chunk, Fn&& fn, index_t work = -1) {
  if (n <= 0) return;
  const index_t nchunks = chunk > 0 ? (n + chunk - 1) / chunk : 1;
  const int nthreads = static_cast<int>(std::min<index_t>(threads_for(work < 0 ? n : work), nchunks));
  parallel_team(nthreads, [&](int thread, int team) {
    index_t first = 0, last = 0;
    split_range(nchunks, thread, team, first, last);
    if (last > first) fn(first * chunk, std::min(n, last * chunk));
  });
}

// -- dtypes ---------------------------------------------------------------------------------------

enum class DType { f32, f64, boolean, i64, other };

DType dtype_of(const py::array& a);
const char* dtype_name(DType d);

template <class T>
constexpr DType dtype_tag();
template <>
constexpr DType dtype_tag<float>() { return DType::f32; }
template <>
constexpr DType dtype_tag<double>() { return DType::f64; }

// -- layout checks --------------------------------------------------------------------------------

// Raises ValueError unless every element of `a` lies inside the memory owned by the object at the
// root of its base chain, and (for outputs) unless `a` is writeable. numpy keeps its own views in
// bounds, but np.lib.stride_tricks.as_strided and raw buffers do not, so this is checked, not assumed.
void check_in_bounds(const py::array& a, const char* name, bool writeable);

// True when `a` is C-contiguous (row-major without gaps).
inline bool c_contiguous(const py::array& a) { return (a.flags() & py::array::c_style) != 0; }

// True when every element's address is a multiple of the item size (numpy allows unaligned views).
bool is_aligned(const py::array& a);

// The byte offsets [lo, hi) relative to a.data() that `a` touches (lo == hi when empty).
void byte_extent(const py::array& a, index_t& lo, index_t& hi);

// True when the memory of `a` and `b` may overlap.
bool may_overlap(const py::array& a, const py::array& b);

// True when `a`, broadcast to out.shape, reads exactly the element out writes at each index, so an
// in-place kernel (out aliasing an input) stays correct whatever order the elements are visited in.
bool same_elements(const py::array& a, const py::array& out);

// True when some element of `a` is stored at the same address as another (a 0 stride on a dim > 1).
bool has_internal_overlap(const py::array& a);

std::string shape_str(const py::array& a);

}  // namespace flambeau
