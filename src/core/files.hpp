// Every file halo3d writes goes through here: the checks made before a run starts (what the
// paths are, whether two of them are one file, whether they can be written) and the one
// atomic-write scheme (a temporary name unique to the run, in the target's directory,
// checked writes and close, then rename; on any error the temporary is removed and the
// previous file is kept).
#pragma once
#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include "errors.hpp"

namespace halo3d {

// A suffix no other run (or other write of this run) uses: rank 0's host, pid, clock and a
// counter, agreed by every rank of `comm` (collective).
std::string unique_suffix(MPI_Comm comm);
// The same for one process alone.
std::string local_unique_suffix();

// Collective: empty when `why` is empty on every rank, else the message of the lowest rank
// with one (every rank returns the same).
std::string first_error(const std::string& why, MPI_Comm comm);
// `s` as rank 0 holds it, on every rank (collective).
std::string bcast_string(std::string s, MPI_Comm comm);

// Where a write of `path` lands: `path` itself, or, for a symbolic link to a regular file,
// the file it points to (halo3d writes through links and keeps them).
std::string write_target(const std::string& path);

// The temporary name of a write of `path`: beside the target, unique to this write.
std::string temp_name(const std::string& target, const std::string& suffix);

// Puts the finished, closed temporary `tmp` in place of `target` so that a crash at any
// moment leaves the previous file or the whole new one, never an empty one (ext4 may
// commit a rename before the data): with `durable`, tmp's data are flushed (fsync) before
// the rename and its directory after it. Empty on success, else why not; `renamed` says
// whether the rename happened (then only the directory's flush failed).
std::string durable_rename(const std::string& tmp, const std::string& target, bool& renamed,
                           bool durable = true);
// The directory holding `path` as spelled ("." for a bare name, "/" for a file at the root).
std::string parent_dir(const std::string& path);

// Collective: a verdict rank 0 reached (0: fine, else the exit code) and its message,
// thrown on every rank (BadInput for kExitBadInput, IoError otherwise).
void agree_verdict(int code, const std::string& why, MPI_Comm comm);
// Writes all of `text` to the file descriptor `fd` (retrying short writes and EINTR);
// false with errno set on failure.
bool write_all(int fd, const std::string& text);
// fsync of a file, or of the directory holding it; empty on success, else why not (file
// systems that cannot flush, EINVAL/EROFS, count as success).
std::string fsync_path(const std::string& path);
std::string fsync_parent(const std::string& path);

// Rank 0 writes `text` to `path` atomically; collective: every rank returns, or every rank
// throws the same IoError (naming the file and the cause).
void write_file_atomically(const std::string& path, const std::string& text, MPI_Comm comm);
// One process alone; throws IoError (not collective) on failure.
void write_file_atomically_local(const std::string& path, const std::string& text);

// The output files of one run (solve's --output, its .xdmf sidecar and --report), committed
// together: each is written in full under its temporary first, and commit() renames them all
// into place only once every one is written, so a failure (a full disk, an error on any
// rank) keeps every previous file and a run never leaves an .h5 of one run beside an .xdmf
// of another. Concurrent runs writing the same files commit one whole set after another
// (rank 0 holds an flock of each target directory over the renames). RAII: a set destroyed
// uncommitted removes its temporaries. All members are collective over `comm`.
class OutputSet {
 public:
  explicit OutputSet(MPI_Comm comm) : comm_(comm) {}
  ~OutputSet();
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;
  // The temporary to write `path` under (the same name on every rank); the caller writes and
  // closes it; commit() puts it in place.
  std::string stage(const std::string& path);
  // Rank 0 writes `text` (significant on rank 0 only) to the temporary of `path`; every rank
  // returns or throws the same IoError.
  void stage_text(const std::string& path, const std::string& text);
  // Renames every staged temporary onto its target (flushed first, then the directories);
  // every rank returns or throws the same IoError.
  void commit();

 private:
  struct Staged {
    std::string path, target, tmp;
  };
  MPI_Comm comm_;
  std::vector<Staged> staged_;
  bool done_ = false;
};

// Inputs: rank 0 opens `path` without blocking (O_NONBLOCK: a FIFO would hang open(), fopen
// or H5Fis_hdf5 on rank 0 while the other ranks wait) and looks at what it is; every rank
// then throws the same error or none, one line starting with `what`: a path that cannot be
// opened is exit `missing_code` (IoError, 5, by default), one that is not a regular file
// (a FIFO, device, directory, socket) BadInput (exit 2). Collective over `comm`.
void check_input_file(const std::string& what, const std::string& path, MPI_Comm comm,
                      int missing_code = kExitIo);
// The same, then rank 0 reads the whole file (at most max_bytes, else BadInput) and every
// rank returns its contents: all ranks see one file as rank 0 saw it. comm MPI_COMM_NULL: this
// process alone (before MPI starts).
std::string read_input_file(const std::string& what, const std::string& path, MPI_Comm comm,
                            std::size_t max_bytes, int missing_code = kExitIo);

// A file a run will write, and the option that names it (e.g. "--report").
struct PlannedFile {
  std::string option;
  std::string path;
};

// Collective, before any solving (rank 0 looks, every rank throws the same error):
//  - a path that exists but is not a regular file (a directory, device, FIFO, socket, or a
//    link to one or to nothing) is refused (BadInput, exit 2);
//  - two paths that are one file however spelled (canonical path, or device and inode)
//    are refused naming both options (BadInput, exit 2);
//  - a path whose directory does not let us create a file there is IoError (exit 5);
//  - a path that is one of the run's `inputs` (as above, however spelled) is refused naming
//    both (BadInput, exit 2): writing it would destroy the input. Only --checkpoint may be
//    the --restart file (a run continues and updates its own checkpoint).
void check_planned_files(const std::vector<PlannedFile>& files, MPI_Comm comm,
                         const std::vector<PlannedFile>& inputs = {});

// Temporaries (TARGET.partial.HOST-PID-CLOCK-N) of the files' writes that earlier runs left
// when they died mid-write: rank 0 removes those whose process, on this host, is gone, and
// names the others (another host's, or of a process still running); `keep` (the file a run
// restarts from) is never touched. Returns rank 0's lines for stderr (empty on other ranks);
// not collective.
std::string clean_stale_temporaries(const std::vector<PlannedFile>& files, const std::string& keep,
                                    MPI_Comm comm);

// The XDMF sidecar of an HDF5 file: its name with the extension replaced by ".xdmf".
std::string xdmf_path(const std::string& h5_path);

}  // namespace halo3d
