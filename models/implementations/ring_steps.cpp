#include "models/implementations/ring_steps.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <nlohmann/json.hpp>

#include "models/io/error.hpp"
#include "models/io/json_fields.hpp"

namespace ringsim::models {

namespace {

std::int64_t parse_count(std::string_view s, const std::string& file, const std::string& field, std::string_view whole) {
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty() || v < 0 || v > 1000000)
    throw InputError(file, 0, field, "expected a length c[/K][+-J], got '" + std::string(whole) + "'");
  return v;
}

MemoryOp memory_op_from(const nlohmann::json& j, const std::string& file, const std::string& at) {
  if (!j.is_object()) throw InputError(file, 0, at, "expected an object");
  JsonFields f(j, file);
  MemoryOp op;
  auto num = [&](const char* key, double hi) {
    std::optional<double> v;
    try {
      v = f.optional_number(key);
    } catch (const InputError& e) {
      throw InputError(file, 0, at + "." + key, e.message());
    }
    if (!v) return 0.0;
    if (!(*v >= 0 && *v <= hi)) throw InputError(file, 0, at + "." + key, "expected a value in [0, " + std::to_string(hi) + "]");
    return *v;
  };
  op.q_bytes_per_element = num("q_bytes_per_element", 1024);
  op.kv_bytes_per_element = num("kv_bytes_per_element", 1024);
  op.host_ops = num("host_ops", 10000);
  try {
    op.what = f.string("what");
  } catch (const InputError& e) {
    throw InputError(file, 0, at + ".what", "say what the code does here (" + e.message() + ")");
  }
  if (j.contains("from_rank") || j.contains("from_rank_op")) {
    const double r = num("from_rank", 1e6);
    if (r != static_cast<double>(static_cast<std::int64_t>(r)))
      throw InputError(file, 0, at + ".from_rank", "expected an integer");
    op.from_rank = static_cast<std::int64_t>(r);
    const auto it = j.find("from_rank_op");
    if (it == j.end() || !it->is_string() || it->get<std::string>().empty())
      throw InputError(file, 0, at + ".from_rank_op", "expected the name of the memory op ranks from from_rank run");
    op.from_rank_op = it->get<std::string>();
  }
  return op;
}

const char* kClassNames[] = {"diagonal", "below", "above"};

}  // namespace

LengthExpr LengthExpr::parse(std::string_view text, const std::string& file, const std::string& field) {
  LengthExpr e;
  e.text = std::string(text);
  std::string s;
  for (const char ch : text)
    if (!std::isspace(static_cast<unsigned char>(ch))) s += ch;
  if (s.empty() || s[0] != 'c')
    throw InputError(file, 0, field, "expected a length c[/K][+-J], got '" + std::string(text) + "'");
  std::string_view rest = std::string_view(s).substr(1);
  if (!rest.empty() && rest[0] == '/') {
    const auto end = rest.find_first_of("+-");
    e.div = parse_count(rest.substr(1, end == std::string_view::npos ? std::string_view::npos : end - 1), file, field, text);
    if (e.div < 1) throw InputError(file, 0, field, "a length's divisor must be at least 1");
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
  }
  if (!rest.empty()) {
    const bool minus = rest[0] == '-';
    if (rest[0] != '+' && !minus)
      throw InputError(file, 0, field, "expected a length c[/K][+-J], got '" + std::string(text) + "'");
    const std::int64_t v = parse_count(rest.substr(1), file, field, text);
    e.add = minus ? -v : v;
  }
  return e;
}

StepClass step_class(std::int64_t q_device, std::int64_t k_device) noexcept {
  if (q_device == k_device) return StepClass::Diagonal;
  return k_device < q_device ? StepClass::Below : StepClass::Above;
}

std::string_view to_string(StepClass c) noexcept { return kClassNames[static_cast<std::size_t>(c)]; }

const StepCalls* RingSteps::plan(std::string_view mask_family, std::string_view layout_family) const {
  const auto m = steps.find(mask_family);
  if (m == steps.end()) return nullptr;
  const auto l = m->second.find(layout_family);
  return l == m->second.end() ? nullptr : &l->second;
}

const MemoryOp& RingSteps::memory_op(const std::string& op_name) const {
  static const MemoryOp none;
  if (op_name.empty()) return none;
  return memory_ops.find(op_name)->second;  // from_json checked every reference
}

const MemoryOp& RingSteps::memory_op(const std::string& op_name, std::int64_t q_device) const {
  const MemoryOp& op = memory_op(op_name);
  return op.from_rank >= 0 && q_device >= op.from_rank ? memory_op(op.from_rank_op) : op;
}

std::int64_t RingSteps::rank_rule_from(const StepCalls& plan, StepClass cls) const {
  std::int64_t from = -1;
  for (const StepCall& c : plan.of(cls))
    for (const std::string* m : {&c.fwd_merge, &c.bwd_merge})
      if (const auto r = memory_op(*m).from_rank; r >= 0) from = from < 0 ? r : std::min(from, r);
  return from;
}

bool RingSteps::runs(std::string_view mask_family, std::string_view layout_family) const {
  if (plan(mask_family, layout_family)) return true;
  const auto v = varlen.find(mask_family);
  return v != varlen.end() && std::find(v->second.begin(), v->second.end(), layout_family) != v->second.end();
}

std::string RingSteps::offered() const {
  std::string s;
  for (const auto& [mask, layouts] : steps) {
    s += (s.empty() ? "" : "; ") + mask + ":";
    bool first = true;
    for (const auto& [layout, plan] : layouts) {
      s += (first ? " " : ", ") + layout;
      first = false;
    }
  }
  for (const auto& [mask, layouts] : varlen) {
    s += (s.empty() ? "" : "; ") + mask + " (varlen):";
    for (std::size_t i = 0; i < layouts.size(); ++i) s += (i ? ", " : " ") + layouts[i];
  }
  return s;
}

RingSteps RingSteps::load_file(const std::string& path) { return from_json(read_json_file(path), path); }

RingSteps RingSteps::from_json(const nlohmann::json& j, const std::string& file) {
  if (!j.is_object()) throw InputError(file, 0, "", "expected a JSON object describing a ring library's steps");
  RingSteps p;
  JsonFields top(j, file);
  try {
    p.name = top.string("name");
    p.description = top.string("description");
  } catch (const InputError& e) {
    throw InputError(file, 0, e.field(), e.message());
  }
  p.sources = code_sources_from_json(top.find("sources"), file, "a ring library's steps");
  if (j.contains("memory_ops")) {
    const auto& ops = j["memory_ops"];
    if (!ops.is_object()) throw InputError(file, 0, "memory_ops", "expected an object of named operations");
    for (const auto& [name, op] : ops.items()) p.memory_ops[name] = memory_op_from(op, file, "memory_ops." + name);
    for (const auto& [op_name, op] : p.memory_ops) {
      if (op.from_rank < 0) continue;
      const std::string field = "memory_ops." + op_name + ".from_rank_op";
      const auto to = p.memory_ops.find(op.from_rank_op);
      if (to == p.memory_ops.end())
        throw InputError(file, 0, field, "names memory op '" + op.from_rank_op + "', which memory_ops lacks");
      if (to->second.from_rank >= 0)
        throw InputError(file, 0, field, "names '" + op.from_rank_op + "', which has a from_rank rule of its own");
    }
  }
  if (j.contains("fwd_final")) p.fwd_final = memory_op_from(j["fwd_final"], file, "fwd_final");
  if (j.contains("bwd_final")) p.bwd_final = memory_op_from(j["bwd_final"], file, "bwd_final");
  for (const auto& [final_op, field] : {std::pair{&p.fwd_final, "fwd_final"}, std::pair{&p.bwd_final, "bwd_final"}})
    if (final_op->from_rank >= 0)
      throw InputError(file, 0, std::string(field) + ".from_rank", "a pass's final conversion has no rank rule");
  if (j.contains("varlen")) {
    const auto& v = j["varlen"];
    if (!v.is_object()) throw InputError(file, 0, "varlen", "expected {mask family: [layout families]}");
    for (const auto& [mask, layouts] : v.items()) {
      if (!layouts.is_array() || layouts.empty())
        throw InputError(file, 0, "varlen." + mask, "expected a non-empty array of layout families");
      for (const auto& l : layouts) {
        if (!l.is_string()) throw InputError(file, 0, "varlen." + mask, "expected layout family names");
        p.varlen[mask].push_back(l.get<std::string>());
      }
    }
  }
  if (!j.contains("steps") || !j["steps"].is_object() || j["steps"].empty())
    throw InputError(file, 0, "steps", "expected {mask family: {layout family: {diagonal, below, above}}}");
  for (const auto& [mask, layouts] : j["steps"].items()) {
    const std::string at_mask = "steps." + mask;
    if (!layouts.is_object() || layouts.empty())
      throw InputError(file, 0, at_mask, "expected {layout family: {diagonal, below, above}}");
    for (const auto& [layout, classes] : layouts.items()) {
      const std::string at_layout = at_mask + "." + layout;
      if (!classes.is_object()) throw InputError(file, 0, at_layout, "expected {diagonal, below, above}");
      StepCalls plan;
      for (auto [key, ops] : {std::pair{"fwd_host_ops", &plan.fwd_host_ops}, std::pair{"bwd_host_ops", &plan.bwd_host_ops}}) {
        const auto it = classes.find(key);
        if (it == classes.end()) continue;
        if (!it->is_number() || !(it->get<double>() >= 0 && it->get<double>() <= 10000))
          throw InputError(file, 0, at_layout + "." + key, "expected a count of host operations in [0, 10000]");
        *ops = it->get<double>();
      }
      for (std::size_t c = 0; c < 3; ++c) {
        const std::string at_class = at_layout + "." + kClassNames[c];
        if (!classes.contains(kClassNames[c]) || !classes[kClassNames[c]].is_array())
          throw InputError(file, 0, at_class, "expected an array of kernel calls (empty: the step computes nothing)");
        const auto& calls = classes[kClassNames[c]];
        for (std::size_t i = 0; i < calls.size(); ++i) {
          const std::string at_call = at_class + "[" + std::to_string(i) + "]";
          JsonFields cf(calls[i], file);
          auto str = [&](const char* key) {
            try {
              return cf.string(key);
            } catch (const InputError& e) {
              throw InputError(file, 0, at_call + "." + key, e.message());
            }
          };
          StepCall call;
          call.q = LengthExpr::parse(str("q"), file, at_call + ".q");
          call.k = LengthExpr::parse(str("k"), file, at_call + ".k");
          const auto* causal = cf.find("causal");
          if (!causal || !causal->is_boolean()) throw InputError(file, 0, at_call + ".causal", "expected true or false");
          call.causal = causal->get<bool>();
          if (const auto* kernel = cf.find("kernel")) {
            if (!kernel->is_boolean()) throw InputError(file, 0, at_call + ".kernel", "expected true or false");
            call.kernel = kernel->get<bool>();
          }
          call.fwd_merge = cf.string_or("fwd_merge", "");
          call.bwd_merge = cf.string_or("bwd_merge", "");
          for (const auto* m : {&call.fwd_merge, &call.bwd_merge})
            if (!m->empty() && !p.memory_ops.count(*m))
              throw InputError(file, 0, at_call, "names memory op '" + *m + "', which memory_ops lacks");
          plan.calls[c].push_back(std::move(call));
        }
      }
      p.steps[mask][layout] = std::move(plan);
    }
  }
  return p;
}

}  // namespace ringsim::models
