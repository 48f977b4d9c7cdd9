#include "checkpoint.hpp"

#include <hdf5.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "build_info.hpp"
#include "checks.hpp"
#include "errors.hpp"
#include "hdf5_io.hpp"
#include "host_copy.hpp"

namespace halo3d {
namespace {

// Bumped whenever the checkpoint layout or the meaning of its state changes.
// 2: CG and Jacobi state scaled (cg.cpp, solvers.cpp); 3: the solver scalars carry a checksum, and
// each dataset's checksum is bound to its name.
constexpr const char* kFormat = "halo3d-checkpoint-3";

std::vector<long long> ints(const Int3& v) { return {v[0], v[1], v[2]}; }

std::vector<long long> flat_modes(const std::vector<Int3>& modes) {
  std::vector<long long> f;
  for (const auto& m : modes) f.insert(f.end(), m.begin(), m.end());
  return f;
}

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
std::uint64_t point_hash(std::uint64_t index, double v) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  return mix(mix(index + 0x9e3779b97f4a7c15ull) ^ bits);
}

std::uint64_t vector_checksum(const std::vector<double>& v) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < v.size(); ++i) sum += point_hash(i, v[i]);
  return sum;
}

// Checksums are stored as the bits of a signed 64-bit attribute.
long long as_attr(std::uint64_t c) {
  long long v = 0;
  std::memcpy(&v, &c, sizeof v);
  return v;
}

// Checksum `c` of dataset /name's values bound to the name (FNV-1a of it, mixed in): another
// dataset's values and checksum under this name (/x a hard link to /r) do not match.
std::uint64_t named(std::uint64_t c, const std::string& name) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const unsigned char ch : name) h = (h ^ ch) * 0x100000001b3ull;
  return mix(c ^ h);
}

// The attribute "checksum" of dataset /name.
void write_checksum(hid_t f, const std::string& name, std::uint64_t c) {
  H5Id dset(H5Dopen2(f, name.c_str(), H5P_DEFAULT), H5Dclose);
  h5_attr(dset.get(), "checksum", std::vector<long long>{as_attr(named(c, name))});
}

}  // namespace

std::uint64_t field_checksum(const Decomposition& d, const std::vector<double>& padded,
                             MPI_Comm comm) {
  const Layout l = d.layout();
  std::uint64_t sum = 0;
  for (int k = 0; k < l.nz; ++k)
    for (int j = 0; j < l.ny; ++j)
      for (int i = 0; i < l.nx; ++i) {
        const std::uint64_t g =
            std::uint64_t(d.offset[0] + i) +
            std::uint64_t(d.grid[0]) *
                (std::uint64_t(d.offset[1] + j) + std::uint64_t(d.grid[1]) * (d.offset[2] + k));
        sum += point_hash(g, padded[l.at(i, j, k)]);
      }
  HALO3D_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_UINT64_T, MPI_SUM, comm));
  return sum;
}

RunIdentity RunIdentity::of(const ProblemSpec& o, const std::string& solver, double dt) {
  RunIdentity id;
  id.problem = to_string(o.problem);
  id.solver = solver;
  id.rhs = source_spec(o);
  id.boundary = o.boundary;
  id.op = operator_text(o);
  id.grid = o.grid;
  const FieldSpec::Kind source = source_field(o).kind;
  id.modes = source == FieldSpec::kModes ? o.modes : std::vector<Int3>{};
  id.seed = source == FieldSpec::kRandom ? (long long)o.seed : 0;
  const bool heat = o.problem == ProblemKind::heat;
  id.alpha = heat ? o.alpha : 0;
  id.dt = heat ? dt : 0;
  id.steps = heat ? o.steps : -1;
  return id;
}

void write_checkpoint(const std::string& path, MPI_Comm comm, const Decomposition& d, Kernels& k,
                      Checkpointable& m, const RunIdentity& id, long iteration,
                      const std::vector<double>& history, const std::function<void(hid_t)>& extra) {
  const std::vector<StateVector> state = m.state();
  std::vector<std::vector<double>> host;
  for (const StateVector& v : state) host.push_back(download(k, *v.buffer));
  std::vector<std::uint64_t> sums;
  for (const auto& h : host) sums.push_back(field_checksum(d, h, comm));
  write_h5_atomically(path, comm, [&](hid_t f) {
    for (std::size_t i = 0; i < state.size(); ++i) {
      h5_write_field(f, state[i].name, d, host[i].data());
      write_checksum(f, state[i].name, sums[i]);
    }
    h5_write_vector(f, "residual_history", history, comm);  // empty for heat
    write_checksum(f, "residual_history", vector_checksum(history));
    h5_attr(f, "data_checksum", std::vector<long long>{as_attr(id.data)});
    h5_attr(f, "format", std::string(kFormat));
    h5_attr(f, "version", version_string());
    h5_attr(f, "problem", id.problem);
    h5_attr(f, "solver", id.solver);
    h5_attr(f, "rhs", id.rhs);
    h5_attr(f, "boundary", id.boundary);
    h5_attr(f, "operator", id.op);
    h5_attr(f, "grid", ints(id.grid));
    h5_attr(f, "procs", ints(d.procs));
    h5_attr(f, "modes",
            flat_modes(id.modes).empty() ? std::vector<long long>{0} : flat_modes(id.modes));
    h5_attr(f, "seed", std::vector<long long>{id.seed});
    h5_attr(f, "alpha_dt", std::vector<double>{id.alpha, id.dt});
    h5_attr(f, "iteration", std::vector<long long>{iteration});
    auto s = m.scalars();
    if (s.empty()) s = {0.0};
    h5_attr(f, "scalars", s);
    h5_attr(f, "scalars_checksum", std::vector<long long>{as_attr(vector_checksum(s))});
    if (extra) extra(f);
  });
}

namespace {

// Reads the checkpoint's attributes, checking each is there with the type and size it must
// have: a damaged file gives one clear line (BadInput), never a stray number.
class Attrs {
 public:
  Attrs(hid_t f, std::string path) : f_(f), path_(std::move(path)) {}
  const std::string& path() const { return path_; }
  [[noreturn]] void fail(const std::string& why) const {
    throw BadInput("--restart " + path_ + ": " + why);
  }
  [[noreturn]] void damaged(const std::string& why) const { fail("damaged checkpoint: " + why); }
  std::string str(const std::string& key) const {
    H5Id a = open(key);
    H5Id type(H5Aget_type(a.get()), H5Tclose);
    if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) != 0)
      damaged("attribute " + key + " is not a fixed-length string");
    const std::size_t n = H5Tget_size(type.get());
    // 64 KiB: the most an attribute holds, above the longest --rhs/--boundary accepted.
    if (n == 0 || n > 65536) damaged("attribute " + key + " has an impossible length");
    std::string s(n, '\0');
    if (H5Aread(a.get(), type.get(), s.data()) < 0) damaged("attribute " + key + " cannot be read");
    s.resize(std::strlen(s.c_str()));
    return s;
  }
  // `n` values (any count when n < 0).
  std::vector<long long> ints(const std::string& key, long n = -1) const {
    return numbers<long long>(key, n, H5T_INTEGER, H5T_NATIVE_LLONG, "integers");
  }
  std::vector<double> doubles(const std::string& key, long n = -1) const {
    return numbers<double>(key, n, H5T_FLOAT, H5T_NATIVE_DOUBLE, "floating-point numbers");
  }

 private:
  H5Id open(const std::string& key) const {
    const htri_t e = H5Aexists(f_, key.c_str());
    if (e == 0) damaged("attribute " + key + " is missing");
    const hid_t a = e > 0 ? H5Aopen(f_, key.c_str(), H5P_DEFAULT) : -1;
    if (a < 0) damaged("attribute " + key + " cannot be opened");
    return H5Id(a, H5Aclose);
  }
  template <class T>
  std::vector<T> numbers(const std::string& key, long n, H5T_class_t cls, hid_t mem,
                         const char* what) const {
    H5Id a = open(key);
    H5Id type(H5Aget_type(a.get()), H5Tclose);
    H5Id space(H5Aget_space(a.get()), H5Sclose);
    const hssize_t count = H5Sget_simple_extent_npoints(space.get());
    if (H5Tget_class(type.get()) != cls) damaged("attribute " + key + " does not hold " + what);
    if (count < 0 || count > (1 << 20) || (n >= 0 && count != n))
      damaged("attribute " + key + " holds " + std::to_string(count) + " values" +
              (n >= 0 ? ", expected " + std::to_string(n) : std::string()));
    std::vector<T> v(std::size_t(count), T{});
    if (!v.empty() && H5Aread(a.get(), mem, v.data()) < 0)
      damaged("attribute " + key + " cannot be read");
    return v;
  }
  hid_t f_;
  std::string path_;
};

std::string modes_text(const std::vector<long long>& flat) {
  if (flat == std::vector<long long>{0}) return "none";
  std::string s;
  for (std::size_t i = 0; i < flat.size(); ++i)
    s += (i == 0 ? "" : (i % 3 == 0 ? " " : ",")) + std::to_string(flat[i]);
  return s;
}

std::string number_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

namespace {

// Everything that changes the iterates must match; the process grid need not (results do
// not depend on it), nor --tol, --max-iters or --steps (they only say when to stop).
void check_identity(const Attrs& at, hid_t f, const RunIdentity& id) {
  const auto expect = [&](const std::string& key, const std::string& got, const std::string& want) {
    if (got != want)
      at.fail(key + " is '" + got + "' in the checkpoint but '" + want + "' in this run");
  };
  expect("version", at.str("version"), version_string());
  expect("problem", at.str("problem"), id.problem);
  expect("solver", at.str("solver"), id.solver);
  expect("rhs", at.str("rhs"), id.rhs);
  // Checkpoints written before --boundary existed had zero boundary values.
  expect("boundary", H5Aexists(f, "boundary") > 0 ? at.str("boundary") : "0", id.boundary);
  // Checkpoints written before --box and --shift existed solved on the unit cube, unshifted.
  expect("operator", H5Aexists(f, "operator") > 0 ? at.str("operator") : RunIdentity{}.op, id.op);
  const auto grid = at.ints("grid", 3);
  expect("grid",
         std::to_string(grid[0]) + "," + std::to_string(grid[1]) + "," + std::to_string(grid[2]),
         to_string(id.grid));
  auto want_modes = flat_modes(id.modes);
  if (want_modes.empty()) want_modes = {0};
  const auto modes = at.ints("modes");
  if (modes != want_modes) expect("modes", modes_text(modes), modes_text(want_modes));
  expect("seed", std::to_string(at.ints("seed", 1)[0]), std::to_string(id.seed));
  const auto alpha_dt = at.doubles("alpha_dt", 2);
  expect("alpha", number_text(alpha_dt[0]), number_text(id.alpha));
  expect("dt", number_text(alpha_dt[1]), number_text(id.dt));
  if (id.data != 0 && at.ints("data_checksum", 1)[0] != as_attr(id.data))
    at.fail(
        "the problem's data (right-hand side, initial state, boundary values or coefficient as "
        "read) differ from the checkpoint's: a file: input changed since it was written");
}

// Dataset /name's attribute "checksum" against `c` (the checksum of what was read).
void check_checksum(const Attrs& at, hid_t f, const std::string& name, std::uint64_t c) {
  H5Id dset(H5Dopen2(f, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!h5_has_attr(dset.get(), "checksum")) at.damaged("dataset /" + name + " has no checksum");
  const Attrs dat(dset.get(), at.path());
  if (dat.ints("checksum", 1)[0] != as_attr(named(c, name)))
    at.damaged("dataset /" + name +
               " does not match its checksum (the file was changed or corrupted)");
}

// The solver's scalars: all finite, exactly as many as `m` has (one 0 when it has none), and
// what was written (a changed scalar, e.g. CG's rho, would make the continued solve wrong or
// end in a false "breakdown").
std::vector<double> read_scalars(const Attrs& at, const std::string& path,
                                 const Checkpointable& m) {
  auto scalars = at.doubles("scalars");
  for (const double s : scalars)
    if (!std::isfinite(s))
      throw Error(kExitBreakdown,
                  "--restart " + path + ": the checkpoint's solver scalars hold NaN or Inf");
  const std::size_t want = std::max<std::size_t>(1, m.scalars().size());
  if (scalars.size() != want)
    at.damaged("attribute scalars holds " + std::to_string(scalars.size()) +
               " values, this solver has " + std::to_string(want));
  if (at.ints("scalars_checksum", 1)[0] != as_attr(vector_checksum(scalars)))
    at.damaged("attribute scalars does not match its checksum (the file was changed or corrupted)");
  scalars.resize(m.scalars().size());
  return scalars;
}

// Collective: the solver's state vectors, each checked finite, into its buffers.
void read_state(const Attrs& at, hid_t f, const std::string& path, MPI_Comm comm,
                const Decomposition& d, Kernels& k, Checkpointable& m) {
  const std::vector<hsize_t> shape = {hsize_t(d.grid[2]), hsize_t(d.grid[1]), hsize_t(d.grid[0])};
  for (const StateVector& v : m.state()) {
    const std::string why = h5_dataset_problem(f, v.name, shape);
    if (!why.empty()) at.damaged(why);
    std::vector<double> host(v.buffer->size(), 0.0);
    h5_read_field(f, v.name, d, host.data());
    if (!all_finite(d.layout(), host, comm))  // NaN/Inf first: exit 4, whatever the checksum
      throw Error(kExitBreakdown, "--restart " + path + ": the checkpoint's /" + v.name +
                                      " holds NaN or Inf; refusing to continue from it");
    check_checksum(at, f, v.name, field_checksum(d, host, comm));
    k.copy(v.buffer->data(), host.data(), host.size(), Lane::interior);
    k.synchronize();
  }
}

}  // namespace

namespace {

// The checkpoint opened, its format, identity and iteration checked; the iteration.
long long open_checkpoint(const std::string& path, MPI_Comm comm, const RunIdentity& id, H5Id& f) {
  check_input_h5("--restart " + path, path, comm, "not an HDF5 file, so not a halo3d checkpoint");
  QuietHdf5 quiet;
  f = h5_open_read(path, comm);
  const Attrs at(f.get(), path);
  if (H5Aexists(f.get(), "format") <= 0 || at.str("format") != kFormat)
    at.fail("not a halo3d checkpoint of format " + std::string(kFormat));
  check_identity(at, f.get(), id);
  const long long iteration = at.ints("iteration", 1)[0];
  if (iteration < 0) at.damaged("iteration is " + std::to_string(iteration));
  if (id.steps >= 0 && iteration > id.steps)
    at.fail("the checkpoint is at step " + std::to_string(iteration) + ", beyond --steps " +
            std::to_string(id.steps));
  return iteration;
}

}  // namespace

void check_checkpoint(const std::string& path, MPI_Comm comm, const RunIdentity& id) {
  H5Id f;
  open_checkpoint(path, comm, id, f);
}

long read_checkpoint(const std::string& path, MPI_Comm comm, const Decomposition& d, Kernels& k,
                     Checkpointable& m, const RunIdentity& id, std::vector<double>& history) {
  H5Id f;
  const long long iteration = open_checkpoint(path, comm, id, f);
  QuietHdf5 quiet;
  const Attrs at(f.get(), path);
  const std::vector<double> scalars = read_scalars(at, path, m);
  read_state(at, f.get(), path, comm, d, k, m);
  // One residual per iteration for the methods that have one (none for heat): anything
  // else is a damaged file; a NaN/Inf residual, as a NaN state, is a breakdown.
  const std::string why = h5_dataset_problem(f.get(), "residual_history",
                                             {m.has_residual() ? hsize_t(iteration) : hsize_t(0)});
  if (!why.empty()) at.damaged(why);
  hsize_t file_bytes = 0;  // a declared history the file cannot hold is not allocated
  if (H5Fget_filesize(f.get(), &file_bytes) < 0 ||
      (m.has_residual() && double(iteration) * 8 > double(file_bytes)))
    at.damaged("holds " + std::to_string(iteration) + " iterations, more residuals than its " +
               std::to_string(file_bytes) + " bytes can hold");
  history = h5_read_vector(f.get(), "residual_history");
  for (const double r : history)
    if (!std::isfinite(r))
      throw Error(kExitBreakdown,
                  "--restart " + path + ": the checkpoint's /residual_history holds NaN or Inf");
  check_checksum(at, f.get(), "residual_history", vector_checksum(history));
  m.set_scalars(scalars);
  return long(iteration);
}

long checkpoint_held(const std::string& checkpoint, const std::string& restart, long first) {
  struct stat ck, rs;
  if (checkpoint.empty() || ::stat(checkpoint.c_str(), &ck) != 0) return -1;
  if (!restart.empty() && ::stat(restart.c_str(), &rs) == 0 && ck.st_dev == rs.st_dev &&
      ck.st_ino == rs.st_ino)
    return first;
  return -2;
}

}  // namespace halo3d
