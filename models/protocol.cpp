#include "models/protocol.hpp"

#include <nlohmann/json.hpp>

#include "models/error.hpp"
#include "models/json_fields.hpp"

namespace ringsim::models {

std::string_view MessageProtocol::name(BackwardMessages b) noexcept {
  switch (b) {
    case BackwardMessages::Concurrent: return "concurrent";
    case BackwardMessages::Ordered: return "ordered";
    case BackwardMessages::Fused: return "fused";
  }
  return "concurrent";
}

MessageProtocol MessageProtocol::from_json(const nlohmann::json* j, const std::string& file) {
  MessageProtocol p;
  if (j == nullptr || j->is_null()) return p;
  if (!j->is_object()) throw InputError(file, 0, "protocol", "expected an object");
  static constexpr const char* kKnown[] = {"backward_messages", "dkv_home_hop", "allgather_heads_stride",
                                           "allgather_separate_kv", "allgather_backward_regather",
                                           "kv_head_replication", "dkv_wire_bytes"};
  for (const auto& [key, value] : j->items()) {
    bool known = false;
    for (const char* k : kKnown) known = known || key == k;
    if (!known)
      throw InputError(file, 0, "protocol." + key,
                       "unknown field (known: backward_messages, dkv_home_hop, allgather_heads_stride, "
                       "allgather_separate_kv, allgather_backward_regather, kv_head_replication, dkv_wire_bytes)");
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
