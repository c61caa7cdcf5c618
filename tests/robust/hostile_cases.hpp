#pragma once
// The hostile-input corpus: command lines and the files they name, each with what ringsim must
// do with it. Most cases are generated here by mutating one field of a valid configuration
// file or scenario CSV (wrong type, out of physical range, overflowing the parser, missing,
// absurdly large); hand-written command lines live in tests/robust/flag_cases.txt.
#include <string>
#include <vector>

#include "tests/support/temp_dir.hpp"

namespace ringsim::test {

enum class Expect {
  Reject,  // exit 2, exactly one line on stderr, no output file left behind
  Accept,  // exit 0, and no nan or inf anywhere in the output
  Either,  // one of the two (validity depends on more than the mutated field)
};

struct HostileCase {
  std::string family;  // which group of the corpus
  std::string name;    // what was mutated, for the failure report
  std::vector<std::string> args;  // ringsim's arguments (the program itself excluded)
  Expect expect = Expect::Reject;
};

// Files the flag cases refer to ({BIG}, {DIR}, {FIFO}, {HUGE_JSON}), made once per process.
struct HostileFixture {
  HostileFixture();
  TempDir tmp;
  std::string big;        // a 100 kB word (an argument can hold at most 128 kB)
  std::string huge;       // a 1 MB word, for files
  std::string dir;        // an existing folder
  std::string fifo;       // a named pipe nobody writes to
  std::string huge_json;  // a 50 MB JSON array
};

// Raw JSON texts no field of any JSON file accepts (wrong types, parser overflow, literals JSON
// does not have), for the generated families.
[[nodiscard]] std::vector<std::string> never_valid_json_values();

// The cases of each family; files they need are written into `fx.tmp`.
[[nodiscard]] std::vector<HostileCase> flag_cases(const HostileFixture& fx, const std::string& manifest,
                                                  const std::string& data_dir);
[[nodiscard]] std::vector<HostileCase> hardware_cases(const HostileFixture& fx, const std::string& source_root);
[[nodiscard]] std::vector<HostileCase> model_cases(const HostileFixture& fx, const std::string& source_root);
[[nodiscard]] std::vector<HostileCase> profile_cases(const HostileFixture& fx);
[[nodiscard]] std::vector<HostileCase> json_text_cases(const HostileFixture& fx);
[[nodiscard]] std::vector<HostileCase> csv_cases(const HostileFixture& fx);
[[nodiscard]] std::vector<HostileCase> mask_file_cases(const HostileFixture& fx);
// Document-length files (--docs FILE).
[[nodiscard]] std::vector<HostileCase> docs_file_cases(const HostileFixture& fx);
// Sweep and plan files (JSON), each field mutated.
[[nodiscard]] std::vector<HostileCase> sweep_file_cases(const HostileFixture& fx);
[[nodiscard]] std::vector<HostileCase> plan_file_cases(const HostileFixture& fx);
// Inputs of plot, merge and check: a sweep CSV (made by running `bin sweep` once) and a
// measurement CSV, each mutated.
[[nodiscard]] std::vector<HostileCase> sweep_csv_cases(const HostileFixture& fx, const std::string& bin);
[[nodiscard]] std::vector<HostileCase> measurement_csv_cases(const HostileFixture& fx);
// Profiler traces (hostile_trace_cases.cpp) through trace summarize, check --trace and
// calibrate --from-trace.
[[nodiscard]] std::vector<HostileCase> trace_file_cases(const HostileFixture& fx);
// Measurements that calibrate fits: kernel profiles and charts (--from-kernels), kernel timings
// (--from-timings) and nccl-tests output (--from-nccl-tests), each with one row mutated.
[[nodiscard]] std::vector<HostileCase> kernel_measurement_cases(const HostileFixture& fx);

}  // namespace ringsim::test
