#include "files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "errors.hpp"
#include "mpi_env.hpp"

namespace halo3d {
std::string bcast_string(std::string s, MPI_Comm comm);

void agree_verdict(int code, const std::string& why, MPI_Comm comm) {
  HALO3D_MPI_CHECK(MPI_Bcast(&code, 1, MPI_INT, 0, comm));
  const std::string msg = bcast_string(why, comm);
  if (code == kExitBadInput) throw BadInput(msg);
  if (code != 0) throw IoError(msg);
}

bool write_all(int fd, const std::string& text) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    left -= std::size_t(n);
  }
  return true;
}

namespace {

std::string errno_text(int e) { return std::strerror(e); }

const char* kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISLNK(m)) return "a symbolic link";
  return "not a regular file";
}

std::string real_path(const std::string& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) ? std::string(buf) : std::string();
}

// The file `p` names, however spelled: its canonical path (for a file that does not exist
// yet, its directory's canonical path and its name).
std::string canonical_name(const std::string& p) {
  std::string r = real_path(p);
  if (!r.empty()) return r;
  const auto slash = p.find_last_of('/');
  const std::string base = slash == std::string::npos ? p : p.substr(slash + 1);
  r = real_path(parent_dir(p));
  if (r.empty()) return p;  // the directory is missing: the writability check says so
  return (r == "/" ? "" : r) + "/" + base;
}

}  // namespace

std::string bcast_string(std::string s, MPI_Comm comm) {
  unsigned long long n = s.size();
  HALO3D_MPI_CHECK(MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, comm));
  s.resize(n);
  if (n) HALO3D_MPI_CHECK(MPI_Bcast(s.data(), int(n), MPI_CHAR, 0, comm));
  return s;
}

namespace {

// Rank 0's look at an input: 0 and an open descriptor, or an exit code and why not.
int open_input(const std::string& what, const std::string& path, int missing_code, int& fd,
               std::string& why) {
  fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    why = what + ": cannot open the file (" + errno_text(errno) + ")";
    return missing_code;
  }
  struct stat st {};
  const bool stat_ok = ::fstat(fd, &st) == 0;
  if (stat_ok && S_ISREG(st.st_mode)) return 0;
  why = what + ": not a regular file (" + (stat_ok ? kind_of(st.st_mode) : "cannot stat it") +
        "); inputs must be regular files";
  ::close(fd);
  fd = -1;
  return kExitBadInput;
}

// Reads all of `fd` (at most max bytes) into `text`; an exit code and why not on failure.
int read_input(const std::string& what, int fd, std::size_t max, std::string& text,
               std::string& why) {
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) return 0;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      why = what + ": cannot read the file (" + errno_text(errno) + ")";
      return kExitIo;
    }
    text.append(buf, std::size_t(n));
    if (text.size() > max) {
      why = what + ": larger than " + std::to_string(max) + " bytes";
      return kExitBadInput;
    }
  }
}

}  // namespace

void check_input_file(const std::string& what, const std::string& path, MPI_Comm comm,
                      int missing_code) {
  int code = 0;
  std::string why;
  if (comm_rank(comm) == 0) {
    int fd = -1;
    code = open_input(what, path, missing_code, fd, why);
    if (fd >= 0) ::close(fd);
  }
  agree_verdict(code, why, comm);
}

std::string read_input_file(const std::string& what, const std::string& path, MPI_Comm comm,
                            std::size_t max_bytes, int missing_code) {
  int code = 0;
  std::string why, text;
  if (comm == MPI_COMM_NULL || comm_rank(comm) == 0) {
    int fd = -1;
    code = open_input(what, path, missing_code, fd, why);
    if (fd >= 0) {
      code = read_input(what, fd, max_bytes, text, why);
      ::close(fd);
    }
  }
  if (comm == MPI_COMM_NULL) {
    if (code == kExitBadInput) throw BadInput(why);
    if (code != 0) throw IoError(why);
    return text;
  }
  agree_verdict(code, why, comm);
  return bcast_string(text, comm);
}

std::string first_error(const std::string& why, MPI_Comm comm) {
  const int size = comm_size(comm);
  int first = why.empty() ? size : comm_rank(comm);
  HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm));
  if (first == size) return std::string();
  unsigned long long n = why.size();
  HALO3D_MPI_CHECK(MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, first, comm));
  std::string s = why;
  s.resize(n);
  HALO3D_MPI_CHECK(MPI_Bcast(s.data(), int(n), MPI_CHAR, first, comm));
  return s;
}

namespace {
// This host's name as temporaries carry it ('/' and '.' made '_').
std::string suffix_host() {
  char host[64] = {};
  if (::gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "host");
  for (char* c = host; *c; ++c)
    if (*c == '/' || *c == '.') *c = '_';
  return host;
}
}  // namespace

std::string local_unique_suffix() {
  static unsigned long counter = 0;
  const std::string host = suffix_host();
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s-%ld-%llx-%lu", host.c_str(), long(::getpid()),
                (unsigned long long)ns, ++counter);
  return buf;
}

std::string unique_suffix(MPI_Comm comm) {
  return bcast_string(comm_rank(comm) == 0 ? local_unique_suffix() : std::string(), comm);
}

std::string write_target(const std::string& path) {
  struct stat ls;
  if (::lstat(path.c_str(), &ls) == 0 && S_ISLNK(ls.st_mode)) {
    const std::string r = real_path(path);
    if (!r.empty()) return r;
  }
  return path;
}

std::string temp_name(const std::string& target, const std::string& suffix) {
  // The temporary's name must fit NAME_MAX (255 bytes) with the suffix: a long target name
  // (a legal 243-character one) is shortened in the temporary only; the suffix keeps it unique.
  const auto slash = target.find_last_of('/');
  const std::size_t base = slash == std::string::npos ? 0 : slash + 1;
  const std::string tail = ".partial." + suffix;
  std::string name = target.substr(base);
  if (name.size() + tail.size() > 255) name.resize(tail.size() < 255 ? 255 - tail.size() : 0);
  return target.substr(0, base) + name + tail;
}

std::string fsync_path(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "cannot open " + path + " to flush it: " + errno_text(errno);
  std::string why;
  if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS)
    why = "cannot flush " + path + ": " + errno_text(errno);
  ::close(fd);
  return why;
}

std::string parent_dir(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}

std::string fsync_parent(const std::string& path) { return fsync_path(parent_dir(path)); }

std::string durable_rename(const std::string& tmp, const std::string& target, bool& renamed,
                           bool durable) {
  renamed = false;
  if (durable) {
    const std::string why = fsync_path(tmp);
    if (!why.empty()) return why;
  }
  if (std::rename(tmp.c_str(), target.c_str()) != 0)
    return "cannot rename the temporary file into place: " + errno_text(errno);
  renamed = true;
  if (!durable) return std::string();
  const std::string why = fsync_parent(target);
  return why.empty() ? why : "renamed into place, but " + why;
}

void write_file_atomically_local(const std::string& path, const std::string& text) {
  const std::string target = write_target(path);
  const std::string tmp = temp_name(target, local_unique_suffix());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) throw IoError("cannot write " + path + ": " + errno_text(errno), false);
  std::string why;
  if (!write_all(fd, text)) why = errno_text(errno);
  if (::close(fd) != 0 && why.empty()) why = errno_text(errno);
  bool renamed = false;
  if (why.empty()) why = durable_rename(tmp, target, renamed);
  if (!why.empty()) {
    if (!renamed) ::unlink(tmp.c_str());
    throw IoError("cannot write " + path + ": " + why +
                      (renamed ? "" : " (the previous file, if any, is kept)"),
                  false);
  }
}

void write_file_atomically(const std::string& path, const std::string& text, MPI_Comm comm) {
  int code = 0;
  std::string why;
  if (comm_rank(comm) == 0) {
    try {
      write_file_atomically_local(path, text);
    } catch (const Error& e) {
      code = e.code();
      why = e.what();
    }
  }
  agree_verdict(code, why, comm);
}

namespace {

// The checks of check_planned_files, each on rank 0 and only while `code` is 0 (fine); the
// first failure sets `code` (the exit code) and `why`.

// What each path is: nothing yet, a regular file, or a link to one; nothing else.
void check_kinds(const std::vector<PlannedFile>& files, int& code, std::string& why) {
  for (const PlannedFile& f : files) {
    if (code) break;
    const std::string head = f.option + " " + f.path + ": ";
    struct stat ls, s;
    if (::lstat(f.path.c_str(), &ls) != 0) {
      if (errno != ENOENT)
        code = kExitIo, why = "cannot write " + f.path + ": " + errno_text(errno);
      continue;
    }
    if (S_ISLNK(ls.st_mode)) {
      if (::stat(f.path.c_str(), &s) != 0)
        code = kExitBadInput, why = head + "is a symbolic link to a missing file (" +
                                    errno_text(errno) + "); give a regular file or a link to one";
      else if (!S_ISREG(s.st_mode))
        code = kExitBadInput, why = head + "is a symbolic link to " + kind_of(s.st_mode) +
                                    ", not to a regular file; refusing to write there";
    } else if (!S_ISREG(ls.st_mode)) {
      code = kExitBadInput,
      why = head + "is " + kind_of(ls.st_mode) + ", not a regular file; refusing to replace it";
    }
    // Write-protected (no write bit for anyone, e.g. 0444): kept, even where root could
    // replace it.
    if (!code && ::stat(f.path.c_str(), &s) == 0 && S_ISREG(s.st_mode) &&
        (s.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0)
      code = kExitIo, why = "cannot write " + f.path +
                            ": the file is write-protected (no write permission); refusing to "
                            "replace it";
  }
}

// Whether two paths name one file, however spelled (also through links and hard links).
bool same_file(const std::string& a, const std::string& b) {
  if (canonical_name(a) == canonical_name(b)) return true;
  struct stat sa, sb;
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

// No output is an input, but for a checkpoint that continues its own restart file.
void check_not_inputs(const std::vector<PlannedFile>& files, const std::vector<PlannedFile>& inputs,
                      int& code, std::string& why) {
  for (const PlannedFile& f : files)
    for (const PlannedFile& in : inputs) {
      if (code) return;
      if (f.option == "--checkpoint" && in.option == "--restart") continue;
      if (same_file(f.path, in.path))
        code = kExitBadInput, why = f.option + " " + f.path + " is the input of " + in.option +
                                    " " + in.path +
                                    "; writing it would destroy the input: give another file";
    }
}

// No two of them one file, however spelled (also through links and hard links).
void check_distinct(const std::vector<PlannedFile>& files, int& code, std::string& why) {
  for (std::size_t a = 0; a < files.size() && !code; ++a)
    for (std::size_t b = a + 1; b < files.size() && !code; ++b) {
      const PlannedFile &fa = files[a], &fb = files[b];
      if (same_file(fa.path, fb.path))
        code = kExitBadInput, why = fa.option + " " + fa.path + " and " + fb.option + " " +
                                    fb.path + " are the same file; give different files";
    }
}

// Each can be created where it will be written.
void check_writable(const std::vector<PlannedFile>& files, int& code, std::string& why) {
  for (const PlannedFile& f : files) {
    if (code) break;
    const std::string tmp = temp_name(write_target(f.path), local_unique_suffix());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
      code = kExitIo, why = "cannot write " + f.path + ": " + errno_text(errno);
    } else {
      ::close(fd);
      ::unlink(tmp.c_str());
    }
  }
}

}  // namespace

void check_planned_files(const std::vector<PlannedFile>& files, MPI_Comm comm,
                         const std::vector<PlannedFile>& inputs) {
  int code = 0;
  std::string why;
  if (comm_rank(comm) == 0) {
    check_kinds(files, code, why);
    check_distinct(files, code, why);
    check_not_inputs(files, inputs, code, why);
    check_writable(files, code, why);
  }
  agree_verdict(code, why, comm);
}

namespace {

// The host and pid of a temporary's suffix (HOST-PID-CLOCK-N, local_unique_suffix); false
// for a name of another form.
bool parse_suffix(const std::string& suffix, std::string& host, long& pid) {
  std::size_t end = suffix.size();
  std::string field[3];  // N, CLOCK, PID, from the right
  for (std::string& f : field) {
    if (end == 0) return false;
    const auto dash = suffix.rfind('-', end - 1);
    if (dash == std::string::npos || dash + 1 >= end) return false;
    f = suffix.substr(dash + 1, end - dash - 1);
    end = dash;
  }
  const auto all = [](const std::string& f, const char* digits) {
    return f.find_first_not_of(digits) == std::string::npos;
  };
  if (end == 0 || !all(field[0], "0123456789") || !all(field[1], "0123456789abcdef") ||
      !all(field[2], "0123456789") || field[2].size() > 9)
    return false;
  host = suffix.substr(0, end);
  pid = std::stol(field[2]);
  return pid > 0;
}

// One temporary `name` in `dir`, of a write of a file of this run: removed when the process
// that made it, on this host, is gone; else a line naming it.
void clean_one(const std::string& dir, const std::string& name, const std::string& suffix,
               const std::string& keep, std::string& lines) {
  std::string host;
  long pid = 0;
  if (!parse_suffix(suffix, host, pid) || pid == long(::getpid())) return;
  const std::string path = dir == "." ? name : (dir == "/" ? "/" : dir + "/") + name;
  struct stat a, b;
  if (!keep.empty() && ::stat(path.c_str(), &a) == 0 && ::stat(keep.c_str(), &b) == 0 &&
      a.st_dev == b.st_dev && a.st_ino == b.st_ino)
    return;  // the file this run restarts from, however it is named
  if (host == suffix_host() && ::kill(pid_t(pid), 0) != 0 && errno == ESRCH) {
    if (::unlink(path.c_str()) == 0)
      lines += "halo3d: removed " + path + ", the temporary of a write cut off (its process " +
               std::to_string(pid) + " on this host is gone)\n";
    else
      lines += "halo3d: warning: cannot remove " + path +
               ", the temporary of a dead run: " + errno_text(errno) + "\n";
    return;
  }
  lines += "halo3d: warning: " + path + " is the temporary of another run (process " +
           std::to_string(pid) + " on " + (host == suffix_host() ? "this host" : "host " + host) +
           "); remove it if no run is writing it\n";
}

}  // namespace

std::string clean_stale_temporaries(const std::vector<PlannedFile>& files, const std::string& keep,
                                    MPI_Comm comm) {
  std::string lines;
  if (comm_rank(comm) != 0) return lines;
  std::vector<std::string> done;
  for (const PlannedFile& f : files) {
    const std::string target = write_target(f.path);
    if (std::find(done.begin(), done.end(), target) != done.end()) continue;
    done.push_back(target);
    const std::string dir = parent_dir(target);
    const auto slash = target.find_last_of('/');
    const std::string prefix =
        (slash == std::string::npos ? target : target.substr(slash + 1)) + ".partial.";
    DIR* d = ::opendir(dir.c_str());
    if (!d) continue;
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(d))
      if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) names.push_back(e->d_name);
    ::closedir(d);
    std::sort(names.begin(), names.end());
    for (const std::string& n : names) clean_one(dir, n, n.substr(prefix.size()), keep, lines);
  }
  return lines;
}

std::string xdmf_path(const std::string& h5_path) {
  const auto slash = h5_path.find_last_of('/');
  const auto base = slash == std::string::npos ? 0 : slash + 1;
  const auto dot = h5_path.rfind('.');
  // An extension is a dot inside the file name, not its first character ("dir/.h5").
  if (dot == std::string::npos || dot <= base) return h5_path + ".xdmf";
  return h5_path.substr(0, dot) + ".xdmf";
}

}  // namespace halo3d
