// Fused recurrent cells, forward and backward, for the ops flambeau-nn declares (nn_lstm_cell,
// nn_lstm_cell_backward, nn_gru_cell, nn_gru_cell_backward).
//
// Each works on B rows of H hidden units: the gate pre-activations (B, 4H) for the LSTM in the order
// i, f, g, o, the input and hidden projections (B, 3H) for the GRU in the order r, z, n. One pass over
// the row in registers replaces the dozen elementwise ops of the composites, which matters because a
// layer runs one cell per time step. The workspace the forward pass writes (the activated gates) is
// what the backward pass reads, so nothing is recomputed there.
//
// The Python side (flambeau_cpu/kernels/nn_rnn.py) hands over C-contiguous aligned float32/float64
// arrays of one dtype; every size, dtype and layout is checked again here before a pointer is taken.
// Rows are split statically across threads (large batches only).
#include <cmath>

#include "common.h"
#include "nn_args.h"
#include "vecmath.h"

namespace flambeau {
namespace {

template <class T> FLAMBEAU_INLINE T sigm(T x) { return T(1) / (T(1) + vec_exp(-x)); }

// -- argument checks (GIL held) -------------------------------------------------------------------

using nn_args::float_dtype;
using nn_args::pointer;

void check_sizes(const char* op, index_t batch, index_t hidden) {
  if (batch < 0 || hidden < 0) throw py::value_error(std::string(op) + ": bad sizes");
}

// Runs fn(begin, end) over the rows, split across threads when the rows hold enough work.
template <class Fn>
void over_rows(index_t batch, index_t hidden, Fn&& fn) {
  const index_t per_row = std::max<index_t>(1, 4 * hidden);
  parallel_chunks(batch, std::max<index_t>(1, kParallelChunk / per_row), fn, batch * per_row * 4);
}

// -- LSTM -----------------------------------------------------------------------------------------

template <class T>
FLAMBEAU_CLONES void lstm_rows(const T* gates, const T* cx, T* hy, T* cy, T* work, index_t begin, index_t end,
                               index_t h) {
  for (index_t r = begin; r < end; ++r) {
    const T* gi = gates + r * 4 * h;
    const T* gf = gi + h;
    const T* gg = gi + 2 * h;
    const T* go = gi + 3 * h;
    T* wi = work + r * 4 * h;
    T* wf = wi + h;
    T* wg = wi + 2 * h;
    T* wo = wi + 3 * h;
    const T* c0 = cx + r * h;
    T* c1 = cy + r * h;
    T* h1 = hy + r * h;
#pragma omp simd
    for (index_t k = 0; k < h; ++k) {
      const T i = sigm(gi[k]), f = sigm(gf[k]), g = vec_tanh(gg[k]), o = sigm(go[k]);
      const T c = f * c0[k] + i * g;
      wi[k] = i;
      wf[k] = f;
      wg[k] = g;
      wo[k] = o;
      c1[k] = c;
      h1[k] = o * vec_tanh(c);
    }
  }
}

template <class T>
FLAMBEAU_CLONES void lstm_backward_rows(const T* ghy, const T* gcy, const T* cx, const T* cy, const T* work,
                                        T* dgates, T* dcx, index_t begin, index_t end, index_t h) {
  for (index_t r = begin; r < end; ++r) {
    const T* wi = work + r * 4 * h;
    const T* wf = wi + h;
    const T* wg = wi + 2 * h;
    const T* wo = wi + 3 * h;
    T* di = dgates + r * 4 * h;
    T* df = di + h;
    T* dg = di + 2 * h;
    T* dout = di + 3 * h;
    const T* c0 = cx + r * h;
    const T* c1 = cy + r * h;
    const T* gh = ghy != nullptr ? ghy + r * h : nullptr;
    const T* gc = gcy != nullptr ? gcy + r * h : nullptr;
    T* dc = dcx + r * h;
#pragma omp simd
    for (index_t k = 0; k < h; ++k) {
      const T i = wi[k], f = wf[k], g = wg[k], o = wo[k];
      const T tc = vec_tanh(c1[k]);
      const T ghk = gh != nullptr ? gh[k] : T(0);
      const T gck = (gc != nullptr ? gc[k] : T(0)) + ghk * o * (T(1) - tc * tc);
      di[k] = gck * g * i * (T(1) - i);
      df[k] = gck * c0[k] * f * (T(1) - f);
      dg[k] = gck * i * (T(1) - g * g);
      dout[k] = ghk * tc * o * (T(1) - o);
      dc[k] = gck * f;
    }
  }
}

void nn_lstm_cell(const py::array& gates, const py::object& cx, const py::object& hy, const py::object& cy,
                  const py::object& work, index_t batch, index_t hidden) {
  const char* op = "nn_lstm_cell";
  const DType dt = float_dtype(op, gates);
  check_sizes(op, batch, hidden);
  const index_t n = batch * hidden;
  const void* pg = pointer(op, gates, "gates", dt, 4 * n, false, false);
  const void* pc = pointer(op, cx, "cx", dt, n, false, false);
  void* ph = pointer(op, hy, "hy", dt, n, false, true);
  void* pcy = pointer(op, cy, "cy", dt, n, false, true);
  void* pw = pointer(op, work, "workspace", dt, 4 * n, false, true);
  py::gil_scoped_release nogil;
  over_rows(batch, hidden, [&](index_t begin, index_t end) {
    if (dt == DType::f32)
      lstm_rows(static_cast<const float*>(pg), static_cast<const float*>(pc), static_cast<float*>(ph),
                static_cast<float*>(pcy), static_cast<float*>(pw), begin, end, hidden);
    else
      lstm_rows(static_cast<const double*>(pg), static_cast<const double*>(pc), static_cast<double*>(ph),
                static_cast<double*>(pcy), static_cast<double*>(pw), begin, end, hidden);
  });
}

void nn_lstm_cell_backward(const py::object& ghy, const py::object& gcy, const py::array& cx, const py::object& cy,
                           const py::object& work, const py::object& dgates, const py::object& dcx, index_t batch,
                           index_t hidden) {
  const char* op = "nn_lstm_cell_backward";
  const DType dt = float_dtype(op, cx);
  check_sizes(op, batch, hidden);
  const index_t n = batch * hidden;
  const void* pgh = pointer(op, ghy, "grad_hy", dt, n, true, false);
  const void* pgc = pointer(op, gcy, "grad_cy", dt, n, true, false);
  const void* pc = pointer(op, cx, "cx", dt, n, false, false);
  const void* pcy = pointer(op, cy, "cy", dt, n, false, false);
  const void* pw = pointer(op, work, "workspace", dt, 4 * n, false, false);
  void* pdg = pointer(op, dgates, "grad_gates", dt, 4 * n, false, true);
  void* pdc = pointer(op, dcx, "grad_cx", dt, n, false, true);
  py::gil_scoped_release nogil;
  over_rows(batch, hidden, [&](index_t begin, index_t end) {
    if (dt == DType::f32)
      lstm_backward_rows(static_cast<const float*>(pgh), static_cast<const float*>(pgc), static_cast<const float*>(pc),
                         static_cast<const float*>(pcy), static_cast<const float*>(pw), static_cast<float*>(pdg),
                         static_cast<float*>(pdc), begin, end, hidden);
    else
      lstm_backward_rows(static_cast<const double*>(pgh), static_cast<const double*>(pgc),
                         static_cast<const double*>(pc), static_cast<const double*>(pcy),
                         static_cast<const double*>(pw), static_cast<double*>(pdg), static_cast<double*>(pdc), begin,
                         end, hidden);
  });
}

// -- GRU ------------------------------------------------------------------------------------------

template <class T>
FLAMBEAU_CLONES void gru_rows(const T* ig, const T* hg, const T* hx, T* hy, T* work, index_t begin, index_t end,
                              index_t h) {
  for (index_t r = begin; r < end; ++r) {
    const T* ir = ig + r * 3 * h;
    const T* hr = hg + r * 3 * h;
    T* wr = work + r * 4 * h;
    const T* h0 = hx + r * h;
    T* h1 = hy + r * h;
#pragma omp simd
    for (index_t k = 0; k < h; ++k) {
      const T rg = sigm(ir[k] + hr[k]);
      const T z = sigm(ir[h + k] + hr[h + k]);
      const T hn = hr[2 * h + k];
      const T n = vec_tanh(ir[2 * h + k] + rg * hn);
      wr[k] = rg;
      wr[h + k] = z;
      wr[2 * h + k] = n;
      wr[3 * h + k] = hn;
      h1[k] = n + z * (h0[k] - n);
    }
  }
}

template <class T>
FLAMBEAU_CLONES void gru_backward_rows(const T* ghy, const T* hx, const T* work, T* dig, T* dhg, T* dhx, index_t begin,
                                       index_t end, index_t h) {
  for (index_t r = begin; r < end; ++r) {
    const T* wr = work + r * 4 * h;
    const T* g = ghy + r * h;
    const T* h0 = hx + r * h;
    T* di = dig + r * 3 * h;
    T* dh = dhg + r * 3 * h;
    T* dx = dhx + r * h;
#pragma omp simd
    for (index_t k = 0; k < h; ++k) {
      const T rg = wr[k], z = wr[h + k], n = wr[2 * h + k], hn = wr[3 * h + k];
      const T dn = g[k] * (T(1) - z) * (T(1) - n * n);
      const T dz = g[k] * (h0[k] - n) * z * (T(1) - z);
      const T dr = dn * hn * rg * (T(1) - rg);
      di[k] = dr;
      di[h + k] = dz;
      di[2 * h + k] = dn;
      dh[k] = dr;
      dh[h + k] = dz;
      dh[2 * h + k] = dn * rg;
      dx[k] = g[k] * z;
    }
  }
}

void nn_gru_cell(const py::array& ig, const py::object& hg, const py::object& hx, const py::object& hy,
                 const py::object& work, index_t batch, index_t hidden) {
  const char* op = "nn_gru_cell";
  const DType dt = float_dtype(op, ig);
  check_sizes(op, batch, hidden);
  const index_t n = batch * hidden;
  const void* pi = pointer(op, ig, "igates", dt, 3 * n, false, false);
  const void* ph = pointer(op, hg, "hgates", dt, 3 * n, false, false);
  const void* px = pointer(op, hx, "hx", dt, n, false, false);
  void* py_ = pointer(op, hy, "hy", dt, n, false, true);
  void* pw = pointer(op, work, "workspace", dt, 4 * n, false, true);
  py::gil_scoped_release nogil;
  over_rows(batch, hidden, [&](index_t begin, index_t end) {
    if (dt == DType::f32)
      gru_rows(static_cast<const float*>(pi), static_cast<const float*>(ph), static_cast<const float*>(px),
               static_cast<float*>(py_), static_cast<float*>(pw), begin, end, hidden);
    else
      gru_rows(static_cast<const double*>(pi), static_cast<const double*>(ph), static_cast<const double*>(px),
               static_cast<double*>(py_), static_cast<double*>(pw), begin, end, hidden);
  });
}

void nn_gru_cell_backward(const py::array& ghy, const py::object& hx, const py::object& work, const py::object& dig,
                          const py::object& dhg, const py::object& dhx, index_t batch, index_t hidden) {
  const char* op = "nn_gru_cell_backward";
  const DType dt = float_dtype(op, ghy);
  check_sizes(op, batch, hidden);
  const index_t n = batch * hidden;
  const void* pg = pointer(op, ghy, "grad_hy", dt, n, false, false);
  const void* px = pointer(op, hx, "hx", dt, n, false, false);
  const void* pw = pointer(op, work, "workspace", dt, 4 * n, false, false);
  void* pdi = pointer(op, dig, "grad_igates", dt, 3 * n, false, true);
  void* pdh = pointer(op, dhg, "grad_hgates", dt, 3 * n, false, true);
  void* pdx = pointer(op, dhx, "grad_hx", dt, n, false, true);
  py::gil_scoped_release nogil;
  over_rows(batch, hidden, [&](index_t begin, index_t end) {
    if (dt == DType::f32)
      gru_backward_rows(static_cast<const float*>(pg), static_cast<const float*>(px), static_cast<const float*>(pw),
                        static_cast<float*>(pdi), static_cast<float*>(pdh), static_cast<float*>(pdx), begin, end,
                        hidden);
    else
      gru_backward_rows(static_cast<const double*>(pg), static_cast<const double*>(px),
                        static_cast<const double*>(pw), static_cast<double*>(pdi), static_cast<double*>(pdh),
                        static_cast<double*>(pdx), begin, end, hidden);
  });
}

void register_nn_rnn(py::module_& m) {
  m.def("nn_lstm_cell", &nn_lstm_cell, "One LSTM step from gate pre-activations (B, 4H) and cx (B, H).");
  m.def("nn_lstm_cell_backward", &nn_lstm_cell_backward, "The LSTM step's gate and cell-state gradients.");
  m.def("nn_gru_cell", &nn_gru_cell, "One GRU step from the input and hidden projections (B, 3H) and hx (B, H).");
  m.def("nn_gru_cell_backward", &nn_gru_cell_backward, "The GRU step's projection and hidden-state gradients.");
}

}  // namespace
}  // namespace flambeau

FLAMBEAU_REGISTER(flambeau::register_nn_rnn);
