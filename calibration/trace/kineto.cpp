#include "calibration/trace/kineto.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <ctime>
#include <limits>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "calibration/trace/trace_limits.hpp"
#include "calibration/trace/trace_text.hpp"
#include "models/io/error.hpp"

namespace ringsim::calibration {

using models::InputError;
using nlohmann::json;

namespace {

// The keys of an event, and of its args, that the Reader reads: nothing else of an event is kept
// (a CPU operator's args hold shapes and strides, tens of values each).
constexpr std::array<std::string_view, 7> kEventKeys{"ph", "cat", "name", "ts", "dur", "pid", "tid"};
constexpr std::array<std::string_view, 9> kArgKeys{"device", "stream", "correlation", "External id", "Collective name",
                                                   "In msg nelems", "Out msg nelems", "dtype", "Group size"};

template <std::size_t N>
bool listed(const std::array<std::string_view, N>& keys, std::string_view key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// Bytes per element of the dtype names PyTorch's record_param_comms writes (c10's ScalarType
// names); an unknown name leaves the message size unknown rather than guessed.
double dtype_bytes(std::string_view t) {
  if (t == "Float" || t == "Int" || t == "UInt32" || t == "float" || t == "int") return 4;
  if (t == "Double" || t == "Long" || t == "UInt64" || t == "ComplexFloat") return 8;
  if (t == "Half" || t == "BFloat16" || t == "Short" || t == "UInt16") return 2;
  if (t == "Byte" || t == "Char" || t == "Bool" || t.starts_with("Float8")) return 1;
  return -1;
}

struct CommInfo {
  SharedText collective;
  double bytes = -1;
  std::int64_t group_size = 0;
};

bool step_name(std::string_view name, std::int64_t& number) {
  constexpr std::string_view kPrefix = "ProfilerStep#";
  if (!name.starts_with(kPrefix)) return false;
  const auto digits = name.substr(kPrefix.size());
  if (digits.empty() || digits.size() > 15 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  number = std::stoll(std::string(digits));
  return true;
}

// What the top level of the document says about the job (the events aside).
struct Header {
  bool object = false, has_events = false;
  std::optional<json> rank, world_size, base_time_ns;
  std::string device_name;
};

// Builds the Trace from each event as the parser completes it, then drops the event: the
// document never holds the trace's hundreds of thousands of events at once.
class Reader {
 public:
  Reader(std::string file, std::int64_t max_records) : file_(std::move(file)), max_records_(max_records) { trace_.file = file_; }

  // `e`: the event's keys of kEventKeys (scalars) and `args` with those of kArgKeys; `index`:
  // its place in the events array; `line`: the line it starts on.
  void on_event(const json& e, std::int64_t index, std::int64_t line) {
    index_ = index;
    line_ = line;
    const auto ph = e.find("ph");
    if (ph == e.end() || !ph->is_string()) return;
    const std::string cat = string_or(e, "cat");
    const std::string name = string_or(e, "name");
    const auto args_it = e.find("args");
    static const json kNoArgs = json::object();
    const json& args = (args_it != e.end() && args_it->is_object()) ? *args_it : kNoArgs;
    const bool complete = ph->get_ref<const std::string&>() == "X";

    if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
      if (!complete) return;
      count(trace_.ops.size(), "GPU operations (kernel, gpu_memcpy and gpu_memset events)");
      GpuOp op;
      op.kind = cat == "kernel" ? GpuOp::Kind::Kernel : cat == "gpu_memcpy" ? GpuOp::Kind::Memcpy : GpuOp::Kind::Memset;
      op.name = names_.intern(name);
      op.start_us = time_of(e, "ts");
      op.end_us = op.start_us + duration_of(e);
      op.device = int_or(args, "device", "args.device", int_or(e, "pid", "pid", 0));
      op.stream = int_or(args, "stream", "args.stream", int_or(e, "tid", "tid", 0));
      op.correlation = int_or(args, "correlation", "args.correlation", -1);
      op.external_id = int_or(args, "External id", "args.External id", -1);
      if (auto c = comm_info(args)) {
        op.collective = std::move(c->collective);
        op.message_bytes = c->bytes;
        op.group_size = c->group_size;
      }
      trace_.ops.push_back(std::move(op));
      return;
    }
    if (cat == "cuda_runtime" || cat == "cuda_driver") {
      const std::int64_t corr = int_or(args, "correlation", "args.correlation", -1);
      if (corr >= 0) {
        count(trace_.launch_us.size(), "CPU launches (cuda_runtime and cuda_driver events)");
        trace_.launch_us[corr] = time_of(e, "ts");
      }
      return;
    }
    std::int64_t number = 0;
    if (step_name(name, number) && complete) {
      auto& steps = cat == "gpu_user_annotation" ? trace_.gpu_steps : trace_.cpu_steps;
      count(steps.size(), "ProfilerStep ranges");
      const double t0 = time_of(e, "ts");
      steps.push_back(StepRange{number, t0, t0 + duration_of(e)});
      return;
    }
    if (name == "record_param_comms") {
      if (auto c = comm_info(args)) {
        const std::int64_t ext = int_or(args, "External id", "args.External id", -1);
        if (ext >= 0) {
          count(comms_.size(), "record_param_comms operators");
          comms_[ext] = std::move(*c);
        }
      }
    }
  }

  Trace finish(const Header& h) {
    if (h.object) {
      if (!h.has_events) throw InputError(file_, 0, "traceEvents", "expected a Chrome trace object with a traceEvents array");
      // Ranks and world sizes are small counts; another integer there is a damaged header, not
      // a rank to match against the ring (a string or a fraction: not recorded, as before).
      const auto count_of = [&](const std::optional<json>& v, const char* key, std::int64_t fallback) -> std::int64_t {
        if (!v || !v->is_number_integer()) return fallback;
        if (v->is_number_unsigned() ? v->get<std::uint64_t>() > (std::uint64_t{1} << 31)
                                    : (v->get<std::int64_t>() < -1 || v->get<std::int64_t>() > (std::int64_t{1} << 31)))
          throw InputError(file_, 0, std::string("distributedInfo.") + key, "expected an integer in [-1, 2^31], got " + v->dump());
        return v->get<std::int64_t>();
      };
      trace_.rank = count_of(h.rank, "rank", -1);
      trace_.world_size = std::max<std::int64_t>(0, count_of(h.world_size, "world_size", 0));
      trace_.device_name = h.device_name;
      trace_.date = date_of(h);
    }
    if (trace_.ops.empty())
      throw InputError(file_, 0, "traceEvents",
                       "no GPU operations (kernel, gpu_memcpy or gpu_memset events): record the trace with "
                       "ProfilerActivity.CUDA");
    // Kernels that carry no communication args take them from the record_param_comms operator
    // that launched them (older PyTorch records sizes there only).
    for (GpuOp& op : trace_.ops)
      if (op.collective.empty() && op.external_id >= 0)
        if (const auto it = comms_.find(op.external_id); it != comms_.end()) {
          op.collective = it->second.collective;
          op.message_bytes = it->second.bytes;
          op.group_size = it->second.group_size;
        }
    const auto by_start = [](const StepRange& a, const StepRange& b) { return a.start_us < b.start_us; };
    std::sort(trace_.cpu_steps.begin(), trace_.cpu_steps.end(), by_start);
    std::sort(trace_.gpu_steps.begin(), trace_.gpu_steps.end(), by_start);
    return std::move(trace_);
  }

 private:
  [[nodiscard]] std::string field(std::string_view key) const {
    return "traceEvents[" + std::to_string(index_) + "]." + std::string(key);
  }
  [[noreturn]] void fail(std::string_view key, const std::string& what) const { throw InputError(file_, line_, field(key), what); }

  // Records of one kind kept so far: refused past kMaxTraceRecords, so memory stays bounded
  // whatever the file holds.
  void count(std::size_t kept, const char* what) const {
    if (static_cast<std::int64_t>(kept) >= max_records_)
      throw InputError(file_, line_, "traceEvents",
                       "more than " + std::to_string(max_records_) + " " + what +
                           ", the most ringsim keeps from one trace: profile fewer steps (torch.profiler's schedule)");
  }

  std::optional<CommInfo> comm_info(const json& args) {
    const auto name = args.find("Collective name");
    if (name == args.end() || !name->is_string()) return std::nullopt;
    CommInfo c;
    c.collective = names_.intern(name->get_ref<const std::string&>());
    const auto nelems = args.find("In msg nelems");
    const auto out_nelems = args.find("Out msg nelems");
    const auto dtype = args.find("dtype");
    // The larger of the two sides is what crosses the wire for an all-gather (out) or a
    // reduce-scatter (in); for point-to-point and all-reduce they are equal. Counts past 2^53
    // (no tensor has them) are unknown rather than rounded: a size is exact or absent.
    double elems = -1;
    for (const auto& it : {nelems, out_nelems})
      if (it != args.end() && it->is_number() && it->get<double>() >= 0 && it->get<double>() <= 9e15)
        elems = std::max(elems, it->get<double>());
    if (elems >= 0 && dtype != args.end() && dtype->is_string()) {
      const double b = dtype_bytes(dtype->get_ref<const std::string&>());
      if (b > 0) c.bytes = elems * b;
    }
    c.group_size = int_or(args, "Group size", "args.Group size", 0);
    return c;
  }

  static std::string string_or(const json& o, const char* key) {
    const auto it = o.find(key);
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
  }
  // An integer field (an id, a device): an integer-valued number, else `fallback` when absent or
  // of another type. An integer JSON cannot be held in int64 (2^63 and beyond) is refused: it
  // would wrap into another id.
  std::int64_t int_or(const json& o, const char* key, std::string_view name, std::int64_t fallback) const {
    const auto it = o.find(key);
    if (it == o.end()) return fallback;
    if (it->is_number_unsigned()) {
      if (it->get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        fail(name, "expected an integer below 2^63, got " + std::to_string(it->get<std::uint64_t>()));
      return it->get<std::int64_t>();
    }
    if (it->is_number_integer()) return it->get<std::int64_t>();
    if (it->is_number_float()) {
      const double v = it->get<double>();
      if (std::isfinite(v) && v == std::floor(v) && std::abs(v) < 9e15) return static_cast<std::int64_t>(v);
    }
    return fallback;
  }

  // Microseconds after the first timestamp read. Integer stamps subtract exactly; fractional
  // ones (newer Kineto: nanoseconds as fractions of a microsecond) subtract the same whole base.
  // Both are bounded by kMaxTraceTimeUs, so no subtraction can overflow and every stamp is exact.
  double time_of(const json& e, const char* key) {
    const auto it = e.find(key);
    if (it == e.end() || !it->is_number()) fail(key, "expected a number of microseconds");
    const auto bound = [&] {
      fail(key, "expected a finite number of microseconds of magnitude at most " +
                    std::to_string(static_cast<std::int64_t>(kMaxTraceTimeUs)) + ", got " + it->dump());
    };
    if (it->is_number_unsigned() && it->get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxTraceTimeUs)) bound();
    if (it->is_number_integer()) {
      const auto v = it->get<std::int64_t>();
      if (v > static_cast<std::int64_t>(kMaxTraceTimeUs) || v < -static_cast<std::int64_t>(kMaxTraceTimeUs)) bound();
      if (!base_) base_ = v;
      return static_cast<double>(v - *base_);
    }
    const double v = it->get<double>();
    if (!std::isfinite(v) || std::abs(v) > kMaxTraceTimeUs) bound();
    if (!base_) base_ = static_cast<std::int64_t>(std::floor(v));
    return v - static_cast<double>(*base_);
  }
  double duration_of(const json& e) {
    const auto it = e.find("dur");
    if (it == e.end() || !it->is_number()) fail("dur", "expected a duration in microseconds");
    const double d = it->get<double>();
    if (!std::isfinite(d) || d < 0 || d > kMaxTraceDurationUs)
      fail("dur", "expected a non-negative, finite duration of at most " +
                      std::to_string(static_cast<std::int64_t>(kMaxTraceDurationUs)) + " microseconds, got " + it->dump());
    return d;
  }

  // The day the trace was recorded: newer Kineto counts ts from boot and gives the epoch in
  // baseTimeNanoseconds; older Kineto's ts are epoch microseconds themselves.
  [[nodiscard]] std::string date_of(const Header& h) const {
    if (!base_) return {};
    double epoch_s = -1;
    if (h.base_time_ns && h.base_time_ns->is_number())
      epoch_s = h.base_time_ns->get<double>() * 1e-9 + static_cast<double>(*base_) * 1e-6;
    else if (*base_ > 1'400'000'000'000'000)  // after 2014 in epoch microseconds
      epoch_s = static_cast<double>(*base_) * 1e-6;
    if (!(epoch_s > 0 && epoch_s < 1e11)) return {};
    const auto t = static_cast<std::time_t>(epoch_s);
    std::tm tm{};
    if (!gmtime_r(&t, &tm)) return {};
    char buf[16];
    std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
    return buf;
  }

  std::string file_;
  std::int64_t max_records_;
  Trace trace_;
  TextPool names_;
  std::optional<std::int64_t> base_;
  std::unordered_map<std::int64_t, CommInfo> comms_;
  std::int64_t index_ = 0, line_ = 0;
};

}  // namespace

namespace {

// nlohmann::json's SAX interface, building only what the Reader reads: the current event's
// scalars of kEventKeys and kArgKeys, and the header's rank, world size, first device name and
// base time. Nothing else is built or kept, so each value costs constant work and memory (the
// DOM parser with a callback keeps whatever the callback does not discard, and scans a kept
// array at every element it ends: quadratic time on a 3 MB array of objects under another key).
class EventSax {
 public:
  EventSax(Reader& reader, Header& header, const std::string& file, const TraceStream& in)
      : reader_(reader), header_(header), file_(file), in_(in) {}

  // A value is built only where it is kept (most are not: a CPU operator's shapes, another key's
  // array), and strings are copied, never moved: the parser reuses its buffer for the next token.
  bool null() { return scalar([] { return json(nullptr); }); }
  bool boolean(bool v) { return scalar([v] { return json(v); }); }
  bool number_integer(json::number_integer_t v) { return scalar([v] { return json(v); }); }
  bool number_unsigned(json::number_unsigned_t v) { return scalar([v] { return json(v); }); }
  bool number_float(json::number_float_t v, const json::string_t& /*text*/) { return scalar([v] { return json(v); }); }
  bool string(json::string_t& v) { return scalar([&v] { return json(v); }); }
  bool binary(json::binary_t& /*v*/) { return scalar([] { return json(nullptr); }); }  // not in JSON text
  bool key(json::string_t& k) {
    ++work_;
    stack_.back().key.assign(k);
    return true;
  }
  bool start_object(std::size_t /*n*/) { return open(true); }
  bool start_array(std::size_t /*n*/) { return open(false); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  template <class Exception>
  bool parse_error(std::size_t position, const std::string& /*token*/, const Exception& ex) {
    throw InputError(file_, in_.line_of(position > 0 ? position - 1 : 0), {}, std::string("malformed JSON: ") + ex.what());
  }

  // SAX events handled: each costs constant work (the tests check that it grows as the input).
  [[nodiscard]] std::int64_t work() const noexcept { return work_; }
  // The most JSON values held at once (the event being built).
  [[nodiscard]] std::size_t peak_values() const noexcept { return peak_values_; }

 private:
  enum class Kind { Root, Events, Event, Args, DistributedInfo, DeviceProperties, FirstDevice, Skip };
  struct Frame {
    Kind kind;
    std::string key;            // objects: the key whose value comes next
    std::int64_t elements = 0;  // arrays: elements so far
  };

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw InputError(file_, in_.line_of(in_.position() > 0 ? in_.position() - 1 : 0), field, what);
  }
  [[noreturn]] void not_an_event(const std::string& found) const {
    fail("traceEvents", "expected trace events (JSON objects), found " + found);
  }

  bool open(bool object) {
    ++work_;
    if (stack_.size() >= 64) fail({}, "JSON nested deeper than 64 levels");
    Kind kind = Kind::Skip;
    if (stack_.empty()) {
      kind = object ? Kind::Root : Kind::Events;  // a bare array of events is the format's other form
      header_.object = object;
    } else {
      Frame& parent = stack_.back();
      switch (parent.kind) {
        case Kind::Root:
          if (parent.key == "traceEvents") {
            if (object) fail("traceEvents", "expected an array of trace events, found an object");
            kind = Kind::Events;
            header_.has_events = true;
          } else if (parent.key == "distributedInfo" && object) {
            kind = Kind::DistributedInfo;
          } else if (parent.key == "deviceProperties" && !object) {
            kind = Kind::DeviceProperties;
          }
          break;
        case Kind::Events:
          if (!object) not_an_event("an array");
          kind = Kind::Event;
          event_ = json::object();
          event_index_ = parent.elements;
          event_line_ = in_.line_of(in_.position() > 0 ? in_.position() - 1 : 0);
          break;
        case Kind::Event:
          if (parent.key == "args" && object) kind = Kind::Args;
          break;
        case Kind::DeviceProperties:
          if (parent.elements == 0 && object) kind = Kind::FirstDevice;
          break;
        default: break;
      }
      ++parent.elements;
    }
    stack_.push_back({kind, {}, 0});
    return true;
  }

  bool close() {
    ++work_;
    const Kind kind = stack_.back().kind;
    stack_.pop_back();
    if (kind == Kind::Event) {
      const auto args = event_.find("args");
      peak_values_ = std::max(peak_values_, event_.size() + (args != event_.end() ? args->size() : 0));
      reader_.on_event(event_, event_index_, event_line_);
      event_ = json();
    }
    return true;
  }

  template <class Make>
  bool scalar(const Make& make) {
    ++work_;
    if (stack_.empty())
      fail("traceEvents", "expected a Chrome trace object with a traceEvents array, found a " + std::string(make().type_name()));
    Frame& top = stack_.back();
    ++top.elements;
    switch (top.kind) {
      case Kind::Skip: case Kind::DeviceProperties: break;
      case Kind::Root:
        if (top.key == "traceEvents") fail("traceEvents", "expected an array of trace events, found a " + std::string(make().type_name()));
        if (top.key == "baseTimeNanoseconds") header_.base_time_ns = make();
        break;
      case Kind::Events: not_an_event("a " + std::string(make().type_name()));
      case Kind::Event:
        if (listed(kEventKeys, top.key)) event_[top.key] = make();
        break;
      case Kind::Args:
        if (listed(kArgKeys, top.key)) event_["args"][top.key] = make();
        break;
      case Kind::DistributedInfo:
        if (top.key == "rank") header_.rank = make();
        if (top.key == "world_size") header_.world_size = make();
        break;
      case Kind::FirstDevice:
        if (top.key == "name") {
          const json v = make();
          if (v.is_string()) header_.device_name = v.get<std::string>();
        }
        break;
    }
    return true;
  }

  Reader& reader_;
  Header& header_;
  const std::string& file_;
  const TraceStream& in_;
  std::vector<Frame> stack_;
  json event_;
  std::size_t peak_values_ = 0;
  std::int64_t event_index_ = 0, event_line_ = 0, work_ = 0;
};

Trace parse_events(TraceStream& in, const std::string& file, KinetoParseWork* work, std::int64_t max_records) {
  Reader reader(file, max_records);
  Header header;
  EventSax sax(reader, header, file, in);
  (void)json::sax_parse(in.stream(), &sax);
  if (work) *work = {sax.work(), sax.peak_values()};
  return reader.finish(header);
}

}  // namespace

Trace parse_kineto_trace(const std::string& text, const std::string& file, KinetoParseWork* work, std::int64_t max_records) {
  TraceStream in(text, file);
  return parse_events(in, file, work, max_records);
}

Trace read_kineto_trace(const std::string& path, const TraceProgress& progress) {
  TraceStream in(path, kMaxTraceTextBytes, progress);
  return parse_events(in, path, nullptr, kMaxTraceRecords);
}

}  // namespace ringsim::calibration
