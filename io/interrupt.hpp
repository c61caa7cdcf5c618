#pragma once
// Temporaries removed when a run is interrupted. AtomicFile (io/output_file.hpp) writes every
// output to a hidden temporary beside its target; its destructor removes it on every failure
// path, but SIGINT (Ctrl-C) and SIGTERM (a scheduler's kill) end the process without running
// destructors. A front-end that calls install_interrupt_cleanup() gets handlers that unlink every
// registered temporary and then end the process by the same signal, so the shell still sees
// 130 or 143 and a caller's loop stops. SIGKILL cannot be caught: its temporaries stay.
//
// The registry is the one piece of global mutable state in the library: a signal handler can
// reach nothing else. It is a fixed table of atomic pointers, so registering, unregistering and
// the handler's sweep are async-signal-safe and lock-free; a temporary registered while the table
// is full (more than kMaxTemporaries outputs open at once) is still removed by its destructor,
// just not on a signal.
#include <cstddef>
#include <string>

namespace ringsim::io {

// A set of outputs holds a temporary per file until it is committed (io/output_set.hpp): trace
// synthesize writes up to about 2000 rank files at once.
inline constexpr std::size_t kMaxTemporaries = 4096;

// Handlers for SIGINT and SIGTERM (once per process; later calls do nothing). A signal that was
// ignored when the process started (nohup, a background job's SIGINT) stays ignored.
void install_interrupt_cleanup();

// Registers `path` for removal on a signal; returns a slot for unregister_temporary, or -1 when
// the table is full. The path is copied.
[[nodiscard]] int register_temporary(const std::string& path);
// Forgets the slot (after the temporary was renamed or removed); -1 is ignored.
void unregister_temporary(int slot) noexcept;
// Temporaries registered now (for tests).
[[nodiscard]] std::size_t registered_temporaries() noexcept;

}  // namespace ringsim::io
