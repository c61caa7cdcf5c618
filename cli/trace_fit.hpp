#pragma once
// `ringsim calibrate --from-trace` and `ringsim check --trace`: a user's own ring run, traced,
// against the scenario it ran (the scenario flags of predict). Each parses its own flags: the
// scenario's --hardware, --impl and --profile would collide with calibrate's and check's own.
namespace ringsim::cli {

// Whether argv holds `flag` (as "--flag" or "--flag=VALUE"): the commands pick these modes first.
[[nodiscard]] bool has_flag(int argc, char** argv, const char* flag);

int calibrate_from_trace(int argc, char** argv);
int check_trace(int argc, char** argv);

}  // namespace ringsim::cli
