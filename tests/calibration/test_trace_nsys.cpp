// Nsight Systems SQLite exports (`nsys export --type sqlite`) read into the same Trace as a
// PyTorch profiler trace. Oracle: a ring step written both ways, as an nsys database with the
// real export's tables and columns and as Kineto JSON, summarizes to the same figures field by
// field. Then NVTX step texts (inline or registered), optional tables, and hostile files.
#include <sqlite3.h>
#include <sys/stat.h>
#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "calibration/trace/kineto.hpp"
#include "calibration/trace/nsys.hpp"
#include "calibration/trace/read_trace.hpp"
#include "calibration/trace/step_summary.hpp"
#include "models/catalog/catalog.hpp"
#include "models/io/error.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/support/trace_support.hpp"

using namespace ringsim;

namespace {

// The tables of a real export (nsys 2021-2025: columns as `.schema` prints them, less those the
// reader never touches), without NOT NULL so that hostile rows can be written.
constexpr const char* kSchema = R"(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, contextId INTEGER,
  streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER,
  mangledName INTEGER, launchType INTEGER, gridX INTEGER, blockX INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, eventClass INTEGER, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER, returnValue INTEGER, callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER, contextId INTEGER,
  streamId INTEGER, correlationId INTEGER, globalPid INTEGER, bytes INTEGER, copyKind INTEGER, srcKind INTEGER, dstKind INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, rangeId INTEGER, category INTEGER,
  color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER REFERENCES StringIds(id),
  domainId INTEGER, uint64Value INTEGER);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER, id INTEGER, name TEXT, busLocation TEXT, smCount INTEGER);
CREATE TABLE TARGET_INFO_SYSTEM_ENV (globalVid INTEGER, devStateName TEXT, name TEXT, nameEnum INTEGER, value TEXT);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
)";

// A database written with plain SQL (the test's own connection, closed before the reader opens it).
class Db {
 public:
  explicit Db(const std::string& path) {
    REQUIRE(sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) == SQLITE_OK);
  }
  ~Db() { sqlite3_close(db_); }
  Db& exec(const std::string& sql) {
    char* err = nullptr;
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
    INFO(sql << ": " << (err ? err : ""));
    sqlite3_free(err);
    REQUIRE(rc == SQLITE_OK);
    return *this;
  }

 private:
  sqlite3* db_ = nullptr;
};

// nsys's serialized ids: hardware id << 48 | pid << 24 | tid.
constexpr std::int64_t kPid = (std::int64_t{1} << 48) | (std::int64_t{9908} << 24);
constexpr std::int64_t kOtherPid = (std::int64_t{1} << 48) | (std::int64_t{9999} << 24);

struct Op {
  std::string name;  // "" for a copy
  int stream;
  double launch, start, dur;  // microseconds
};

// The ring step of test_trace.cpp without recorded message sizes (nsys records none), and a
// host-to-device copy.
const std::vector<Op>& ring_ops() {
  static const std::vector<Op> ops{
      {"", 7, 40, 60, 20},
      {"void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>>", 7, 10, 100, 300},
      {"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", 20, 12, 150, 350},
      {"void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>>", 7, 20, 420, 280},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 7, 30, 800, 50},
      {"void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128>>", 7, 1010, 1100, 500},
      {"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 21, 1020, 1650, 100},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>", 7, 1990, 2050, 10},
      {"launched_outside", 7, 2500, 2600, 5},
  };
  return ops;
}
const std::vector<std::pair<double, double>> kSteps{{0, 1000}, {1000, 2000}};

std::string kineto_json(const std::vector<Op>& ops) {
  const auto ts = [](double t) { return fmt::format("{:.3f}", 1700000000000000.0 + t); };
  std::string s = R"({"distributedInfo": {"rank": 3, "world_size": 8}, "deviceProperties": [{"name": "NVIDIA H100 80GB HBM3"}], "traceEvents": [)";
  std::vector<std::string> ev;
  for (std::size_t i = 0; i < kSteps.size(); ++i)
    ev.push_back(fmt::format(R"({{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{}", "ts": {}, "dur": {}}})", 10 + i,
                             ts(kSteps[i].first), kSteps[i].second - kSteps[i].first));
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& o = ops[i];
    ev.push_back(fmt::format(R"({{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": {}, "dur": 2, "args": {{"correlation": {}}}}})",
                             ts(o.launch), i + 1));
    ev.push_back(fmt::format(R"({{"ph": "X", "cat": "{}", "name": "{}", "ts": {}, "dur": {}, "args": {{"device": 0, "stream": {}, "correlation": {}}}}})",
                             o.name.empty() ? "gpu_memcpy" : "kernel", o.name.empty() ? "Memcpy HtoD (Pageable -> Device)" : o.name,
                             ts(o.start), o.dur, o.stream, i + 1));
  }
  for (std::size_t i = 0; i < ev.size(); ++i) s += (i ? ",\n" : "\n") + ev[i];
  return s + "\n]}\n";
}

// The same run as nsys exports it: ns since the session began, names in StringIds, launches
// in the runtime table, steps as NVTX push/pop ranges (eventType 59).
std::string nsys_db(const test::TempDir& dir, const std::string& name, const std::vector<Op>& ops, std::int64_t base_ns,
                    bool registered_step_text = false) {
  const auto path = dir.file(name);
  Db db(path);
  db.exec(kSchema).exec("BEGIN");
  const auto ns = [&](double us) { return base_ns + static_cast<std::int64_t>(us * 1000); };
  db.exec("INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel'), (2, 'ProfilerStep#10'), (3, 'ProfilerStep#11')");
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& o = ops[i];
    const auto corr = i + 1;
    db.exec(fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES ({}, {}, 1, {}, {}, 1, 0, 0)", ns(o.launch), ns(o.launch) + 2000,
                        kPid | 9912, corr));
    if (o.name.empty()) {
      db.exec(fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES ({}, {}, 0, 1, {}, {}, {}, 4096, 1, 0, 1)", ns(o.start),
                          ns(o.start + o.dur), o.stream, corr, kPid));
      continue;
    }
    db.exec(fmt::format("INSERT INTO StringIds VALUES ({}, '{}')", 100 + i, o.name));
    db.exec(fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ({}, {}, 0, 1, {}, {}, {}, {}, {}, {}, 0, 1, 128)", ns(o.start),
                        ns(o.start + o.dur), o.stream, corr, kPid, 100 + i, 100 + i, 100 + i));
  }
  // Another process's launch with a correlation id of this one's (each process counts its own):
  // it must not move the first kernel's launch out of its step.
  db.exec(fmt::format("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES ({}, {}, 1, {}, 2, 1, 0, 0)", ns(5000), ns(5001), kOtherPid | 1));
  for (std::size_t i = 0; i < kSteps.size(); ++i) {
    const auto text = registered_step_text ? std::string("NULL") : fmt::format("'ProfilerStep#{}'", 10 + i);
    const auto id = registered_step_text ? std::to_string(2 + i) : std::string("NULL");
    db.exec(fmt::format("INSERT INTO NVTX_EVENTS VALUES ({}, {}, 59, NULL, NULL, NULL, {}, {}, {}, {}, 0, NULL)", ns(kSteps[i].first),
                        ns(kSteps[i].second), text, kPid | 9912, kPid | 9912, id));
  }
  // Not steps: a mark (no end) and an operator range of emit_nvtx's shape.
  db.exec(fmt::format("INSERT INTO NVTX_EVENTS VALUES ({}, NULL, 34, NULL, NULL, NULL, 'ProfilerStep#99', {}, NULL, NULL, 0, NULL)",
                      ns(500), kPid | 9912));
  db.exec(fmt::format("INSERT INTO NVTX_EVENTS VALUES ({}, {}, 59, NULL, NULL, NULL, 'aten::mm, seq = 4', {}, NULL, NULL, 0, NULL)",
                      ns(30), ns(31), kPid | 9912));
  db.exec("INSERT INTO TARGET_INFO_GPU VALUES (0, 0, 'NVIDIA H100 80GB HBM3', '0000:18:00.0', 132), (0, 1, 'other', '', 1)");
  db.exec("INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (1, 'Local (CLI)', 'DeviceEnvironment', 610, "
          "'USER=me;LOCAL_RANK=3;RANK=3;WORLD_SIZE=8;PATH=/usr/bin')");
  db.exec("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1767718840395831670, '2026-01-06T17:00:40', '2026-01-06T22:30:40')");
  db.exec("COMMIT");
  return path;
}

void check_same(const calibration::TraceSummary& a, const calibration::TraceSummary& b) {
  CHECK(a.rank == b.rank);
  CHECK(a.world_size == b.world_size);
  CHECK(a.device_name == b.device_name);
  CHECK(a.ops == b.ops);
  CHECK(a.ops_outside_steps == b.ops_outside_steps);
  CHECK(a.outside_steps_us == Approx(b.outside_steps_us).margin(1e-6));
  CHECK(a.unclassified == b.unclassified);
  REQUIRE(a.steps.size() == b.steps.size());
  for (std::size_t i = 0; i < a.steps.size(); ++i) {
    const auto &x = a.steps[i], &y = b.steps[i];
    INFO("step " << x.step);
    CHECK(x.step == y.step);
    CHECK(x.device == y.device);
    for (const auto& [u, v] : {std::pair{x.wall_us, y.wall_us}, {x.busy_us, y.busy_us}, {x.idle_us, y.idle_us},
                              {x.communication_us, y.communication_us}, {x.exposed_communication_us, y.exposed_communication_us},
                              {x.p2p_bytes, y.p2p_bytes}, {x.collective_bytes, y.collective_bytes}})
      CHECK(u == Approx(v).margin(1e-6));
    for (std::size_t c = 0; c < calibration::kOpClasses; ++c) {
      CHECK(x.class_us[c] == Approx(y.class_us[c]).margin(1e-6));
      CHECK(x.class_ops[c] == y.class_ops[c]);
    }
    CHECK(x.unsized_communication_ops == y.unsized_communication_ops);
  }
}

}  // namespace

TEST_CASE("an nsys export summarizes as the same run written as a Kineto trace", "[trace][nsys]") {
  test::TempDir dir;
  const auto json = dir.write("rank3.json", kineto_json(ring_ops()));
  const auto gz = dir.write("rank3.json.gz", test::gzip(kineto_json(ring_ops())));
  // Session-relative nanoseconds (as nsys writes them), and epoch-sized ones.
  for (const std::int64_t base : {std::int64_t{2791627625}, std::int64_t{1700000000000000000}}) {
    INFO("base " << base);
    const auto db = nsys_db(dir, fmt::format("rank3-{}.sqlite", base), ring_ops(), base);
    CHECK(calibration::trace_format(db) == calibration::TraceFormat::NsysSqlite);
    CHECK(calibration::trace_format(json) == calibration::TraceFormat::KinetoJson);
    CHECK(calibration::trace_format(gz) == calibration::TraceFormat::KinetoJson);
    const auto t = calibration::read_trace(db);
    CHECK(t.rank == 3);
    CHECK(t.world_size == 8);
    CHECK(t.device_name == "NVIDIA H100 80GB HBM3");
    if (base < 1000000000000) CHECK(t.date == "2026-01-06");  // the capture's start + 2.8 s
    REQUIRE(t.ops.size() == ring_ops().size());
    CHECK(t.ops[0].kind == calibration::GpuOp::Kind::Kernel);  // kernels first, then copies
    CHECK(t.ops.back().kind == calibration::GpuOp::Kind::Memcpy);
    CHECK(t.ops.back().name == "Memcpy HtoD");
    CHECK(t.ops[1].message_bytes == -1);  // NCCL kernels carry no sizes in nsys
    CHECK(t.ops[0].start_us == Approx(100 - 60));  // rebased on the first GPU start (the copy's)
    REQUIRE(t.cpu_steps.size() == 2);
    CHECK(t.cpu_steps[0].number == 10);
    CHECK(t.gpu_steps.empty());
    const auto s = calibration::summarize(t, test::trace_classes());
    CHECK(s.steps.size() == 2);
    CHECK(s.steps[0].exposed_communication_us == Approx(20));
    CHECK(s.steps[0].class_us[calibration::index(calibration::OpClass::Memory)] == Approx(20));
    for (const auto& path : {json, gz}) check_same(s, calibration::summarize(calibration::read_trace(path), test::trace_classes()));
  }
}

TEST_CASE("nsys: registered NVTX texts, a step regex of one's own, nanosecond precision", "[trace][nsys]") {
  test::TempDir dir;
  const auto by_id = nsys_db(dir, "registered.sqlite", ring_ops(), 1000, true);
  const auto t = calibration::read_nsys_sqlite(by_id);
  REQUIRE(t.cpu_steps.size() == 2);
  CHECK(t.cpu_steps[1].number == 11);
  CHECK(t.cpu_steps[1].start_us == Approx(1000 - 60));

  // A loop that marks its steps itself: nvtx.range_push(f"train step {i}").
  const auto own = dir.file("own.sqlite");
  {
    Db db(own);
    db.exec(kSchema).exec("INSERT INTO StringIds VALUES (1, 'my_kernel')");
    db.exec("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1700000000000000001, 1700000000000000002, 0, 1, 7, 5, NULL, 1, 1, 1, 0, 1, 1)");
    db.exec("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1700000000000000003, 1700000000000001003, 0, 1, 7, 6, NULL, 1, 1, 1, 0, 1, 1)");
    db.exec("INSERT INTO NVTX_EVENTS (start, end, eventType, text) VALUES (1700000000000000000, 1700000000000002000, 60, 'train step 7'),"
            " (1700000000000002000, NULL, 60, 'train step 8')");  // still open when the capture stopped
  }
  const auto mine = calibration::read_nsys_sqlite(own, R"(train step (\d+))");
  REQUIRE(mine.cpu_steps.size() == 1);
  CHECK(mine.cpu_steps[0].number == 7);
  REQUIRE(mine.ops.size() == 2);
  CHECK(mine.ops[0].start_us == 0);
  CHECK(mine.ops[0].end_us == Approx(0.001).epsilon(1e-12));  // 1 ns at an epoch-sized origin
  CHECK(mine.ops[1].end_us - mine.ops[1].start_us == Approx(1.0).epsilon(1e-12));
  CHECK(mine.launch_us.empty());  // no runtime table: kernels are placed by their GPU time
  CHECK(calibration::read_nsys_sqlite(own).cpu_steps.empty());  // the default regex finds no step
  CHECK_THROWS_WITH(calibration::read_nsys_sqlite(own, R"((train) step \d+)"), Catch::Contains("not a step number"));
}

TEST_CASE("nsys: optional tables may be missing", "[trace][nsys]") {
  test::TempDir dir;
  const auto path = dir.file("kernels_only.sqlite");
  {
    Db db(path);
    db.exec("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
            "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INT NOT NULL, end INT NOT NULL, deviceId INT NOT NULL, "
            "streamId INT NOT NULL, correlationId INT, shortName INT NOT NULL);"
            "INSERT INTO StringIds VALUES (1, 'flash_fwd_kernel');"
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (100, 300, 1, 7, 1, 1), (400, 450, 1, 7, NULL, 1);");
  }
  const auto t = calibration::read_trace(path);
  CHECK(t.rank == -1);
  CHECK(t.world_size == 0);
  CHECK(t.device_name.empty());
  CHECK(t.cpu_steps.empty());
  REQUIRE(t.ops.size() == 2);
  CHECK(t.ops[0].name == "flash_fwd_kernel");  // shortName when there is no demangledName
  CHECK(t.ops[1].correlation == -1);
  const auto s = calibration::summarize(t, test::trace_classes());
  REQUIRE(s.steps.size() == 1);
  CHECK(s.steps[0].step == -1);
  CHECK(s.steps[0].device == 1);
  CHECK(s.steps[0].wall_us == Approx(0.35));
}

TEST_CASE("hostile nsys files: one InputError naming the file, the table and the column", "[trace][nsys][hostile]") {
  test::TempDir dir;
  const auto fails = [&](const std::string& path, const std::string& field, const std::string& needle = "") {
    INFO(path);
    try {
      (void)calibration::read_nsys_sqlite(path);
      FAIL("accepted");
    } catch (const models::InputError& e) {
      CHECK(e.file() == path);
      CHECK(e.field() == field);
      if (!needle.empty()) CHECK_THAT(std::string(e.what()), Catch::Contains(needle));
    }
  };
  fails(dir.write("text.sqlite", "{\"traceEvents\": []}\n"), "trace", "not an SQLite database");
  fails(dir.write("empty.sqlite", ""), "trace", "not an SQLite database");
  fails(dir.write("header_only.sqlite", std::string("SQLite format 3\0", 16) + std::string(100, 'x')), "trace", "SQLite");
  fails(dir.dir(), "trace", "directory");
  const auto fifo = dir.file("fifo.sqlite");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  fails(fifo, "trace", "not a regular file");
  fails(dir.file("missing.sqlite"), "trace");

  // A database with one bad value (or table) written into a good run.
  int n = 0;
  const auto broken = [&](const std::string& sql) {
    const auto path = nsys_db(dir, fmt::format("broken{}.sqlite", n++), ring_ops(), 1000);
    Db(path).exec(sql);
    return path;
  };
  fails(broken("DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL"), "CUPTI_ACTIVITY_KIND_KERNEL", "profile with nsys -t cuda");
  fails(broken("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = NULL WHERE correlationId = 3"), "CUPTI_ACTIVITY_KIND_KERNEL.start", "NULL");
  fails(broken("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = -5 WHERE correlationId = 3"), "CUPTI_ACTIVITY_KIND_KERNEL.start");
  fails(broken("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 'soon' WHERE correlationId = 3"), "CUPTI_ACTIVITY_KIND_KERNEL.start", "text");
  fails(broken("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start - 1 WHERE correlationId = 3"), "CUPTI_ACTIVITY_KIND_KERNEL.end", "before start");
  fails(broken("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = 77777 WHERE correlationId = 3"),
        "CUPTI_ACTIVITY_KIND_KERNEL.demangledName", "not in StringIds");
  fails(broken("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET correlationId = 99999999999 WHERE correlationId = 3"),
        "CUPTI_ACTIVITY_KIND_KERNEL.correlationId");
  fails(broken("UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET end = NULL"), "CUPTI_ACTIVITY_KIND_MEMCPY.end");
  fails(broken("UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = NULL WHERE correlationId = 3"), "CUPTI_ACTIVITY_KIND_RUNTIME.start");
  fails(broken("UPDATE NVTX_EVENTS SET end = start - 1 WHERE text = 'ProfilerStep#11'"), "NVTX_EVENTS.end");
  fails(broken("ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN streamId"), "CUPTI_ACTIVITY_KIND_KERNEL.streamId", "missing column");
  fails(broken("DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL; DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY"), "CUPTI_ACTIVITY_KIND_KERNEL", "no GPU operations");
  fails(broken("DROP TABLE StringIds"), "StringIds");
  // A view under the kernel table's name could run any query: refused, never queried.
  fails(broken("ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME TO k; CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS "
               "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x AS start FROM c"),
        "CUPTI_ACTIVITY_KIND_KERNEL", "view");

  // The option is checked before any file is read.
  for (const std::string& bad : std::vector<std::string>{"(unclosed", "ProfilerStep#\\d+", "", std::string(2000, 'a')}) {
    INFO(bad);
    try {
      (void)calibration::read_trace(dir.file("missing.json"), {}, bad);
      FAIL("accepted");
    } catch (const models::InputError& e) {
      CHECK(e.field() == "step-regex");
    }
  }
}

TEST_CASE("nsys: operations that share a name hold one copy of it, read once", "[trace][nsys][hostile]") {
  // A small database can give a million rows one name of 64 MB (SQLite's limit here): a copy per
  // operation was 64 TB. The name is read once per id and shared.
  test::TempDir dir;
  const auto path = nsys_db(dir, "shared.sqlite", ring_ops(), 1000);
  Db(path)
      .exec("INSERT INTO StringIds VALUES (9000, replace(hex(zeroblob(500000)), '00', 'xy'))")
      .exec("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 2000) "
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT 3000000 + i * 1000, 3000000 + i * 1000 + 500, 0, 1, 7, 100000 + i, "
            + std::to_string(kPid) + ", 9000, 9000, 9000, 0, 1, 128 FROM c");
  const auto t = calibration::read_nsys_sqlite(path);
  std::size_t shared = 0;
  const calibration::GpuOp* first = nullptr;
  for (const auto& op : t.ops) {
    if (op.name.size() != 1000000) continue;
    if (!first) first = &op;
    shared += op.name.shares(first->name) ? 1 : 0;
  }
  CHECK(shared == 2000);
  // Registered step texts are read once per id as well; one too long to be a label is no step.
  const auto steps = nsys_db(dir, "steps.sqlite", ring_ops(), 1000, true);
  Db(steps).exec("UPDATE StringIds SET value = 'ProfilerStep#11' || replace(hex(zeroblob(5000)), '00', ' ') WHERE id = 3");
  const auto s = calibration::read_nsys_sqlite(steps);
  REQUIRE(s.cpu_steps.size() == 1);
  CHECK(s.cpu_steps[0].number == 10);
}
