#include "models/pipeline/schedule.hpp"

#include <algorithm>

#include "models/io/error.hpp"
#include "models/io/parse.hpp"

namespace ringsim::models {

namespace {
// A step's passes are listed and simulated one by one (about 40 bytes each in the longest path
// and the simulator): 2^22 passes over all ranks (~170 MB) is far beyond any real schedule (64
// stages of 1024 micro-batches are 131,072 passes) and keeps the arrays bounded.
constexpr std::int64_t kMaxPasses = 1 << 22;
constexpr std::int64_t kMaxStages = 1 << 16;
}  // namespace

PipelineSchedule PipelineSchedule::parse(std::string_view kind, std::int64_t stages, std::int64_t micro_batches) {
  PipelineSchedule s;
  s.stages = stages;
  s.micro_batches = micro_batches;
  if (kind == "1f1b" || kind.empty()) return s;
  constexpr std::string_view prefix = "interleaved:";
  if (kind.starts_with(prefix)) {
    s.kind = PipelineKind::Interleaved;
    try {
      s.virtual_stages = parse_positive_int(kind.substr(prefix.size()), "pp-schedule");
    } catch (const InputError&) {
      throw InputError({}, 0, "pp-schedule",
                       "expected interleaved:V with V >= 2 model chunks per stage, got '" + std::string(kind) + "'");
    }
    if (s.virtual_stages < 2)
      throw InputError({}, 0, "pp-schedule",
                       "an interleaved schedule needs at least 2 model chunks per stage (interleaved:1 is 1f1b)");
    return s;
  }
  throw InputError({}, 0, "pp-schedule", "expected 1f1b or interleaved:V, got '" + std::string(kind) + "'");
}

std::string PipelineSchedule::spec() const {
  return kind == PipelineKind::Interleaved ? "interleaved:" + std::to_string(virtual_stages) : "1f1b";
}

std::string PipelineSchedule::text() const {
  const std::string mb = std::to_string(micro_batches) + (micro_batches == 1 ? " micro-batch" : " micro-batches");
  if (!pipelined()) return "no pipeline, " + mb;
  if (kind == PipelineKind::Interleaved)
    return "interleaved 1F1B over " + std::to_string(stages) + " stages x " + std::to_string(virtual_stages) +
           " chunks, " + mb;
  return "1F1B over " + std::to_string(stages) + " stages, " + mb;
}

void PipelineSchedule::check(std::int64_t layers) const {
  if (stages < 1) throw InputError({}, 0, "pp", "pipeline stages must be a positive integer");
  if (stages > kMaxStages)
    throw InputError({}, 0, "pp", "at most " + std::to_string(kMaxStages) + " pipeline stages, got " + std::to_string(stages));
  if (micro_batches < 1) throw InputError({}, 0, "micro-batches", "micro-batches must be a positive integer");
  if (virtual_stages < 1 || (kind == PipelineKind::Interleaved && virtual_stages < 2))
    throw InputError({}, 0, "pp-schedule", "an interleaved schedule needs at least 2 model chunks per stage");
  // Without a pipeline there is nothing to interleave (Megatron-LM asserts pipeline-model-parallel
  // size > 1 for it: megatron/training/arguments.py @ d98e8a6); accepted, a pp-1 interleaved point
  // would repeat its 1F1B twin under another name.
  if (kind == PipelineKind::Interleaved && stages == 1)
    throw InputError({}, 0, "pp-schedule", "an interleaved schedule needs pipeline stages (pp > 1)");
  // 2 x stages x chunks x micro-batches, divided step by step: the product may not fit 64 bits.
  if (virtual_stages > kMaxPasses / 2 / stages || micro_batches > kMaxPasses / 2 / stages / virtual_stages)
    throw InputError({}, 0, "micro-batches",
                     std::to_string(stages) + " stages x " + std::to_string(virtual_stages) + " chunks x " +
                         std::to_string(micro_batches) + " micro-batches, forward and backward, are more passes than "
                         "ringsim lists (" + std::to_string(kMaxPasses) + ")");
  if (layers > 0 && layers % chunks() != 0)
    throw InputError({}, 0, "pp",
                     "the model's " + std::to_string(layers) + " layers do not split evenly over " + std::to_string(stages) +
                         " stages" + (virtual_stages > 1 ? " x " + std::to_string(virtual_stages) + " chunks" : std::string()) +
                         " (Megatron requires layers divisible by pp x virtual stages)");
  if (layers > 0 && layers < chunks())
    throw InputError({}, 0, "pp", "more pipeline chunks than the model's " + std::to_string(layers) + " layers");
  if (kind == PipelineKind::Interleaved && pipelined() && micro_batches % stages != 0)
    throw InputError({}, 0, "micro-batches",
                     "an interleaved schedule over " + std::to_string(stages) + " stages needs a multiple of " +
                         std::to_string(stages) + " micro-batches, got " + std::to_string(micro_batches) +
                         " (Megatron-LM's schedules.py refuses a last micro-batch group smaller than the stages)");
}

std::int64_t PipelineSchedule::warmup(std::int64_t rank) const noexcept {
  const std::int64_t total = micro_batches * virtual_stages;
  if (!pipelined()) return 0;
  std::int64_t w = kind == PipelineKind::Interleaved ? 2 * (stages - rank - 1) + (virtual_stages - 1) * stages
                                                     : stages - rank - 1;
  return std::min(w, total);
}

std::vector<PipelinePass> PipelineSchedule::order(std::int64_t rank) const {
  const std::int64_t total = micro_batches * virtual_stages;
  // Virtual micro-batch k -> (micro-batch, chunk): groups of `stages` micro-batches run through
  // chunk 0, then the same group through chunk 1, ... (Megatron's schedule table); backwards
  // take the chunks in reverse. Without interleaving k is the micro-batch itself.
  const std::int64_t group = kind == PipelineKind::Interleaved ? stages : micro_batches;
  const auto pass = [&](std::int64_t k, bool backward) {
    const std::int64_t per_group = group * virtual_stages;
    const std::int64_t g = k / per_group, in = k % per_group;
    const std::int64_t chunk = in / group;
    return PipelinePass{backward, g * group + in % group, backward ? virtual_stages - 1 - chunk : chunk};
  };
  std::vector<PipelinePass> out;
  out.reserve(static_cast<std::size_t>(2 * total));
  const std::int64_t w = warmup(rank);
  for (std::int64_t k = 0; k < w; ++k) out.push_back(pass(k, false));
  for (std::int64_t k = 0; k < total - w; ++k) {
    out.push_back(pass(w + k, false));
    out.push_back(pass(k, true));
  }
  for (std::int64_t k = total - w; k < total; ++k) out.push_back(pass(k, true));
  return out;
}

std::int64_t PipelineSchedule::peak_in_flight(std::int64_t rank) const noexcept {
  return std::min(warmup(rank) + 1, micro_batches * virtual_stages);
}

double PipelineSchedule::bubble_fraction() const noexcept {
  const double p = static_cast<double>(stages);
  return (p - 1) / (static_cast<double>(virtual_stages * micro_batches) + p - 1);
}

double PipelineSchedule::lockstep_step_s(double chunk_s) const noexcept {
  return (static_cast<double>(virtual_stages * micro_batches + stages) - 1) * chunk_s;
}

}  // namespace ringsim::models
