// HDF5's error check (HALO3D_H5_CHECK, hdf5_io.hpp): the failed call, where, and the cause
// from HDF5's error stack, as one IoError; and the RAII handle H5Id that closes what it holds.
#include <string>
#include <utility>

#include "errors.hpp"
#include "hdf5_io.hpp"

namespace halo3d {

// The innermost description on HDF5's error stack (e.g. the system call and errno that
// failed), so that a failed write says why; empty when the stack is empty.
std::string hdf5_error_cause() {
  std::string cause;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned n, const H5E_error2_t* e, void* out) -> herr_t {
        if (n == 0 && e && e->desc) *static_cast<std::string*>(out) = e->desc;
        return 0;
      },
      &cause);
  H5Eclear2(H5E_DEFAULT);
  for (char& c : cause)
    if (c == '\n' || c == '\r') c = ' ';
  return cause;
}

void throw_hdf5_error(const char* expr, const char* file, int line) {
  const std::string cause = hdf5_error_cause();
  throw IoError(std::string("HDF5 call failed: ") + expr + " (" + file + ":" +
                    std::to_string(line) + ")" + (cause.empty() ? "" : ": " + cause),
                false);
}

H5Id::H5Id(hid_t id, Closer c) : id_(id), close_(c) {
  if (id < 0) throw_hdf5_error("open/create", __FILE__, __LINE__);
}
void H5Id::close() {
  if (id_ >= 0) {
    const hid_t id = std::exchange(id_, -1);
    HALO3D_H5_CHECK(close_(id));
  }
}

}  // namespace halo3d
