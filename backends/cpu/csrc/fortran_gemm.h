// BLAS gemm for C++ kernels that run a loop of products without returning to Python (the recurrent
// layers): the Fortran sgemm/dgemm that scipy exports as capsules (scipy.linalg.cython_blas's
// __pyx_capi__), i.e. scipy's bundled OpenBLAS. The Python side imports that module and registers the
// library with the kernels' OpenMP team (flambeau_cpu._threads.share_new_pools) before handing the
// capsule over, so these products run on the one thread pool like every numpy/scipy product does.
#pragma once

#include <climits>
#include <cstring>
#include <string>

#include "common.h"

namespace flambeau {

template <class T>
using FortranGemm = void (*)(char* transa, char* transb, int* m, int* n, int* k, T* alpha, T* a, int* lda, T* b,
                             int* ldb, T* beta, T* c, int* ldc);

// The function in the capsule `cap` (GIL held). Its name is the C signature Cython wrote, which is
// checked so that a capsule of another routine or precision is refused rather than called.
template <class T>
FortranGemm<T> gemm_from_capsule(const char* op, const py::object& cap) {
  if (!PyCapsule_CheckExact(cap.ptr())) throw py::type_error(std::string(op) + ": expected a BLAS gemm capsule");
  const char* name = PyCapsule_GetName(cap.ptr());
  const char* scalar = sizeof(T) == 4 ? "cython_blas_s *" : "cython_blas_d *";
  static const char kHead[] = "void (char *, char *, int *, int *, int *, ";
  if (name == nullptr || std::strncmp(name, kHead, sizeof(kHead) - 1) != 0 || std::strstr(name, scalar) == nullptr) {
    throw py::type_error(std::string(op) + ": the capsule is not a " + (sizeof(T) == 4 ? "s" : "d") + "gemm");
  }
  void* fn = PyCapsule_GetPointer(cap.ptr(), name);
  if (fn == nullptr) throw py::error_already_set();
  return reinterpret_cast<FortranGemm<T>>(fn);
}

// Whether every size of a product fits BLAS's 32-bit int arguments.
inline bool fits_blas_int(index_t v) { return v >= 0 && v <= INT_MAX; }

// Row-major C (m, n) = alpha * op(A) @ op(B) + beta * C, op(X) = X^T when the flag is set, A's rows
// `lda` apart (and so on). Column-major BLAS sees the transposes: C^T = op(B)^T @ op(A)^T. Callers
// check the sizes with fits_blas_int; empty products leave C to the caller (BLAS returns at once
// when m or n is 0, and k == 0 is handled here: C = beta * C).
template <class T>
void gemm_rows(FortranGemm<T> gemm, bool trans_a, bool trans_b, index_t m, index_t n, index_t k, T alpha, const T* a,
               index_t lda, const T* b, index_t ldb, T beta, T* c, index_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (index_t i = 0; i < m; ++i) {
      T* row = c + i * ldc;
      for (index_t j = 0; j < n; ++j) row[j] = beta == T(0) ? T(0) : beta * row[j];
    }
    return;
  }
  char ta = trans_b ? 'T' : 'N', tb = trans_a ? 'T' : 'N';
  int im = static_cast<int>(n), in = static_cast<int>(m), ik = static_cast<int>(k);
  int ilda = static_cast<int>(ldb), ildb = static_cast<int>(lda), ildc = static_cast<int>(ldc);
  gemm(&ta, &tb, &im, &in, &ik, &alpha, const_cast<T*>(b), &ilda, const_cast<T*>(a), &ildb, &beta, c, &ildc);
}

}  // namespace flambeau
