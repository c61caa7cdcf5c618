// `ringsim measure` and `ringsim validate` in a build without CUDA: the commands exist (so the
// command table and --help are the same everywhere) and fail with one line and exit code 1.
#include <stdexcept>

#include "cli/commands.hpp"

namespace ringsim::cli {

namespace {

[[noreturn]] void without_cuda() {
  throw std::runtime_error("built without CUDA (reconfigure with nvcc available and -DRINGSIM_BUILD_CUDA=ON)");
}

}  // namespace

int run_measure(int, char**) { without_cuda(); }
int run_validate(int, char**) { without_cuda(); }

}  // namespace ringsim::cli
