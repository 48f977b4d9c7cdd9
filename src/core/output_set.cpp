// OutputSet (files.hpp): a run's output files written under temporaries and committed
// together.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "errors.hpp"
#include "files.hpp"
#include "mpi_env.hpp"

namespace halo3d {

OutputSet::~OutputSet() {
  if (done_ || comm_rank(comm_) != 0) return;
  for (const Staged& s : staged_) ::unlink(s.tmp.c_str());
}

std::string OutputSet::stage(const std::string& path) {
  Staged s;
  s.path = path;
  s.target = bcast_string(comm_rank(comm_) == 0 ? write_target(path) : std::string(), comm_);
  s.tmp = temp_name(s.target, unique_suffix(comm_));
  staged_.push_back(s);
  return s.tmp;
}

void OutputSet::stage_text(const std::string& path, const std::string& text) {
  const std::string tmp = stage(path);
  std::string why;
  if (comm_rank(comm_) == 0) {
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
      why = std::strerror(errno);
    } else {
      if (!write_all(fd, text)) why = std::strerror(errno);
      if (::close(fd) != 0 && why.empty()) why = std::strerror(errno);
    }
  }
  if (!why.empty())
    why = "cannot write " + path + ": " + why + " (the previous file, if any, is kept)";
  agree_verdict(why.empty() ? 0 : kExitIo, why, comm_);
}

namespace {
// An exclusive flock of each directory (sorted, so two runs cannot deadlock), released when
// the descriptors close; where a file system has no flock, the renames go unlocked.
struct DirLocks {
  std::vector<int> fds;
  explicit DirLocks(std::vector<std::string> dirs) {
    std::sort(dirs.begin(), dirs.end());
    dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
    for (const std::string& d : dirs) {
      const int fd = ::open(d.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0) continue;
      while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
      }
      fds.push_back(fd);
    }
  }
  ~DirLocks() {
    for (const int fd : fds) ::close(fd);
  }
};
}  // namespace

void OutputSet::commit() {
  std::string why;
  if (comm_rank(comm_) == 0) {
    // Data first, for every file: a rename of one then never waits on another's flush.
    for (const Staged& s : staged_)
      if (why.empty()) {
        why = fsync_path(s.tmp);
        if (!why.empty()) why = "cannot write " + s.path + ": " + why;
      }
    std::vector<std::string> dirs;
    for (const Staged& s : staged_) dirs.push_back(parent_dir(s.target));
    DirLocks locks(dirs);
    for (std::size_t i = 0; i < staged_.size() && why.empty(); ++i) {
      bool renamed = false;
      why = durable_rename(staged_[i].tmp, staged_[i].target, renamed, false);
      if (!why.empty())
        why = "cannot write " + staged_[i].path + ": " + why +
              (i == 0 ? " (the previous files, if any, are kept)" : "");
    }
    for (const std::string& d : dirs)
      if (why.empty()) why = fsync_path(d);
  }
  done_ = why.empty();
  agree_verdict(why.empty() ? 0 : kExitIo, why, comm_);
}

}  // namespace halo3d
