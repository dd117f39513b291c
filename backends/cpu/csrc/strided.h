// Iterating over an output and the inputs broadcast to its shape, in parallel, one inner row at a time.
//
// The dims are reordered so that the innermost has the output's smallest stride, then merged where
// every operand is contiguous across them, so a contiguous case becomes one long row and a transpose
// still walks the output in memory order. Strides are in elements (callers check alignment first).
#pragma once

#include "common.h"

namespace flambeau {

constexpr int kMaxOperands = 3;  // out plus two inputs
constexpr int kMaxDims = 64;     // numpy's NPY_MAXDIMS

struct StridedLoop {
  int noperands = 0;
  int ndim = 0;
  index_t shape[kMaxDims];
  index_t stride[kMaxOperands][kMaxDims];  // in elements
  char* base[kMaxOperands];
  index_t item[kMaxOperands];  // bytes per element
  index_t numel = 0;
};

// Builds the loop over `out` (operand 0) and `inputs` broadcast to out's shape. The caller has already
// checked dtypes, that each input broadcasts to out, bounds and alignment.
inline void build_loop(StridedLoop& L, const py::array& out, const py::array* inputs, int ninputs) {
  L.noperands = 1 + ninputs;
  const int ond = static_cast<int>(out.ndim());
  const py::array* ops[kMaxOperands] = {&out, ninputs > 0 ? inputs : nullptr, ninputs > 1 ? inputs + 1 : nullptr};
  index_t shape[kMaxDims], stride[kMaxOperands][kMaxDims];
  int nd = 0;
  L.numel = 1;
  for (int d = 0; d < ond; ++d) {
    const index_t size = out.shape(d);
    L.numel *= size;
    if (size == 1) continue;  // size-1 dims never move a pointer
    shape[nd] = size;
    for (int k = 0; k < L.noperands; ++k) {
      const py::array& a = *ops[k];
      const int shift = ond - static_cast<int>(a.ndim());
      const bool present = d >= shift && a.shape(d - shift) != 1;
      stride[k][nd] = present ? a.strides(d - shift) / static_cast<index_t>(a.itemsize()) : 0;
    }
    ++nd;
  }
  // Order dims by the output's stride, largest outermost (insertion sort: at most 64 dims).
  int order[kMaxDims];
  for (int i = 0; i < nd; ++i) order[i] = i;
  auto key = [&](int i) { const index_t s = stride[0][i]; return s < 0 ? -s : s; };
  for (int i = 1; i < nd; ++i) {
    const int v = order[i];
    int j = i - 1;
    while (j >= 0 && key(order[j]) < key(v)) { order[j + 1] = order[j]; --j; }
    order[j + 1] = v;
  }
  // Merge neighbours that are contiguous for every operand.
  L.ndim = 0;
  for (int i = 0; i < nd; ++i) {
    const int src = order[i];
    if (L.ndim > 0) {
      const int last = L.ndim - 1;
      bool mergeable = true;
      for (int k = 0; k < L.noperands; ++k) {
        if (L.stride[k][last] != stride[k][src] * shape[src]) { mergeable = false; break; }
      }
      if (mergeable) {
        L.shape[last] *= shape[src];
        for (int k = 0; k < L.noperands; ++k) L.stride[k][last] = stride[k][src];
        continue;
      }
    }
    L.shape[L.ndim] = shape[src];
    for (int k = 0; k < L.noperands; ++k) L.stride[k][L.ndim] = stride[k][src];
    ++L.ndim;
  }
  if (L.ndim == 0) {  // a single element
    L.ndim = 1;
    L.shape[0] = 1;
    for (int k = 0; k < L.noperands; ++k) L.stride[k][0] = 0;
  }
  for (int k = 0; k < L.noperands; ++k) {
    L.base[k] = static_cast<char*>(const_cast<void*>(ops[k]->data()));
    L.item[k] = static_cast<index_t>(ops[k]->itemsize());
  }
}

// Calls row(ptrs, n, inner_strides) for the inner rows covering elements [begin, end) of the loop
// (in its iteration order), on the calling thread. `ptrs` are byte pointers to the row's first
// element of each operand; strides are in elements.
template <class Row>
void run_rows(const StridedLoop& L, index_t begin, index_t end, Row&& row) {
  if (begin >= end) return;
  const int last = L.ndim - 1;
  const index_t inner = L.shape[last];
  index_t istride[kMaxOperands] = {0, 0, 0};
  for (int k = 0; k < L.noperands; ++k) istride[k] = L.stride[k][last];
  // The coordinates of `begin` (divisions once per range), then an odometer from row to row: a
  // division costs more than copying a short row.
  index_t c = begin % inner, rem = begin / inner;
  index_t coord[kMaxDims];
  index_t off[kMaxOperands] = {0, 0, 0};
  for (int d = last - 1; d >= 0; --d) {
    coord[d] = rem % L.shape[d];
    rem /= L.shape[d];
    for (int k = 0; k < L.noperands; ++k) off[k] += coord[d] * L.stride[k][d];
  }
  for (index_t pos = begin; pos < end;) {
    const index_t n = std::min(inner - c, end - pos);
    char* ptrs[kMaxOperands] = {nullptr, nullptr, nullptr};
    for (int k = 0; k < L.noperands; ++k) ptrs[k] = L.base[k] + (off[k] + c * istride[k]) * L.item[k];
    row(ptrs, n, istride);
    pos += n;
    c = 0;
    for (int d = last - 1; d >= 0; --d) {  // the next row
      if (++coord[d] < L.shape[d]) {
        for (int k = 0; k < L.noperands; ++k) off[k] += L.stride[k][d];
        break;
      }
      for (int k = 0; k < L.noperands; ++k) off[k] -= (L.shape[d] - 1) * L.stride[k][d];
      coord[d] = 0;
    }
  }
}

// run_rows over the whole loop, split over threads when large.
template <class Row>
void run_loop(const StridedLoop& L, Row&& row) {
  if (L.numel == 0) return;
  parallel_chunks(L.numel, kParallelChunk, [&](index_t begin, index_t end) { run_rows(L, begin, end, row); });
}

}  // namespace flambeau
