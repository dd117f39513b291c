// Fused multi-tensor optimizer updates for the ops flambeau-optim declares (optim_sgd, optim_adam,
// optim_adagrad, optim_rmsprop). Each call updates every tensor of a parameter group in one pass over
// memory: the element-wise maths of one step is done per element in registers, where the composite
// (one flambeau op at a time) reads and writes each buffer several times.
//
// The Python side (flambeau_cpu/kernels/optim.py) hands over, per tensor, C-contiguous aligned
// float32/float64 arrays of equal size and dtype; they are checked again here before any write.
// Work is split into chunks across all tensors so that one OpenMP region covers the whole group.
#include <cmath>

#include "common.h"

namespace flambeau {
namespace {

// One tensor's buffers, as raw pointers (gathered with the GIL held, used without it).
struct Row {
  void* p[5] = {nullptr, nullptr, nullptr, nullptr, nullptr};
  index_t n = 0;
  DType dt = DType::other;
};

struct Chunk {
  std::size_t row;
  index_t begin, end;
};

constexpr index_t kChunk = 16384;

// The element loops are compiled twice, for baseline x86-64 and for x86-64-v3 (AVX2, FMA), and the
// loader picks one for the running CPU: portable builds still use wide vectors where they exist.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(__AVX2__) && __GNUC__ >= 12
#define FLAMBEAU_OPTIM_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define FLAMBEAU_OPTIM_CLONES
#endif
#define FLAMBEAU_INLINE inline __attribute__((always_inline))

// Check that lists[k][i] are usable together and collect their pointers. lists[0] are the params.
std::vector<Row> gather(const char* op, const std::vector<py::list>& lists, const std::vector<bool>& written) {
  const std::size_t count = py::len(lists[0]);
  for (std::size_t k = 1; k < lists.size(); ++k) {
    if (py::len(lists[k]) != count) {
      throw py::value_error(std::string(op) + ": every tensor list must have as many tensors as params");
    }
  }
  std::vector<Row> rows(count);
  for (std::size_t i = 0; i < count; ++i) {
    Row& row = rows[i];
    for (std::size_t k = 0; k < lists.size(); ++k) {
      if (!py::isinstance<py::array>(lists[k][i])) throw py::type_error(std::string(op) + ": expected numpy arrays");
      py::array a = py::reinterpret_borrow<py::array>(lists[k][i]);
      const DType dt = dtype_of(a);
      if (k == 0) {
        if (dt != DType::f32 && dt != DType::f64) {
          throw py::type_error(std::string(op) + ": params must be float32 or float64, got " + dtype_name(dt));
        }
        row.dt = dt;
        row.n = static_cast<index_t>(a.size());
      } else if (dt != row.dt || static_cast<index_t>(a.size()) != row.n) {
        throw py::value_error(std::string(op) + ": tensor " + std::to_string(i) + " of list " + std::to_string(k) +
                              " does not match its param's dtype and size");
      }
      if (!(a.flags() & py::array::c_style) || !is_aligned(a)) {
        throw py::value_error(std::string(op) + ": tensors must be C-contiguous and aligned");
      }
      check_in_bounds(a, op, written[k]);
      row.p[k] = const_cast<void*>(a.data());
    }
  }
  return rows;
}

std::vector<Chunk> chunks_of(const std::vector<Row>& rows, index_t& total) {
  std::vector<Chunk> chunks;
  total = 0;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (index_t b = 0; b < rows[r].n; b += kChunk) chunks.push_back({r, b, std::min(rows[r].n, b + kChunk)});
    total += rows[r].n;
  }
  return chunks;
}

// Run body(row_index, row, begin, end) over every chunk, on as many threads as the work warrants.
template <class Body>
void run_chunks(const std::vector<Row>& rows, Body body) {
  index_t total = 0;
  const std::vector<Chunk> chunks = chunks_of(rows, total);
  const int nthreads = threads_for(total);
  const std::int64_t nchunks = static_cast<std::int64_t>(chunks.size());
  py::gil_scoped_release release;
#pragma omp parallel for schedule(static) num_threads(nthreads) if (nthreads > 1)
  for (std::int64_t c = 0; c < nchunks; ++c) {
    const Chunk& ch = chunks[c];
    body(ch.row, rows[ch.row], ch.begin, ch.end);
  }
}

template <class T>
inline T maximum_nan(T a, T b) {  // torch.maximum: NaN wins
  return (a != a || a > b) ? a : b;
}

// -- SGD -------------------------------------------------------------------------------------------

template <class T>
FLAMBEAU_INLINE void sgd_range(const Row& row, index_t b, index_t e, double weight_decay, double momentum, double lr, double dampening,
               bool nesterov, bool maximize, bool first) {
  T* __restrict p = static_cast<T*>(row.p[0]);
  const T* __restrict g = static_cast<const T*>(row.p[1]);
  T* __restrict buf = static_cast<T*>(row.p[2]);
  const T wd = static_cast<T>(weight_decay), mom = static_cast<T>(momentum), neg_lr = static_cast<T>(-lr);
  const T keep = static_cast<T>(1 - dampening);
  const T sign = maximize ? T(-1) : T(1);
  if (momentum == 0) {
    for (index_t i = b; i < e; ++i) {
      const T d = sign * g[i] + wd * p[i];
      p[i] += neg_lr * d;
    }
    return;
  }
  for (index_t i = b; i < e; ++i) {
    T d = sign * g[i] + wd * p[i];
    const T bi = first ? d : mom * buf[i] + keep * d;
    buf[i] = bi;
    d = nesterov ? d + mom * bi : bi;
    p[i] += neg_lr * d;
  }
}

FLAMBEAU_OPTIM_CLONES void sgd_f32(const Row& r, index_t b, index_t e, double wd, double mom, double lr, double damp,
                             bool nesterov, bool maximize, bool first) {
  sgd_range<float>(r, b, e, wd, mom, lr, damp, nesterov, maximize, first);
}
FLAMBEAU_OPTIM_CLONES void sgd_f64(const Row& r, index_t b, index_t e, double wd, double mom, double lr, double damp,
                             bool nesterov, bool maximize, bool first) {
  sgd_range<double>(r, b, e, wd, mom, lr, damp, nesterov, maximize, first);
}

void optim_sgd(py::list params, py::list grads, py::list bufs, double weight_decay, double momentum, double lr,
               double dampening, bool nesterov, bool maximize, bool is_first_step) {
  std::vector<py::list> lists = {params, grads};
  std::vector<bool> written = {true, false};
  if (momentum != 0) {
    lists.push_back(bufs);
    written.push_back(true);
  }
  const std::vector<Row> rows = gather("optim_sgd", lists, written);
  run_chunks(rows, [&](std::size_t, const Row& row, index_t b, index_t e) {
    if (row.dt == DType::f32)
      sgd_f32(row, b, e, weight_decay, momentum, lr, dampening, nesterov, maximize, is_first_step);
    else
      sgd_f64(row, b, e, weight_decay, momentum, lr, dampening, nesterov, maximize, is_first_step);
  });
}

// -- Adam / AdamW -----------------------------------------------------------------------------------

template <class T>
FLAMBEAU_INLINE void adam_range(const Row& row, index_t b, index_t e, double step_size, double bc2_sqrt, double beta1, double beta2,
                double lr, double weight_decay, double eps, bool maximize, bool decoupled, bool amsgrad) {
  T* __restrict p = static_cast<T*>(row.p[0]);
  const T* __restrict g = static_cast<const T*>(row.p[1]);
  T* __restrict m = static_cast<T*>(row.p[2]);
  T* __restrict v = static_cast<T*>(row.p[3]);
  T* __restrict vmax = static_cast<T*>(row.p[4]);
  const T sign = maximize ? T(-1) : T(1);
  const T decay = static_cast<T>(decoupled ? 1 - lr * weight_decay : 1);
  const T l2 = static_cast<T>(decoupled ? 0 : weight_decay);
  const T w1 = static_cast<T>(1 - beta1), b2 = static_cast<T>(beta2), w2 = static_cast<T>(1 - beta2);
  const T inv_bc2_sqrt = static_cast<T>(1 / bc2_sqrt), epsilon = static_cast<T>(eps);
  const T neg_step = static_cast<T>(-step_size);
  for (index_t i = b; i < e; ++i) {
    const T pi = p[i] * decay;
    const T gi = sign * g[i] + l2 * pi;
    const T mi = m[i] + w1 * (gi - m[i]);
    const T vi = b2 * v[i] + w2 * gi * gi;
    m[i] = mi;
    v[i] = vi;
    T vv = vi;
    if (amsgrad) {
      vv = maximum_nan(vmax[i], vi);
      vmax[i] = vv;
    }
    const T denom = std::sqrt(vv) * inv_bc2_sqrt + epsilon;
    p[i] = pi + neg_step * mi / denom;
  }
}

FLAMBEAU_OPTIM_CLONES void adam_f32(const Row& r, index_t b, index_t e, double ss, double bc2, double b1, double b2,
                              double lr, double wd, double eps, bool maximize, bool decoupled, bool amsgrad) {
  adam_range<float>(r, b, e, ss, bc2, b1, b2, lr, wd, eps, maximize, decoupled, amsgrad);
}
FLAMBEAU_OPTIM_CLONES void adam_f64(const Row& r, index_t b, index_t e, double ss, double bc2, double b1, double b2,
                              double lr, double wd, double eps, bool maximize, bool decoupled, bool amsgrad) {
  adam_range<double>(r, b, e, ss, bc2, b1, b2, lr, wd, eps, maximize, decoupled, amsgrad);
}

void optim_adam(py::list params, py::list grads, py::list exp_avgs, py::list exp_avg_sqs, py::list max_exp_avg_sqs,
                std::vector<double> step_sizes, std::vector<double> bc2_sqrts, double beta1, double beta2, double lr,
                double weight_decay, double eps, bool maximize, bool decoupled, bool amsgrad) {
  std::vector<py::list> lists = {params, grads, exp_avgs, exp_avg_sqs};
  std::vector<bool> written = {true, false, true, true};
  if (amsgrad) {
    lists.push_back(max_exp_avg_sqs);
    written.push_back(true);
  }
  const std::vector<Row> rows = gather("optim_adam", lists, written);
  if (step_sizes.size() != rows.size() || bc2_sqrts.size() != rows.size()) {
    throw py::value_error("optim_adam: one step size and bias correction per tensor is needed");
  }
  run_chunks(rows, [&](std::size_t r, const Row& row, index_t b, index_t e) {
    if (row.dt == DType::f32)
      adam_f32(row, b, e, step_sizes[r], bc2_sqrts[r], beta1, beta2, lr, weight_decay, eps, maximize,
                        decoupled, amsgrad);
    else
      adam_f64(row, b, e, step_sizes[r], bc2_sqrts[r], beta1, beta2, lr, weight_decay, eps, maximize,
                         decoupled, amsgrad);
  });
}

// -- Adagrad ----------------------------------------------------------------------------------------

template <class T>
FLAMBEAU_INLINE void adagrad_range(const Row& row, index_t b, index_t e, double clr, double weight_decay, double eps, bool maximize) {
  T* __restrict p = static_cast<T*>(row.p[0]);
  const T* __restrict g = static_cast<const T*>(row.p[1]);
  T* __restrict s = static_cast<T*>(row.p[2]);
  const T sign = maximize ? T(-1) : T(1), wd = static_cast<T>(weight_decay), epsilon = static_cast<T>(eps);
  const T neg_clr = static_cast<T>(-clr);
  for (index_t i = b; i < e; ++i) {
    const T gi = sign * g[i] + wd * p[i];
    const T si = s[i] + gi * gi;
    s[i] = si;
    p[i] += neg_clr * gi / (std::sqrt(si) + epsilon);
  }
}

FLAMBEAU_OPTIM_CLONES void adagrad_f32(const Row& r, index_t b, index_t e, double clr, double wd, double eps, bool maximize) {
  adagrad_range<float>(r, b, e, clr, wd, eps, maximize);
}
FLAMBEAU_OPTIM_CLONES void adagrad_f64(const Row& r, index_t b, index_t e, double clr, double wd, double eps, bool maximize) {
  adagrad_range<double>(r, b, e, clr, wd, eps, maximize);
}

void optim_adagrad(py::list params, py::list grads, py::list state_sums, std::vector<double> clrs, double weight_decay,
                   double eps, bool maximize) {
  const std::vector<Row> rows = gather("optim_adagrad", {params, grads, state_sums}, {true, false, true});
  if (clrs.size() != rows.size()) throw py::value_error("optim_adagrad: one learning rate per tensor is needed");
  run_chunks(rows, [&](std::size_t r, const Row& row, index_t b, index_t e) {
    if (row.dt == DType::f32)
      adagrad_f32(row, b, e, clrs[r], weight_decay, eps, maximize);
    else
      adagrad_f64(row, b, e, clrs[r], weight_decay, eps, maximize);
  });
}

// -- RMSprop ----------------------------------------------------------------------------------------

template <class T>
FLAMBEAU_INLINE void rmsprop_range(const Row& row, index_t b, index_t e, double lr, double alpha, double eps, double weight_decay,
                   double momentum, bool centered, bool maximize) {
  T* __restrict p = static_cast<T*>(row.p[0]);
  const T* __restrict g = static_cast<const T*>(row.p[1]);
  T* __restrict sq = static_cast<T*>(row.p[2]);
  T* __restrict ga = static_cast<T*>(row.p[3]);  // grad averages, when centered
  T* __restrict buf = static_cast<T*>(row.p[4]);  // momentum buffers, when momentum > 0
  const T sign = maximize ? T(-1) : T(1), wd = static_cast<T>(weight_decay);
  const T a = static_cast<T>(alpha), wa = static_cast<T>(1 - alpha), epsilon = static_cast<T>(eps);
  const T mom = static_cast<T>(momentum), neg_lr = static_cast<T>(-lr);
  for (index_t i = b; i < e; ++i) {
    const T gi = sign * g[i] + wd * p[i];
    const T si = a * sq[i] + wa * gi * gi;
    sq[i] = si;
    T avg;
    if (centered) {
      const T gai = ga[i] + wa * (gi - ga[i]);
      ga[i] = gai;
      avg = std::sqrt(si - gai * gai) + epsilon;
    } else {
      avg = std::sqrt(si) + epsilon;
    }
    if (momentum > 0) {
      const T bi = mom * buf[i] + gi / avg;
      buf[i] = bi;
      p[i] += neg_lr * bi;
    } else {
      p[i] += neg_lr * gi / avg;
    }
  }
}

FLAMBEAU_OPTIM_CLONES void rmsprop_f32(const Row& r, index_t b, index_t e, double lr, double alpha, double eps, double wd,
                                 double mom, bool centered, bool maximize) {
  rmsprop_range<float>(r, b, e, lr, alpha, eps, wd, mom, centered, maximize);
}
FLAMBEAU_OPTIM_CLONES void rmsprop_f64(const Row& r, index_t b, index_t e, double lr, double alpha, double eps, double wd,
                                 double mom, bool centered, bool maximize) {
  rmsprop_range<double>(r, b, e, lr, alpha, eps, wd, mom, centered, maximize);
}

void optim_rmsprop(py::list params, py::list grads, py::list square_avgs, py::list grad_avgs, py::list bufs, double lr,
                   double alpha, double eps, double weight_decay, double momentum, bool centered, bool maximize) {
  // Rows are laid out as (param, grad, square_avg, grad_avg, buf) whichever of the last two are used.
  std::vector<py::list> lists = {params, grads, square_avgs};
  std::vector<bool> written = {true, false, true};
  const std::size_t count = py::len(params);
  py::list placeholder;  // an unused slot points at the param (never dereferenced)
  for (std::size_t i = 0; i < count; ++i) placeholder.append(params[i]);
  lists.push_back(centered ? grad_avgs : placeholder);
  written.push_back(true);
  lists.push_back(momentum > 0 ? bufs : placeholder);
  written.push_back(true);
  const std::vector<Row> rows = gather("optim_rmsprop", lists, written);
  run_chunks(rows, [&](std::size_t, const Row& row, index_t b, index_t e) {
    if (row.dt == DType::f32)
      rmsprop_f32(row, b, e, lr, alpha, eps, weight_decay, momentum, centered, maximize);
    else
      rmsprop_f64(row, b, e, lr, alpha, eps, weight_decay, momentum, centered, maximize);
  });
}

void register_optim(py::module_& m) {
  m.def("optim_sgd", &optim_sgd, "Fused SGD step over lists of params, grads and momentum buffers (in place).");
  m.def("optim_adam", &optim_adam, "Fused Adam/AdamW step over lists of params, grads and moments (in place).");
  m.def("optim_adagrad", &optim_adagrad, "Fused Adagrad step over lists of params, grads and sums (in place).");
  m.def("optim_rmsprop", &optim_rmsprop, "Fused RMSprop step over lists of params, grads and averages (in place).");
}

}  // namespace
}  // namespace flambeau

FLAMBEAU_REGISTER(flambeau::register_optim);
