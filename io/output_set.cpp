#include "io/output_set.hpp"

namespace ringsim::io {

OutputSet::~OutputSet() {
  // Temporaries first (AtomicFile's destructor removes an uncommitted one), then the locks.
  files_.clear();
  locks_.clear();
}

void OutputSet::stage(const std::string& path, std::string_view text) {
  if (path.empty() || path == "-") {
    to_stdout_.emplace_back(text);
    return;
  }
  auto file = std::make_unique<AtomicFile>(path);
  file->write(text);
  file->prepare();
  files_.push_back(std::move(file));
}

void OutputSet::hold(FolderLock lock) { locks_.push_back(std::move(lock)); }

void OutputSet::commit() {
  for (auto& f : files_) f->commit();
  files_.clear();
  locks_.clear();
  for (const auto& text : to_stdout_) write_output("-", text);
  to_stdout_.clear();
}

}  // namespace ringsim::io
