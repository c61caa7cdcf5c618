#include "cli/output_dirs.hpp"

#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "io/output_file.hpp"
#include "models/io/error.hpp"
#include "models/io/names.hpp"

namespace ringsim::cli {

namespace fs = std::filesystem;

namespace {

const char* kind_of(const fs::file_status& st) {
  switch (st.type()) {
    case fs::file_type::regular: return "a file";
    case fs::file_type::fifo: return "a named pipe";
    case fs::file_type::character:
    case fs::file_type::block: return "a device";
    case fs::file_type::socket: return "a socket";
    default: return "not a folder";
  }
}

}  // namespace

void check_output_dir(const std::string& dir, std::string_view flag) {
  models::check_path(dir, flag);
  // The folder itself, else its nearest existing ancestor, must be a folder (a link to one is).
  for (fs::path p = fs::path(dir).lexically_normal(); !p.empty(); p = p.parent_path()) {
    std::error_code ec;
    const auto st = fs::status(p, ec);
    if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory)
      throw models::InputError({}, 0, std::string(flag), fmt::format("cannot use '{}' as a folder: {}", dir, ec.message()));
    if (st.type() == fs::file_type::not_found) {
      if (p == p.parent_path()) break;
      continue;
    }
    if (st.type() == fs::file_type::directory) return;
    throw models::InputError({}, 0, std::string(flag),
                             p == fs::path(dir).lexically_normal()
                                 ? fmt::format("'{}' is {}, not a folder: give a folder to write into", dir, kind_of(st))
                                 : fmt::format("'{}' cannot be a folder: '{}' is {}", dir, p.string(), kind_of(st)));
  }
}

void OutputSet::add(std::string path, std::string text) { files_.push_back({std::move(path), std::move(text), {}}); }

void OutputSet::add_under(const std::string& dir, const std::string& relative, std::string text, std::string flag) {
  files_.push_back({(fs::path(dir) / relative).string(), std::move(text), std::move(flag)});
}

void OutputSet::commit() {
  for (const auto& f : files_) {
    const auto parent = fs::path(f.path).parent_path();
    if (f.flag.empty() || parent.empty()) continue;
    check_output_dir(parent.string(), f.flag);
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec)
      throw models::InputError({}, 0, f.flag, fmt::format("cannot create the folder '{}': {}", parent.string(), ec.message()));
  }
  // Every temporary is written before any is renamed: a full disk or an interruption leaves none.
  std::vector<std::unique_ptr<io::AtomicFile>> open;
  for (const auto& f : files_) {
    open.push_back(std::make_unique<io::AtomicFile>(f.path));
    open.back()->write(f.text);
  }
  for (auto& f : open) f->commit();
  files_.clear();
}

}  // namespace ringsim::cli
