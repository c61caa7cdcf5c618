#include "cli/pipeline_flags.hpp"

#include <string>

#include "models/io/error.hpp"
#include "models/io/parse.hpp"

namespace ringsim::cli {

using models::InputError;

void add_pipeline_flags(cxxopts::Options& o) {
  o.add_options("pipeline")("pp", "pipeline-parallel stages, each a dp x mp x sp mesh holding layers / pp of the model (default 1)",
                            cxxopts::value<std::string>()->default_value("1"))
                           ("pp-schedule", "1f1b | interleaved:V (V model chunks per stage), as Megatron-LM runs them (default 1f1b)",
                            cxxopts::value<std::string>()->default_value("1f1b"))
                           ("micro-batches", "micro-batches per replica and step, each --batch sequences (gradient "
                                             "accumulation; default 1)",
                            cxxopts::value<std::string>())
                           ("global-batch", "sequences per step over all replicas, dp x micro-batches x batch (instead "
                                            "of --micro-batches)",
                            cxxopts::value<std::string>());
}

models::PipelineSchedule pipeline_from(const cxxopts::ParseResult& r, std::int64_t dp, std::int64_t batch) {
  const std::int64_t stages = models::parse_positive_int(r["pp"].as<std::string>(), "pp");
  std::int64_t micro = 1;
  if (r.count("micro-batches") && r.count("global-batch"))
    throw InputError({}, 0, "global-batch", "give --micro-batches or --global-batch, not both");
  if (r.count("micro-batches")) micro = models::parse_positive_int(r["micro-batches"].as<std::string>(), "micro-batches");
  if (r.count("global-batch")) {
    const std::int64_t global = models::parse_positive_int(r["global-batch"].as<std::string>(), "global-batch");
    // Divided step by step: dp x batch may not fit in 64 bits.
    if (global % dp != 0 || (global / dp) % batch != 0)
      throw InputError({}, 0, "global-batch",
                       std::to_string(global) + " sequences do not split into micro-batches of " + std::to_string(batch) +
                           " sequence(s) over " + std::to_string(dp) + " replica(s): expected a multiple of dp x batch");
    micro = global / dp / batch;
  }
  auto s = models::PipelineSchedule::parse(r["pp-schedule"].as<std::string>(), stages, micro);
  s.check(0);
  return s;
}

}  // namespace ringsim::cli
