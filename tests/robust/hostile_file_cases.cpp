// The hostile-input families of files that are not configuration JSON: scenario CSVs, mask
// files, document-length files, and the sweep and measurement CSVs that plot, merge and check read.
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tests/robust/hostile_cases.hpp"
#include "tests/robust/hostile_support.hpp"
#include "tests/support/run_process.hpp"

namespace ringsim::test {

std::vector<HostileCase> csv_cases(const HostileFixture& fx) {
  std::vector<HostileCase> out;
  int n = 0;
  auto add = [&](const std::string& what, const std::string& text, Expect e) {
    const auto f = fx.tmp.write("scenarios-" + std::to_string(n++) + ".csv", text);
    out.push_back({"csv", what, {"predict", "--scenarios", f, "--format", "csv"}, e});
  };
  const std::vector<std::string> cols = {"hardware", "model", "mp", "sp", "n_seq"};
  const std::vector<std::string> row = {"a100-80gb", "ringattn-1b", "1", "8", "65536"};
  auto table = [&](std::vector<std::string> h, std::vector<std::string> r) {
    std::string s;
    for (std::size_t i = 0; i < h.size(); ++i) s += (i ? "," : "") + h[i];
    s += "\n";
    for (std::size_t i = 0; i < r.size(); ++i) s += (i ? "," : "") + r[i];
    return s + "\n";
  };
  const Values sizes = {{"0", R}, {"-1", R}, {"1.5", R}, {"x", R}, {"", R}, {"9223372036854775807", R},
                        {"9223372036854775808", R}, {"4611686018427387904", R}, {"1e3", R}, {"0x8", R}, {"\"8\"", E}};
  for (std::size_t c = 2; c < 5; ++c)
    for (const auto& [v, e] : sizes) {
      auto r = row;
      r[c] = v;
      add(cols[c] + " = " + v, table(cols, r), e);
    }
  const Values names = {{"z80", R}, {"../x", R}, {fx.huge, R}, {"", R}, {" ", R}, {"a b", R}, {"/etc/passwd", R}};
  for (std::size_t c = 0; c < 2; ++c)
    for (const auto& [v, e] : names) {
      auto r = row;
      r[c] = v;
      add(cols[c] + " = " + (v.size() > 20 ? "a 1 MB name" : v), table(cols, r), e);
    }
  {
    auto r = row;
    r[1] = "attn:9223372036854775807:1:9223372036854775807";
    add("model = attn:INT64_MAX:1:INT64_MAX", table(cols, r), R);
    r = row;
    r[3] = r[4] = "4611686018427387904";
    add("sp = n_seq = 2^62", table(cols, r), R);
  }
  add("duplicated n_seq column", table({"hardware", "model", "mp", "sp", "n_seq", "n_seq"}, {"a100-80gb", "ringattn-1b", "1", "8", "65536", "8"}), R);
  add("duplicated hardware column", table({"hardware", "hardware", "model", "mp", "sp", "n_seq"}, {"a100-80gb", "h100-sxm", "ringattn-1b", "1", "8", "65536"}), R);
  add("missing column", table({"hardware", "model", "mp", "n_seq"}, {"a100-80gb", "ringattn-1b", "1", "65536"}), R);
  add("too many fields", table(cols, row) + "a100-80gb,ringattn-1b,1,8,65536,9\n", R);
  add("too few fields", table(cols, row) + "a100-80gb,ringattn-1b,1\n", R);
  add("unterminated quote", table(cols, row) + "\"a100-80gb,ringattn-1b,1,8,65536\n", R);
  add("empty file", "", R);
  add("comments only", "# nothing\n# here\n", R);
  add("header only", "hardware,model,mp,sp,n_seq\n", A);
  add("BOM before the header", "\xEF\xBB\xBF" + table(cols, row), R);
  add("NUL in a cell", "hardware,model,mp,sp,n_seq\na100-80gb,ringattn-1b,1," + std::string(1, '\0') + "8,65536\n", R);
  add("a 2 MB line", table(cols, row) + std::string(2 << 20, 'x') + "\n", R);
  add("CRLF line ends", "hardware,model,mp,sp,n_seq\r\na100-80gb,ringattn-1b,1,8,65536\r\n", A);
  add("quoted cells", "\"hardware\",\"model\",mp,sp,n_seq\n\"a100-80gb\",\"ringattn-1b\",1,8,65536\n", A);
  add("empty column name", "hardware,,model,mp,sp,n_seq\na100-80gb,x,ringattn-1b,1,8,65536\n", R);
  add("tile_q without tile_k", table({"hardware", "model", "mp", "sp", "n_seq", "tile_q"}, {"a100-80gb", "ringattn-1b", "1", "8", "65536", "128"}), R);
  add("batch INT64_MAX", table({"hardware", "model", "mp", "sp", "n_seq", "batch"}, {"a100-80gb", "ringattn-1b", "1", "8", "65536", "9223372036854775807"}), R);
  add("layout perm:/dev/zero", table({"hardware", "model", "mp", "sp", "n_seq", "layout"}, {"a100-80gb", "ringattn-1b", "1", "8", "65536", "perm:/dev/zero"}), R);
  add("mask lsh:2:100000000", table({"hardware", "model", "mp", "sp", "n_seq", "mask"}, {"a100-80gb", "ringattn-1b", "1", "8", "8192", "lsh:2:100000000"}), R);
  add("profile 1 MB name", table({"hardware", "model", "mp", "sp", "n_seq", "profile"}, {"a100-80gb", "ringattn-1b", "1", "8", "65536", fx.huge}), R);
  add("tile 1x1 on 2^30 tokens", table({"hardware", "model", "mp", "sp", "n_seq", "tile_q", "tile_k", "mask"}, {"a100-80gb", "ringattn-1b", "1", "1", "1073741824", "1", "1", "window:8"}), R);
  add("a pass-through column with odd text", table({"hardware", "model", "mp", "sp", "n_seq", "note"}, {"a100-80gb", "ringattn-1b", "1", "8", "65536", "\"a, \"\"quoted\"\" note\""}), A);
  std::string many = "hardware,model,mp,sp,n_seq\n";
  for (int i = 0; i < 300; ++i) many += "a100-80gb,ringattn-1b,1," + std::to_string(1 << (i % 4)) + "," + std::to_string(8192 << (i % 5)) + "\n";
  add("300 rows", many, A);
  return out;
}

std::vector<HostileCase> mask_file_cases(const HostileFixture& fx) {
  std::vector<HostileCase> out;
  int n = 0;
  const std::vector<std::string> scenario = {"--seq", "64", "--mesh", "1x8", "--tile", "4x4", "--model", "attn:2:2:8"};
  auto add = [&](const std::string& family, const std::string& what, const std::string& spec_prefix,
                 const std::string& text, Expect e, const std::string& flag = "--mask") {
    const auto f = fx.tmp.write(family + "-" + std::to_string(n++) + ".txt", text);
    HostileCase c{family, what, {"predict", flag, spec_prefix + f}, e};
    c.args.insert(c.args.end(), scenario.begin(), scenario.end());
    out.push_back(std::move(c));
  };
  std::string all, reversed, dup, ones;
  for (int i = 0; i < 64; ++i) all += std::to_string(i) + "\n";
  for (int i = 63; i >= 0; --i) reversed += std::to_string(i) + " ";
  for (int i = 0; i < 64; ++i) dup += std::to_string(i == 5 ? 4 : i) + "\n";
  const Values docs = {{"0 64", R}, {"5 3", R}, {"-1", R}, {"x", R}, {"1e400", R}, {all + "0\n", R}, {"", A},
                       {"# only a comment\n", A}, {all, A}, {"9223372036854775807", R}, {"9223372036854775808", R},
                       {"  7\t9 \r\n12", A}, {std::string("3\0 5", 4), R}, {"7 7", R}, {"0x10", R}, {"+5", R}};
  for (const auto& [text, e] : docs) add("docs", "docs file '" + file_name(text) + "'", "docs:", text, e);
  const Values perms = {{all, A}, {reversed, A}, {dup, R}, {all.substr(0, all.rfind("63")), R}, {all + "64\n", R},
                        {all + "0\n", R}, {"-1 " + all.substr(2), R}, {"x", R}, {"9223372036854775808", R}, {"", R}};
  for (const auto& [text, e] : perms) add("perm", "permutation file '" + file_name(text) + "'", "perm:", text, e, "--layout");
  std::string kept = "head,kind,position\n";
  for (int h = 0; h < 2; ++h)
    for (const char* kind : {"q", "k"})
      for (int p = 0; p < 64; p += 3) kept += std::to_string(h) + "," + kind + "," + std::to_string(p) + "\n";
  const Values kept_files = {{kept, A}, {"head,kind,position\n", R}, {kept + "0,x,70\n", R}, {kept + "2,q,1\n", R},
                             {kept + "0,q,1\n", R}, {kept + "0,k,64\n", R}, {kept + "0,q\n", R}, {kept + "0,q,65,1\n", R},
                             {"0,q,0\n0,k,0\n", R}, {kept.substr(19), A}, {kept + "-1,q,1\n", R}};
  for (const auto& [text, e] : kept_files) add("qkfile", "kept-positions file '" + file_name(text) + "'", "qkfile:", text, e);
  std::string buckets = "head,position,q_bucket,k_bucket\n";
  for (int h = 0; h < 2; ++h)
    for (int p = 0; p < 64; ++p) buckets += std::to_string(h) + "," + std::to_string(p) + "," + std::to_string(p % 5) + "," + std::to_string(p % 3) + "\n";
  const auto without_last = buckets.substr(0, buckets.rfind("1,63,"));
  const Values bucket_files = {{buckets, A}, {without_last, R}, {buckets + "0,0,1,1\n", R}, {without_last + "1,63,-1,0\n", R},
                               {without_last + "1,63,9223372036854775807,0\n", A}, {without_last + "1,63,x,0\n", R},
                               {without_last + "1,64,0,0\n", R}, {"", R}};
  for (const auto& [text, e] : bucket_files) add("hashfile", "bucket file '" + file_name(text) + "'", "hashfile:", text, e);
  return out;
}

std::vector<HostileCase> docs_file_cases(const HostileFixture& fx) {
  std::vector<HostileCase> out;
  int n = 0;
  auto add = [&](const std::string& what, const std::string& text, Expect e, const std::vector<std::string>& extra = {}) {
    const auto f = fx.tmp.write("docs-" + std::to_string(n++) + ".txt", text);
    HostileCase c{"docs", what, {"predict", "--docs", f, "--seq", "64", "--mesh", "1x8", "--tile", "4x4", "--model", "attn:8:8:8"}, e};
    c.args.insert(c.args.end(), extra.begin(), extra.end());
    out.push_back(std::move(c));
  };
  std::string ones;
  for (int i = 0; i < 64; ++i) ones += "1\n";
  const Values texts = {{"64", A}, {"32,32", A}, {"32 32 # two", A}, {"length\n64\n", A}, {"length,x\n64\n", R},
                        {"abc\n64\n", R}, {"32,32,", R}, {"32,,32", R}, {"tokens\n64\n", A}, {"Lengths\n32,32\n", A},
                        {"# lengths\n\n16\r\n48\r\n", A}, {ones, A}, {"\t16 ,16,\t32 ", A},
                        {"600\n400\n", R}, {"32", R}, {"32 33", R}, {"0 64", R}, {"-1 65", R}, {"x", R},
                        {"1e400", R}, {"64.0", R}, {"6.4e1", R}, {"0x40", R}, {"+64", R}, {"", R},
                        {"# only a comment\n", R}, {"length\n", R}, {"length\nlength\n64\n", R},
                        {"9223372036854775807", R}, {"9223372036854775808", R}, {"18446744073709551616", R},
                        {"32\n9223372036854775807\n", R}, {std::string("32\0 32", 5), R}, {"32;32", R},
                        {ones + "1\n", R}, {std::string(2 << 20, '1'), R}, {"\xEF\xBB\xBF" "64", R}};
  for (const auto& [text, e] : texts) add("lengths file '" + file_name(text) + "'", text, e);
  // With the document layouts and the strategies that take documents.
  add("lengths 16 x 4 with doc-zigzag", "16\n16\n16\n16\n", A, {"--layout", "doc-zigzag,ptrr:4", "--impl", "ringsim-tiles"});
  add("lengths 8 x 8 with doc-zigzag", "8,8,8,8,8,8,8,8", R, {"--layout", "doc-zigzag", "--impl", "ringsim-tiles"});
  add("lengths 16 x 4 with allgather", "16\n16\n16\n16\n", A, {"--cp", "allgather", "--impl", "torch-cp", "--layout", "doc-zigzag"});
  add("lengths 1 x 64 with ulysses", ones, A, {"--cp", "ulysses", "--layout", "contiguous"});
  add("lengths with a full mask", "64", R, {"--mask", "full"});
  // plan-docs' lengths files (LENGTH or LENGTH,COUNT per line), on a small mesh.
  auto plan_docs = [&](const std::string& what, const std::string& text, Expect e, const std::vector<std::string>& extra = {}) {
    const auto f = fx.tmp.write("lengths-" + std::to_string(n++) + ".txt", text);
    HostileCase c{"lengths", what, {"plan-docs", f, "--seq", "8192", "--mesh", "1x4", "--model", "attn:8:8:64"}, e};
    c.args.insert(c.args.end(), extra.begin(), extra.end());
    out.push_back(std::move(c));
  };
  const Values lengths = {{"4096\n", A}, {"4096,3\n", A}, {"length,count\n4096,3\n", A}, {" 4096 , 3 \n", A},
                          {"abc\n100\n", R}, {"4096\t3\n", R}, {"4096 3\n", R}, {"4096,\n", R}, {",3\n", R},
                          {"4096,3,1\n", R}, {"length,count\n", R}, {"1099511627776\n", R}, {"1099511627777\n", R},
                          {"8192,16777216\n", R}, {"8192,16777217\n", R}, {"8192,524289\n", R}};
  for (const auto& [text, e] : lengths) plan_docs("plan-docs lengths '" + file_name(text) + "'", text, e);
  plan_docs("plan-docs usp:3x3 on 4 devices", "4096\n", R, {"--cp", "usp:3x3"});
  plan_docs("plan-docs double-ring:3 on 4 devices", "4096\n", R, {"--cp", "double-ring:3"});
  plan_docs("plan-docs usp:2x2 on 4 devices", "4096\n", A, {"--cp", "usp:2x2"});
  return out;
}

std::vector<HostileCase> sweep_csv_cases(const HostileFixture& fx, const std::string& bin) {
  // A real sweep: two meshes, three lengths, the two layouts the speedup chart divides.
  const auto made = run_process({bin, "sweep", "--mesh", "1x4,1x8", "--seq", "32768,65536,131072", "--layout",
                                 "contiguous,striped", "--recompute", "full,none"}, 120);
  if (made.code != 0) throw std::runtime_error("ringsim sweep failed: " + made.err);
  const std::string base = made.out;
  std::vector<HostileCase> out;
  int n = 0;
  auto file = [&](const std::string& text) { return fx.tmp.write("sweepcsv-" + std::to_string(n++) + ".csv", text); };
  const auto svg = fx.tmp.file("chart.svg"), png = fx.tmp.file("chart.png");
  auto plot = [&](const std::string& what, const std::string& text, Expect e, std::vector<std::string> extra = {}) {
    const auto f = file(text);
    for (const char* kind : {"speedup", "throughput", "exposed", "memory"}) {
      HostileCase c{"plot", what + " (" + kind + ")", {"plot", f, "--kind", kind, "--svg", svg, "--png", png}, e};
      c.args.insert(c.args.end(), extra.begin(), extra.end());
      out.push_back(std::move(c));
    }
  };
  // Replaces every value of one column by `value` (all rows), keeping the header.
  auto with_column = [&](const std::string& column, const std::string& value) {
    std::istringstream in(base);
    std::string line, result;
    std::optional<std::size_t> col;
    while (std::getline(in, line)) {
      if (line.starts_with("#")) {
        result += line + "\n";
        continue;
      }
      std::vector<std::string> cells;
      std::size_t start = 0;
      for (std::size_t i = 0; i <= line.size(); ++i)
        if (i == line.size() || line[i] == ',') cells.push_back(line.substr(start, i - start)), start = i + 1;
      if (!col) {
        for (std::size_t i = 0; i < cells.size(); ++i)
          if (cells[i] == column) col = i;
        if (!col) throw std::runtime_error("no column " + column + " in the sweep CSV");
      } else {
        cells[*col] = value;
      }
      for (std::size_t i = 0; i < cells.size(); ++i) result += (i ? "," : "") + cells[i];
      result += "\n";
    }
    return result;
  };
  plot("the sweep as written", base, A);
  plot("the sweep, one row kept", base.substr(0, base.find('\n', base.find("\n0,") + 1) + 1), E);
  plot("header only", base.substr(0, base.find("\n0,") + 1), R);
  plot("empty file", "", R);
  plot("not a CSV", "\x89PNG\r\n\x1a\n", R);
  for (const char* column : {"step_s", "tokens_per_s", "exposed_transfer_s", "memory_bytes", "memory_capacity_bytes",
                             "n_seq", "devices", "sp", "grad_sync_exposed_s"})
    for (const char* value : {"nan", "inf", "-inf", "-1", "0", "1e308", "1e-308", "x", "", "1e400", "9223372036854775808"})
      plot(std::string(column) + " = '" + value + "'", with_column(column, value), E);
  plot("status all failed", with_column("status", "failed"), R);
  plot("layout column all striped", with_column("layout", "striped"), E);
  for (const char* column : {"step_s", "layout", "n_seq", "status", "devices"}) {
    // The column renamed: missing.
    auto text = base;
    const auto at = text.find(std::string(",") + column + ",");
    if (at != std::string::npos) text.replace(at + 1, std::string(column).size(), std::string(column) + "_x");
    plot(std::string("no ") + column + " column", text, column == std::string("status") ? E : E);
  }
  plot("a selection that matches nothing", base, R, {"--where", "n_seq=7"});
  plot("a selection on a missing column", base, R, {"--where", "nope=1"});
  plot("a malformed selection", base, R, {"--where", "=1"});
  plot("a 100 kB title", base, A, {"--title", fx.big});
  plot("a title with control bytes", base, A, {"--title", "a\x1b[31m\x01\x7f\xff\xfe" "b"});

  {
    const auto f = file(base);
    out.push_back({"plot", "an unknown kind", {"plot", f, "--kind", "pie", "--svg", svg}, R});
    out.push_back({"plot", "an unknown baseline", {"plot", f, "--baseline", "spiral", "--svg", svg}, R});
    out.push_back({"plot", "an unknown compared layout", {"plot", f, "--layout", "spiral", "--svg", svg}, R});
    out.push_back({"plot", "no output", {"plot", f}, R});
    out.push_back({"plot", "svg into a folder", {"plot", f, "--svg", fx.dir}, R});
    out.push_back({"plot", "png into a missing folder", {"plot", f, "--png", fx.tmp.file("missing/chart.png")}, R});
    out.push_back({"plot", "png into a FIFO", {"plot", f, "--png", fx.fifo}, R});
  }
  // merge: shards of this sweep and damaged ones.
  {
    const auto whole = file(base);
    const auto shard_a = run_process({bin, "sweep", "--mesh", "1x4,1x8", "--seq", "32768,65536,131072", "--layout",
                                      "contiguous,striped", "--recompute", "full,none", "--shard", "1/2"}, 120).out;
    const auto shard_b = run_process({bin, "sweep", "--mesh", "1x4,1x8", "--seq", "32768,65536,131072", "--layout",
                                      "contiguous,striped", "--recompute", "full,none", "--shard", "2/2"}, 120).out;
    const auto a = file(shard_a), b = file(shard_b);
    out.push_back({"merge", "both shards", {"merge", a, b}, A});
    out.push_back({"merge", "both shards, reversed, to a file", {"merge", b, a, "-o", fx.tmp.file("merged.csv")}, A});
    out.push_back({"merge", "one shard missing", {"merge", a}, R});
    out.push_back({"merge", "a shard twice", {"merge", a, a, b}, R});
    out.push_back({"merge", "an unsharded file", {"merge", whole}, A});
    out.push_back({"merge", "an unsharded file and a shard", {"merge", whole, a}, R});
    for (const auto& [what, text] : std::vector<std::pair<std::string, std::string>>{
             {"a cut shard", shard_b.substr(0, shard_b.size() / 2)},
             {"a shard line of 0/2", std::string(shard_b).replace(shard_b.find("# shard 2/2"), 11, "# shard 0/2")},
             {"a shard line of 9223372036854775807/2", std::string(shard_b).replace(shard_b.find("# shard 2/2"), 11, "# shard 9223372036854775807/2")},
             {"a shard line of 2/9223372036854775807", std::string(shard_b).replace(shard_b.find("# shard 2/2"), 11, "# shard 2/9223372036854775807")},
             {"a points count of -1", std::string(shard_b).replace(shard_b.find(": 24 points"), 11, ": -1 points")},
             {"no sweep line", shard_b.substr(shard_b.find('\n') + 1)},
             {"a row index out of order", std::string(shard_b).replace(shard_b.find("\n1,"), 3, "\n7,")},
             {"a row index of 2^63", std::string(shard_b).replace(shard_b.find("\n1,"), 3, "\n9223372036854775808,")},
             {"an empty file", ""}}) {
      out.push_back({"merge", what, {"merge", a, file(text)}, R});
    }
    // A value that no sweep writes (nan, inf) in an otherwise well-formed shard: refused too.
    for (const char* value : {"nan", "inf", "-inf", "NaN"}) {
      auto text = shard_b;
      const auto row = text.find("\n1,");
      const auto ok = text.find(",ok,", row);
      const auto end = text.find(',', ok + 4);
      text.replace(ok + 4, end - ok - 4, value);
      out.push_back({"merge", std::string("a step_s of ") + value, {"merge", a, file(text)}, R});
    }
  }
  return out;
}

std::vector<HostileCase> measurement_csv_cases(const HostileFixture& fx) {
  const std::string header =
      "hardware,devices,n_seq,batch,heads,kv_heads,head_dim,causal,pass,cp,layout,ring_degree,ulysses_degree,iter_per_s\n";
  const std::vector<std::string> row = {"a100-80gb", "8", "65536", "1", "32", "8", "128", "true", "fwd", "ring", "zigzag", "8", "1", "10"};
  std::vector<HostileCase> out;
  int n = 0;
  auto add = [&](const std::string& what, const std::string& text, Expect e) {
    const auto f = fx.tmp.write("measured-" + std::to_string(n++) + ".csv", text);
    out.push_back({"check", what, {"check", f}, e});
  };
  auto line = [](std::vector<std::string> r) {
    std::string s;
    for (std::size_t i = 0; i < r.size(); ++i) s += (i ? "," : "") + r[i];
    return s + "\n";
  };
  add("a good row", header + line(row), A);
  const std::vector<std::string> cols = {"hardware", "devices", "n_seq", "batch", "heads", "kv_heads", "head_dim", "causal",
                                         "pass", "cp", "layout", "ring_degree", "ulysses_degree", "iter_per_s"};
  const std::vector<std::pair<std::size_t, Values>> cells = {
      {0, {{"z80", R}, {fx.huge, R}, {"../x", R}, {"", E}}},
      {1, {{"0", R}, {"-8", R}, {"9223372036854775807", E}, {"x", R}, {"8.5", R}}},
      {2, {{"0", R}, {"9223372036854775807", E}, {"4611686018427387904", E}, {"1e400", R}}},
      {3, {{"0", R}, {"9223372036854775807", E}}},
      {4, {{"0", R}, {"9223372036854775807", E}, {"3", E}}},
      {5, {{"0", R}, {"64", E}, {"9223372036854775807", E}}},
      {6, {{"0", R}, {"9223372036854775807", E}}},
      {7, {{"maybe", R}, {"", E}}},
      {8, {{"sideways", R}, {"", E}}},
      {9, {{"torus", R}, {"usp:0x8", E}, {"", E}}},
      {10, {{"spiral", R}, {"", E}}},
      {11, {{"0", R}, {"9223372036854775807", E}}},
      {12, {{"0", R}, {"9223372036854775807", E}}},
      {13, {{"nan", R}, {"inf", R}, {"-1", R}, {"0", R}, {"1e308", E}, {"1e-308", E}, {"OOM", A}, {"1e400", R}}},
  };
  for (const auto& [c, values] : cells)
    for (const auto& [v, e] : values) {
      auto r = row;
      r[c] = v;
      add(cols[c] + " = '" + (v.size() > 20 ? "a 1 MB word" : v) + "'", header + line(r), e);
    }
  add("training row with tokens_per_s nan", "hardware,model,mp,sp,n_seq,tokens_per_s\na100-80gb,llama3-8b,1,8,65536,nan\n", R);
  add("training row with a huge model name", "hardware,model,mp,sp,n_seq,tokens_per_s\na100-80gb," + fx.huge + ",1,8,65536,3000\n", R);
  add("training row with mp x sp past 2^63", "hardware,model,mp,sp,n_seq,tokens_per_s\na100-80gb,llama3-8b,4294967296,4294967296,65536,3000\n", R);
  add("tflops row of 1e400", "hardware,model,mp,sp,n_seq,tflops_per_gpu\nh100-sxm,llama2-7b,8,32,1048576,1e400\n", R);
  add("no hardware column", "devices,n_seq,iter_per_s\n8,65536,10\n", R);
  add("duplicated column", "hardware,hardware,devices,n_seq,iter_per_s\na100-80gb,h100-sxm,8,65536,10\n", R);
  add("header only", header, A);
  add("empty", "", R);
  // agreement: Kendall's tau over two columns.
  auto agree = [&](const std::string& what, const std::string& text, Expect e) {
    const auto f = fx.tmp.write("agree-" + std::to_string(n++) + ".csv", text);
    out.push_back({"agreement", what, {"agreement", f, "--measured", "m", "--predicted", "p"}, e});
  };
  std::string many = "m,p\n";
  for (int i = 0; i < 200000; ++i) many += std::to_string(i % 977) + "," + std::to_string(i % 131) + "\n";
  agree("200000 rows (4e10 pairs)", many, R);
  agree("constant columns", "m,p\n1,2\n1,2\n1,2\n", A);
  agree("one row", "m,p\n1,2\n", R);
  agree("no numeric measurement", "m,p\nOOM,2\nOOM,3\n", R);
  agree("a nan prediction", "m,p\n1,nan\n2,3\n", R);
  agree("an inf measurement", "m,p\n1,1\ninf,3\n", E);
  agree("1e308 and -1e308", "m,p\n1e308,-1e308\n-1e308,1e308\n", A);
  return out;
}


std::vector<HostileCase> kernel_measurement_cases(const HostileFixture& fx) {
  std::vector<HostileCase> out;
  int n = 0;
  auto file = [&](const std::string& stem, const std::string& text) {
    return fx.tmp.write(stem + "-" + std::to_string(n++) + ".csv", text);
  };
  auto line = [](const std::vector<std::string>& r) {
    std::string s;
    for (std::size_t i = 0; i < r.size(); ++i) s += (i ? "," : "") + r[i];
    return s + "\n";
  };
  // A kernel profile (calibrate --from-kernels): four good rows, then the mutated one.
  const std::vector<std::string> pcols = {"hardware", "sq", "skv", "batch", "heads_q", "heads_kv", "head_dim", "causal", "fwd_us", "bwd_us"};
  const std::vector<std::string> prow = {"H100", "16384", "16384", "4", "32", "8", "128", "false", "2000", "6000"};
  std::string profile = line(pcols);
  for (const char* len : {"1024", "2048", "4096", "8192"})
    profile += line({"H100", len, len, "4", "32", "8", "128", "false", "150", "450"});
  const std::vector<std::pair<std::size_t, Values>> pcells = {
      {1, {{"9223372036854775807", R}, {"67108865", R}, {"0", R}}},
      {3, {{"4611686018427387904", R}, {"4294967297", R}, {"1048576", R}}},
      {4, {{"33", R}, {"65537", R}}},
      {5, {{"3", R}, {"64", R}, {"0", R}}},
      {6, {{"1000", R}, {"0", R}}},
      {8, {{"1e-310", R}, {"4.9e-324", R}, {"0", R}, {"1e-7", R}, {"1e13", R}, {"-5", R}}},
      {9, {{"1e-310", R}, {"inf", R}}},
  };
  auto kernels = [&](const std::string& what, const std::string& text, Expect e) {
    out.push_back({"kernels", what, {"calibrate", "--from-kernels", file("kernels", text), "--as", "H100=h100-sxm", "--free",
                                      "attention_efficiency"}, e});
  };
  kernels("a good profile", profile + line(prow), A);
  for (const auto& [c, values] : pcells)
    for (const auto& [v, e] : values) {
      auto r = prow;
      r[c] = v;
      kernels(pcols[c] + " = " + v, profile + line(r), e);
    }
  // A 100k-row file showed no progress for hours; one GPU's 12,000 timed calls (6,000 shapes, each
  // forward and backward) would take about as long: both refused before any fit.
  for (const int shapes : {100000, 6000}) {
    std::string many = line(pcols);
    for (int i = 0; i < shapes; ++i)
      many += "H100," + std::to_string(1024 + 64 * (i % 64)) + ",1024,4,32,8,128,false," + std::to_string(150 + i % 7) + ",450\n";
    kernels(std::to_string(shapes) + " shapes", many, R);
  }
  // A chart (rows of a method, TFLOP/s): a zero rate was an infinite time and a "nan %" score.
  const std::string chart_head = "gpu,method,pass,causal,head_dim,n_heads,seqlen,batch,tflops\n";
  std::string chart = chart_head;
  for (const char* len : {"512", "1024", "2048", "4096"}) chart += std::string("A100,FlashAttention-2,fwd,false,64,32,") + len + ",8,150\n";
  for (const auto& [v, e] : Values{{"0", R}, {"-3", R}, {"1e-320", R}, {"1e300", R}, {"170", A}}) {
    const auto f = file("chart", chart + "A100,FlashAttention-2,fwd,false,64,32,8192,2," + v + "\n");
    out.push_back({"kernels", "chart tflops = " + v, {"calibrate", "--from-kernels", f, "--as", "A100=a100-80gb", "--free",
                                                      "attention_efficiency"}, e});
  }
  // Kernel timings (calibrate --from-timings): ten good launches, then the mutated one.
  const std::vector<std::string> tcols = {"kernel", "dtype", "head_dim", "heads", "kv_heads", "batch", "tiles_visited", "visited_area", "masked_area", "duration_s"};
  const std::vector<std::string> trow = {"attention_fwd", "bf16", "128", "32", "8", "4", "256", "4194304", "0", "0.004"};
  std::string timings = line(tcols);
  for (int i = 1; i <= 10; ++i)
    timings += line({i % 2 ? "attention_fwd" : "attention_bwd", "bf16", "128", "32", "8", std::to_string(i), std::to_string(64 * i),
                     std::to_string(1048576 * i), std::to_string(8192 * (i % 3)), std::to_string(1e-4 * i * (i % 2 ? 1 : 2.5))});
  const std::vector<std::pair<std::size_t, Values>> tcells = {
      {3, {{"33", R}, {"65537", R}}},
      {4, {{"3", R}, {"0", R}}},
      {5, {{"4611686018427387904", R}, {"4294967297", R}}},
      {6, {{"9223372036854775807", R}}},
      {9, {{"1e-310", R}, {"1e7", R}, {"0.004", A}}},
  };
  for (const auto& [c, values] : tcells)
    for (const auto& [v, e] : values) {
      auto r = trow;
      r[c] = v;
      out.push_back({"timings", tcols[c] + " = " + v, {"calibrate", "--from-timings", file("timings", timings + line(r)),
                                                       "--hardware", "h100-sxm"}, e});
    }
  // nccl-tests output: a NUL inside a row dropped it silently, a count of 1e308 passed.
  const std::string nccl_head =
      "./build/sendrecv_perf -b 1M -e 8M -f 2 -g 2\n#  Rank  0 Group  0 Pid 1 on a device  0 [0x1b] NVIDIA H100\n"
      "#  Rank  1 Group  0 Pid 2 on a device  1 [0x2b] NVIDIA H100\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
  const std::string r1 = "     1048576        262144     float     sum      -1    20.00   52.43   52.43      0    20.00   52.43   52.43    N/A\n";
  const std::string r2 = "     2097152        524288     float     sum      -1    35.00   59.92   59.92      0    35.00   59.92   59.92    N/A\n";
  const std::string r4 = "     4194304       1048576     float     sum      -1    65.00   64.53   64.53      0    65.00   64.53   64.53    N/A\n";
  std::string nul = r2;
  nul[10] = '\0';
  std::string big_count = r2;
  big_count.replace(big_count.find("524288"), 6, " 1e308");
  for (const auto& [what, rows, e] : std::vector<std::tuple<std::string, std::string, Expect>>{
           {"a good sweep", r1 + r2 + r4, A}, {"a NUL in a row", r1 + nul + r4, R}, {"count 1e308", r1 + big_count + r4, R},
           {"size 1e308", r1 + "1e308" + r2.substr(12) + r4, R}}) {
    const auto f = fx.tmp.write("nccl-" + std::to_string(n++) + ".txt", nccl_head + rows);
    out.push_back({"nccl-tests", what, {"calibrate", "--from-nccl-tests", f, "--hop", "intra-node", "--hardware", "h100-sxm"}, e});
  }
  return out;
}

}  // namespace ringsim::test
