// Whole recurrent layers, forward and backward, for the ops flambeau-nn declares (nn_lstm_layer,
// nn_gru_layer, nn_rnn_layer and their backward ops): one call per layer and direction.
//
// Each time step is one product with the hidden weight, packed once per call (packed_gemm.h), and one
// fused cell (nn_rnn_cells.h), looped here with the GIL released (the LSTM's threads: see its section).
// The GRU's and RNN's input projection for every step is one product before the call; the LSTM's op
// takes the input and both input-side weights and computes it here, on the packed tile, before the
// steps (one op per layer and direction for the whole of an LSTM's work). The hidden weight's gradient
// (and the LSTM's input-side gradients) are one BLAS product each at the end (fortran_gemm.h: scipy's
// OpenBLAS, on the kernels' OpenMP team).
// Rows are packed: step t runs the first batch_sizes[t] sequences, its rows start at the sum of the
// earlier steps' sizes, and the sizes never increase. A sequence that is not running keeps its state,
// so in the reverse direction (steps from the last) a sequence starts from its initial state at its
// own last step.
//
// The backward passes walk the same steps the other way. The states before each step are gathered
// into one (N, H) array, so the hidden weight's gradient is one product over all steps at the end.
//
// The Python side (flambeau_cpu/kernels/nn_rnn.py) hands over C-contiguous aligned arrays of one dtype
// (float32/float64); every size, the batch sizes and each array's element count are checked here
// before any pointer is used.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "at_b_gemm.h"
#include "common.h"
#include "fortran_gemm.h"
#include "nn_args.h"
#include "nn_rnn_cells.h"
#include "packed_gemm.h"

namespace flambeau {
namespace {

using nn_args::float_dtype;
using nn_args::pointer;

// -- the packed layout (checked with the GIL held) ------------------------------------------------

struct Steps {
  std::vector<index_t> sizes;    // batch size of each step
  std::vector<index_t> offsets;  // first row of each step
  index_t rows = 0;              // N, the sum of the sizes
  bool reverse = false;

  index_t count() const { return static_cast<index_t>(sizes.size()); }
  // The i-th step in running order.
  index_t at(index_t i) const { return reverse ? count() - 1 - i : i; }
  // The step run before step t, or -1 for the first one.
  index_t before(index_t t) const { return reverse ? (t + 1 < count() ? t + 1 : -1) : t - 1; }
};

Steps check_steps(const char* op, const std::vector<index_t>& sizes, bool reverse, index_t batch, index_t hidden,
                  index_t gates) {
  if (batch < 0 || hidden < 0) throw py::value_error(std::string(op) + ": bad sizes");
  Steps s;
  s.sizes = sizes;
  s.reverse = reverse;
  s.offsets.reserve(sizes.size());
  for (std::size_t t = 0; t < sizes.size(); ++t) {
    const index_t bs = sizes[t];
    if (bs < 0 || bs > batch || (t > 0 && bs > sizes[t - 1])) {
      throw py::value_error(std::string(op) + ": batch_sizes must be non-increasing, within [0, " +
                            std::to_string(batch) + "]");
    }
    s.offsets.push_back(s.rows);
    s.rows += bs;
  }
  // every product's sizes and leading dimensions must fit BLAS's int
  if (!fits_blas_int(s.rows) || !fits_blas_int(batch) || hidden > INT_MAX / std::max<index_t>(gates, 1)) {
    throw py::value_error(std::string(op) + ": sizes too large for BLAS");
  }
  return s;
}

template <class T>
void copy_rows(T* dst, const T* src, index_t rows, index_t width) {
  if (rows > 0) std::memcpy(dst, src, static_cast<std::size_t>(rows * width) * sizeof(T));
}

// Rows [r0, r1) (those running at step t) of the states before step t, at their rows of dst: the previous
// step's rows where it ran those sequences, the initial states for the rest (reverse direction: the
// sequences that end at step t).
template <class T>
void states_before_rows(const Steps& s, index_t t, const T* seq, const T* init, index_t hidden, index_t r0, index_t r1,
                        T* dst) {
  const index_t end = std::min(s.sizes[t], r1), prev = s.before(t);
  if (end <= r0) return;
  const index_t ran = prev >= 0 ? std::min(s.sizes[prev], end) : 0;  // rows [0, ran) ran at the step before
  const index_t mid = std::max(r0, ran);
  if (mid > r0) copy_rows(dst + r0 * hidden, seq + (s.offsets[prev] + r0) * hidden, mid - r0, hidden);
  if (end > mid) copy_rows(dst + mid * hidden, init + mid * hidden, end - mid, hidden);
}

// All rows [0, batch_sizes[t]) of states_before_rows.
template <class T>
void states_before(const Steps& s, index_t t, const T* seq, const T* init, index_t hidden, T* dst) {
  states_before_rows(s, t, seq, init, hidden, index_t(0), s.sizes[t], dst);
}

// A weight's gradient, gw (m, n) = g^T @ s over all k rows of every step: the step gradients g (k, m)
// against the states or inputs s (k, n) they multiplied. On the AVX-512 tile where the CPU has it
// (at_b_gemm.h: no packing), else one BLAS product.
template <class T>
void weight_grad(FortranGemm<T> gemm, index_t m, index_t n, index_t k, const T* g, index_t ldg, const T* s,
                 index_t lds, T* gw) {
  if (at_b::available()) {
    at_b::product(m, n, k, g, ldg, s, lds, gw, n);
  } else {
    gemm_rows<T>(gemm, true, false, m, n, k, T(1), g, ldg, s, lds, T(0), gw, n);
  }
}

// Runs fn(begin, end) over `rows` rows of `width` elements, split across threads for enough work
// (weighted as the cell ops weigh it: a few transcendental functions per element).
template <class Fn>
void over_rows(index_t rows, index_t width, Fn&& fn) {
  const index_t per_row = std::max<index_t>(1, width);
  parallel_chunks(rows, std::max<index_t>(1, kParallelChunk / per_row), fn, rows * per_row * 4);
}

// -- LSTM -----------------------------------------------------------------------------------------
//
// The LSTM's step loops run in one OpenMP region per call: each thread owns a share of the hidden units
// (whole panels of the packed weights) for the whole sequence, computes those units' columns of every
// gate's product and then their cell update, so a step ends at one barrier instead of the fork and join
// of two regions (product panels, then cell rows: ~64 regions per direction and pass, which cost more
// than the second thread gained at this layer size). Double-buffered hidden states make one barrier per
// step enough: step i reads buffer i % 2 whole and each thread writes its units of the other one.

// The threads for a step loop over `gates` blocks of h units at most `batch` rows: as many as the
// per-step work pays for (each step ends at a barrier), at most one per panel of units.
template <class T>
int step_team(index_t batch, index_t h, index_t gates) {
  const index_t chunks = (h + packed_gemm::kPanel<T> - 1) / packed_gemm::kPanel<T>;
  const index_t work = batch * gates * h * (std::max<index_t>(h, 1) / 8 + 4);  // product, then cells
  return static_cast<int>(std::max<index_t>(1, std::min<index_t>(threads_for(work), chunks)));
}

inline void team_barrier(int team) {
  if (team > 1) {
#pragma omp barrier
  }
}

// dst[r * h + k] = src[r * h + k] for rows [0, rows), units [u0, u1).
template <class T>
void copy_units(T* dst, const T* src, index_t rows, index_t h, index_t u0, index_t u1) {
  if (u1 <= u0) return;
  for (index_t r = 0; r < rows; ++r) std::memcpy(dst + r * h + u0, src + r * h + u0, (u1 - u0) * sizeof(T));
}

// The LSTM's threads split the batch's sequences instead where each gets at least kRowsPerThread of
// them: a sequence's states depend only on its own earlier states, so each thread runs every step for
// its rows without waiting for the other (no barrier per step, which on a shared machine waits for
// whichever thread the host delayed), against a product of fewer rows. Below it, the unit split.
constexpr index_t kRowsPerThread = 8;

template <class T>
int row_team(index_t batch, index_t h) {
  const index_t work = batch * 4 * h * (std::max<index_t>(h, 1) / 8 + 4);
  const int team = static_cast<int>(std::min<index_t>(threads_for(work), batch / kRowsPerThread));
  return team >= 2 ? team : 0;
}

// Thread `thread` of `threads`' share of packed_gemm::pack_panels(out, b, row_step, col_step, ...).
template <class T>
void pack_share(packed_gemm::PackedB<T>& out, const T* b, index_t row_step, index_t col_step, int thread,
                int threads) {
  index_t q0 = 0, q1 = 0;
  split_range(out.panels, thread, threads, q0, q1);
  packed_gemm::pack_panels(out, b, row_step, col_step, q0, q1);
}

// The row split's chunks of sequences: at least kRowsPerThread each, and two per thread where the batch
// has them, handed out one at a time (parallel_tasks): a thread the host slows down takes fewer.
inline index_t row_chunks(index_t batch, int team) {
  return std::max<index_t>(team, std::min<index_t>(batch / kRowsPerThread, 2 * static_cast<index_t>(team)));
}

// Sequences [r0, r1) of chunk `task` of `chunks`.
inline void chunk_rows(index_t batch, index_t task, index_t chunks, index_t& r0, index_t& r1) {
  r0 = batch / chunks * task + std::min(task, batch % chunks);
  r1 = r0 + batch / chunks + (task < batch % chunks ? 1 : 0);
}

// lstm_forward by chunks of sequences: each chunk runs every step for its rows, against w^T (H, 4H)
// packed once and read by all.
template <class T>
void lstm_forward_by_rows(int team, const Steps& s, index_t batch, index_t h, const T* x, const T* h0, const T* c0,
                          const T* w, T* out, T* hn, T* cn, T* work, T* cells) {
  auto wt = packed_gemm::empty<T>(h, 4 * h);
  const index_t chunks = row_chunks(batch, team);
  parallel_tasks(team, chunks, [&](int thread, int threads) { pack_share(wt, w, 1, h, thread, threads); },
                 [&](index_t task) {
    index_t r0 = 0, r1 = 0;
    chunk_rows(batch, task, chunks, r0, r1);
    if (r1 <= r0) return;
    // the running states of this chunk's sequences, and one step's gates for them
    std::vector<T> hs(h0 + r0 * h, h0 + r1 * h), cs(c0 + r0 * h, c0 + r1 * h);
    std::vector<T> gates(static_cast<std::size_t>((r1 - r0) * 4 * h));
    for (index_t i = 0; i < s.count(); ++i) {
      const index_t t = s.at(i), off = s.offsets[t] + r0, m = std::min(s.sizes[t], r1) - r0;
      if (m <= 0) continue;  // none of these sequences runs at step t: they keep their states
      packed_gemm::panels(wt, 0, wt.panels, m, hs.data(), h, x + off * 4 * h, gates.data(), 4 * h);
      rnn_cells::lstm_rows_any(gates.data(), cs.data(), out + off * h, cells + off * h, work + off * 4 * h, 0, m, h,
                               index_t(0), h);
      copy_rows(hs.data(), out + off * h, m, h);
      copy_rows(cs.data(), cells + off * h, m, h);
    }
    copy_rows(hn + r0 * h, hs.data(), r1 - r0, h);
    copy_rows(cn + r0 * h, cs.data(), r1 - r0, h);
  });
}

// dst (n, g) = x (n, in) @ w_ih^T + b_ih + b_hh (either bias null for none): the input's projection for
// every step, one product on the packed tile before the step loop (in the LSTM, `dst` is the workspace:
// each step's product reads its rows as D before the cell overwrites them with the activated gates).
template <class T>
void input_projection(index_t n, index_t in, index_t g, const T* x, const T* w_ih, const T* b_ih, const T* b_hh,
                      T* dst) {
  std::vector<T> bias(static_cast<std::size_t>(g), T(0));
  for (index_t j = 0; j < g; ++j) bias[j] = (b_ih != nullptr ? b_ih[j] : T(0)) + (b_hh != nullptr ? b_hh[j] : T(0));
  auto wt = packed_gemm::empty<T>(in, g);  // w_ih^T (in, g)
  // one region: each thread packs its share of the panels and fills its share of the rows with the
  // bias, then (after the barrier) multiplies its panels for all rows onto them
  const index_t work = n * g * (in / 8 + 1);
  parallel_team(static_cast<int>(std::min<index_t>(threads_for(work), std::max<index_t>(wt.panels, 1))),
                [&](int thread, int threads) {
    if (in > 0) pack_share(wt, w_ih, 1, in, thread, threads);
    index_t r0 = 0, r1 = 0;
    split_range(n, thread, threads, r0, r1);
    for (index_t r = r0; r < r1; ++r) std::memcpy(dst + r * g, bias.data(), static_cast<std::size_t>(g) * sizeof(T));
    if (in == 0 || n == 0) return;
    team_barrier(threads);
    index_t q0 = 0, q1 = 0;
    split_range(wt.panels, thread, threads, q0, q1);
    if (q1 > q0) packed_gemm::panels(wt, q0, q1, n, x, in, dst, dst, g);
  });
}

// The forward pass: `work` first holds the input's projection (see input_projection), then the gates.
template <class T>
void lstm_forward(const Steps& s, index_t batch, index_t h, index_t in, const T* input, const T* w_ih, const T* b_ih,
                  const T* b_hh, const T* h0, const T* c0, const T* w, T* out, T* hn, T* cn, T* work, T* cells) {
  input_projection(s.rows, in, 4 * h, input, w_ih, b_ih, b_hh, work);
  const T* x = work;
  if (const int rows_team = row_team<T>(batch, h)) {
    lstm_forward_by_rows(rows_team, s, batch, h, x, h0, c0, w, out, hn, cn, work, cells);
    return;
  }
  constexpr index_t W = packed_gemm::kPanel<T>;
  const index_t state = batch * h, chunks = (h + W - 1) / W;
  std::vector<T> hs(static_cast<std::size_t>(2 * state));  // the running hidden states, double-buffered
  std::copy(h0, h0 + state, hs.begin());
  std::vector<T> cs(c0, c0 + state);  // the running cell states: each thread reads and writes its units
  std::vector<T> gates(static_cast<std::size_t>(batch * 4 * h));
  // each gate's w^T (H, H) packed on its own, so a share of the units is the same panels in all four
  std::vector<packed_gemm::PackedB<T>> wt;
  for (int g = 0; g < 4; ++g) wt.push_back(packed_gemm::empty<T>(h, h));
  const int team = step_team<T>(s.count() > 0 ? s.sizes.front() : 0, h, 4);
  parallel_team(team, [&](int tid, int nt) {
    index_t q0 = 0, q1 = 0;
    split_range(chunks, tid, nt, q0, q1);
    const index_t u0 = std::min(q0 * W, h), u1 = std::min(q1 * W, h);
    for (int g = 0; g < 4; ++g) packed_gemm::pack_panels(wt[g], w + g * h * h, 1, h, q0, q1);  // only its own
    int cur = 0;
    for (index_t i = 0; i < s.count(); ++i) {
      const index_t t = s.at(i), bs = s.sizes[t], off = s.offsets[t];
      if (bs == 0) continue;
      const T* hcur = hs.data() + cur * state;
      T* hnext = hs.data() + (1 - cur) * state;
      if (u1 > u0) {
        for (int g = 0; g < 4; ++g)  // this step's input projection + h w^T, the owned columns of gate g
          packed_gemm::panels(wt[g], q0, q1, bs, hcur, h, x + off * 4 * h + g * h, gates.data() + g * h, 4 * h);
        T* hy = out + off * h;
        T* cy = cells + off * h;
        rnn_cells::lstm_rows_any(gates.data(), cs.data(), hy, cy, work + off * 4 * h, 0, bs, h, u0, u1);
        copy_units(hnext, hy, bs, h, u0, u1);
        copy_units(cs.data(), cy, bs, h, u0, u1);
        copy_units(hnext + bs * h, hcur + bs * h, batch - bs, h, u0, u1);  // sequences not running keep theirs
      }
      team_barrier(nt);
      cur = 1 - cur;
    }
    copy_units(hn, hs.data() + cur * state, batch, h, u0, u1);
    copy_units(cn, cs.data(), batch, h, u0, u1);
  });
}

// lstm_backward by chunks of sequences (see lstm_forward_by_rows): the cells' backward and
// dh = grad_gates w for its rows at every step, no barrier; w (4H, H) packed once.
template <class T>
void lstm_backward_by_rows(int team, const Steps& s, index_t batch, index_t h, const T* gout, const T* ghn,
                           const T* gcn, const T* h0, const T* c0, const T* w, const T* out, const T* work,
                           const T* cells, T* gx, T* gh0, T* gc0, T* hprev) {
  auto wp = packed_gemm::empty<T>(4 * h, h);
  const index_t chunks = row_chunks(batch, team);
  parallel_tasks(team, chunks, [&](int thread, int threads) { pack_share(wp, w, h, 1, thread, threads); },
                 [&](index_t task) {
    index_t r0 = 0, r1 = 0;
    chunk_rows(batch, task, chunks, r0, r1);
    if (r1 <= r0) return;
    std::vector<T> dh(static_cast<std::size_t>((r1 - r0) * h), T(0)), dc(dh.size(), T(0));
    if (ghn != nullptr) std::copy(ghn + r0 * h, ghn + r1 * h, dh.begin());
    if (gcn != nullptr) std::copy(gcn + r0 * h, gcn + r1 * h, dc.begin());
    for (index_t i = s.count() - 1; i >= 0; --i) {
      const index_t t = s.at(i), off = s.offsets[t] + r0, m = std::min(s.sizes[t], r1) - r0;
      if (m <= 0) continue;
      T* dg = gx + off * 4 * h;
      if (gout != nullptr) {
        const T* g = gout + off * h;
        for (index_t e = 0; e < m * h; ++e) dh[e] += g[e];
      }
      // the cell states before step t: the previous step's rows where it ran, else the initial ones
      const index_t prev = s.before(t), pbs = prev >= 0 ? std::min(s.sizes[prev], s.sizes[t]) : 0;
      const index_t ran = std::clamp<index_t>(pbs - r0, 0, m);
      if (ran > 0)
        rnn_cells::lstm_backward_rows(dh.data(), dc.data(), cells + (s.offsets[prev] + r0) * h, cells + off * h,
                                      work + off * 4 * h, dg, dc.data(), 0, ran, h, index_t(0), h);
      if (m > ran)
        rnn_cells::lstm_backward_rows(dh.data(), dc.data(), c0 + r0 * h, cells + off * h, work + off * 4 * h, dg,
                                      dc.data(), ran, m, h, index_t(0), h);
      packed_gemm::panels(wp, 0, wp.panels, m, dg, 4 * h, static_cast<const T*>(nullptr), dh.data(), h);
      // this chunk's states before step t, for the weight's gradient
      if (hprev != nullptr) states_before_rows(s, t, out, h0, h, r0, r1, hprev + s.offsets[t] * h);
    }
    copy_rows(gh0 + r0 * h, dh.data(), r1 - r0, h);
    copy_rows(gc0 + r0 * h, dc.data(), r1 - r0, h);
  });
}

// The step loop of the backward pass: the gates' gradients of every step into gx (N, 4H), grad_h0 and
// grad_c0, and (hprev not null) the hidden states before each step into hprev (N, H).
template <class T>
void lstm_backward_steps(const Steps& s, index_t batch, index_t h, const T* gout, const T* ghn, const T* gcn,
                         const T* h0, const T* c0, const T* w, const T* out, const T* work, const T* cells, T* gx,
                         T* gh0, T* gc0, T* hprev) {
  if (const int rows_team = row_team<T>(batch, h)) {
    lstm_backward_by_rows(rows_team, s, batch, h, gout, ghn, gcn, h0, c0, w, out, work, cells, gx, gh0, gc0, hprev);
    return;
  }
  constexpr index_t W = packed_gemm::kPanel<T>;
  const index_t state = batch * h, chunks = (h + W - 1) / W;
  std::vector<T> dh(static_cast<std::size_t>(state), T(0)), dc(static_cast<std::size_t>(state), T(0));
  if (ghn != nullptr) std::copy(ghn, ghn + state, dh.begin());
  if (gcn != nullptr) std::copy(gcn, gcn + state, dc.begin());
  auto wp = packed_gemm::empty<T>(4 * h, h);  // w (4H, H)
  const int team = step_team<T>(s.count() > 0 ? s.sizes.front() : 0, h, 4);
  // Per step: the cell's backward on the owned units (reads dh and dc there, writes those units' columns
  // of the step's gate gradients), a barrier, then the owned columns of dh = grad_gates w, which read all
  // of the step's gate gradients. The next step writes other rows of gx, so no second barrier.
  parallel_team(team, [&](int tid, int nt) {
    index_t q0 = 0, q1 = 0;
    split_range(chunks, tid, nt, q0, q1);
    const index_t u0 = std::min(q0 * W, h), u1 = std::min(q1 * W, h);
    packed_gemm::pack_panels(wp, w, h, 1, q0, q1);
    for (index_t i = s.count() - 1; i >= 0; --i) {
      const index_t t = s.at(i), bs = s.sizes[t], off = s.offsets[t];
      if (bs == 0) continue;
      T* dg = gx + off * 4 * h;
      if (u1 > u0) {
        if (gout != nullptr) {
          const T* g = gout + off * h;
          for (index_t r = 0; r < bs; ++r)
            for (index_t k = u0; k < u1; ++k) dh[r * h + k] += g[r * h + k];
        }
        // the cell states before step t: the previous step's rows where it ran, else the initial ones
        const index_t prev = s.before(t), pbs = prev >= 0 ? std::min(s.sizes[prev], bs) : 0;
        const T* cy = cells + off * h;
        const T* wk = work + off * 4 * h;
        if (pbs > 0)  // dc is read and written in place
          rnn_cells::lstm_backward_rows(dh.data(), dc.data(), cells + s.offsets[prev] * h, cy, wk, dg, dc.data(), 0,
                                        pbs, h, u0, u1);
        if (bs > pbs)
          rnn_cells::lstm_backward_rows(dh.data(), dc.data(), c0, cy, wk, dg, dc.data(), pbs, bs, h, u0, u1);
      }
      team_barrier(nt);
      if (u1 > u0) packed_gemm::panels(wp, q0, q1, bs, dg, 4 * h, static_cast<const T*>(nullptr), dh.data(), h);
    }
    if (hprev != nullptr) {  // the states before each step, for the weight's gradient: steps split evenly
      index_t t0 = 0, t1 = 0;
      split_range(s.count(), tid, nt, t0, t1);
      for (index_t t = t0; t < t1; ++t) states_before(s, t, out, h0, h, hprev + s.offsets[t] * h);
    }
  });
  copy_rows(gh0, dh.data(), batch, h);
  copy_rows(gc0, dc.data(), batch, h);
}

// gb[j] = sum over rows of g[r * width + j], columns split across threads (each column summed in row order).
template <class T>
void column_sums(const T* g, index_t rows, index_t width, T* gb) {
  parallel_chunks(width, 64, [&](index_t j0, index_t j1) {
    std::fill(gb + j0, gb + j1, T(0));
    for (index_t r = 0; r < rows; ++r) {
      const T* row = g + r * width;
      for (index_t j = j0; j < j1; ++j) gb[j] += row[j];
    }
  }, rows * width);
}

// The whole backward pass. Each gradient pointer may be null (not wanted) but grad_h0 and grad_c0. With
// dG (N, 4H) the gates' gradients of every step: grad_input = dG @ w_ih, grad_w_ih = dG^T @ input,
// grad_w_hh = dG^T @ (the hidden states before each step), grad_bias = dG's column sums, each one
// product over all steps.
template <class T>
void lstm_backward(FortranGemm<T> gemm, const Steps& s, index_t batch, index_t h, index_t in, const T* gout,
                   const T* ghn, const T* gcn, const T* input, const T* h0, const T* c0, const T* w_ih, const T* w,
                   const T* out, const T* work, const T* cells, T* gin, T* gh0, T* gc0, T* gw_ih, T* gw, T* gb) {
  const index_t n = s.rows, g = 4 * h;
  std::unique_ptr<T[]> dgates(new T[static_cast<std::size_t>(std::max<index_t>(n * g, 1))]);  // every entry written
  std::unique_ptr<T[]> hprev(gw != nullptr ? new T[static_cast<std::size_t>(std::max<index_t>(n * h, 1))] : nullptr);
  lstm_backward_steps(s, batch, h, gout, ghn, gcn, h0, c0, w, out, work, cells, dgates.get(), gh0, gc0, hprev.get());
  const T* dg = dgates.get();
  if (gw != nullptr) weight_grad(gemm, g, h, n, dg, g, hprev.get(), h, gw);
  if (gw_ih != nullptr) weight_grad(gemm, g, in, n, dg, g, input, in, gw_ih);
  if (gin != nullptr) gemm_rows<T>(gemm, false, false, n, in, g, T(1), dg, g, w_ih, in, T(0), gin, in);
  if (gb != nullptr) column_sums(dg, n, g, gb);
}

// The input's width `in`: at most BLAS's int, as every other size (check_steps).
void check_input_width(const char* op, index_t in) {
  if (in < 0 || !fits_blas_int(in)) throw py::value_error(std::string(op) + ": bad input size");
}

void nn_lstm_layer(const py::array& input, const py::object& h0, const py::object& c0, const py::object& w_ih,
                   const py::object& w_hh, const py::object& b_ih, const py::object& b_hh,
                   const std::vector<index_t>& batch_sizes, bool reverse, const py::object& output,
                   const py::object& h_n, const py::object& c_n, const py::object& workspace,
                   const py::object& cell_states, index_t batch, index_t hidden, index_t input_size) {
  const char* op = "nn_lstm_layer";
  const DType dt = float_dtype(op, input);
  const Steps s = check_steps(op, batch_sizes, reverse, batch, hidden, 4);
  check_input_width(op, input_size);
  const index_t n = s.rows, h = hidden, b = batch, in = input_size;
  const void* px = pointer(op, input, "input", dt, n * in, false, false);
  const void* ph0 = pointer(op, h0, "h0", dt, b * h, false, false);
  const void* pc0 = pointer(op, c0, "c0", dt, b * h, false, false);
  const void* pwi = pointer(op, w_ih, "w_ih", dt, 4 * h * in, false, false);
  const void* pw = pointer(op, w_hh, "w_hh", dt, 4 * h * h, false, false);
  const void* pbi = pointer(op, b_ih, "b_ih", dt, 4 * h, true, false);
  const void* pbh = pointer(op, b_hh, "b_hh", dt, 4 * h, true, false);
  void* pout = pointer(op, output, "output", dt, n * h, false, true);
  void* phn = pointer(op, h_n, "h_n", dt, b * h, false, true);
  void* pcn = pointer(op, c_n, "c_n", dt, b * h, false, true);
  void* pwork = pointer(op, workspace, "workspace", dt, n * 4 * h, false, true);
  void* pcells = pointer(op, cell_states, "cell_states", dt, n * h, false, true);
  auto run = [&](auto zero) {
    using T = decltype(zero);
    py::gil_scoped_release nogil;
    lstm_forward<T>(s, b, h, in, static_cast<const T*>(px), static_cast<const T*>(pwi), static_cast<const T*>(pbi),
                    static_cast<const T*>(pbh), static_cast<const T*>(ph0), static_cast<const T*>(pc0),
                    static_cast<const T*>(pw), static_cast<T*>(pout), static_cast<T*>(phn), static_cast<T*>(pcn),
                    static_cast<T*>(pwork), static_cast<T*>(pcells));
  };
  if (dt == DType::f32) {
    run(0.0f);
  } else {
    run(0.0);
  }
}

// Gradients whose output is None are not computed; grad_h0 and grad_c0 always are.
void nn_lstm_layer_backward(const py::object& grad_output, const py::object& grad_hn, const py::object& grad_cn,
                            const py::array& input, const py::object& h0, const py::object& c0,
                            const py::object& w_ih, const py::object& w_hh, const py::object& output,
                            const py::object& workspace, const py::object& cell_states,
                            const std::vector<index_t>& batch_sizes, bool reverse, const py::object& grad_input,
                            const py::object& grad_h0, const py::object& grad_c0, const py::object& grad_w_ih,
                            const py::object& grad_w_hh, const py::object& grad_bias, index_t batch, index_t hidden,
                            index_t input_size, const py::object& gemm) {
  const char* op = "nn_lstm_layer_backward";
  const DType dt = float_dtype(op, input);
  const Steps s = check_steps(op, batch_sizes, reverse, batch, hidden, 4);
  check_input_width(op, input_size);
  const index_t n = s.rows, h = hidden, b = batch, in = input_size;
  const void* pgo = pointer(op, grad_output, "grad_output", dt, n * h, true, false);
  const void* pghn = pointer(op, grad_hn, "grad_hn", dt, b * h, true, false);
  const void* pgcn = pointer(op, grad_cn, "grad_cn", dt, b * h, true, false);
  const void* px = pointer(op, input, "input", dt, n * in, false, false);
  const void* ph0 = pointer(op, h0, "h0", dt, b * h, false, false);
  const void* pc0 = pointer(op, c0, "c0", dt, b * h, false, false);
  const void* pwi = pointer(op, w_ih, "w_ih", dt, 4 * h * in, false, false);
  const void* pw = pointer(op, w_hh, "w_hh", dt, 4 * h * h, false, false);
  const void* pout = pointer(op, output, "output", dt, n * h, false, false);
  const void* pwork = pointer(op, workspace, "workspace", dt, n * 4 * h, false, false);
  const void* pcells = pointer(op, cell_states, "cell_states", dt, n * h, false, false);
  void* pgin = pointer(op, grad_input, "grad_input", dt, n * in, true, true);
  void* pgh0 = pointer(op, grad_h0, "grad_h0", dt, b * h, false, true);
  void* pgc0 = pointer(op, grad_c0, "grad_c0", dt, b * h, false, true);
  void* pgwi = pointer(op, grad_w_ih, "grad_w_ih", dt, 4 * h * in, true, true);
  void* pgw = pointer(op, grad_w_hh, "grad_w_hh", dt, 4 * h * h, true, true);
  void* pgb = pointer(op, grad_bias, "grad_bias", dt, 4 * h, true, true);
  auto run = [&](auto zero) {
    using T = decltype(zero);
    const auto f = gemm_from_capsule<T>(op, gemm);
    py::gil_scoped_release nogil;
    lstm_backward<T>(f, s, b, h, in, static_cast<const T*>(pgo), static_cast<const T*>(pghn),
                     static_cast<const T*>(pgcn), static_cast<const T*>(px), static_cast<const T*>(ph0),
                     static_cast<const T*>(pc0), static_cast<const T*>(pwi), static_cast<const T*>(pw),
                     static_cast<const T*>(pout), static_cast<const T*>(pwork), static_cast<const T*>(pcells),
                     static_cast<T*>(pgin), static_cast<T*>(pgh0), static_cast<T*>(pgc0), static_cast<T*>(pgwi),
                     static_cast<T*>(pgw), static_cast<T*>(pgb));
  };
  if (dt == DType::f32) {
    run(0.0f);
  } else {
    run(0.0);
  }
}

// -- GRU ------------------------------------------------------------------------------------------

template <class T>
void gru_forward(FortranGemm<T> gemm, const Steps& s, index_t batch, index_t h, const T* x, const T* h0, const T* w,
                 const T* bias, T* out, T* hn, T* work) {
  std::vector<T> hs(h0, h0 + batch * h);
  std::vector<T> hg(static_cast<std::size_t>(batch * 3 * h));
  const auto wt = packed_gemm::pack(w, h, 3 * h, 1, h);  // w^T (H, 3H)
  for (index_t i = 0; i < s.count(); ++i) {
    const index_t t = s.at(i), bs = s.sizes[t], off = s.offsets[t];
    if (bs == 0) continue;
    if (bias != nullptr) {
      for (index_t r = 0; r < bs; ++r) std::copy(bias, bias + 3 * h, hg.data() + r * 3 * h);
    }
    packed_gemm::multiply(wt, bs, hs.data(), h, bias != nullptr ? hg.data() : nullptr, hg.data(), 3 * h);
    T* hy = out + off * h;
    over_rows(bs, 4 * h, [&](index_t begin, index_t end) {
      rnn_cells::gru_rows(x + off * 3 * h, hg.data(), hs.data(), hy, work + off * 4 * h, begin, end, h);
    });
    copy_rows(hs.data(), hy, bs, h);
  }
  copy_rows(hn, hs.data(), batch, h);
}

template <class T>
void gru_backward(FortranGemm<T> gemm, const Steps& s, index_t batch, index_t h, const T* gout, const T* ghn,
                  const T* h0, const T* w, const T* out, const T* work, T* gx, T* gh0, T* gw, T* gb) {
  const std::size_t state = static_cast<std::size_t>(batch * h);
  std::vector<T> dh(state, T(0));
  if (ghn != nullptr) std::copy(ghn, ghn + state, dh.begin());
  std::vector<T> hprev(static_cast<std::size_t>(s.rows * h));
  std::vector<T> dhg(static_cast<std::size_t>(s.rows * 3 * h));  // grad of each step's hidden projection
  const auto wp = packed_gemm::pack(w, 3 * h, h, h, 1);
  for (index_t i = s.count() - 1; i >= 0; --i) {
    const index_t t = s.at(i), bs = s.sizes[t], off = s.offsets[t];
    if (bs == 0) continue;
    if (gout != nullptr) {
      const T* g = gout + off * h;
      for (index_t k = 0; k < bs * h; ++k) dh[k] += g[k];
    }
    T* hp = hprev.data() + off * h;
    states_before(s, t, out, h0, h, hp);
    T* dhgt = dhg.data() + off * 3 * h;
    over_rows(bs, 4 * h, [&](index_t begin, index_t end) {  // dh becomes the direct part of grad h_prev in place
      rnn_cells::gru_backward_rows(dh.data(), hp, work + off * 4 * h, gx + off * 3 * h, dhgt, dh.data(), begin, end,
                                   h);
    });
    packed_gemm::multiply(wp, bs, dhgt, 3 * h, dh.data(), dh.data(), h);  // dh += grad_hgates w
  }
  weight_grad(gemm, 3 * h, h, s.rows, dhg.data(), 3 * h, hprev.data(), h, gw);
  column_sums(dhg.data(), s.rows, 3 * h, gb);
  copy_rows(gh0, dh.data(), batch, h);
}

void nn_gru_layer(const py::array& xproj, const py::object& h0, const py::object& w_hh, const py::object& b_hh,
                  const std::vector<index_t>& batch_sizes, bool reverse, const py::object& output,
                  const py::object& h_n,
                  const py::object& workspace, index_t batch, index_t hidden, const py::object& gemm) {
  const char* op = "nn_gru_layer";
  const DType dt = float_dtype(op, xproj);
  const Steps s = check_steps(op, batch_sizes, reverse, batch, hidden, 4);
  const index_t n = s.rows, h = hidden, b = batch;
  const void* px = pointer(op, xproj, "xproj", dt, n * 3 * h, false, false);
  const void* ph0 = pointer(op, h0, "h0", dt, b * h, false, false);
  const void* pw = pointer(op, w_hh, "w_hh", dt, 3 * h * h, false, false);
  const void* pb = pointer(op, b_hh, "b_hh", dt, 3 * h, true, false);
  void* pout = pointer(op, output, "output", dt, n * h, false, true);
  void* phn = pointer(op, h_n, "h_n", dt, b * h, false, true);
  void* pwork = pointer(op, workspace, "workspace", dt, n * 4 * h, false, true);
  if (dt == DType::f32) {
    using T = float;
    const auto f = gemm_from_capsule<T>(op, gemm);
    py::gil_scoped_release nogil;
    gru_forward<T>(f, s, b, h, static_cast<const T*>(px), static_cast<const T*>(ph0), static_cast<const T*>(pw),
                   static_cast<const T*>(pb), static_cast<T*>(pout), static_cast<T*>(phn), static_cast<T*>(pwork));
  } else {
    using T = double;
    const auto f = gemm_from_capsule<T>(op, gemm);
    py::gil_scoped_release nogil;
    gru_forward<T>(f, s, b, h, static_cast<const T*>(px), static_cast<const T*>(ph0), static_cast<const T*>(pw),
                   static_cast<const T*>(pb), static_cast<T*>(pout), static_cast<T*>(phn), static_cast<T*>(pwork));
  }
}

void nn_gru_layer_backward(const py::object& grad_output, const py::object& grad_hn, const py::array& h0,
                           const py::object& w_hh, const py::object& output, const py::object& workspace,
                           const std::vector<index_t>& batch_sizes, bool reverse, const py::object& grad_xproj,
                           const py::object& grad_h0, const py::object& grad_w_hh, const py::object& grad_b_hh,
                           index_t batch, index_t hidden, const py::object& gemm) {
  const char* op = "nn_gru_layer_backward";
  const DType dt = float_dtype(op, h0);
  const Steps s = check_steps(op, batch_sizes, reverse, batch, hidden, 4);
  const index_t n = s.rows, h = hidden, b = batch;
  const void* pgo = pointer(op, grad_output, "grad_output", dt, n * h, true, false);
  const void* pghn = pointer(op, grad_hn, "grad_hn", dt, b * h, true, false);
  const void* ph0 = pointer(op, h0, "h0", dt, b * h, false, false);
  const void* pw = pointer(op, w_hh, "w_hh", dt, 3 * h * h, false, false);
  const void* pout = pointer(op, output, "output", dt, n * h, false, false);
  const void* pwork = pointer(op, workspace, "workspace", dt, n * 4 * h, false, false);
  void* pgx = pointer(op, grad_xproj, "grad_xproj", dt, n * 3 * h, false, true);
  void* pgh0 = pointer(op, grad_h0, "grad_h0", dt, b * h, false, true);
  void* pgw = pointer(op, grad_w_hh, "grad_w_hh", dt, 3 * h * h, false, true);
  void* pgb = pointer(op, grad_b_hh, "grad_b_hh", dt, 3 * h, false, true);
  if (dt == DType::f32) {
    using T = float;
    const auto f = gemm_from_capsule<T>(op, gemm);
    py::gil_scoped_release nogil;
    gru_backward<T>(f, s, b, h, static_cast<const T*>(pgo), static_cast<const T*>(pghn), static_cast<const T*>(ph0),
                    static_cast<const T*>(pw), static_cast<const T*>(pout), static_cast<const T*>(pwork),
                    static_cast<T*>(pgx), static_cast<T*>(pgh0), static_cast<T*>(pgw), static_cast<T*>(pgb));
  } else {
    using T = double;
    const auto f = gemm_from_capsule<T>(op, gemm);
    py::gil_scoped_release nogil;
    gru_backward<T>(f, s, b, h, static_cast<const T*>(pgo), static_cast<const T*>(pghn), static_cast<const T*>(ph0),
                    static_cast<const T*>(pw), static_cast<const T*>(pout), static_cast<const T*>(pwork),
                    static_cast<T*>(pgx), static_cast<T*>(pgh0), static_cast<T*>(pgw), static_cast<T*>(pgb));
  }
}

// -- RNN (tanh or relu) ----------------------------------------------------------------------------

// x[k] = act(x[k]) over n elements.
template <class T>
FLAMBEAU_CLONES void activate(T* x, index_t n, bool relu) {
  if (relu) {
#pragma omp simd
    for (index_t k = 0; k < n; ++k) x[k] = x[k] > T(0) ? x[k] : T(0);
  } else {
#pragma omp simd
    for (index_t k = 0; k < n; ++k) x[k] = vec_tanh(x[k]);
  }
}

// d[k] = (g[k] + e[k]) * act'(y[k]) from the activation's output y (e may be null).
template <class T>
FLAMBEAU_CLONES void activation_grad(const T* g, const T* e, const T* y, T* d, index_t n, bool relu) {
#pragma omp simd
  for (index_t k = 0; k < n; ++k) {
    const T gk = g[k] + (e != nullptr ? e[k] : T(0));
    d[k] = relu ? (y[k] > T(0) ? gk : T(0)) : gk * (T(1) - y[k] * y[k]);
  }
}

template <class T>
void rnn_forward(const Steps& s, index_t batch, index_t h, const T* x, const T* h0, const T* w, bool relu, T* out,
                 T* hn) {
  std::vector<T> hs(h0, h0 + batch * h);
  const auto wt = packed_gemm::pack(w, h, h, 1, h);  // w^T
  for (index_t i = 0; i < s.count(); ++i) {
    const index_t t = s.at(i), bs = s.sizes[t], off = s.offsets[t];
    if (bs == 0) continue;
    T* hy = out + off * h;
    packed_gemm::multiply(wt, bs, hs.data(), h, x + off * h, hy, h);  // xproj + h w^T, activated in place
    over_rows(bs, h, [&](index_t begin, index_t end) { activate(hy + begin * h, (end - begin) * h, relu); });
    copy_rows(hs.data(), hy, bs, h);
  }
  copy_rows(hn, hs.data(), batch, h);
}

template <class T>
void rnn_backward(FortranGemm<T> gemm, const Steps& s, index_t batch, index_t h, const T* gout, const T* ghn,
                  const T* h0, const T* w, const T* out, bool relu, T* gx, T* gh0, T* gw) {
  const std::size_t state = static_cast<std::size_t>(batch * h);
  std::vector<T> dh(state, T(0));
  if (ghn != nullptr) std::copy(ghn, ghn + state, dh.begin());
  std::vector<T> hprev(static_cast<std::size_t>(s.rows * h));
  const auto wp = packed_gemm::pack(w, h, h, h, 1);
  for (index_t i = s.count() - 1; i >= 0; --i) {
    const index_t t = s.at(i), bs = s.sizes[t], off = s.offsets[t];
    if (bs == 0) continue;
    states_before(s, t, out, h0, h, hprev.data() + off * h);
    T* dpre = gx + off * h;
    const T* go = gout != nullptr ? gout + off * h : nullptr;
    over_rows(bs, h, [&](index_t begin, index_t end) {
      activation_grad(dh.data() + begin * h, go != nullptr ? go + begin * h : nullptr, out + (off + begin) * h,
                      dpre + begin * h, (end - begin) * h, relu);
    });
    packed_gemm::multiply(wp, bs, dpre, h, static_cast<const T*>(nullptr), dh.data(), h);  // grad_pre w
  }
  weight_grad(gemm, h, h, s.rows, gx, h, hprev.data(), h, gw);
  copy_rows(gh0, dh.data(), batch, h);
}

void nn_rnn_layer(const py::array& xproj, const py::object& h0, const py::object& w_hh,
                  const std::vector<index_t>& batch_sizes, bool reverse, bool relu, const py::object& output,
                  const py::object& h_n, index_t batch, index_t hidden) {
  const char* op = "nn_rnn_layer";
  const DType dt = float_dtype(op, xproj);
  const Steps s = check_steps(op, batch_sizes, reverse, batch, hidden, 1);
  const index_t n = s.rows, h = hidden, b = batch;
  const void* px = pointer(op, xproj, "xproj", dt, n * h, false, false);
  const void* ph0 = pointer(op, h0, "h0", dt, b * h, false, false);
  const void* pw = pointer(op, w_hh, "w_hh", dt, h * h, false, false);
  void* pout = pointer(op, output, "output", dt, n * h, false, true);
  void* phn = pointer(op, h_n, "h_n", dt, b * h, false, true);
  py::gil_scoped_release nogil;
  if (dt == DType::f32) {
    using T = float;
    rnn_forward<T>(s, b, h, static_cast<const T*>(px), static_cast<const T*>(ph0), static_cast<const T*>(pw), relu,
                   static_cast<T*>(pout), static_cast<T*>(phn));
  } else {
    using T = double;
    rnn_forward<T>(s, b, h, static_cast<const T*>(px), static_cast<const T*>(ph0), static_cast<const T*>(pw), relu,
                   static_cast<T*>(pout), static_cast<T*>(phn));
  }
}

void nn_rnn_layer_backward(const py::object& grad_output, const py::object& grad_hn, const py::array& h0,
                           const py::object& w_hh, const py::object& output, const std::vector<index_t>& batch_sizes,
                           bool reverse, bool relu, const py::object& grad_xproj, const py::object& grad_h0,
                           const py::object& grad_w_hh, index_t batch, index_t hidden, const py::object& gemm) {
  const char* op = "nn_rnn_layer_backward";
  const DType dt = float_dtype(op, h0);
  const Steps s = check_steps(op, batch_sizes, reverse, batch, hidden, 1);
  const index_t n = s.rows, h = hidden, b = batch;
  const void* pgo = pointer(op, grad_output, "grad_output", dt, n * h, true, false);
  const void* pghn = pointer(op, grad_hn, "grad_hn", dt, b * h, true, false);
  const void* ph0 = pointer(op, h0, "h0", dt, b * h, false, false);
  const void* pw = pointer(op, w_hh, "w_hh", dt, h * h, false, false);
  const void* pout = pointer(op, output, "output", dt, n * h, false, false);
  void* pgx = pointer(op, grad_xproj, "grad_xproj", dt, n * h, false, true);
  void* pgh0 = pointer(op, grad_h0, "grad_h0", dt, b * h, false, true);
  void* pgw = pointer(op, grad_w_hh, "grad_w_hh", dt, h * h, false, true);
  if (dt == DType::f32) {
    using T = float;
    const auto f = gemm_from_capsule<T>(op, gemm);
    py::gil_scoped_release nogil;
    rnn_backward<T>(f, s, b, h, static_cast<const T*>(pgo), static_cast<const T*>(pghn), static_cast<const T*>(ph0),
                    static_cast<const T*>(pw), static_cast<const T*>(pout), relu, static_cast<T*>(pgx),
                    static_cast<T*>(pgh0), static_cast<T*>(pgw));
  } else {
    using T = double;
    const auto f = gemm_from_capsule<T>(op, gemm);
    py::gil_scoped_release nogil;
    rnn_backward<T>(f, s, b, h, static_cast<const T*>(pgo), static_cast<const T*>(pghn), static_cast<const T*>(ph0),
                    static_cast<const T*>(pw), static_cast<const T*>(pout), relu, static_cast<T*>(pgx),
                    static_cast<T*>(pgh0), static_cast<T*>(pgw));
  }
}

void register_nn_rnn_layer(py::module_& m) {
  m.def("nn_lstm_layer", &nn_lstm_layer,
        "One LSTM layer and direction over packed rows: the input's projection, then every step's product with "
        "w_hh and fused cell.");
  m.def("nn_lstm_layer_backward", &nn_lstm_layer_backward, "The gradients of nn_lstm_layer, steps walked backwards.");
  m.def("nn_gru_layer", &nn_gru_layer,
        "One GRU layer and direction over packed rows: every step's product with w_hh and fused cell.");
  m.def("nn_gru_layer_backward", &nn_gru_layer_backward, "The gradients of nn_gru_layer, steps walked backwards.");
  m.def("nn_rnn_layer", &nn_rnn_layer,
        "One RNN (tanh or relu) layer and direction over packed rows: every step's product with w_hh and activation.");
  m.def("nn_rnn_layer_backward", &nn_rnn_layer_backward, "The gradients of nn_rnn_layer, steps walked backwards.");
}

}  // namespace
}  // namespace flambeau

FLAMBEAU_REGISTER(flambeau::register_nn_rnn_layer);
