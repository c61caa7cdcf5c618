// `ringsim calibrate` as a user meets it: a fit to the ring tables writes profiles that carry the
// error measured when one fitted GPU's parameters predict another's, and a profile derived from
// one takes that error as its interval (none when the source measured none).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/cli_run.hpp"
#include "tests/support/temp_dir.hpp"

using namespace ringsim::test;

namespace {

// The number after "KEY": in a JSON text; NaN where absent.
double json_number(const std::string& text, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex("\"" + key + "\": ([-+0-9.eE]+)"))) return std::nan("");
  return std::stod(m[1].str());
}

}  // namespace

TEST_CASE("calibrate: a derived profile's interval is the measured error of copying parameters across GPUs",
          "[cli][calibrate]") {
  const TempDir dir;
  // The README table's rows only (both GPUs): the fit and its leave-one-group-out refits stay quick
  // in the sanitizer build.
  std::string table;
  {
    std::istringstream in(read_file(std::string(RINGSIM_TEST_DATA) + "/cp_attention_times.csv"));
    std::string line;
    while (std::getline(in, line))
      if (line.starts_with("#") || line.starts_with("source,") || line.starts_with("ringflash_readme_2024,"))
        table += line + "\n";
  }
  write_file(dir.file("readme.csv"), table);
  const auto fit = run("calibrate --from-times " + dir.file("readme.csv") +
                       " --impl ring-flash-attn --free attention_efficiency,attention_bwd_efficiency "
                       "--shared softmax_overlap --profiles-dir " + dir.dir());
  REQUIRE(fit.code == 0);
  CHECK(fit.out.find("derived from another GPU's fit") != std::string::npos);
  CHECK(fit.out.find("a100-80gb from h800") != std::string::npos);
  const std::string source = dir.file("ring-flash-attn/h800.json");
  const auto source_text = read_file(source);
  const double derived_sd = json_number(source_text, "time_derived");
  REQUIRE(derived_sd > 0);
  CHECK(derived_sd != json_number(source_text, "time"));
  const std::string keep = " --keep attention_efficiency,attention_bwd_efficiency,softmax_overlap";
  const auto d = run("calibrate --derive-from " + source + " --hardware h100-sxm" + keep + " -o " + dir.file("h100.json"));
  REQUIRE(d.code == 0);
  const auto derived = read_file(dir.file("h100.json"));
  CHECK(json_number(derived, "time") == Approx(derived_sd).epsilon(1e-9));
  CHECK(std::isnan(json_number(derived, "time_derived")));
  CHECK(derived.find("\"calibrated\": false") != std::string::npos);
  const std::string predict = "predict --hardware h100-sxm --model llama3-8b --mesh 1x8 --seq 65536 --profile ";
  const auto p = run(predict + dir.file("h100.json"));
  REQUIRE(p.code == 0);
  CHECK(p.out.find("a derived profile's spread") != std::string::npos);
  // A source that measured no such error gives a derived profile without an interval.
  write_file(dir.file("plain.json"),
             std::regex_replace(source_text, std::regex(",?\\s*\"(time|ratio)_derived\": [-+0-9.eE]+"), ""));
  REQUIRE(std::isnan(json_number(read_file(dir.file("plain.json")), "time_derived")));
  REQUIRE(std::isnan(json_number(read_file(dir.file("plain.json")), "ratio_derived")));
  const auto d2 = run("calibrate --derive-from " + dir.file("plain.json") + " --hardware h100-sxm" + keep + " -o " +
                      dir.file("h100b.json"));
  REQUIRE(d2.code == 0);
  CHECK(read_file(dir.file("h100b.json")).find("uncertainty") == std::string::npos);
  const auto p2 = run(predict + dir.file("h100b.json"));
  REQUIRE(p2.code == 0);
  CHECK(p2.out.find("no prediction interval") != std::string::npos);
  // A parameter whose 0 means none, left unset by the source, is named as unset, not as copied.
  const double source_bwd_smem = json_number(source_text, "bwd_shared_memory_efficiency");
  REQUIRE((std::isnan(source_bwd_smem) || source_bwd_smem == 0));  // absent: written only when set
  const auto d3 = run("calibrate --derive-from " + source + " --hardware h100-sxm" + keep +
                      ",bwd_shared_memory_efficiency -o " + dir.file("h100c.json"));
  REQUIRE(d3.code == 0);
  const auto notes = read_file(dir.file("h100c.json"));
  CHECK(notes.find("bwd_shared_memory_efficiency (unset there, so unset here)") != std::string::npos);
  CHECK(notes.find("softmax_overlap (unset") == std::string::npos);
}

TEST_CASE("calibrate --from-nccl-tests: one hop per run, written into a links file that keeps the other hop",
          "[cli][calibrate][nccl]") {
  const TempDir dir;
  const std::string data = std::string(RINGSIM_TEST_DATA);
  // The catalog's probed a100-80gb links, copied: the nccl-tests fit replaces intra_node only.
  write_file(dir.file("a100-80gb.json"), read_file(data + "/../configs/links/a100-80gb.json"));
  const auto before = read_file(dir.file("a100-80gb.json"));
  const auto r = run("calibrate --from-nccl-tests " + data + "/components/nccl_tests/a100_sendrecv_8gpu_nvlink.txt" +
                     " --hop intra-node --hardware a100-80gb --date 2026-01-01 --links-dir " + dir.dir());
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("sendrecv_perf") != std::string::npos);
  CHECK(r.out.find("held-out") != std::string::npos);
  CHECK(r.out.find("inter_node kept") != std::string::npos);
  const auto after = read_file(dir.file("a100-80gb.json"));
  CHECK(json_number(after, "latency_s") == json_number(before, "latency_s"));  // inter_node comes first
  CHECK(after.find("a100_sendrecv_8gpu_nvlink.txt") != std::string::npos);
  CHECK(after.find("\"date\": \"2026-01-01\"") != std::string::npos);
  // The written file loads as the catalog's links do: a prediction on that GPU reads it.
  CHECK(after.find("nccl-tests sendrecv_perf") != std::string::npos);
  // A file measured across hosts is not an intra-node hop.
  expect_bad("calibrate --from-nccl-tests " + data + "/components/nccl_tests/gh200_all_reduce_2node_1gpu.txt" +
                 " --hop intra-node --hardware h100-sxm",
             "hop");
}

TEST_CASE("calibrate --from-host-steps: the measured host's terms, written into a profile that predicts with them",
          "[cli][calibrate][host]") {
  const TempDir dir;
  const std::string data = std::string(RINGSIM_TEST_DATA);
  const auto file = data + "/components/host/h100_ring_flash_attn_host.csv";
  const auto r = run("calibrate --from-host-steps " + file + " --hardware a100-80gb --impl ring-flash-attn -o " +
                     dir.file("p.json") + " --report " + dir.file("rows.csv"));
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("leave one layout out") != std::string::npos);
  CHECK(r.out.find("contiguous not identified without it") != std::string::npos);
  const auto p = read_file(dir.file("p.json"));
  const double step = json_number(p, "host_step_s"), call = json_number(p, "host_call_s");
  CHECK(step > 0);
  CHECK(call > step);  // a call with its scripted merge costs the host more than the loop and communicator
  CHECK(json_number(p, "host_bwd_step_s") > 0);
  CHECK(p.find("h100_ring_flash_attn_host.csv") != std::string::npos);
  CHECK(lines(read_file(dir.file("rows.csv"))) == 19);  // a header and the 18 runs
  // At 128 tokens per GPU the ring is the host's: 8 steps of a step and one call on the last device.
  const auto pr = run("predict --hardware a100-80gb --impl ring-flash-attn --profile " + dir.file("p.json") +
                      " --model attn:32:8:128 --mesh 1x8 --seq 1024 --layout contiguous --format json");
  INFO(pr.err);
  REQUIRE(pr.code == 0);
  CHECK(json_number(pr.out, "attention_fwd_s") == Approx(8 * (step + call)).epsilon(1e-6));
  expect_bad("calibrate --from-host-steps " + file + " --impl ringsim-tiles", "impl");
  write_file(dir.file("bad.csv"), "gpu,impl,layout,devices,rank,tokens,pass,wall_ms\nh,ring-flash-attn,zigzag,8,9,128,fwd,1\n");
  expect_bad("calibrate --from-host-steps " + dir.file("bad.csv"), "rank");
}

TEST_CASE("calibrate --from-kernels --min-seconds: short calls (the harness's dispatch) left out, said in the output",
          "[cli][calibrate]") {
  const std::string file = std::string(RINGSIM_TEST_DATA) + "/components/kernels/h100_sdpa_flash.csv";
  // Oracle: the file's forward and backward times of at least 10 ms, counted here (few rows keep
  // the fit and its held-out refits quick under the sanitizers).
  std::istringstream in(read_file(file));
  std::string line;
  std::vector<std::string> header;
  std::size_t all = 0, kept = 0;
  const auto split = [](const std::string& l) {
    std::vector<std::string> f;
    std::stringstream ss(l);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    return f;
  };
  while (std::getline(in, line)) {
    if (line.empty() || line.starts_with("#")) continue;
    const auto f = split(line);
    if (header.empty()) {
      header = f;
      continue;
    }
    for (const char* col : {"fwd_us", "bwd_us"}) {
      const auto at = static_cast<std::size_t>(std::find(header.begin(), header.end(), col) - header.begin());
      REQUIRE(at < f.size());
      ++all;
      kept += std::stod(f[at]) >= 1e4 ? 1 : 0;
    }
  }
  REQUIRE(kept > 4);
  REQUIRE(kept < all);
  const auto r = run("calibrate --from-kernels " + file + " --as NVIDIA=h100-sxm --min-seconds 1e-2 --free attention_efficiency,attention_bwd_efficiency");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find(std::to_string(kept) + " of " + std::to_string(all) + " rows kept") != std::string::npos);
  expect_bad("calibrate --from-kernels " + file + " --as NVIDIA=h100-sxm --min-seconds 5", "min-seconds");
  expect_bad("calibrate --from-kernels " + file + " --as NVIDIA=h100-sxm --min-seconds -1", "min-seconds");
}

TEST_CASE("calibrate --from-kernels fits the kernel the implementation calls on the GPU, or the one --kernel names",
          "[cli][calibrate][kernel]") {
  const std::string file = std::string(RINGSIM_TEST_DATA) + "/components/kernels/h100_sdpa_cudnn.csv";
  // Few rows (calls of at least 10 ms) and two parameters keep the fit quick under the sanitizers.
  const std::string fit = "calibrate --from-kernels " + file + " --as NVIDIA=h100-sxm --min-seconds 1e-2 " +
                          "--free attention_bwd_efficiency,cta_overhead_s";
  // TransformerEngine on compute capability 9.0 calls cuDNN; ring-flash-attention FlashAttention-2.
  const auto te = run(fit + " --impl te-p2p");
  INFO(te.err);
  REQUIRE(te.code == 0);
  CHECK(te.out.find("kernel cudnn-fused") != std::string::npos);
  const auto rfa = run(fit + " --impl ring-flash-attn");
  REQUIRE(rfa.code == 0);
  CHECK(rfa.out.find("kernel flash-attn-2") != std::string::npos);
  const auto named = run(fit + " --impl ring-flash-attn --kernel cudnn-fused");
  REQUIRE(named.code == 0);
  CHECK(named.out.find("kernel cudnn-fused") != std::string::npos);
  // The same rows through the same kernel fit the same parameters, whichever way it was chosen.
  const auto params = [](const std::string& out) { return out.substr(out.find("attention_bwd_efficiency")); };
  CHECK(params(named.out) == params(te.out));
  CHECK_FALSE(params(rfa.out) == params(te.out));
  CHECK(te.out.find("nan") == std::string::npos);
  expect_bad(fit + " --kernel no-such-kernel", "kernel");
  expect_bad(fit + " --kernel ../kernels/flash-attn-2", "kernel");
}

TEST_CASE("calibrate --from-kernels --free none scores a profile as it is: a fit's own profile gives its fitted times",
          "[cli][calibrate][kernel]") {
  const TempDir tmp;
  const std::string file = std::string(RINGSIM_TEST_DATA) + "/components/kernels/h100_sdpa_flash.csv";
  const std::string rows = " --as NVIDIA=h100-sxm --min-seconds 1e-2";
  const auto fit = run("calibrate --from-kernels " + file + rows + " --free attention_efficiency,attention_bwd_efficiency" +
                       " --profiles-dir " + tmp.file("fit") + " --report " + tmp.file("fit.csv"));
  INFO(fit.err);
  REQUIRE(fit.code == 0);
  // Oracle: the fitted profile, scored on the same rows, predicts exactly the fit's in-sample times.
  const auto score = run("calibrate --from-kernels " + file + rows + " --free none --profile " + tmp.file("fit/ring-flash-attn/h100-sxm.json") +
                         " --report " + tmp.file("score.csv"));
  INFO(score.err);
  REQUIRE(score.code == 0);
  CHECK(score.out.find("nothing fitted") != std::string::npos);
  CHECK(score.out.find("out of sample") != std::string::npos);
  const auto column = [](const std::string& text, const std::string& name) {
    std::istringstream in(text);
    std::string line;
    std::getline(in, line);
    std::vector<std::string> header;
    std::stringstream hs(line);
    for (std::string x; std::getline(hs, x, ',');) header.push_back(x);
    const auto at = static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
    std::vector<double> out;
    while (std::getline(in, line)) {
      std::vector<std::string> f;
      std::stringstream ss(line);
      for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
      if (at < f.size()) out.push_back(std::stod(f[at]));
    }
    return out;
  };
  const auto fitted = column(read_file(tmp.file("fit.csv")), "fitted_s");
  const auto scored = column(read_file(tmp.file("score.csv")), "fitted_s");
  REQUIRE(fitted.size() > 4);
  REQUIRE(scored.size() == fitted.size());
  for (std::size_t i = 0; i < fitted.size(); ++i) CHECK(scored[i] == Approx(fitted[i]).epsilon(1e-5));
  // Nothing to write: --profiles-dir with --free none is one line.
  expect_bad("calibrate --from-kernels " + file + rows + " --free none --profiles-dir " + tmp.file("none"), "profiles-dir");
}

TEST_CASE("calibrate --from-kernels: a chart kv_heads column times grouped-query calls and a count that does not divide is refused",
          "[cli][calibrate][kernel]") {
  const TempDir tmp;
  const std::string head = "gpu,method,pass,causal,head_dim,n_heads,seqlen,batch,tflops\n";
  const std::string gqa_head = "gpu,method,pass,causal,head_dim,n_heads,kv_heads,seqlen,batch,tflops\n";
  std::string plain = head, same = gqa_head, gqa = gqa_head, bad = gqa_head;
  for (const int s : {4096, 8192, 16384}) {
    const auto n = std::to_string(s);
    plain += "H100,FlashAttention-2,fwd,0,128,16," + n + ",1,300\n";
    same += "H100,FlashAttention-2,fwd,0,128,16,16," + n + ",1,300\n";
    gqa += "H100,FlashAttention-2,fwd,0,128,16,4," + n + ",1,300\n";
    bad += "H100,FlashAttention-2,fwd,0,128,16,5," + n + ",1,300\n";
  }
  const std::string score = " --as H100=h100-sxm --free none --report ";
  const auto a = run("calibrate --from-kernels " + tmp.write("plain.csv", plain) + score + tmp.file("a.csv"));
  const auto b = run("calibrate --from-kernels " + tmp.write("same.csv", same) + score + tmp.file("b.csv"));
  const auto c = run("calibrate --from-kernels " + tmp.write("gqa.csv", gqa) + score + tmp.file("c.csv"));
  INFO(a.err << b.err << c.err);
  REQUIRE(a.code == 0);
  REQUIRE(b.code == 0);
  REQUIRE(c.code == 0);
  // kv_heads equal to n_heads is the column left out; fewer K/V heads are read as such.
  CHECK(read_file(tmp.file("a.csv")) == read_file(tmp.file("b.csv")));
  CHECK(read_file(tmp.file("c.csv")).find(",16,4,128,") != std::string::npos);
  expect_bad("calibrate --from-kernels " + tmp.write("bad.csv", bad) + score + tmp.file("d.csv"), "kv_heads");
}

TEST_CASE("calibrate: an output folder that is a file is one line naming the flag, and a fit's files appear together",
          "[cli][calibrate]") {
  const TempDir dir;
  const std::string kernels = std::string(RINGSIM_TEST_DATA) + "/components/kernels/h100_sdpa_flash.csv";
  const std::string fit = "calibrate --from-kernels " + kernels + " --as NVIDIA=h100-sxm --min-seconds 1e-2 --free attention_efficiency";
  const std::string times = "calibrate --from-times " + std::string(RINGSIM_TEST_DATA) +
                            "/cp_attention_times.csv --impl ring-flash-attn --free none --base-profiles " +
                            std::string(RINGSIM_TEST_DATA) + "/../configs/profiles";
  write_file(dir.file("file"), "not a folder\n");
  // A regular file where the folder goes, or on its way: exit 2 naming the flag, not a filesystem
  // error from create_directories (exit 1); the file is left as it was.
  for (const auto& where : {dir.file("file"), dir.file("file") + "/sub"}) {
    expect_bad(fit + " --profiles-dir " + where, "profiles-dir");
    expect_bad(times + " --profiles-dir " + where, "profiles-dir");
  }
  expect_bad("calibrate --from-probes " + std::string(RINGSIM_TEST_DATA) +
                 "/components/links/ultraattn_p2p_a800_h800_a100.csv --as A800=a800 --links-dir " + dir.file("file"),
             "links-dir");
  CHECK(read_file(dir.file("file")) == "not a folder\n");
  // The profile and the report are one set: a report that cannot be written leaves no profile.
  expect_bad(fit + " --profiles-dir " + dir.file("out") + " --report " + dir.file("no-such-folder/rows.csv"), "");
  CHECK_FALSE(std::filesystem::exists(dir.file("out/ring-flash-attn/h100-sxm.json")));
  const auto ok = run(fit + " --profiles-dir " + dir.file("out") + " --report " + dir.file("rows.csv"));
  INFO(ok.err);
  REQUIRE(ok.code == 0);
  CHECK(std::filesystem::is_regular_file(dir.file("out/ring-flash-attn/h100-sxm.json")));
  CHECK(std::filesystem::is_regular_file(dir.file("rows.csv")));
}

TEST_CASE("calibrate --from-speedups: a fit on one mesh takes a change of mesh from a fit that held meshes out, "
          "and its derived profiles the error of its parameters on the other fitted hardware",
          "[cli][calibrate]") {
  const TempDir dir;
  const std::string data = std::string(RINGSIM_TEST_DATA) + "/striped_paper_calibration.csv";
  const std::string tpu = "calibrate --from-speedups " + data +
                          " --hardware tpu-v4 --impl jax-blockwise --free skipped_tile_cost,round_bytes_per_element";
  const auto own = run(tpu + " -o " + dir.file("own.json"));
  REQUIRE(own.code == 0);
  CHECK(own.out.find("no mesh held out") != std::string::npos);
  CHECK(own.out.find("derived (these free parameters on a100-80gb's profile") != std::string::npos);
  const auto own_text = read_file(dir.file("own.json"));
  const double own_sd = json_number(own_text, "ratio");
  REQUIRE(own_sd > 0);
  CHECK(std::isnan(json_number(own_text, "ratio_mesh")));
  // The A100 rows under TPU v4's parameters miss by more than TPU v4's own rows do.
  CHECK(json_number(own_text, "ratio_derived") > own_sd);

  const std::string a100 = "jax-blockwise/a100-80gb";
  const double mesh_sd = json_number(read_file(std::string(RINGSIM_TEST_DATA) + "/../configs/profiles/" + a100 + ".json"),
                                     "ratio_mesh");
  REQUIRE(mesh_sd > 0);
  const auto wide = run(tpu + " --mesh-spread-from " + a100 + " -o " + dir.file("wide.json"));
  REQUIRE(wide.code == 0);
  CHECK(wide.out.find("one mesh: a change of mesh adds") != std::string::npos);
  const double wide_sd = json_number(read_file(dir.file("wide.json")), "ratio");
  CHECK(wide_sd * wide_sd == Approx(own_sd * own_sd + mesh_sd * mesh_sd).epsilon(1e-6));

  // Rows of several meshes measure their own: the option is a mistake there.
  expect_bad("calibrate --from-speedups " + data + " --hardware a100-80gb --impl jax-blockwise --mesh-spread-from " + a100 +
                 " -o " + dir.file("x.json"),
             "several meshes");
  CHECK(!std::filesystem::exists(dir.file("x.json")));

  // A profile derived from the fit takes its cross-hardware error as its interval.
  const auto d = run("calibrate --derive-from " + dir.file("wide.json") +
                     " --hardware tpu-v5e --keep skipped_tile_cost,round_bytes_per_element -o " + dir.file("v5e.json"));
  REQUIRE(d.code == 0);
  const auto v5e = read_file(dir.file("v5e.json"));
  CHECK(json_number(v5e, "ratio") == Approx(json_number(read_file(dir.file("wide.json")), "ratio_derived")).epsilon(1e-9));
}

TEST_CASE("calibrate --from-machine-probes: a probed machine's capacities, held out row by row, written as a set",
          "[cli][calibrate][machine-probes]") {
  const TempDir dir;
  const std::string data = RINGSIM_TEST_DATA;
  const std::string probes = data + "/components/links/pcie_probes.csv";
  const auto fit = run("calibrate --from-machine-probes " + probes + " --machines " + data +
                       "/components/machines --machine rtx4090x2_trpro_p2poff --machines-out " + dir.file("out") +
                       " --report " + dir.file("rows.csv"));
  REQUIRE(fit.code == 0);
  CHECK(fit.out.find("machine.gpu_link.bytes_per_s") != std::string::npos);
  CHECK(fit.out.find("held-out") != std::string::npos);
  // The fitted description: the slot's one-way rate where 2 x RTX 4090 without peer access put it
  // (22 GB/s: a copy staged through host memory), within the file's own row spread.
  const auto fitted = read_file(dir.file("out/rtx4090x2_trpro_p2poff.json"));
  std::smatch m;
  REQUIRE(std::regex_search(fitted, m, std::regex(R"("gpu_link": \{\s*"bytes_per_s": \{[^}]*"value": ([-+0-9.eE]+))")));
  CHECK(std::stod(m[1].str()) == Approx(22.2e9).epsilon(0.05));
  // One report row per modelled probe row, no blank line, every held-out prediction present.
  std::istringstream rows(read_file(dir.file("rows.csv")));
  std::string line;
  int n = 0;
  std::getline(rows, line);
  CHECK(line == "machine,source,pattern,metric,bytes,published,fitted,held_out");
  while (std::getline(rows, line)) {
    CHECK_FALSE(line.empty());
    CHECK_FALSE(line.ends_with(","));
    ++n;
  }
  CHECK(n == 12);
  // A machine without a description, and a malformed row: one line, exit 2, nothing written.
  const auto missing = run("calibrate --from-machine-probes " + probes + " --machines " + data +
                           "/components/machines --machine no_such_machine --machines-out " + dir.file("none"));
  CHECK(missing.code == 2);
  CHECK(missing.err.find("no_such_machine") != std::string::npos);
  CHECK(std::count(missing.err.begin(), missing.err.end(), '\n') == 1);
  CHECK_FALSE(std::filesystem::exists(dir.file("none")));
  write_file(dir.file("bad.csv"), "machine,source,pattern,transfers,bytes,metric,value,note\n"
                                  "rtx4090x2_trpro_p2poff,s,uni,0-1,1000,flow_GBps,20,\n");
  const auto bad = run("calibrate --from-machine-probes " + dir.file("bad.csv") + " --machines " + data +
                       "/components/machines");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("transfers") != std::string::npos);
}

TEST_CASE("calibrate --from-kernels: a chart at one length holds out each shape, and the H20's own rows refit its kernels",
          "[cli][calibrate][kernel]") {
  const TempDir tmp;
  const std::string file = std::string(RINGSIM_TEST_DATA) + "/components/kernels/h20_chart.csv";
  // The issue #1310 benchmark ran one length (2,048 tokens): grouped by length it has nothing to hold
  // out; grouped by shape (head dim, mask) each of its four rows is held out in turn.
  const auto fit = run("calibrate --from-kernels " + file + " --method FlashAttention-2 --as H20=h20 --free attention_efficiency" +
                       " --report " + tmp.file("fit.csv"));
  INFO(fit.err);
  REQUIRE(fit.code == 0);
  CHECK(fit.out.find("4 rows in 4 shape groups") != std::string::npos);
  const auto report = read_file(tmp.file("fit.csv"));
  for (const char* g : {"head dim 64 full", "head dim 64 causal", "head dim 128 full", "head dim 128 causal"}) {
    INFO(g);
    CHECK(report.find(g) != std::string::npos);
  }
  // The shipped profile is that fit: scored on its rows it is close (the fit's in-sample error is
  // under 5 %), while the profile derived from the H100 (spec-scaled, nothing refitted) is far off.
  const auto shipped = run("calibrate --from-kernels " + file + " --method FlashAttention-2 --as H20=h20 --free none");
  INFO(shipped.err);
  REQUIRE(shipped.code == 0);
  std::smatch m;
  const std::regex pct("out of sample +([0-9.]+) %");
  REQUIRE(std::regex_search(shipped.out, m, pct));
  CHECK(std::stod(m[1].str()) < 5.0);
  const auto derived = run("calibrate --derive-from ring-flash-attn/h100-sxm --hardware h20 --keep attention_efficiency,"
                           "attention_bwd_efficiency,softmax_overlap --keep-cycles cta_overhead_s,kernel_launch_s -o " +
                           tmp.file("derived.json"));
  INFO(derived.err);
  REQUIRE(derived.code == 0);
  const auto scored = run("calibrate --from-kernels " + file + " --method FlashAttention-2 --as H20=h20 --free none --profile " +
                          tmp.file("derived.json"));
  REQUIRE(scored.code == 0);
  REQUIRE(std::regex_search(scored.out, m, pct));
  CHECK(std::stod(m[1].str()) > 20.0);
}
