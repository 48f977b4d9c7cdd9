#include "checkpoint.hpp"

#include <hdf5.h>

#include <cstdio>

#include "errors.hpp"
#include "hdf5_io.hpp"
#include "runtime.hpp"

namespace halo3d {
namespace {

// Bumped whenever the checkpoint layout or the meaning of its state changes.
constexpr const char* kFormat = "halo3d-checkpoint-1";

std::vector<long long> ints(const Int3& v) { return {v[0], v[1], v[2]}; }

std::vector<long long> flat_modes(const std::vector<Int3>& modes) {
  std::vector<long long> f;
  for (const auto& m : modes) f.insert(f.end(), m.begin(), m.end());
  return f;
}

// Rank 0 looks at the file and every rank gets the same verdict, so that all throw the same
// error (or none does) before the collective open: 1 HDF5, 0 exists but is not HDF5, -1 absent.
int probe_hdf5(const std::string& path, MPI_Comm comm) {
  int kind = -1;
  if (comm_rank(comm) == 0) {
    if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
      std::fclose(f);
      kind = H5Fis_hdf5(path.c_str()) > 0 ? 1 : 0;
    }
  }
  HALO3D_MPI_CHECK(MPI_Bcast(&kind, 1, MPI_INT, 0, comm));
  return kind;
}

}  // namespace

RunIdentity RunIdentity::of(const SolveOptions& o, const std::string& solver, double dt) {
  RunIdentity id;
  id.problem = o.problem;
  id.solver = solver;
  id.rhs = o.rhs;
  id.grid = o.grid;
  id.modes = o.rhs == "modes" ? o.modes : std::vector<Int3>{};
  id.seed = o.rhs == "random" ? (long long)o.seed : 0;
  id.alpha = o.problem == "heat" ? o.alpha : 0;
  id.dt = o.problem == "heat" ? dt : 0;
  return id;
}

void write_checkpoint(const std::string& path, MPI_Comm comm, const Decomposition& d, Kernels& k,
                      Method& m, const RunIdentity& id, long iteration,
                      const std::vector<double>& history) {
  AtomicH5File f(path, comm);
  for (const StateVector& v : m.state()) {
    const auto host = download(k, *v.buffer);
    h5_write_field(f.get(), v.name, d, host.data());
  }
  h5_write_vector(f.get(), "residual_history", history, comm);  // empty for heat
  h5_attr(f.get(), "format", std::string(kFormat));
  h5_attr(f.get(), "version", version_string());
  h5_attr(f.get(), "problem", id.problem);
  h5_attr(f.get(), "solver", id.solver);
  h5_attr(f.get(), "rhs", id.rhs);
  h5_attr(f.get(), "grid", ints(id.grid));
  h5_attr(f.get(), "procs", ints(d.procs));
  h5_attr(f.get(), "modes",
          flat_modes(id.modes).empty() ? std::vector<long long>{0} : flat_modes(id.modes));
  h5_attr(f.get(), "seed", std::vector<long long>{id.seed});
  h5_attr(f.get(), "alpha_dt", std::vector<double>{id.alpha, id.dt});
  h5_attr(f.get(), "iteration", std::vector<long long>{iteration});
  auto s = m.scalars();
  h5_attr(f.get(), "scalars", s.empty() ? std::vector<double>{0.0} : s);
  f.commit();
}

long read_checkpoint(const std::string& path, MPI_Comm comm, const Decomposition& d, Kernels& k,
                     Method& m, const RunIdentity& id, std::vector<double>& history) {
  const auto fail = [&](const std::string& why) {
    throw BadInput("--restart " + path + ": " + why);
  };
  const int kind = probe_hdf5(path, comm);
  if (kind < 0)
    throw IoError("--restart " + path +
                  ": cannot open the checkpoint (no such file, or not readable)");
  if (kind == 0) fail("not an HDF5 file, so not a halo3d checkpoint");
  H5Id f = h5_open_read(path, comm);
  if (!h5_has_attr(f.get(), "format") || h5_attr_string(f.get(), "format") != kFormat)
    fail("not a halo3d checkpoint of format " + std::string(kFormat));
  const auto expect = [&](const std::string& key, const std::string& want) {
    const std::string got = h5_attr_string(f.get(), key);
    if (got != want)
      fail(key + " is '" + got + "' in the checkpoint but '" + want + "' in this run");
  };
  expect("version", version_string());
  expect("problem", id.problem);
  expect("solver", id.solver);
  expect("rhs", id.rhs);
  if (h5_attr_ints(f.get(), "grid") != ints(id.grid))
    fail("grid differs from this run's " + to_string(id.grid));
  auto want_modes = flat_modes(id.modes);
  if (want_modes.empty()) want_modes = {0};
  if (h5_attr_ints(f.get(), "modes") != want_modes) fail("the modes differ from this run's");
  if (h5_attr_ints(f.get(), "seed") != std::vector<long long>{id.seed})
    fail("the seed differs from this run's");
  if (h5_attr_doubles(f.get(), "alpha_dt") != std::vector<double>{id.alpha, id.dt})
    fail("alpha or dt differ from this run's");

  for (const StateVector& v : m.state()) {
    std::vector<double> host(v.buffer->size(), 0.0);
    h5_read_field(f.get(), v.name, d, host.data());
    k.copy(v.buffer->data(), host.data(), host.size(), Lane::interior);
    k.synchronize();
  }
  const long iteration = long(h5_attr_ints(f.get(), "iteration").at(0));
  history = h5_read_vector(f.get(), "residual_history");
  // One residual per iteration for the methods that have one: anything else is a damaged file.
  if (m.has_residual() && long(history.size()) != iteration)
    fail("holds " + std::to_string(history.size()) + " residuals for " + std::to_string(iteration) +
         " iterations (damaged checkpoint)");
  auto scalars = h5_attr_doubles(f.get(), "scalars");
  if (scalars.size() < m.scalars().size()) fail("has fewer solver scalars than this solver needs");
  scalars.resize(m.scalars().size());
  m.set_scalars(scalars);
  return iteration;
}

}  // namespace halo3d
