#pragma once
// `ringsim predict --phase prefill|decode`: a context-parallel prefill of the scenario's n_seq new tokens
// over a KV cache of --cached-tokens, both ring variants (pass-KV, pass-Q: models/inference/
// prefill.hpp) side by side with which wins and why.
#include <string>

#include <cxxopts.hpp>

#include "models/catalog/catalog.hpp"

namespace ringsim::cli {

[[nodiscard]] std::string predict_prefill_text(const cxxopts::ParseResult& r, const models::Catalog& catalog,
                                               const std::string& format);
// `ringsim predict --phase decode`: one decode step of --batch sequences whose caches of
// --cached-tokens are sharded over the ring (models/inference/decode.hpp), beside the same step on
// one device of the same mp (what context parallelism buys or costs).
[[nodiscard]] std::string predict_decode_text(const cxxopts::ParseResult& r, const models::Catalog& catalog,
                                              const std::string& format);

}  // namespace ringsim::cli
