// Running sums and products along the last dim (cumsum, cumprod), threaded over rows.
//
// A plain scan is bound by the latency of its one dependency chain (out[i] = out[i-1] + x[i]). Here
// each block of 8 elements first forms its own prefix (independent of the carry, so consecutive
// blocks overlap in the out-of-order core), then adds the carry: the chain is one add per 8 elements.
// float32 accumulates in double, as PyTorch's CPU kernel does.
//
// The caller (flambeau_cpu/kernels/cumulative.py) hands C-contiguous arrays of one dtype; shapes,
// dtypes and bounds are checked again here before any write. out may be the input itself (cumsum_).
#include "common.h"

namespace flambeau {
namespace {

struct Add {
  template <class A>
  static A apply(A a, A b) { return a + b; }
  template <class A>
  static constexpr A identity() { return A(0); }
};

struct Mul {
  template <class A>
  static A apply(A a, A b) { return a * b; }
  template <class A>
  static constexpr A identity() { return A(1); }
};

template <class Op, class T, class A>
FLAMBEAU_CLONES void scan_row(const T* x, T* y, index_t n) {
  A carry = Op::template identity<A>();
  index_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const A l0 = A(x[i]);
    const A l1 = Op::apply(l0, A(x[i + 1]));
    const A l2 = Op::apply(l1, A(x[i + 2]));
    const A l3 = Op::apply(l2, A(x[i + 3]));
    const A l4 = Op::apply(l3, A(x[i + 4]));
    const A l5 = Op::apply(l4, A(x[i + 5]));
    const A l6 = Op::apply(l5, A(x[i + 6]));
    const A l7 = Op::apply(l6, A(x[i + 7]));
    y[i] = T(Op::apply(carry, l0));
    y[i + 1] = T(Op::apply(carry, l1));
    y[i + 2] = T(Op::apply(carry, l2));
    y[i + 3] = T(Op::apply(carry, l3));
    y[i + 4] = T(Op::apply(carry, l4));
    y[i + 5] = T(Op::apply(carry, l5));
    y[i + 6] = T(Op::apply(carry, l6));
    y[i + 7] = T(Op::apply(carry, l7));
    carry = Op::apply(carry, l7);
  }
  for (; i < n; ++i) {
    carry = Op::apply(carry, A(x[i]));
    y[i] = T(carry);
  }
}

constexpr index_t kScanParallelMin = index_t(1) << 22;

template <class Op, class T, class A>
void scan_rows(const T* x, T* y, index_t rows, index_t n) {
  // Rows are independent: a chunk is a range of whole rows of about kParallelChunk elements.
  const index_t per_chunk = std::max<index_t>(1, kParallelChunk / std::max<index_t>(n, 1));
  const index_t nchunks = (rows + per_chunk - 1) / per_chunk;
  // A scan streams at a few elements per ns: below ~4M elements one thread finishes before a sleeping
  // worker is reliably awake (on a busy machine a wake-up can cost a whole scheduler time slice).
  const index_t work = rows * n;
  const int nthreads = work < kScanParallelMin ? 1 : static_cast<int>(std::min<index_t>(threads_for(work), nchunks));
  if (nthreads <= 1) {
    for (index_t r = 0; r < rows; ++r) scan_row<Op, T, A>(x + r * n, y + r * n, n);
    return;
  }
#pragma omp parallel for schedule(static) num_threads(nthreads)
  for (index_t c = 0; c < nchunks; ++c) {
    const index_t end = std::min(rows, (c + 1) * per_chunk);
    for (index_t r = c * per_chunk; r < end; ++r) scan_row<Op, T, A>(x + r * n, y + r * n, n);
  }
}

template <class Op>
void scan(const char* name, const py::array& input, py::array& out) {
  if (dtype_of(input) != dtype_of(out) || input.ndim() != out.ndim() || input.size() != out.size()) {
    throw py::value_error(std::string(name) + ": input and out must have the same dtype and shape");
  }
  for (py::ssize_t d = 0; d < input.ndim(); ++d) {
    if (input.shape(d) != out.shape(d)) throw py::value_error(std::string(name) + ": shape mismatch");
  }
  if (input.ndim() == 0 || input.size() == 0) return;
  const bool contiguous = (input.flags() & py::array::c_style) && (out.flags() & py::array::c_style);
  if (!contiguous || !is_aligned(input) || !is_aligned(out)) {
    throw py::value_error(std::string(name) + ": expected C-contiguous aligned arrays");
  }
  check_in_bounds(input, "input", false);
  check_in_bounds(out, "out", true);
  if (input.data() != out.data() && may_overlap(input, out)) {
    throw py::value_error(std::string(name) + ": out partly overlaps input");
  }
  const index_t n = input.shape(input.ndim() - 1);
  const index_t rows = static_cast<index_t>(input.size()) / n;
  const DType dt = dtype_of(input);
  if (dt != DType::f32 && dt != DType::f64 && dt != DType::i64) {
    throw py::type_error(std::string(name) + ": expected float32, float64 or int64, got " + dtype_name(dt));
  }
  const void* src = input.data();
  void* dst = out.mutable_data();
  py::gil_scoped_release nogil;
  if (dt == DType::f32) {
    scan_rows<Op, float, double>(static_cast<const float*>(src), static_cast<float*>(dst), rows, n);
  } else if (dt == DType::f64) {
    scan_rows<Op, double, double>(static_cast<const double*>(src), static_cast<double*>(dst), rows, n);
  } else {
    // Integers accumulate unsigned: overflow wraps (as in PyTorch) instead of being undefined.
    scan_rows<Op, std::int64_t, std::uint64_t>(static_cast<const std::int64_t*>(src),
                                                static_cast<std::int64_t*>(dst), rows, n);
  }
}

void cumsum_lastdim(const py::array& input, py::array& out) { scan<Add>("cumsum_lastdim", input, out); }
void cumprod_lastdim(const py::array& input, py::array& out) { scan<Mul>("cumprod_lastdim", input, out); }

void register_cumulative(py::module_& m) {
  m.def("cumsum_lastdim", &cumsum_lastdim, py::arg("input"), py::arg("out"),
        "Running sums along the last dim of a C-contiguous float32/float64/int64 array into out (may be input).");
  m.def("cumprod_lastdim", &cumprod_lastdim, py::arg("input"), py::arg("out"),
        "Running products along the last dim of a C-contiguous float32/float64/int64 array into out.");
}

}  // namespace

FLAMBEAU_REGISTER(register_cumulative);

}  // namespace flambeau
