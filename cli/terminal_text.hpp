#pragma once
// Text that came from an input (a kernel name, a device name, a path) made safe to print: a
// trace can name a kernel with a NUL, a line break or a terminal escape sequence (ESC [ 2 J clears
// the screen; the 8-bit CSI, U+009B, starts a sequence too), which must reach neither the terminal
// nor a file as such. Every C0 control character, DEL, every C1 control (U+0080 to U+009F) and
// every byte that is not part of valid UTF-8 is shown as \xNN; everything else, other scripts
// included, is kept. Tables and reports pass their whole text through it (line breaks kept);
// error messages pass theirs as one line.
#include <string>
#include <string_view>

namespace ringsim::cli {

// `keep_newlines`: '\n' passes through (a table's own line breaks), else it is escaped too.
[[nodiscard]] std::string terminal_text(std::string_view text, bool keep_newlines);

}  // namespace ringsim::cli
