#pragma once
// A predicted step cut into parts that add up to it exactly, for the breakdown bars: each pass's
// attention compute (its exposed communication taken out), the rest of the step's compute, the
// tensor-parallel all-reduces, and the communication no compute hid (ring transfers and the
// collectives of all-gather and Ulysses), each counted once.
#include "models/analytic/analytic.hpp"

namespace ringsim::gui {

struct StepParts {
  double attention_fwd_s = 0, attention_bwd_s = 0, other_compute_s = 0, tp_comm_s = 0, exposed_s = 0;
  [[nodiscard]] double total() const noexcept {
    return attention_fwd_s + attention_bwd_s + other_compute_s + tp_comm_s + exposed_s;
  }
};

[[nodiscard]] inline StepParts step_parts(const models::Prediction& p) {
  const double exposed = p.exposed_transfer_s + p.exposed_collectives_s();
  return {p.attention_fwd_s - p.exposed_fwd_s, p.attention_bwd_s - (exposed - p.exposed_fwd_s), p.other_compute_s,
          p.collective_s, exposed};
}

}  // namespace ringsim::gui
