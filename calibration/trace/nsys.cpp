#include "calibration/trace/nsys.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <limits>
#include <optional>
#include <regex>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "calibration/trace/trace_file.hpp"
#include "calibration/trace/trace_limits.hpp"
#include "calibration/trace/trace_text.hpp"
#include "models/io/error.hpp"
#include "models/io/names.hpp"

// Tables and columns as Nsight Systems documents them ("SQLite Export Schema Reference",
// https://docs.nvidia.com/nsight-systems/2021.5/nsys-exporter/exported_data.html; tables are
// created lazily, so any may be absent), checked against real exports of nsys 2021 to 2025:
//   CUPTI_ACTIVITY_KIND_KERNEL  start, end (ns), deviceId, streamId, correlationId, globalPid,
//                               demangledName / shortName (ids into StringIds)
//   CUPTI_ACTIVITY_KIND_MEMCPY  start, end, deviceId, streamId, correlationId, globalPid, copyKind
//   CUPTI_ACTIVITY_KIND_MEMSET  start, end, deviceId, streamId, correlationId, globalPid
//   CUPTI_ACTIVITY_KIND_RUNTIME start, correlationId, globalTid (the CPU side of each launch)
//   NVTX_EVENTS                 start, end, eventType, text or textId (into StringIds)
//   TARGET_INFO_GPU             name;  TARGET_INFO_SYSTEM_ENV  name, value
//   StringIds                   id, value

namespace ringsim::calibration {

using models::InputError;

namespace {

// NVTX_EVENTS.eventType of the two kinds of range (ENUM_NSYS_EVENT_TYPE in the export:
// NvtxPushPopRange, NvtxStartEndRange); marks and domain/category records are not ranges.
constexpr int kNvtxPushPopRange = 59, kNvtxStartEndRange = 60;
// A step range's text is a short label; longer texts (emit_nvtx's operator ranges with shapes)
// are never steps, and std::regex recurses per character, so they are not matched at all.
constexpr std::size_t kMaxStepTextBytes = 1024;
constexpr std::size_t kMaxStepRegexBytes = 1000;

std::regex compile_step_regex(const std::string& regex) {
  if (regex.empty() || regex.size() > kMaxStepRegexBytes)
    throw InputError({}, 0, "step-regex", "expected a regular expression of 1 to " + std::to_string(kMaxStepRegexBytes) + " characters");
  std::regex re;
  try {
    re = std::regex(regex, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw InputError({}, 0, "step-regex", "'" + regex + "' is not a valid regular expression: " + e.what());
  }
  if (re.mark_count() < 1)
    throw InputError({}, 0, "step-regex", "'" + regex + "' has no capture group: the first group must capture the step number");
  return re;
}

// The open database and the checks before it: the path is a regular file, not too large, and
// begins with SQLite's header (so a JSON trace or random bytes are named as such, not as
// whatever SQLite makes of them).
class Database {
 public:
  explicit Database(const std::string& path) : path_(path) {
    {
      const TraceFile file(path);
      if (!is_sqlite_head(file.head())) fail("is not an SQLite database (nsys export --type sqlite writes one)");
    }
    // immutable=1: SQLite neither locks nor looks for a journal to roll back, so a report on
    // read-only storage opens and nothing is written beside it. The path is percent-encoded
    // for the URI.
    std::string uri = "file:";
    for (const unsigned char c : path) {
      if (c == '%' || c == '?' || c == '#' || c < 0x21 || c > 0x7e) {
        static constexpr char kHex[] = "0123456789ABCDEF";
        uri += '%';
        uri += kHex[c >> 4];
        uri += kHex[c & 15];
      } else {
        uri += static_cast<char>(c);
      }
    }
    uri += "?immutable=1";
    if (sqlite3_open_v2(uri.c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
      const std::string m = db_ ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close_v2(db_);
      db_ = nullptr;
      fail("cannot open as SQLite: " + m);
    }
    // A hostile schema must not run code on our reads: no functions from the schema, and
    // strings bounded (a kernel name is at most a few kB).
    sqlite3_db_config(db_, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
    sqlite3_db_config(db_, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
    sqlite3_limit(db_, SQLITE_LIMIT_LENGTH, 64 << 20);
  }
  ~Database() { sqlite3_close_v2(db_); }
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  [[nodiscard]] sqlite3* get() const noexcept { return db_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[noreturn]] void fail(const std::string& what, const std::string& field = "trace") const {
    throw InputError(path_, 0, field, what);
  }
  [[noreturn]] void fail_sqlite(const std::string& field = "trace") const {
    fail(std::string("SQLite: ") + (db_ ? sqlite3_errmsg(db_) : "error"), field);
  }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

class Statement {
 public:
  Statement(const Database& db, const std::string& sql, std::string field) : db_(db), field_(std::move(field)) {
    if (sqlite3_prepare_v2(db.get(), sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) db.fail_sqlite(field_);
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  void bind(int i, const std::string& text) {
    if (sqlite3_bind_text(stmt_, i, text.c_str(), static_cast<int>(text.size()), SQLITE_TRANSIENT) != SQLITE_OK)
      db_.fail_sqlite(field_);
  }
  void bind(int i, std::int64_t value) {
    if (sqlite3_bind_int64(stmt_, i, value) != SQLITE_OK) db_.fail_sqlite(field_);
  }
  // For a statement run again with other bindings.
  void reset() {
    sqlite3_reset(stmt_);
    row_ = 0;
  }
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return ++row_, true;
    if (rc == SQLITE_DONE) return false;
    db_.fail_sqlite(field_);
  }
  [[nodiscard]] bool null(int c) const { return sqlite3_column_type(stmt_, c) == SQLITE_NULL; }
  [[nodiscard]] bool is_integer(int c) const { return sqlite3_column_type(stmt_, c) == SQLITE_INTEGER; }
  // The text's length in bytes, without copying it.
  [[nodiscard]] std::size_t bytes(int c) const {
    (void)sqlite3_column_text(stmt_, c);  // as text: a number's length is that of its digits
    return static_cast<std::size_t>(sqlite3_column_bytes(stmt_, c));
  }
  [[nodiscard]] std::string text(int c) const {
    const auto* p = sqlite3_column_text(stmt_, c);
    return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(stmt_, c))) : std::string();
  }
  // An INTEGER value (nsys writes times and ids as integers); anything else is named.
  [[nodiscard]] std::int64_t integer(int c, const std::string& field, bool non_negative) const {
    const int type = sqlite3_column_type(stmt_, c);
    if (type != SQLITE_INTEGER)
      db_.fail("row " + std::to_string(row_) + ": expected an integer, got " +
                   (type == SQLITE_NULL ? "NULL" : type == SQLITE_TEXT ? "text" : type == SQLITE_FLOAT ? "a real" : "a blob"),
               field);
    const std::int64_t v = sqlite3_column_int64(stmt_, c);
    if (non_negative && v < 0) db_.fail("row " + std::to_string(row_) + ": expected a non-negative integer, got " + std::to_string(v), field);
    return v;
  }
  [[nodiscard]] std::int64_t row() const noexcept { return row_; }

 private:
  const Database& db_;
  std::string field_;
  sqlite3_stmt* stmt_ = nullptr;
  std::int64_t row_ = 0;
};

// The columns of `table`, or nullopt when there is no such table. A view or anything else under
// a table's name is refused: a view can run any query (a recursive one forever).
std::optional<std::set<std::string>> columns(const Database& db, const std::string& table) {
  Statement kind(db, "SELECT type FROM sqlite_master WHERE name = ?1 COLLATE NOCASE", "trace");
  kind.bind(1, table);
  if (!kind.step()) return std::nullopt;
  if (kind.text(0) != "table") db.fail("is a " + kind.text(0) + ", expected a table", table);
  Statement info(db, "PRAGMA table_info(\"" + table + "\")", table);
  std::set<std::string> out;
  while (info.step()) out.insert(info.text(1));
  return out;
}

const char* copy_kind(std::int64_t k) {
  // CUpti_ActivityMemcpyKind, the names Kineto gives the same copies.
  static constexpr std::array<const char*, 11> kNames{"Memcpy",      "Memcpy HtoD", "Memcpy DtoH", "Memcpy HtoA",
                                                      "Memcpy AtoH", "Memcpy AtoA", "Memcpy AtoD", "Memcpy DtoA",
                                                      "Memcpy DtoD", "Memcpy HtoH", "Memcpy PtoP"};
  return k >= 0 && k < static_cast<std::int64_t>(kNames.size()) ? kNames[static_cast<std::size_t>(k)] : "Memcpy";
}

class Reader {
 public:
  // The regex first: a bad option is named as such before any file is opened.
  Reader(const std::string& path, const std::string& step_regex) : step_re_(compile_step_regex(step_regex)), db_(path) {
    trace_.file = path;
  }

  Trace read() {
    const auto kernel_cols = columns(db_, kKernel);
    if (!kernel_cols)
      db_.fail("no CUPTI_ACTIVITY_KIND_KERNEL table: the report holds no CUDA kernels (profile with nsys -t cuda)", kKernel);
    strings_ = columns(db_, "StringIds").has_value();
    base_ns_ = first_start();
    read_ops(kKernel, *kernel_cols, GpuOp::Kind::Kernel);
    for (const auto& [table, kind] : {std::pair{kMemcpy, GpuOp::Kind::Memcpy}, std::pair{kMemset, GpuOp::Kind::Memset}})
      if (const auto cols = columns(db_, table)) read_ops(table, *cols, kind);
    if (trace_.ops.empty())
      db_.fail("no GPU operations (the kernel, memcpy and memset tables are empty): profile with nsys -t cuda", kKernel);
    read_launches();
    read_steps();
    read_target();
    return std::move(trace_);
  }

 private:
  static constexpr const char* kKernel = "CUPTI_ACTIVITY_KIND_KERNEL";
  static constexpr const char* kMemcpy = "CUPTI_ACTIVITY_KIND_MEMCPY";
  static constexpr const char* kMemset = "CUPTI_ACTIVITY_KIND_MEMSET";
  static constexpr const char* kRuntime = "CUPTI_ACTIVITY_KIND_RUNTIME";
  static constexpr const char* kNvtx = "NVTX_EVENTS";

  static std::string field(const std::string& table, const std::string& column) { return table + "." + column; }
  void need(const std::set<std::string>& cols, const std::string& table, const std::string& column) const {
    if (!cols.count(column)) db_.fail("missing column " + column, field(table, column));
  }

  // The rebasing origin: the earliest GPU start, kept as integer nanoseconds so that every
  // time is an exact integer difference before it becomes microseconds.
  std::int64_t first_start() {
    std::int64_t base = std::numeric_limits<std::int64_t>::max();
    for (const char* table : {kKernel, kMemcpy, kMemset}) {
      const auto cols = columns(db_, table);
      if (!cols || !cols->count("start")) continue;
      Statement s(db_, std::string("SELECT min(start) FROM ") + table + " WHERE typeof(start) = 'integer' AND start >= 0", field(table, "start"));
      if (s.step() && !s.null(0)) base = std::min(base, s.integer(0, field(table, "start"), true));
    }
    return base == std::numeric_limits<std::int64_t>::max() ? 0 : base;
  }

  [[nodiscard]] double us(std::int64_t ns) const { return static_cast<double>(ns - base_ns_) / 1000.0; }

  // Correlation ids are counted per process: a report of several processes (torchrun under
  // nsys) repeats them, so each is keyed by the process (globalPid / globalTid without the
  // thread's low 24 bits) as well.
  std::int64_t launch_key(const Statement& s, int corr_col, int process_col, const std::string& table,
                          const char* process_name) {
    if (s.null(corr_col)) return -1;
    const std::int64_t corr = s.integer(corr_col, field(table, "correlationId"), true);
    if (corr > std::numeric_limits<std::uint32_t>::max())
      db_.fail("row " + std::to_string(s.row()) + ": expected a 32-bit correlation id", field(table, "correlationId"));
    std::int64_t process = 0;
    if (process_col >= 0 && !s.null(process_col)) {
      const std::int64_t g = s.integer(process_col, field(table, process_name), false);
      process = processes_.emplace(g >> 24, static_cast<std::int64_t>(processes_.size())).first->second;
    }
    return (process << 32) | corr;
  }

  void read_ops(const std::string& table, const std::set<std::string>& cols, GpuOp::Kind kind) {
    for (const char* c : {"start", "end", "deviceId", "streamId", "correlationId"}) need(cols, table, c);
    std::string name_col, sql = "SELECT o.start, o.end, o.deviceId, o.streamId, o.correlationId, ";
    sql += cols.count("globalPid") ? "o.globalPid" : "NULL";
    if (kind == GpuOp::Kind::Kernel) {
      name_col = cols.count("demangledName") ? "demangledName" : "shortName";
      need(cols, table, name_col);
      if (!strings_) db_.fail("no StringIds table: kernel names cannot be resolved", "StringIds");
      // The name's id, not its text: each distinct name is read from StringIds once (name_of).
      sql += ", o." + name_col + " FROM " + table + " o";
    } else {
      sql += kind == GpuOp::Kind::Memcpy && cols.count("copyKind") ? ", o.copyKind" : ", NULL";
      sql += " FROM " + table + " o";
    }
    Statement s(db_, sql, table);
    while (s.step()) {
      if (static_cast<std::int64_t>(trace_.ops.size()) >= kMaxTraceRecords)
        db_.fail("more than " + std::to_string(kMaxTraceRecords) +
                     " GPU operations, the most ringsim keeps from one report: capture fewer steps (nsys --capture-range)",
                 table);
      GpuOp op;
      op.kind = kind;
      const std::int64_t start = s.integer(0, field(table, "start"), true);
      const std::int64_t end = s.integer(1, field(table, "end"), true);
      if (end < start)
        db_.fail("row " + std::to_string(s.row()) + ": end " + std::to_string(end) + " is before start " + std::to_string(start),
                 field(table, "end"));
      op.start_us = us(start);
      op.end_us = us(end);
      op.device = s.integer(2, field(table, "deviceId"), false);
      op.stream = s.integer(3, field(table, "streamId"), false);
      op.correlation = launch_key(s, 4, 5, table, "globalPid");
      if (kind == GpuOp::Kind::Kernel) {
        op.name = name_of(s, 6, field(table, name_col));
      } else if (kind == GpuOp::Kind::Memcpy) {
        op.name = names_.intern(copy_kind(s.null(6) ? 0 : s.integer(6, field(table, "copyKind"), false)));
      } else {
        op.name = names_.intern("Memset");
      }
      if (op.correlation >= 0) correlations_.insert(op.correlation);
      trace_.ops.push_back(std::move(op));
    }
  }

  // A kernel's name by its id into StringIds, read once per distinct id and shared by every
  // operation that has it (a report can give a million rows one long name).
  SharedText name_of(const Statement& row, int column, const std::string& field_name) {
    if (!row.is_integer(column))
      db_.fail("row " + std::to_string(row.row()) + ": expected an integer id into StringIds, got " +
                   (row.null(column) ? std::string("NULL") : "'" + row.text(column) + "'"),
               field_name);
    const std::int64_t id = row.integer(column, field_name, false);
    if (const auto it = name_ids_.find(id); it != name_ids_.end()) return it->second;
    if (!string_lookup_) string_lookup_.emplace(db_, "SELECT value FROM StringIds WHERE id = ?1", "StringIds");
    Statement& q = *string_lookup_;
    q.reset();
    q.bind(1, id);
    if (!q.step() || q.null(0))
      db_.fail("row " + std::to_string(row.row()) + ": the name's id " + std::to_string(id) + " is not in StringIds", field_name);
    return name_ids_.emplace(id, names_.intern(q.text(0))).first->second;
  }

  // A registered NVTX text by its id, read once per id; nullptr when there is none or it is too
  // long to be a step's label.
  const std::string* step_text(std::int64_t id) {
    if (const auto it = step_texts_.find(id); it != step_texts_.end()) return it->second ? &*it->second : nullptr;
    if (!text_lookup_) text_lookup_.emplace(db_, "SELECT value FROM StringIds WHERE id = ?1", "StringIds");
    Statement& q = *text_lookup_;
    q.reset();
    q.bind(1, id);
    std::optional<std::string> text;
    if (q.step() && !q.null(0) && q.bytes(0) <= kMaxStepTextBytes) text = q.text(0);
    const auto& kept = step_texts_.emplace(id, std::move(text)).first->second;
    return kept ? &*kept : nullptr;
  }

  // Every CUDA API call is in the runtime table (cudaMalloc, synchronisations, ...); only the
  // launches of operations read are kept.
  void read_launches() {
    const auto cols = columns(db_, kRuntime);
    if (!cols) return;
    need(*cols, kRuntime, "start");
    need(*cols, kRuntime, "correlationId");
    Statement s(db_, std::string("SELECT start, correlationId, ") + (cols->count("globalTid") ? "globalTid" : "NULL") + " FROM " + kRuntime,
                kRuntime);
    while (s.step()) {
      const std::int64_t start = s.integer(0, field(kRuntime, "start"), true);
      const std::int64_t key = launch_key(s, 1, 2, kRuntime, "globalTid");
      if (key >= 0 && correlations_.count(key)) trace_.launch_us[key] = us(start);
    }
  }

  // NVTX ranges are CPU-side: the steps kernels are placed in by their launch.
  void read_steps() {
    const auto cols = columns(db_, kNvtx);
    if (!cols) return;
    for (const char* c : {"start", "end", "eventType"}) need(*cols, kNvtx, c);
    if (!cols->count("text") && !cols->count("textId")) need(*cols, kNvtx, "text");
    const bool by_id = cols->count("textId") && strings_;
    std::string sql = "SELECT e.start, e.end, ";
    sql += cols->count("text") ? "e.text" : "NULL";
    // The text's id, not its text: a registered text is read once per id (step_text).
    sql += by_id ? ", e.textId FROM NVTX_EVENTS e" : ", NULL FROM NVTX_EVENTS e";
    sql += " WHERE e.eventType IN (" + std::to_string(kNvtxPushPopRange) + ", " + std::to_string(kNvtxStartEndRange) + ")";
    Statement s(db_, sql, kNvtx);
    std::smatch m;
    while (s.step()) {
      // Longer texts are never steps (and not matched: std::regex recurses per character).
      std::string text;
      if (!s.null(2)) {
        if (s.bytes(2) > kMaxStepTextBytes) continue;
        text = s.text(2);
      } else if (!s.null(3) && s.is_integer(3)) {
        const auto* registered = step_text(s.integer(3, field(kNvtx, "textId"), false));
        if (!registered) continue;
        text = *registered;
      }
      if (!std::regex_search(text, m, step_re_)) continue;
      const std::string digits = m[1].str();
      if (digits.empty() || digits.size() > 15 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
        db_.fail("row " + std::to_string(s.row()) + ": '" + text + "' matches the step regex but its first group '" + digits +
                     "' is not a step number",
                 field(kNvtx, "text"));
      const std::int64_t start = s.integer(0, field(kNvtx, "start"), true);
      // The schema allows a NULL end (the only nullable time): a range still open when the
      // capture stopped. It has no extent to place kernels in, so it is not a step.
      if (s.null(1)) continue;
      const std::int64_t end = s.integer(1, field(kNvtx, "end"), true);
      if (end < start)
        db_.fail("row " + std::to_string(s.row()) + ": end " + std::to_string(end) + " is before start " + std::to_string(start),
                 field(kNvtx, "end"));
      if (static_cast<std::int64_t>(trace_.cpu_steps.size()) >= kMaxTraceRecords)
        db_.fail("more than " + std::to_string(kMaxTraceRecords) + " step ranges", kNvtx);
      trace_.cpu_steps.push_back({std::stoll(digits), us(start), us(end)});
    }
    std::sort(trace_.cpu_steps.begin(), trace_.cpu_steps.end(),
              [](const StepRange& a, const StepRange& b) { return a.start_us < b.start_us; });
  }

  // The GPU's name; the rank and world size from the environment nsys recorded, when the job
  // set PyTorch's RANK and WORLD_SIZE there (a report per rank, nsys started by the launcher).
  void read_target() {
    if (const auto cols = columns(db_, "TARGET_INFO_GPU"); cols && cols->count("name")) {
      Statement s(db_, "SELECT name FROM TARGET_INFO_GPU LIMIT 1", "TARGET_INFO_GPU.name");
      if (s.step()) trace_.device_name = s.text(0);
    }
    read_date();
    const auto cols = columns(db_, "TARGET_INFO_SYSTEM_ENV");
    if (!cols || !cols->count("name") || !cols->count("value")) return;
    Statement s(db_, "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'DeviceEnvironment' LIMIT 1", "TARGET_INFO_SYSTEM_ENV.value");
    if (!s.step()) return;
    const std::string env = ";" + s.text(0) + ";";
    const auto variable = [&](std::string_view name) -> std::int64_t {
      const auto at = env.find(";" + std::string(name) + "=");
      if (at == std::string::npos) return -1;
      const auto from = at + name.size() + 2, to = env.find(';', from);
      const std::string v = env.substr(from, to - from);
      if (v.empty() || v.size() > 9 || !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; })) return -1;
      return std::stoll(v);
    };
    const std::int64_t rank = variable("RANK"), world = variable("WORLD_SIZE");
    if (rank >= 0 && (world <= 0 || rank < world)) {
      trace_.rank = rank;
      trace_.world_size = std::max<std::int64_t>(world, 0);
    }
  }

  // The day of the first GPU operation: nsys times count from the capture's start, whose UTC
  // epoch time TARGET_INFO_SESSION_START_TIME.utcEpochNs holds (absent in older exports).
  void read_date() {
    const auto cols = columns(db_, "TARGET_INFO_SESSION_START_TIME");
    if (!cols || !cols->count("utcEpochNs")) return;
    Statement s(db_, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1", "TARGET_INFO_SESSION_START_TIME.utcEpochNs");
    if (!s.step() || s.null(0)) return;
    const std::int64_t epoch_ns = s.integer(0, "TARGET_INFO_SESSION_START_TIME.utcEpochNs", true);
    if (epoch_ns > std::numeric_limits<std::int64_t>::max() - base_ns_) return;
    const auto t = static_cast<std::time_t>((epoch_ns + base_ns_) / 1'000'000'000);
    std::tm tm{};
    char buf[16];
    if (gmtime_r(&t, &tm) && std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm) > 0) trace_.date = buf;
  }

  std::regex step_re_;
  Database db_;
  Trace trace_;
  bool strings_ = false;
  std::int64_t base_ns_ = 0;
  std::unordered_map<std::int64_t, std::int64_t> processes_;
  std::unordered_set<std::int64_t> correlations_;
  TextPool names_;
  std::unordered_map<std::int64_t, SharedText> name_ids_;
  std::optional<Statement> string_lookup_, text_lookup_;
  std::unordered_map<std::int64_t, std::optional<std::string>> step_texts_;
};

}  // namespace

void check_step_regex(const std::string& regex) { (void)compile_step_regex(regex); }

Trace read_nsys_sqlite(const std::string& path, const std::string& step_regex) {
  return Reader(path, step_regex).read();
}

}  // namespace ringsim::calibration
