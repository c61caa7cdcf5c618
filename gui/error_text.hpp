#pragma once
// An input error as the GUI shows it under a form or in a status line: "field: what was expected"
// (the library's InputError without its file and line, which a form has not).
#include <string>

#include "models/io/error.hpp"

namespace ringsim::gui {

[[nodiscard]] inline std::string field_message(const models::InputError& e) {
  return (e.field().empty() ? std::string() : e.field() + ": ") + e.message();
}

}  // namespace ringsim::gui
