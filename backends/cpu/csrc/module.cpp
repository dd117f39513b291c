// flambeau_cpu._C: the CPU backend's C++ kernels.
#include <pybind11/pybind11.h>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace py = pybind11;

namespace {
int num_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}
void set_num_threads(int n) {
  if (n < 1) throw std::invalid_argument("set_num_threads expects a positive integer");
#ifdef _OPENMP
  omp_set_num_threads(n);
#endif
}
}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "flambeau CPU kernels";
  m.def("get_num_threads", &num_threads, "Threads used by the kernels");
  m.def("set_num_threads", &set_num_threads, py::arg("n"), "Set the threads used by the kernels");
}
