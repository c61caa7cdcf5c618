#include "cli/memory_flags.hpp"

#include <string>

#include "models/io/error.hpp"
#include "models/io/parse.hpp"

namespace ringsim::cli {

using models::InputError;

void add_memory_flags(cxxopts::Options& o) {
  o.add_options("memory")("precision",
                          "bf16 (mixed, the default; fp16 costs the same) | fp32 | fp8 (TransformerEngine on Hopper and "
                          "later): bytes of model states and kept activations",
                          cxxopts::value<std::string>())
                         ("no-sequence-parallel",
                          "with tensor parallelism, keep norms and residuals whole on every mp rank (Megatron without "
                          "--sequence-parallel)")
                         ("offload-optimizer", "fp32 master weights and Adam moments in host memory (ZeRO-Offload)")
                         ("headroom", "GiB a plan must leave free to fit (default 2)", cxxopts::value<std::string>());
}

models::MemorySettings memory_settings_from(const cxxopts::ParseResult& r, models::MemorySettings s) {
  if (r.count("precision")) {
    try {
      s.precision = models::parse_training_precision(r["precision"].as<std::string>());
    } catch (const InputError& e) {
      throw InputError({}, 0, "precision", e.message());
    }
  }
  if (r.count("no-sequence-parallel")) s.sequence_parallel = false;
  if (r.count("offload-optimizer")) s.offload_optimizer = true;
  if (r.count("headroom")) s.set_headroom_gib(models::parse_double(r["headroom"].as<std::string>(), "headroom"));
  return s;
}

}  // namespace ringsim::cli
