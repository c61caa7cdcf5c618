#include "cli/terminal_text.hpp"

#include <cstdio>

namespace ringsim::cli {

namespace {

void escape_byte(std::string& out, unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", c);
  out += buf;
}

// Bytes of the valid UTF-8 sequence starting at `i` (1 to 4), or 0 when there is none: the
// well-formed byte sequences of the Unicode standard, table 3-7 (no overlongs, no surrogates).
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const auto cont = [&](std::size_t k, unsigned lo = 0x80, unsigned hi = 0xbf) {
    return i + k < s.size() && b(k) >= lo && b(k) <= hi;
  };
  const unsigned c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c == 0xe0) return cont(1, 0xa0) && cont(2) ? 3 : 0;
  if ((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef) return cont(1) && cont(2) ? 3 : 0;
  if (c == 0xed) return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0;
  if (c == 0xf0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xf1 && c <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c == 0xf4) return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

}  // namespace

std::string terminal_text(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n' && keep_newlines) {
      out += '\n';
      ++i;
      continue;
    }
    if (c < 0x20 || c == 0x7f) {
      escape_byte(out, c);
      ++i;
      continue;
    }
    const std::size_t n = utf8_length(text, i);
    // U+0080 to U+009F (C1 controls) are encoded C2 80 to C2 9F.
    const bool c1 = n == 2 && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) <= 0x9f;
    if (n == 0 || c1) {
      for (std::size_t k = 0; k < (n == 0 ? 1 : n); ++k) escape_byte(out, static_cast<unsigned char>(text[i + k]));
      i += n == 0 ? 1 : n;
      continue;
    }
    out.append(text.substr(i, n));
    i += n;
  }
  return out;
}

}  // namespace ringsim::cli
