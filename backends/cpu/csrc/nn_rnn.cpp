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
#include "nn_rnn_cells.h"

namespace flambeau {
namespace {

// -- argument checks (GIL held) -------------------------------------------------------------------

using nn_args::float_dtype;
using nn_args::pointer;
using rnn_cells::gru_backward_rows;
using rnn_cells::gru_rows;
using rnn_cells::lstm_backward_rows;
using rnn_cells::lstm_rows;

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
      rnn_cells::lstm_rows_any(static_cast<const float*>(pg), static_cast<const float*>(pc), static_cast<float*>(ph),
                               static_cast<float*>(pcy), static_cast<float*>(pw), begin, end, hidden, 0, hidden);
    else
      lstm_rows(static_cast<const double*>(pg), static_cast<const double*>(pc), static_cast<double*>(ph),
                static_cast<double*>(pcy), static_cast<double*>(pw), begin, end, hidden, 0, hidden);
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
                         static_cast<float*>(pdc), begin, end, hidden, 0, hidden);
    else
      lstm_backward_rows(static_cast<const double*>(pgh), static_cast<const double*>(pgc),
                         static_cast<const double*>(pc), static_cast<const double*>(pcy),
                         static_cast<const double*>(pw), static_cast<double*>(pdg), static_cast<double*>(pdc), begin,
                         end, hidden, 0, hidden);
  });
}

// -- GRU ------------------------------------------------------------------------------------------

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
