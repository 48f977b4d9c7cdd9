// Unit tests of src/core/files.hpp and src/core/checks.hpp: path checks, atomic writes, escaping.
#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "checks.hpp"
#include "errors.hpp"
#include "files.hpp"
#include "plan.hpp"

namespace halo3d {
namespace {

// A fresh scratch folder, removed with everything in it afterwards.
struct Scratch {
  std::string dir;
  Scratch() {
    char tmpl[] = "/tmp/halo3d-files-XXXXXX";
    dir = mkdtemp(tmpl);
  }
  ~Scratch() { std::system(("rm -rf '" + dir + "'").c_str()); }
  std::string operator/(const std::string& name) const { return dir + "/" + name; }
  std::vector<std::string> partials() const {
    std::vector<std::string> out;
    for (const auto& f : list())
      if (f.find(".partial") != std::string::npos) out.push_back(f);
    return out;
  }
  std::vector<std::string> list() const {
    std::vector<std::string> out;
    const std::string cmd = "ls -A '" + dir + "'";
    if (FILE* p = popen(cmd.c_str(), "r")) {
      char line[4096];
      while (std::fgets(line, sizeof line, p)) {
        std::string s(line);
        if (!s.empty() && s.back() == '\n') s.pop_back();
        out.push_back(s);
      }
      pclose(p);
    }
    return out;
  }
};

std::string read(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(Files, XdmfPathReplacesTheExtensionOfTheFileNameOnly) {
  EXPECT_EQ(xdmf_path("u.h5"), "u.xdmf");
  EXPECT_EQ(xdmf_path("dir/u.h5"), "dir/u.xdmf");
  EXPECT_EQ(xdmf_path("run.v2/u"), "run.v2/u.xdmf");  // a dot in a folder is no extension
  EXPECT_EQ(xdmf_path("./u"), "./u.xdmf");
  EXPECT_EQ(xdmf_path("dir/.h5"), "dir/.h5.xdmf");
}

TEST(Files, PrintableEscapesControlAndHighBytesAndCuts) {
  EXPECT_EQ(printable("ok text"), "ok text");
  EXPECT_EQ(printable(std::string("a\0b\n\x1b[31m\xff", 10)), "a\\x00b\\x0a\\x1b[31m\\xff");
  EXPECT_EQ(printable(printable("\x07")), printable("\x07"));  // escaping twice changes nothing
  EXPECT_EQ(printable(std::string(500, 'x'), 10), std::string(10, 'x') + "...");
}

// A reference for valid_utf8 written the other way round: decode each sequence by its lead
// byte's length, then refuse overlong forms, surrogates and code points past U+10FFFF.
bool reference_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    unsigned cp = n == 1 ? c : c & (0x7F >> n);
    for (int k = 1; k < n; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b >> 6) != 2) return false;
      cp = cp << 6 | (b & 0x3F);
    }
    const unsigned least[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[n] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return false;
    i += n;
  }
  return true;
}

TEST(Files, ValidUtf8AgreesWithADecodingReference) {
  EXPECT_TRUE(valid_utf8("plain ascii, file:f.h5:/f"));
  EXPECT_TRUE(valid_utf8("d\xc3\xa9j\xc3\xa0 \xe2\x82\xac \xf0\x9f\x98\x80"));  // déjà € 😀
  EXPECT_FALSE(valid_utf8("\xff"));
  EXPECT_FALSE(valid_utf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(valid_utf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(valid_utf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(valid_utf8("\xe2\x82"));          // cut off
  // Random strings biased towards lead and continuation bytes, so both answers occur often.
  std::mt19937 gen(42);
  const unsigned char pool[] = {'a',  0x7F, 0x80, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2,
                                0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF};
  int valid = 0;
  for (int t = 0; t < 200000; ++t) {
    std::string s(gen() % 6, '\0');
    for (char& ch : s) ch = char(pool[gen() % sizeof pool]);
    ASSERT_EQ(valid_utf8(s), reference_utf8(s)) << printable(s);
    valid += reference_utf8(s);
  }
  EXPECT_GT(valid, 1000);
  EXPECT_LT(valid, 199000);
}

TEST(Files, AtomicWriteReplacesAndLeavesNoTemporary) {
  Scratch s;
  write(s / "r.json", "old");
  write_file_atomically(s / "r.json", "new", MPI_COMM_SELF);
  EXPECT_EQ(read(s / "r.json"), "new");
  EXPECT_TRUE(s.partials().empty());
}

TEST(Files, AtomicWriteKeepsAnotherRunsTemporary) {
  Scratch s;
  write(s / "r.json.partial", "another run");
  write_file_atomically(s / "r.json", "mine", MPI_COMM_SELF);
  EXPECT_EQ(read(s / "r.json.partial"), "another run");
  EXPECT_EQ(read(s / "r.json"), "mine");
}

TEST(Files, AtomicWriteThroughASymlinkKeepsTheLink) {
  Scratch s;
  write(s / "real.json", "old");
  ASSERT_EQ(symlink("real.json", (s / "link.json").c_str()), 0);
  write_file_atomically(s / "link.json", "new", MPI_COMM_SELF);
  struct stat st;
  ASSERT_EQ(lstat((s / "link.json").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(read(s / "real.json"), "new");
}

TEST(Files, FailedWriteThrowsIoErrorAndKeepsNothingBehind) {
  Scratch s;
  try {
    write_file_atomically(s / "missing-dir/r.json", "x", MPI_COMM_SELF);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), kExitIo);
    EXPECT_NE(std::string(e.what()).find("r.json"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(s.list().empty());
}

int code_of(const std::vector<PlannedFile>& f) {
  try {
    check_planned_files(f, MPI_COMM_SELF);
  } catch (const Error& e) {
    return e.code();
  }
  return 0;
}

TEST(Files, PlannedFilesRefuseNonRegularPathsAndSameFiles) {
  Scratch s;
  write(s / "a", "a");
  ASSERT_EQ(mkdir((s / "d").c_str(), 0755), 0);
  ASSERT_EQ(mkfifo((s / "fifo").c_str(), 0644), 0);
  ASSERT_EQ(link((s / "a").c_str(), (s / "hard").c_str()), 0);
  ASSERT_EQ(symlink("a", (s / "soft").c_str()), 0);
  ASSERT_EQ(symlink("d", (s / "to-dir").c_str()), 0);
  EXPECT_EQ(code_of({{"--output", s / "new.h5"}, {"--report", s / "a"}}), 0);
  EXPECT_EQ(code_of({{"--output", s / "soft"}}), 0);  // a link to a regular file: written through
  EXPECT_EQ(code_of({{"--output", "/dev/null"}}), kExitBadInput);
  EXPECT_EQ(code_of({{"--output", s / "d"}}), kExitBadInput);
  EXPECT_EQ(code_of({{"--report", s / "fifo"}}), kExitBadInput);
  EXPECT_EQ(code_of({{"--report", s / "to-dir"}}), kExitBadInput);
  EXPECT_EQ(code_of({{"--output", s / "a"}, {"--report", s / "hard"}}), kExitBadInput);
  EXPECT_EQ(code_of({{"--output", s / "a"}, {"--report", s / "soft"}}), kExitBadInput);
  EXPECT_EQ(code_of({{"--output", s / "x.h5"}, {"--report", s.dir + "/d/../x.h5"}}), kExitBadInput);
  EXPECT_EQ(code_of({{"--output", s / "missing-dir/x.h5"}}), kExitIo);
  EXPECT_EQ(read(s / "a"), "a");
  EXPECT_TRUE(s.partials().empty());
}

TEST(Files, PlannedFilesOfSolveIncludeTheSidecar) {
  SolveOptions o;
  o.output = "u.xdmf";  // its own sidecar
  EXPECT_EQ(code_of(planned_files(o)), kExitBadInput);
  o.output = "none";
  o.report = "r.json";
  EXPECT_EQ(planned_files(o).size(), 1u);
}

// The host part of this host's temporaries, as local_unique_suffix() writes it.
std::string this_host() {
  const std::string mine = local_unique_suffix();  // HOST-PID-CLOCK-N
  std::string host = mine;
  for (int i = 0; i < 3; ++i) host = host.substr(0, host.rfind('-'));
  return host;
}

// A pid no process has now: a child that has exited and been reaped.
long dead_pid() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  return long(child);
}

TEST(Files, StaleTemporariesOfDeadRunsAreRemovedOthersNamed) {
  Scratch s;
  const std::string host = this_host(), dead = std::to_string(dead_pid());
  const std::string mine = "ck.h5.partial." + local_unique_suffix();
  const std::vector<std::string> gone = {"ck.h5.partial." + host + "-" + dead + "-18ee0-1",
                                         "u.h5.partial." + host + "-" + dead + "-18ee1-2",
                                         "u.xdmf.partial." + host + "-" + dead + "-18ee2-3"};
  const std::vector<std::string> kept = {
      "ck.h5.partial.other-host-" + dead + "-18ee3-1",  // another host's: maybe alive
      "ck.h5.partial." + host + "-1-18ee4-1",           // pid 1 runs
      "ck.h5.partial",
      "ck.h5.partial.x",
      "ck.h5.partial.a-b-c-d",                               // not a run's suffix
      "other.h5.partial." + host + "-" + dead + "-18ee5-1",  // no file of this run
      "restart.h5.partial." + host + "-" + dead + "-18ee6-1",
      mine};
  for (const auto& f : gone) write(s / f, "torn");
  for (const auto& f : kept) write(s / f, "keep");
  SolveOptions o;
  o.output = s / "u.h5";
  o.checkpoint = s / "ck.h5";
  std::vector<PlannedFile> files = planned_files(o);
  files.push_back({"--report", s / "restart.h5"});  // named by --restart below: never touched
  const std::string lines = clean_stale_temporaries(files, s / kept[6], MPI_COMM_WORLD);
  for (const auto& f : gone) {
    EXPECT_FALSE(std::ifstream(s / f).good()) << f;
    EXPECT_NE(lines.find("halo3d: removed " + (s / f) + ", the temporary of a write cut off"),
              std::string::npos)
        << lines;
  }
  for (const auto& f : kept) EXPECT_EQ(read(s / f), "keep") << f;
  EXPECT_NE(lines.find("warning: " + (s / kept[0]) + " is the temporary of another run (process " +
                       dead + " on host other-host)"),
            std::string::npos)
      << lines;
  EXPECT_NE(lines.find("warning: " + (s / kept[1]) +
                       " is the temporary of another run (process 1 on this host)"),
            std::string::npos)
      << lines;
  EXPECT_EQ(lines.find(mine), std::string::npos) << "this process's own temporary is left alone";
  EXPECT_EQ(lines.find("ck.h5.partial.x"), std::string::npos);
}

TEST(Checks, AllFiniteLooksAtEveryInteriorPoint) {
  Layout l;
  l.nx = 3, l.ny = 2, l.nz = 2;
  std::vector<double> v(l.padded_size(), 0.0);
  EXPECT_TRUE(all_finite(l, v, MPI_COMM_WORLD));
  v[l.at(2, 1, 1)] = NAN;
  EXPECT_FALSE(all_finite(l, v, MPI_COMM_WORLD));
  v[l.at(2, 1, 1)] = -INFINITY;
  EXPECT_FALSE(all_finite(l, v, MPI_COMM_WORLD));
}

}  // namespace
}  // namespace halo3d
