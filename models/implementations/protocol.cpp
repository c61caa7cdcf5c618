#include "models/implementations/protocol.hpp"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "models/io/error.hpp"
#include "models/io/json_fields.hpp"

namespace ringsim::models {

std::string_view Protocol::name(BackwardMessages b) noexcept {
  switch (b) {
    case BackwardMessages::Concurrent: return "concurrent";
    case BackwardMessages::Ordered: return "ordered";
    case BackwardMessages::Fused: return "fused";
  }
  return "concurrent";
}

Protocol Protocol::from_json(const nlohmann::json* j, const std::string& file, const std::string& ring_steps_dir) {
  Protocol p;
  if (j == nullptr || j->is_null()) return p;
  if (!j->is_object()) throw InputError(file, 0, "protocol", "expected an object");
  static constexpr const char* kMessageKeys[] = {"backward_messages", "dkv_home_hop", "allgather_heads_stride",
                                                 "allgather_separate_kv", "allgather_backward_regather",
                                                 "kv_head_replication", "dkv_wire_bytes", "ring_steps"};
  for (const auto& [key, value] : j->items()) {
    bool known = false;
    for (const char* k : kMessageKeys) known = known || key == k;
    if (!known) {
      std::string list;
      for (const char* k : kMessageKeys) list += (list.empty() ? "" : ", ") + std::string(k);
      throw InputError(file, 0, "protocol." + key, "unknown field (known: " + list + ")");
    }
  }
  if (const auto it = j->find("ring_steps"); it != j->end()) {
    if (!it->is_string() || it->get<std::string>().empty())
      throw InputError(file, 0, "protocol.ring_steps", "expected the name of a file of configs/ring_steps/");
    const auto path = (std::filesystem::path(ring_steps_dir) / (it->get<std::string>() + ".json")).string();
    if (!std::filesystem::exists(path))
      throw InputError(file, 0, "protocol.ring_steps", "no ring steps '" + it->get<std::string>() + "' (looked for " + path + ")");
    p.ring_steps = RingSteps::load_file(path);
  }
  const JsonFields f(*j, file);
  auto located = [&](const char* key, auto&& read) {
    try {
      read();
    } catch (const InputError& e) {
      throw InputError(file, 0, std::string("protocol.") + key, e.message());
    }
  };
  if (f.find("backward_messages")) {
    located("backward_messages", [&] {
      const auto v = f.string("backward_messages");
      if (v == "concurrent")
        p.backward = BackwardMessages::Concurrent;
      else if (v == "ordered")
        p.backward = BackwardMessages::Ordered;
      else if (v == "fused")
        p.backward = BackwardMessages::Fused;
      else
        throw InputError(file, 0, "backward_messages", "expected concurrent, ordered or fused, got '" + v + "'");
    });
  }
  located("dkv_home_hop", [&] { p.dkv_home_hop = f.boolean_or("dkv_home_hop", p.dkv_home_hop); });
  located("allgather_separate_kv",
          [&] { p.allgather_separate_kv = f.boolean_or("allgather_separate_kv", p.allgather_separate_kv); });
  located("allgather_backward_regather", [&] {
    p.allgather_backward_regather = f.boolean_or("allgather_backward_regather", p.allgather_backward_regather);
  });
  located("kv_head_replication",
          [&] { p.kv_head_replication = f.boolean_or("kv_head_replication", p.kv_head_replication); });
  if (const auto v = f.optional_number("allgather_heads_stride")) {
    if (*v < 0 || *v > 4096 || *v != static_cast<double>(static_cast<std::int64_t>(*v)))
      throw InputError(file, 0, "protocol.allgather_heads_stride", "expected an integer in [0, 4096]");
    p.allgather_heads_stride = static_cast<std::int64_t>(*v);
  }
  if (const auto v = f.optional_number("dkv_wire_bytes")) {
    if (*v != 0 && *v != 1 && *v != 2 && *v != 4 && *v != 8)
      throw InputError(file, 0, "protocol.dkv_wire_bytes", "expected 1, 2, 4 or 8 bytes (0: the profile's)");
    p.dkv_wire_bytes = static_cast<std::int64_t>(*v);
  }
  return p;
}

}  // namespace ringsim::models
