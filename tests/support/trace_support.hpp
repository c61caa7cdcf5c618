#pragma once
// Shared by the trace tests: the catalog's kernel class rules, loaded once, and gzip compression
// of a test's text (what PyTorch's profiler writes with use_gzip=True).
#include <zlib.h>

#include <string>

#include <catch2/catch.hpp>

#include "calibration/trace/kernel_classes.hpp"
#include "models/catalog/catalog.hpp"

namespace ringsim::test {

inline const calibration::KernelClasses& trace_classes() {
  static const auto k =
      calibration::KernelClasses::load(calibration::KernelClasses::default_path(models::Catalog::default_root()));
  return k;
}

inline std::string gzip(const std::string& text) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, text.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

}  // namespace ringsim::test
