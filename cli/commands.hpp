#pragma once
// Sub-commands of `ringsim`. Each parses its own flags, calls the libraries and prints; they
// throw models::InputError for bad input (main turns it into one line and exit code 2).
#include <initializer_list>
#include <string>

#include <cxxopts.hpp>

namespace ringsim::cli {

int run_predict(int argc, char** argv);
int run_workload(int argc, char** argv);
int run_show(int argc, char** argv);
int run_simulate(int argc, char** argv);
int run_calibrate(int argc, char** argv);
int run_sweep(int argc, char** argv);
int run_merge(int argc, char** argv);
int run_plan(int argc, char** argv);
int run_plan_docs(int argc, char** argv);
int run_check(int argc, char** argv);
int run_plot(int argc, char** argv);
int run_agreement(int argc, char** argv);
int run_trace(int argc, char** argv);
// Need CUDA and a GPU; without either they fail with one line and exit code 1.
int run_measure(int argc, char** argv);
int run_validate(int argc, char** argv);

// cxxopts' own parse errors (unknown flag, missing value) become InputError.
[[nodiscard]] cxxopts::ParseResult parse_or_throw(cxxopts::Options& options, int argc, char** argv);
// With -h/--help: prints the command's help to stdout and returns true (the command then exits 0).
[[nodiscard]] bool help_requested(const cxxopts::Options& options, const cxxopts::ParseResult& r);

// The value of option `name`, which must be one of `choices` (else InputError naming them).
[[nodiscard]] std::string one_of(const cxxopts::ParseResult& r, const std::string& name,
                                 std::initializer_list<const char*> choices);

}  // namespace ringsim::cli
