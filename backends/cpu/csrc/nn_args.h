// Argument checks shared by the nn kernels that take their arrays as Python objects (GIL held).
#pragma once

#include <string>

#include "common.h"

namespace flambeau {
namespace nn_args {

namespace py = pybind11;

// Checks that each array is present (unless optional and None), of dtype `dt`, C-contiguous, aligned,
// in bounds, with `size` elements; returns its data pointer (nullptr for None).
inline void* pointer(const char* op, const py::object& obj, const char* name, DType dt, index_t size, bool optional,
              bool written) {
  if (obj.is_none()) {
    if (optional) return nullptr;
    throw py::value_error(std::string(op) + ": " + name + " is required");
  }
  if (!py::isinstance<py::array>(obj)) throw py::type_error(std::string(op) + ": " + name + " must be a numpy array");
  py::array a = py::reinterpret_borrow<py::array>(obj);
  if (dtype_of(a) != dt) throw py::type_error(std::string(op) + ": " + name + " has the wrong dtype");
  if (!c_contiguous(a) || !is_aligned(a)) {
    throw py::value_error(std::string(op) + ": " + name + " must be C-contiguous and aligned");
  }
  if (static_cast<index_t>(a.size()) != size) {
    throw py::value_error(std::string(op) + ": " + name + " has " + std::to_string(a.size()) + " elements, expected " +
                          std::to_string(size));
  }
  check_in_bounds(a, name, written);
  return written ? a.mutable_data() : const_cast<void*>(a.data());
}

inline DType float_dtype(const char* op, const py::array& x) {
  const DType dt = dtype_of(x);
  if (dt != DType::f32 && dt != DType::f64) throw py::type_error(std::string(op) + ": expected float32 or float64");
  return dt;
}

}  // namespace nn_args
}  // namespace flambeau
