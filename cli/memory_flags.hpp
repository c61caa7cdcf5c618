#pragma once
// The memory flags every command that estimates memory takes (predict, sweep, plan, plan-docs):
// --precision, --no-sequence-parallel, --offload-optimizer, --headroom. One definition, so the
// commands agree on names, defaults and messages.
#include <cxxopts.hpp>

#include "models/memory/memory.hpp"

namespace ringsim::cli {

void add_memory_flags(cxxopts::Options& o);
// `base`: what a sweep or plan file said; the flags given override it. InputError naming the
// flag for a bad value.
[[nodiscard]] models::MemorySettings memory_settings_from(const cxxopts::ParseResult& r, models::MemorySettings base = {});

}  // namespace ringsim::cli
