#pragma once
// Runs a program the way a user's shell would, minus the shell: arguments are passed as they
// are (hostile bytes included), stdout and stderr are captured separately, and a run that
// outlives its time limit is killed with its whole process group and reported as timed out.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <vector>

namespace ringsim::test {

struct ProcessResult {
  int code = -1;            // exit status; -1 when killed by a signal
  int signal = 0;           // the signal that ended it, if any
  bool timed_out = false;
  double seconds = 0;
  std::string out, err;     // the first max_capture bytes of each
  std::size_t out_bytes = 0, err_bytes = 0;  // all bytes written, captured or not
};

inline ProcessResult run_process(const std::vector<std::string>& args, double timeout_s, const std::string& cwd = {},
                                 std::size_t max_capture = std::size_t{16} << 20) {
  ProcessResult r;
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) return r;
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(126);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (pid < 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    return r;
  }
  ::setpgid(pid, pid);  // also from here: no race with the child's own call
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  std::size_t* counts[2] = {&r.out_bytes, &r.err_bytes};
  int open_fds = 2;
  char buf[65536];
  const auto deadline = start + std::chrono::duration<double>(timeout_s);
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    const int ready = ::poll(fds, 2, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const auto n = ::read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      *counts[i] += static_cast<std::size_t>(n);
      if (sinks[i]->size() < max_capture)
        sinks[i]->append(buf, std::min(static_cast<std::size_t>(n), max_capture - sinks[i]->size()));
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) ::close(f.fd);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFEXITED(status)) r.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

// Words of `line` split at spaces (no quoting): the tests' command lines are plain.
inline std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < line.size()) {
    const auto j = line.find(' ', i);
    const auto end = j == std::string::npos ? line.size() : j;
    if (end > i) out.push_back(line.substr(i, end - i));
    i = end + 1;
  }
  return out;
}

}  // namespace ringsim::test
