#include "io/interrupt.hpp"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>

namespace ringsim::io {
namespace {

// Each slot owns a malloc'd copy of a path. Whoever exchanges it out (unregister or the handler)
// owns it: the handler never reads a path that unregister could free at the same moment.
std::array<std::atomic<char*>, kMaxTemporaries> g_slots{};
std::atomic<bool> g_installed{false};

void on_signal(int sig) {
  for (auto& slot : g_slots)
    if (char* path = slot.exchange(nullptr)) ::unlink(path);  // unlink is async-signal-safe
  // The default action ends the process as the signal would have (exit status 128 + sig).
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void install_interrupt_cleanup() {
  if (g_installed.exchange(true)) return;
  for (const int sig : {SIGINT, SIGTERM}) {
    struct sigaction old{};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    struct sigaction sa{};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    // Both signals are blocked while one is handled: a TERM during an INT's sweep waits.
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sa.sa_flags = SA_RESTART;
    ::sigaction(sig, &sa, nullptr);
  }
}

int register_temporary(const std::string& path) {
  char* copy = ::strdup(path.c_str());
  if (!copy) return -1;
  for (std::size_t i = 0; i < g_slots.size(); ++i) {
    char* expected = nullptr;
    if (g_slots[i].compare_exchange_strong(expected, copy)) return static_cast<int>(i);
  }
  std::free(copy);
  return -1;
}

void unregister_temporary(int slot) noexcept {
  if (slot < 0 || static_cast<std::size_t>(slot) >= g_slots.size()) return;
  std::free(g_slots[static_cast<std::size_t>(slot)].exchange(nullptr));
}

std::size_t registered_temporaries() noexcept {
  std::size_t n = 0;
  for (const auto& slot : g_slots) n += slot.load() != nullptr;
  return n;
}

}  // namespace ringsim::io
