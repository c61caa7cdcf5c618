#pragma once
// The flags that say how a step's micro-batches run (predict; docs/pipeline.md): --pp,
// --pp-schedule, --micro-batches or --global-batch. One definition, so the commands agree on
// names, defaults and messages.
#include <cstdint>

#include <cxxopts.hpp>

#include "models/pipeline/schedule.hpp"

namespace ringsim::cli {

void add_pipeline_flags(cxxopts::Options& o);
// The schedule the flags name, for `dp` replicas of `batch` sequences per micro-batch (what
// --global-batch divides by). InputError naming the flag for a bad value; the model's checks
// (layers over stages) come when it is known (models::PipelineSchedule::check).
[[nodiscard]] models::PipelineSchedule pipeline_from(const cxxopts::ParseResult& r, std::int64_t dp, std::int64_t batch);

}  // namespace ringsim::cli
