// OpenBLAS's parallel work on the kernels' OpenMP pool: one pool of threads for the whole backend.
//
// numpy and scipy each bundle an OpenBLAS with a pthreads pool of its own. Its idle workers spin
// (calling sched_yield) for about 0.1 s after every threaded call, and libgomp's idle workers spin
// without yielding for a while after every parallel region; on a 2-core machine a matmul followed
// by a reduction then waits for the other pool's spinner to lose its core (about 8 ms instead of
// 0.2 ms). Since 0.3.28 OpenBLAS accepts a callback that runs its jobs in place of its own pool
// (openblas_set_threads_callback_function); flambeau_cpu._threads registers `run_blas_jobs` with
// every OpenBLAS it finds, so BLAS and the C++ kernels share the OpenMP team.
#include "common.h"

#include <cstddef>
#include <cstdlib>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <dlfcn.h>
#include <link.h>
#endif

namespace flambeau {

namespace {

// The types of OpenBLAS's cblas.h (openblas_dojob_callback, openblas_threads_callback).
using DoJob = void (*)(int thread_num, void* jobdata, int dojob_data);

// OpenBLAS hands job i a per-thread buffer indexed by i, not by the thread that runs it: two calls
// in flight at once (from two Python threads, numpy releases the GIL) would share those buffers.
// Its own pool serialises them too (one job per worker at a time).
std::mutex g_blas_mutex;

// Runs job `first..numjobs-1` on threads of their own: the jobs of one call wait for each other
// (level-3 routines pass packed blocks between jobs), so each must run at the same time as the rest.
void run_on_new_threads(DoJob dojob, int first, int numjobs, std::size_t elsize, char* jobs, int data,
                        std::vector<std::thread>& threads) {
  for (int i = first; i < numjobs; ++i) {
    threads.emplace_back([=] { dojob(i, jobs + static_cast<std::size_t>(i) * elsize, data); });
  }
}

// OpenBLAS's openblas_threads_callback: run dojob(i, jobdata + i * elsize, dojob_data) for every
// i < numjobs, all at once, and return when all are done (`sync` is always 1 in OpenBLAS's calls).
void run_blas_jobs(int /*sync*/, DoJob dojob, int numjobs, std::size_t elsize, void* jobdata,
                              int dojob_data) {
  char* jobs = static_cast<char*>(jobdata);
  if (numjobs <= 1) {
    if (numjobs == 1) dojob(0, jobs, dojob_data);
    return;
  }
  std::lock_guard<std::mutex> lock(g_blas_mutex);
#ifdef _OPENMP
  // Inside another parallel region (a caller's own OpenMP code) the team would have one thread;
  // in a forked child the region would wait for the parent's workers forever.
  if (omp_in_parallel() == 0 && !in_forked_child()) {
#pragma omp parallel num_threads(numjobs)
    {
      const int tid = omp_get_thread_num(), team = omp_get_num_threads();
      // OpenMP may give fewer threads than asked (OMP_THREAD_LIMIT, OMP_DYNAMIC): the rest get
      // threads of their own, started before this thread's job, which may wait for theirs.
      std::vector<std::thread> extra;
      if (tid == 0 && team < numjobs) run_on_new_threads(dojob, team, numjobs, elsize, jobs, dojob_data, extra);
      dojob(tid, jobs + static_cast<std::size_t>(tid) * elsize, dojob_data);
      for (auto& t : extra) t.join();
    }
    return;
  }
#endif
  std::vector<std::thread> extra;
  run_on_new_threads(dojob, 1, numjobs, elsize, jobs, dojob_data, extra);
  dojob(0, jobs, dojob_data);
  for (auto& t : extra) t.join();
}

using SetCallback = void (*)(decltype(&run_blas_jobs));


// The libraries already given the callback (by path), so that each is found and set once.
std::set<std::string> g_shared;

#if defined(__linux__)
// openblas_set_threads_callback_function as each build names it: plain OpenBLAS, and the
// scipy-openblas wheels that numpy (64-bit integers: suffix 64_) and scipy bundle.
const char* const kSetterNames[] = {
    "openblas_set_threads_callback_function",         "scipy_openblas_set_threads_callback_function64_",
    "scipy_openblas_set_threads_callback_function",   "openblas_set_threads_callback_function64_",
    "openblas_set_threads_callback_function_64",
};

int collect_paths(struct dl_phdr_info* info, std::size_t, void* paths) {
  if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') {
    static_cast<std::vector<std::string>*>(paths)->push_back(info->dlpi_name);
  }
  return 0;
}

using NoArgs = int (*)();

// OpenBLAS's parallel LU (getrf_parallel, behind numpy's and scipy's solve, inv, det, lu_factor) still
// hands jobs to OpenBLAS's own workers (exec_blas_async, the one path the callback does not cover),
// and each worker then spins, calling sched_yield, for 2**28 cycles (~0.1 s) before it sleeps. On 2
// cores that spinner took a core from everything after it: a user's own np.linalg.solve of 1500x1500
// after `import flambeau` ran 1.7-1.9x its time without flambeau, and a matmul right after it 2x
// (docs/performance.md). So each library is told, as OPENBLAS_THREAD_TIMEOUT=4 would at its load, to
// let its workers sleep at once (2**4 cycles): the setting is read again (openblas_read_env, with the
// variable set for that call only, so child processes do not inherit it) and the pool is shut down
// (blas_thread_shutdown_, idle here), to start again with it at its next use. A timeout the user set
// is left alone. Libraries without these exported functions keep their spinning workers.
void quiet_own_workers(void* handle) {
  auto read_env = reinterpret_cast<void (*)()>(dlsym(handle, "openblas_read_env"));
  auto shutdown = reinterpret_cast<NoArgs>(dlsym(handle, "blas_thread_shutdown_"));
  if (read_env == nullptr || shutdown == nullptr || std::getenv("OPENBLAS_THREAD_TIMEOUT") != nullptr) return;
  setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);
  read_env();  // every OPENBLAS_* setting again: the others read as they were at the library's load
  unsetenv("OPENBLAS_THREAD_TIMEOUT");
  shutdown();
}
#endif

// Gives every OpenBLAS loaded in the process and not yet seen the callback; returns their paths.
// Called with the GIL held (and so never twice at once). OpenBLAS reads the callback pointer at
// each threaded call: setting it between calls is safe, so OpenBLAS's own workers simply stay
// parked from then on.
std::vector<std::string> share_blas_pools() {
  std::vector<std::string> added;
#if defined(__linux__)
  std::vector<std::string> paths;
  dl_iterate_phdr(collect_paths, &paths);
  for (const std::string& path : paths) {
    if (path.find("blas") == std::string::npos) continue;
    void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);  // a new reference, not a new load
    if (handle == nullptr) continue;
    void* setter = nullptr;
    for (const char* name : kSetterNames) {
      setter = dlsym(handle, name);  // searches the library's dependencies too (scipy's _fblas)
      if (setter != nullptr) break;
    }
    if (setter == nullptr) {  // not an OpenBLAS, or one older than 0.3.28
      dlclose(handle);
      continue;
    }
    // Keyed by the library that defines the setter, which a dependant such as _fblas is not.
    Dl_info where;
    const std::string owner = dladdr(setter, &where) != 0 && where.dli_fname ? where.dli_fname : path;
    if (g_shared.insert(owner).second) {
      reinterpret_cast<SetCallback>(setter)(&run_blas_jobs);
      if (void* lib = dlopen(owner.c_str(), RTLD_LAZY | RTLD_NOLOAD)) {  // its own functions, not a dependency's
        quiet_own_workers(lib);
        dlclose(lib);
      }
      added.push_back(owner);
    }
    // The reference is kept, so that the library holding our callback is never unloaded and reloaded
    // without it (a reload would bring its own pool back).
  }
#endif
  return added;
}

void register_blas_threads(py::module_& m) {
  m.def("share_blas_pools", &share_blas_pools,
        "Run the parallel jobs of every OpenBLAS loaded since the last call on the kernels' OpenMP "
        "threads (openblas_set_threads_callback_function); returns the paths of those libraries");
}

FLAMBEAU_REGISTER(register_blas_threads);

}  // namespace

}  // namespace flambeau
