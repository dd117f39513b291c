// flambeau_cpu._C: the CPU backend's C++ kernels. Each source file registers its own functions
// (FLAMBEAU_REGISTER in common.h), so adding a kernel file never needs an edit here.
#include "common.h"

namespace py = pybind11;

namespace {

int num_threads() { return flambeau::max_threads(); }

void set_num_threads(int n) {
  if (n < 1) throw std::runtime_error("set_num_threads expects a positive integer");  // RuntimeError, as in PyTorch
  flambeau::set_max_threads(n);
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "flambeau CPU kernels";
  m.def("get_num_threads", &num_threads, "Threads used by the kernels");
  m.def("set_num_threads", &set_num_threads, py::arg("n"), "Set the threads used by the kernels");
  for (auto fn : flambeau::registrations()) fn(m);
}
