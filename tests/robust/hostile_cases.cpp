#include "tests/robust/hostile_cases.hpp"

#include <sys/stat.h>

#include <optional>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "tests/robust/hostile_support.hpp"
#include "tests/support/run_process.hpp"

namespace ringsim::test {
namespace {

using nlohmann::json;

}  // namespace

HostileFixture::HostileFixture() {
  big = std::string(100000, 'a');
  huge = std::string(1 << 20, 'a');
  dir = tmp.file("a-folder");
  ::mkdir(dir.c_str(), 0755);
  fifo = tmp.file("a-fifo");
  if (::mkfifo(fifo.c_str(), 0600) != 0) throw std::runtime_error("mkfifo failed");
  // A 50 MB JSON array of numbers: the size alone must refuse it, before any parsing.
  std::string text = "[";
  text.reserve(50u << 20);
  while (text.size() < (50u << 20)) text += "1234567,";
  text += "0]";
  huge_json = tmp.write("huge.json", text);
}

std::vector<HostileCase> flag_cases(const HostileFixture& fx, const std::string& manifest, const std::string& data_dir) {
  std::vector<HostileCase> out;
  std::istringstream in(read_or_throw(manifest));
  std::string line;
  const std::vector<std::pair<std::string, std::string>> subst = {
      {"{BIG}", fx.big}, {"{TMP}", fx.tmp.dir()}, {"{DIR}", fx.dir}, {"{FIFO}", fx.fifo},
      {"{HUGE_JSON}", fx.huge_json}, {"{DATA}", data_dir}};
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto words = test::words(line);
    HostileCase c{"flags", line, {}, R};
    c.expect = words[0] == "accept" ? A : words[0] == "either" ? E : R;
    if (words[0] != "accept" && words[0] != "either" && words[0] != "reject")
      throw std::runtime_error("bad expectation in " + manifest + ": " + line);
    for (std::size_t i = 1; i < words.size(); ++i) {
      auto w = words[i];
      for (const auto& [key, value] : subst)
        for (auto p = w.find(key); p != std::string::npos; p = w.find(key, p + value.size())) w.replace(p, key.size(), value);
      c.args.push_back(w);
    }
    if (c.name.size() > 200) c.name = c.name.substr(0, 200) + "...";
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<HostileCase> hardware_cases(const HostileFixture& fx, const std::string& root) {
  const json base = json::parse(read_or_throw(root + "/configs/hardware/a100-80gb.json"));
  std::vector<HostileCase> out;
  int n = 0;
  auto add = [&](const std::string& what, const std::string& text, Expect e) {
    const auto f = fx.tmp.write("hw-" + std::to_string(n++) + ".json", text);
    out.push_back({"hardware", what, {"predict", "--hardware-file", f, "--model", "attn:8:8:64", "--mesh", "1x8", "--seq", "65536"}, e});
    // Valid odd hardware must also simulate to finite figures (or be refused as too slow for
    // the simulator's clock).
    if (e != R)
      out.push_back({"hardware", what + " (simulate)",
                     {"simulate", "--hardware-file", f, "--model", "attn:4:4:64", "--mesh", "1x4", "--seq", "4096"}, E});
  };
  const Values rates = plus(kNeverNumbers, {{"0", R}, {"1e-300", R}, {"null", R}});
  const std::vector<std::pair<std::string, Values>> fields = {
      {"/peak_flops_per_s/bf16/value", plus(kNeverNumbers, {{"0", R}, {"1e-300", R}, {"1e20", R}, {"null", E}, {"1e6", A}, {"1e19", A}})},
      {"/peak_flops_per_s/fp16/value", plus(kNeverNumbers, {{"0", R}, {"null", E}, {"1e6", A}})},
      {"/peak_flops_per_s/tf32/value", plus(kNeverNumbers, {{"0", R}, {"null", E}, {"1e6", A}})},
      {"/peak_flops_per_s/fp32/value", plus(kNeverNumbers, {{"0", R}, {"null", E}})},
      {"/peak_flops_per_s/fp8/value", plus(kNeverNumbers, {{"0", R}, {"1e6", A}})},
      {"/hbm_bytes/value", plus(rates, {{"1e6", A}, {"1e15", A}, {"1e16", R}})},
      {"/hbm_bandwidth_bytes_per_s/value", plus(rates, {{"1e3", A}, {"1e15", A}})},
      {"/intra_node/link_bandwidth_bytes_per_s_per_direction/value", plus(rates, {{"1e3", A}, {"1e15", A}})},
      {"/intra_node/link_bandwith_bytes_per_s_per_direction", {{"{\"value\": 1e9, \"source\": \"x\"}", R}}},
      {"/hbm_bandwith_bytes_per_s", {{"1", R}}},
      {"/device_note", {{"\"a note\"", A}}},
      {"/inter_node/bandwidth_bytes_per_s_per_device/value", plus(rates, {{"1e3", A}})},
      {"/intra_node/latency_s/value", plus(kNeverNumbers, {{"2", R}, {"null", R}, {"0", A}, {"1", A}})},
      {"/inter_node/latency_s/value", plus(kNeverNumbers, {{"2", R}, {"0", A}})},
      {"/intra_node/devices_per_node/value",
       plus(kNeverNumbers, {{"0.5", R}, {"2.7", R}, {"0", R}, {"-8", R}, {"\"8\"", R}, {"2097152", R}, {"null", R},
                            {"8.0", A}, {"1", A}, {"1048576", A}})},
      {"/topology", {{"\"mesh\"", R}, {"5", R}, {"\"\"", R}, {"null", R}, {"\"torus3d\"", A}, {"", A}}},
      {"/kind", {{"\"cpu\"", R}, {"1", R}, {"\"\"", R}, {"\"tpu\"", A}}},
      {"/name", {{"\"\"", R}, {"5", R}, {"\"a b\"", R}, {"\"../x\"", R}, {"\"" + fx.huge + "\"", R}, {"", R}, {"\"x.y_z-1\"", A}}},
      {"/description", {{"5", R}, {"\"\\u0000\\n\\u001b[31m\"", A}}},
      {"/peak_flops_per_s/bf16/source", {{"\"\"", R}, {"5", R}, {"null", R}, {"", R}}},
      {"/intra_node/devices_per_node", {{"8", R}, {"{\"value\": 8}", R}, {"", R}}},
      {"/peak_flops_per_s", {{"{}", R}, {"[]", R}, {"", R}}},
  };
  for (const auto& [pointer, values] : fields)
    for (const auto& [raw, e] : values)
      add(pointer + " = " + (raw.size() > 40 ? raw.substr(0, 40) + "..." : raw), mutated(base, pointer, raw), e);
  // matrix_unit_width is optional (absent in the A100 file): added with each value.
  for (const auto& [raw, e] : plus(kNeverNumbers, Values{{"0", R}, {"0.5", R}, {"65537", R}, {"null", A}, {"1", A},
                                                          {"128.0", A}, {"65536", A}})) {
    json j = base;
    j["matrix_unit_width"] = {{"value", "@@w@@"}, {"source", "a test"}};
    auto text = j.dump(2);
    text.replace(text.find("\"@@w@@\""), 7, raw);
    add("/matrix_unit_width/value = " + raw, text, e);
  }
  // fp8_gemm_relative_efficiency is optional and needs an FP8 peak, which the A100 file has not:
  // every value is refused there (in range or not).
  for (const auto& [raw, e] : plus(kNeverNumbers, Values{{"0", R}, {"0.05", R}, {"3", R}, {"0.95", R}})) {
    json j = base;
    j["fp8_gemm_relative_efficiency"] = {{"value", "@@r@@"}, {"source", "a test"}};
    auto text = j.dump(2);
    text.replace(text.find("\"@@r@@\""), 7, raw);
    add("/fp8_gemm_relative_efficiency/value = " + raw, text, e);
  }
  return out;
}

std::vector<HostileCase> model_cases(const HostileFixture& fx, const std::string& root) {
  const json base = json::parse(read_or_throw(root + "/configs/models/llama3-8b.json"));
  std::vector<HostileCase> out;
  int n = 0;
  auto add = [&](const std::string& what, const std::string& text, Expect e) {
    const auto f = fx.tmp.write("model-" + std::to_string(n++) + ".json", text);
    // ringsim-tiles: the model reader is under test, not a FlashAttention kernel's head-dim limit (256).
    out.push_back({"model", what, {"predict", "--model-file", f, "--hardware", "h100-sxm", "--impl", "ringsim-tiles", "--mesh", "1x8", "--seq", "65536"}, e});
  };
  const Values counts = plus(kNeverNumbers, {{"0", R}, {"0.5", R}, {"1e12", R}, {"null", R}, {"2147483648", R},
                                             {"9223372036854775807", R}, {"18446744073709551615", R}, {"99999999999999999999", R}});
  const std::vector<std::pair<std::string, Values>> fields = {
      {"/vocab/value", plus(counts, {{"1", A}, {"128256.0", A}})},
      {"/d_model/value", plus(counts, {{"1", A}, {"4096.0", A}, {"1048577", R}})},
      {"/d_ff/value", plus(counts, {{"1", A}, {"4194304", A}})},
      {"/layers/value", plus(counts, {{"1", A}, {"16384", A}, {"16385", R}})},
      {"/heads/value", plus(counts, {{"64", A}, {"1", R}, {"12", R}})},
      {"/kv_heads/value", plus(counts, {{"1", A}, {"32", A}, {"64", R}, {"3", R}})},
      {"/head_dim/value", plus(counts, {{"1", A}, {"65536", A}, {"65537", R}})},
      {"/head_dim", {{"", A}, {"128", R}}},
      {"/tied_embeddings", {{"\"yes\"", R}, {"1", R}, {"null", R}, {"true", A}, {"", A}}},
      {"/mlp", {{"\"relu\"", R}, {"3", R}, {"\"\"", R}, {"\"gelu\"", A}}},
      {"/name", {{"\"\"", R}, {"\"a/b\"", R}, {"\"" + fx.huge + "\"", R}, {"null", R}}},
      {"/layers/source", {{"\"\"", R}, {"", R}}},
  };
  for (const auto& [pointer, values] : fields)
    for (const auto& [raw, e] : values)
      add(pointer + " = " + (raw.size() > 40 ? raw.substr(0, 40) + "..." : raw), mutated(base, pointer, raw), e);
  // Without head_dim, d_model must split over the heads (d_model 1 over 32 heads would be 0).
  json j = base;
  j.erase("head_dim");
  for (const auto& [raw, e] : Values{{"1", R}, {"4097", R}, {"4096", A}})
    add("no head_dim, /d_model/value = " + raw, mutated(j, "/d_model/value", raw), e);
  return out;
}

std::vector<HostileCase> profile_cases(const HostileFixture& fx) {
  const json base = {{"name", "hostile"}, {"hardware", "a100-80gb"}, {"version", 1}};
  std::vector<HostileCase> out;
  int n = 0;
  // ringsim-tiles runs the blockwise family, which reads every field below; a field of another
  // family is refused (the cases after the loop).
  auto add = [&](const std::string& what, const std::string& text, Expect e, const std::string& impl = "ringsim-tiles") {
    const auto f = fx.tmp.write("profile-" + std::to_string(n++) + ".json", text);
    out.push_back({"profile", what + " (" + impl + ")",
                   {"predict", "--profile", f, "--seq", "65536", "--model", "ringattn-1b", "--impl", impl}, e});
  };
  const Values bad = plus(kNeverNumbers, {{"null", R}});
  // Each field with values inside and just outside its documented range.
  const std::vector<std::pair<std::string, Values>> fields = {
      {"/matmul_efficiency", plus(bad, {{"0", R}, {"1.01", R}, {"0.001", A}, {"1", A}})},
      {"/matmul_eficiency", {{"0.5", R}}},
      {"/provenance/calibated", {{"true", R}}},
      {"/default_tile/qq", {{"64", R}}},
      {"/attention_efficiency", plus(bad, {{"0", R}, {"2", R}, {"0.001", A}, {"1", A}})},
      {"/memory_efficiency", plus(bad, {{"0", R}, {"0.001", A}})},
      {"/link_efficiency", plus(bad, {{"0", R}, {"1", A}})},
      {"/overlap", plus(bad, {{"1.5", R}, {"0", A}, {"1", A}})},
      {"/tile_overhead_s", plus(bad, {{"2", R}, {"0", A}, {"1", A}})},
      {"/round_overhead_s", plus(bad, {{"2", R}, {"1", A}})},
      {"/masked_tile_penalty", plus(bad, {{"11", R}, {"10", A}})},
      {"/skipped_tile_cost", plus(bad, {{"1.5", R}, {"1", A}})},
      {"/attention_bwd_factor", plus(bad, {{"0.4", R}, {"0.5", A}, {"10", A}})},
      {"/sparse_kernel_efficiency", plus(bad, {{"0", R}, {"4", R}, {"2", A}})},
      {"/sparse_prep_bytes_per_element", plus(bad, {{"1e5", R}, {"0", A}})},
      {"/hash_sort_bytes_per_token", plus(bad, {{"1e7", R}, {"0", A}})},
      {"/link_latency_s", plus(kNeverNumbers, {{"2", R}, {"null", A}, {"0", A}, {"1", A}})},
      {"/kv_wire_bytes", plus(kNeverNumbers, {{"3.5", R}, {"3", R}, {"8", R}, {"0", R}, {"1", A}, {"4.0", A}})},
      {"/dkv_wire_bytes", plus(kNeverNumbers, {{"3", R}, {"16", R}, {"2", A}})},
      {"/version", plus(kNeverNumbers, {{"0.5", R}, {"0", R}, {"3", A}})},
      {"/attention_precision", {{"\"fp64\"", R}, {"5", R}, {"\"\"", R}, {"\"fp8\"", E}, {"\"fp32\"", A}}},
      {"/matmul_precision", {{"\"int4\"", R}, {"null", R}, {"\"fp16\"", A}}},
      {"/recompute", {{"\"yes\"", R}, {"1", R}, {"true", A}}},
      {"/default_tile", {{"{\"q\": 0, \"k\": 128}", R}, {"{\"q\": 0.5, \"k\": 128}", R}, {"{\"q\": 1e300, \"k\": 128}", R},
                         {"{\"q\": -4, \"k\": 128}", R}, {"{\"q\": 128}", R}, {"[128, 128]", R},
                         {"{\"q\": 1, \"k\": 1}", A}, {"{\"q\": 64, \"k\": 4096}", A}}},
      {"/provenance", {{"{\"calibrated\": \"yes\"}", R}, {"{\"residual\": \"x\"}", R}, {"{\"residual\": 1e400}", R},
                       {"{\"calibrated\": true, \"residual\": 0.1}", A}}},
      {"/name", {{"5", R}, {"\"\"", R}}},
  };
  for (const auto& [pointer, values] : fields)
    for (const auto& [raw, e] : values) {
      json j = base;
      j[json::json_pointer(pointer)] = 0;  // the key exists, then takes the raw text
      add(pointer + " = " + raw, mutated(j, pointer, raw), e);
    }
  // Parameters by kernel family: read by one family, refused in a profile of an implementation
  // running another (models/cost/profile_params.hpp), and accepted where the family reads them.
  const std::vector<std::tuple<std::string, std::string, Expect>> family_fields = {
      {"masked_tile_penalty", "ring-flash-attn", R}, {"round_bytes_per_element", "ring-flash-attn", R},
      {"sparse_prep_bytes_per_element", "te-p2p", R},  {"attention_bwd_factor", "usp", R},
      {"softmax_overlap", "ringsim-tiles", R},         {"host_step_s", "jax-blockwise", R},
      {"cta_overhead_s", "ringsim-tiles", R},          {"softmax_overlap", "ring-flash-attn", A},
      {"host_call_s", "te-p2p", A},                    {"round_bytes_per_element", "jax-blockwise", A},
      {"matmul_efficiency", "ring-flash-attn", A},     {"overlap", "ringsim-tiles", A}};
  for (const auto& [field, impl, e] : family_fields) {
    json j = base;
    j[field] = field == "round_bytes_per_element" || field == "host_step_s" ? 0.0 : 0.5;
    add("/" + field + " by family", j.dump(), e, impl);
  }
  return out;
}

std::vector<HostileCase> json_text_cases(const HostileFixture& fx) {
  // Whole-file shapes every JSON reader must refuse with one line.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string dup_key = R"({"name": "a100-80gb", "name": "h100-sxm"})";
  const std::vector<std::pair<std::string, std::string>> texts = {
      {"empty", ""}, {"whitespace", " \n\t "}, {"array", "[]"}, {"null", "null"}, {"number", "1e400"},
      {"truncated", "{\"name\": \"x\", \"hbm_bytes\": {"}, {"deep nesting", deep}, {"duplicated key", dup_key},
      {"NUL byte", std::string("{\"name\": \"x\0y\"}", 16)}, {"BOM", "\xEF\xBB\xBF{}"}, {"invalid UTF-8", "{\"name\": \"\xff\xfe\"}"},
      {"trailing junk", "{} {}"}, {"comment", "{/* c */}"}, {"string", "\"a100\""}};
  std::vector<HostileCase> out;
  int n = 0;
  for (const auto& [what, text] : texts) {
    const auto f = fx.tmp.write("json-" + std::to_string(n++) + ".json", text);
    out.push_back({"json", "hardware: " + what, {"predict", "--hardware-file", f}, R});
    out.push_back({"json", "model: " + what, {"predict", "--model-file", f}, R});
    out.push_back({"json", "profile: " + what, {"predict", "--profile", f}, R});
  }
  return out;
}

std::vector<std::string> never_valid_json_values() {
  std::vector<std::string> v;
  for (const auto& [raw, e] : kNeverNumbers) v.push_back(raw);
  return v;
}

namespace {

// Mutates each field of `base` with every value of its list, and runs `command FILE args`.
std::vector<HostileCase> json_field_cases(const HostileFixture& fx, const std::string& family, const json& base,
                                          const std::vector<std::pair<std::string, Values>>& fields,
                                          const std::vector<std::string>& command, const std::vector<std::string>& args) {
  std::vector<HostileCase> out;
  int n = 0;
  for (const auto& [pointer, values] : fields)
    for (const auto& [raw, e] : values) {
      json j = base;
      if (!j.contains(json::json_pointer(pointer))) j[json::json_pointer(pointer)] = 0;  // the key exists, then takes the raw text
      const auto f = fx.tmp.write(family + "-" + std::to_string(n++) + ".json", mutated(j, pointer, raw));
      HostileCase c{family, pointer + " = " + (raw.size() > 40 ? raw.substr(0, 40) + "..." : raw), command, e};
      c.args.push_back(f);
      c.args.insert(c.args.end(), args.begin(), args.end());
      out.push_back(std::move(c));
    }
  return out;
}

Values with_never(Values v) { return plus(kNeverNumbers, v); }
}  // namespace

std::vector<HostileCase> sweep_file_cases(const HostileFixture& fx) {
  const json base = {{"hardware", "a100-80gb"}, {"model", "ringattn-1b"}, {"mesh", {"1x4", "2x4"}},
                     {"n_seq", {8192, 16384}}, {"layout", {"contiguous", "striped"}}};
  const Values counts = with_never({{"0", R}, {"0.5", R}, {"[]", R}, {"[8192, 0]", R}, {"[8192, \"many\"]", R},
                                    {"9223372036854775807", A}, {"[[8192]]", R}, {"\"8192\"", R}, {"8192.0", R}});
  const std::string big = "\"" + fx.huge + "\"";
  const std::vector<std::pair<std::string, Values>> fields = {
      {"/hardware", {{"5", R}, {"\"z80\"", R}, {"\"../x\"", R}, {big, R}, {"[]", R}, {"[\"a100-80gb\", 5]", R},
                     {"\"/dev/zero.json\"", R}, {"null", R}, {"[\"a100-80gb\", \"h100-sxm\"]", A}}},
      {"/model", {{"\"attn:3:2:64\"", R}, {"\"attn:9223372036854775807:1:9223372036854775807\"", R}, {big, R},
                  {"\"missing.json\"", R}, {"[\"ringattn-1b\", \"attn:8:8:64\"]", A}}},
      {"/impl", {{"\"nope\"", R}, {big, R}, {"5", R}, {"\"default\"", A}, {"[\"default\", \"ringsim-tiles\"]", A}}},
      {"/cp", {{"\"usp:0x8\"", R}, {"\"usp:4294967296x4294967296\"", E}, {"\"double-ring:0\"", R}, {"\"torus\"", R},
               {"[\"ring\", \"usp:2x2\", \"double-ring:3\", \"ulysses\"]", A}}},
      {"/mesh", {{"\"0x4\"", R}, {"\"1x\"", R}, {"4", R}, {"[]", R}, {"\"1x9223372036854775807\"", R},
                 {"\"9223372036854775807x9223372036854775807\"", R}, {"\"1048576x1048576\"", A}, {"\"1x1\"", A}}},
      {"/mp", {{"[1, 2]", R}}},
      {"/dp", with_never({{"0", R}, {"0.5", R}, {"9223372036854775807", R}, {"1048577", R}, {"[1, 2, 1048576]", A}})},
      {"/n_seq", counts},
      {"/batch", with_never({{"0", R}, {"[1, 4294967296]", A}, {"9223372036854775807", A}})},
      {"/layout", {{"\"spiral\"", R}, {"\"cyclic:0\"", E}, {"\"perm:/dev/zero\"", A}, {"5", R}, {big, R}}},
      {"/mask", {{"\"diagonal\"", R}, {"\"window:0\"", E}, {"\"lsh:2:100000000\"", A}, {"\"docs:/dev/zero\"", A},
                 {"[\"causal\", \"window:9223372036854775807\"]", A}}},
      {"/tile", {{"\"0x4\"", R}, {"\"1099511627776x1\"", A}, {"128", R}, {"[\"default\", \"1x1\"]", A}}},
      {"/topology", {{"\"weird\"", R}, {"\"nodes:9223372036854775807x9223372036854775807\"", R},
                     {"\"torus:4294967296x4294967296x4294967296\"", R}, {"\"node:0\"", R},
                     {"\"node:2\"", A}, {"[\"default\", \"nodes:2x4\", \"torus:2x2x2\"]", A}}},
      {"/zero", {{"4", R}, {"-1", R}, {"\"zero9\"", R}, {"[0, 1, 2, 3]", A}, {"1.5", R}}},
      {"/recompute", {{"\"sometimes\"", R}, {"1", R}, {"[\"none\", \"profile\"]", A}}},
      {"/profile", {{"[\"a\"]", R}, {big, R}, {"\"/dev/zero.json\"", R}, {"\"../../x\"", R}, {"\"default\"", A},
                    {"\"jax-blockwise/a100-80gb\"", A}}},
      {"/kv_buffers", with_never({{"0", R}, {"[2]", R}, {"9223372036854775807", R}, {"1", A}, {"2", A}})},
      {"/engine", {{"\"quantum\"", R}, {"1", R}, {"null", R}, {"\"des\"", A}}},
      {"/unknown_axis", {{"1", R}}},
  };
  auto out = json_field_cases(fx, "sweep", base, fields, {"sweep"}, {"-o", fx.tmp.file("sweep-out.csv")});
  // The output must not stay behind from accepted runs in the checks that follow: each run
  // writes the same name, which the test removes after an accepted run.
  return out;
}

std::vector<HostileCase> plan_file_cases(const HostileFixture& fx) {
  const json base = {{"hardware", "a100-80gb"}, {"model", "ringattn-1b"}, {"goal", "max-throughput"}, {"n_seq", 8192},
                     {"devices", 4}, {"impl", "jax-blockwise"}, {"tile", "default"}, {"zero", 0}, {"recompute", "full"}};
  const std::string big = "\"" + fx.huge + "\"";
  const Values counts = with_never({{"0", R}, {"0.5", R}, {"\"8\"", R}, {"null", R}, {"9223372036854775808", R}});
  const std::vector<std::pair<std::string, Values>> fields = {
      {"/hardware", {{"5", R}, {"\"z80\"", R}, {big, R}, {"\"missing.json\"", R}, {"[\"a100-80gb\"]", R}}},
      {"/model", {{"5", R}, {"\"attn:3:2:64\"", R}, {big, R}, {"\"attn:8:8:64\"", A}}},
      {"/goal", {{"\"cheapest\"", R}, {"5", R}, {"\"min-devices\"", R}, {"\"max-context\"", E}}},
      {"/n_seq", plus(counts, {{"16384", A}})},
      {"/max_context", plus(counts, {{"9223372036854775807", E}, {"65536", A}})},
      {"/devices", plus(counts, {{"2097152", R}, {"9223372036854775807", R}, {"1", A}})},
      {"/batch", plus(counts, {{"2", A}})},
      {"/top", plus(counts, {{"1", A}, {"1048576", A}, {"1048577", R}, {"9223372036854775807", R}})},
      {"/target_tokens_per_s", {{"0", R}, {"-1", R}, {"\"fast\"", R}, {"1e400", R}, {"NaN", R}, {"1e300", A}}},
      {"/mask", {{"\"diagonal\"", R}, {"5", R}, {"\"window:128\"", A}}},
      {"/impl", {{"\"nope\"", R}, {big, R}, {"[]", R}}},
      {"/cp", {{"\"usp:0x2\"", R}, {"[\"ring\", \"ulysses\", \"usp:2x2\"]", A}}},
      {"/layout", {{"\"spiral\"", R}, {"[\"striped\", \"diagonal\"]", R}, {"\"zigzag\"", A}}},
      {"/tile", {{"\"0x0\"", R}, {"[\"128x128\", \"default\"]", A}}},
      {"/topology", {{"\"weird\"", R}, {"\"nodes:9223372036854775807x2\"", R}, {"\"node:2\"", A}}},
      {"/zero", {{"7", R}, {"[0, 3]", A}}},
      {"/recompute", {{"\"maybe\"", R}}},
      {"/engine", {{"\"quantum\"", R}, {"\"des\"", A}}},
      {"/layouts", {{"[\"striped\"]", R}}},
  };
  return json_field_cases(fx, "plan", base, fields, {"plan"}, {"--format", "csv"});
}

}  // namespace ringsim::test
