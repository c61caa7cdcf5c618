#include "calibration/trace/kineto.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <functional>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "calibration/trace/trace_text.hpp"
#include "models/io/error.hpp"

namespace ringsim::calibration {

using models::InputError;
using nlohmann::json;

namespace {

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
  std::string collective;
  double bytes = -1;
  std::int64_t group_size = 0;
};

std::optional<CommInfo> comm_info(const json& args) {
  const auto name = args.find("Collective name");
  if (name == args.end() || !name->is_string()) return std::nullopt;
  CommInfo c;
  c.collective = name->get<std::string>();
  const auto nelems = args.find("In msg nelems");
  const auto out_nelems = args.find("Out msg nelems");
  const auto dtype = args.find("dtype");
  // The larger of the two sides is what crosses the wire for an all-gather (out) or a
  // reduce-scatter (in); for point-to-point and all-reduce they are equal.
  double elems = -1;
  for (const auto& it : {nelems, out_nelems})
    if (it != args.end() && it->is_number() && it->get<double>() >= 0) elems = std::max(elems, it->get<double>());
  if (elems >= 0 && dtype != args.end() && dtype->is_string()) {
    const double b = dtype_bytes(dtype->get<std::string>());
    if (b > 0) c.bytes = elems * b;
  }
  if (const auto g = args.find("Group size"); g != args.end() && g->is_number_integer()) c.group_size = g->get<std::int64_t>();
  return c;
}

bool step_name(std::string_view name, std::int64_t& number) {
  constexpr std::string_view kPrefix = "ProfilerStep#";
  if (!name.starts_with(kPrefix)) return false;
  const auto digits = name.substr(kPrefix.size());
  if (digits.empty() || digits.size() > 15 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return false;
  number = std::stoll(std::string(digits));
  return true;
}

// Builds the Trace from each event as the parser completes it, then drops the event: the
// document never holds the trace's hundreds of thousands of events at once.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) { trace_.file = file_; }

  bool on_event(const json& e) {
    ++index_;
    const auto ph = e.find("ph");
    if (ph == e.end() || !ph->is_string()) return false;
    const std::string cat = string_or(e, "cat");
    const std::string name = string_or(e, "name");
    const auto args_it = e.find("args");
    static const json kNoArgs = json::object();
    const json& args = (args_it != e.end() && args_it->is_object()) ? *args_it : kNoArgs;

    if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
      if (ph->get<std::string>() != "X") return false;
      GpuOp op;
      op.kind = cat == "kernel" ? GpuOp::Kind::Kernel : cat == "gpu_memcpy" ? GpuOp::Kind::Memcpy : GpuOp::Kind::Memset;
      op.name = name;
      op.start_us = time_of(e, "ts");
      op.end_us = op.start_us + duration_of(e);
      op.device = int_or(args, "device", int_or(e, "pid", 0));
      op.stream = int_or(args, "stream", int_or(e, "tid", 0));
      op.correlation = int_or(args, "correlation", -1);
      op.external_id = int_or(args, "External id", -1);
      if (auto c = comm_info(args)) {
        op.collective = std::move(c->collective);
        op.message_bytes = c->bytes;
        op.group_size = c->group_size;
      }
      trace_.ops.push_back(std::move(op));
      return false;
    }
    if (cat == "cuda_runtime" || cat == "cuda_driver") {
      const std::int64_t corr = int_or(args, "correlation", -1);
      if (corr >= 0) trace_.launch_us[corr] = time_of(e, "ts");
      return false;
    }
    std::int64_t number = 0;
    if (step_name(name, number) && ph->get<std::string>() == "X") {
      const double t0 = time_of(e, "ts");
      StepRange s{number, t0, t0 + duration_of(e)};
      (cat == "gpu_user_annotation" ? trace_.gpu_steps : trace_.cpu_steps).push_back(s);
      return false;
    }
    if (name == "record_param_comms") {
      if (auto c = comm_info(args)) {
        const std::int64_t ext = int_or(args, "External id", -1);
        if (ext >= 0) comms_[ext] = std::move(*c);
      }
    }
    return false;
  }

  Trace finish(const json& doc) {
    if (doc.is_object()) {
      if (!doc.contains("traceEvents") || !doc["traceEvents"].is_array())
        throw InputError(file_, 0, "traceEvents", "expected a Chrome trace object with a traceEvents array");
      if (const auto d = doc.find("distributedInfo"); d != doc.end() && d->is_object()) {
        trace_.rank = int_or(*d, "rank", -1);
        trace_.world_size = int_or(*d, "world_size", 0);
      }
      trace_.date = date_of(doc);
      if (const auto p = doc.find("deviceProperties"); p != doc.end() && p->is_array() && !p->empty() &&
                                                       (*p)[0].is_object())
        trace_.device_name = string_or((*p)[0], "name");
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
    return "traceEvents[" + std::to_string(index_ - 1) + "]." + std::string(key);
  }

  static std::string string_or(const json& o, const char* key) {
    const auto it = o.find(key);
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
  }
  static std::int64_t int_or(const json& o, const char* key, std::int64_t fallback) {
    const auto it = o.find(key);
    if (it == o.end()) return fallback;
    if (it->is_number_integer()) return it->get<std::int64_t>();
    if (it->is_number_float()) {
      const double v = it->get<double>();
      if (std::isfinite(v) && v == std::floor(v) && std::abs(v) < 9e15) return static_cast<std::int64_t>(v);
    }
    return fallback;
  }

  // Microseconds after the first timestamp read. Integer stamps subtract exactly; fractional
  // ones (newer Kineto: nanoseconds as fractions of a microsecond) subtract the same whole base.
  double time_of(const json& e, const char* key) {
    const auto it = e.find(key);
    if (it == e.end() || !it->is_number()) throw InputError(file_, 0, field(key), "expected a number of microseconds");
    if (it->is_number_integer()) {
      const auto v = it->get<std::int64_t>();
      if (!base_) base_ = v;
      return static_cast<double>(v - *base_);
    }
    const double v = it->get<double>();
    if (!std::isfinite(v) || std::abs(v) > 9e15) throw InputError(file_, 0, field(key), "expected a finite number of microseconds");
    if (!base_) base_ = static_cast<std::int64_t>(std::floor(v));
    return v - static_cast<double>(*base_);
  }
  double duration_of(const json& e) {
    const auto it = e.find("dur");
    if (it == e.end() || !it->is_number()) throw InputError(file_, 0, field("dur"), "expected a duration in microseconds");
    const double d = it->get<double>();
    if (!std::isfinite(d) || d < 0 || d > 1e13)
      throw InputError(file_, 0, field("dur"), "expected a non-negative, finite duration in microseconds");
    return d;
  }

  // The day the trace was recorded: newer Kineto counts ts from boot and gives the epoch in
  // baseTimeNanoseconds; older Kineto's ts are epoch microseconds themselves.
  [[nodiscard]] std::string date_of(const json& doc) const {
    if (!base_) return {};
    double epoch_s = -1;
    if (const auto b = doc.find("baseTimeNanoseconds"); b != doc.end() && b->is_number())
      epoch_s = b->get<double>() * 1e-9 + static_cast<double>(*base_) * 1e-6;
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
  Trace trace_;
  std::optional<std::int64_t> base_;
  std::unordered_map<std::int64_t, CommInfo> comms_;
  std::int64_t index_ = 0;
};

}  // namespace

namespace {

// Events are elements of the traceEvents array (depth 2) or of a bare top-level array (the other
// form Chrome's trace format allows); every event is handed to the Reader and dropped.
// `line_of` turns the parser's byte offset into a line for its error message.
template <class Input>
Trace parse_events(Input&& input, const std::string& file, const std::function<std::int64_t(std::uint64_t)>& line_of,
                   const std::function<void()>& rethrow_stream_error) {
  Reader reader(file);
  // Other top-level arrays (deviceProperties) hold objects at the same depth: only the
  // elements under the traceEvents key are events.
  int events_depth = -1;
  bool in_events = false;
  const auto cb = [&](int depth, json::parse_event_t event, json& parsed) {
    using E = json::parse_event_t;
    if (depth > 64) throw InputError(file, 0, {}, "JSON nested deeper than 64 levels");
    if (depth == 0 && event == E::array_start) events_depth = 1, in_events = true;
    if (depth == 0 && event == E::object_start) events_depth = 2;
    if (depth == 1 && event == E::key && events_depth == 2) in_events = parsed == "traceEvents";
    if (event == E::object_end && depth == events_depth && in_events) return reader.on_event(parsed);
    // Anything else in the events array (a number, a string, an array) is not a trace event: the
    // file is refused at the first one, not after reading gigabytes of something else.
    if ((event == E::value || event == E::array_start) && depth == events_depth && in_events)
      throw InputError(file, 0, "traceEvents", "expected trace events (JSON objects), found " +
                                                   std::string(event == E::array_start ? "an array" : std::string("a ") + parsed.type_name()));
    return true;
  };
  json doc;
  try {
    doc = json::parse(std::forward<Input>(input), cb);
  } catch (const json::parse_error& e) {
    rethrow_stream_error();  // a damaged gzip stream ends the text early: say that, not "malformed"
    throw InputError(file, line_of(e.byte > 0 ? e.byte - 1 : 0), {}, "malformed JSON: " + std::string(e.what()));
  } catch (const json::exception& e) {
    rethrow_stream_error();
    throw InputError(file, 0, {}, "malformed JSON: " + std::string(e.what()));
  }
  rethrow_stream_error();
  if (!doc.is_object() && !doc.is_array())
    throw InputError(file, 0, "traceEvents", "expected a Chrome trace object with a traceEvents array");
  return reader.finish(doc);
}

}  // namespace

Trace parse_kineto_trace(const std::string& text, const std::string& file) {
  const auto line_of = [&](std::uint64_t offset) -> std::int64_t {
    const auto upto = std::min<std::uint64_t>(offset, text.size());
    return 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(upto), '\n');
  };
  return parse_events(text, file, line_of, [] {});
}

Trace read_kineto_trace(const std::string& path, const TraceProgress& progress) {
  TraceStream in(path, kMaxTraceTextBytes, progress);
  return parse_events(in.stream(), path, [&](std::uint64_t offset) { return in.line_of(offset); },
                      [&] { in.rethrow_if_failed(); });
}

}  // namespace ringsim::calibration
