#pragma once
// Which build this is: the project's version, the commit its sources came from and the build
// type. The front-ends show it (`ringsim --version`, `ringsim.__version__`, `__commit__`,
// `__build_type__`), so a number can be traced to the code that computed it. The definition is
// generated into the build tree (io/build_info.cmake, run at every build), and rewritten only when
// one of the three changes: a new commit recompiles that one file and relinks, nothing more.
namespace ringsim::io {

struct BuildInfo {
  const char* version;     // the project's version (CMakeLists.txt: project VERSION)
  const char* commit;      // `git describe --always --dirty` of the sources; "unknown" outside a git checkout
  const char* build_type;  // CMake's build type (Release, Debug, ...); "unspecified" when none was set
};

[[nodiscard]] BuildInfo build_info() noexcept;

}  // namespace ringsim::io
