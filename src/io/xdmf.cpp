// The XDMF sidecar of a solution file (one grid, or heat's series as a temporal collection),
// so ParaView and VisIt open the HDF5 data; written atomically beside it.
#include <functional>
#include <ostream>
#include <sstream>

#include "files.hpp"
#include "hdf5_io.hpp"

namespace halo3d {

namespace {
// `s` as XML character data: & < > " ' escaped (a file named a&b<c>.h5 stays valid XML).
std::string xml_text(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// One uniform grid of the field at `ref` (file:/dataset), each line indented by `pad`;
// `time`: its time in a temporal collection, or null.
void xdmf_uniform_grid(std::ostream& o, const std::string& pad, const std::string& name,
                       const Int3& grid, const std::array<double, 3>& origin,
                       const std::array<double, 3>& h, const std::string& ref, const double* time) {
  const std::string dims =
      std::to_string(grid[2]) + " " + std::to_string(grid[1]) + " " + std::to_string(grid[0]);
  const auto zyx = [&](const std::array<double, 3>& a) {
    std::ostringstream v;
    v.precision(o.precision());
    v << a[2] << " " << a[1] << " " << a[0];
    return v.str();
  };
  o << pad << "<Grid Name=\"" << name << "\" GridType=\"Uniform\">\n";
  if (time) o << pad << " <Time Value=\"" << *time << "\"/>\n";
  // The origin is the first point: one spacing from a Dirichlet boundary, on the face (0) of
  // a periodic axis.
  o << pad << " <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"" << dims << "\"/>\n"
    << pad << " <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n";
  for (const auto* item : {&origin, &h})
    o << pad << "  <DataItem Dimensions=\"3\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">"
      << zyx(*item) << "</DataItem>\n";
  o << pad << " </Geometry>\n"
    << pad << " <Attribute Name=\"u\" AttributeType=\"Scalar\" Center=\"Node\">\n"
    << pad << "  <DataItem Dimensions=\"" << dims
    << "\" NumberType=\"Float\" Precision=\"8\" Format=\"HDF\">" << xml_text(ref) << "</DataItem>\n"
    << pad << " </Attribute>\n"
    << pad << "</Grid>\n";
}

// The dataset is named relative to the sidecar, which lies beside the HDF5 file.
std::string h5_base_name(const std::string& h5_path) {
  return h5_path.substr(h5_path.find_last_of('/') + 1);
}
}  // namespace

namespace {
// The sidecar of `h5_path`: an XDMF document whose <Domain> holds what `domain` writes (on
// rank 0, with every bit of the doubles: times and spacings), staged in the output set or
// written atomically.
void save_xdmf(const std::string& h5_path, const std::function<void(std::ostream&)>& domain,
               MPI_Comm comm, OutputSet* set) {
  std::string text;
  if (comm_rank(comm) == 0) {
    std::ostringstream o;
    o.precision(17);  // Precision="8"
    o << "<?xml version=\"1.0\" ?>\n<Xdmf Version=\"3.0\">\n <Domain>\n";
    domain(o);
    o << " </Domain>\n</Xdmf>\n";
    text = o.str();
  }
  if (set)
    set->stage_text(xdmf_path(h5_path), text);
  else
    write_file_atomically(xdmf_path(h5_path), text, comm);
}
}  // namespace

void write_xdmf(const std::string& h5_path, const Int3& grid, const std::array<double, 3>& origin,
                const std::array<double, 3>& h, MPI_Comm comm, OutputSet* set) {
  save_xdmf(
      h5_path,
      [&](std::ostream& o) {
        xdmf_uniform_grid(o, "  ", "halo3d", grid, origin, h, h5_base_name(h5_path) + ":/u",
                          nullptr);
      },
      comm, set);
}

void write_xdmf_series(const std::string& h5_path, const Int3& grid,
                       const std::array<double, 3>& origin, const std::array<double, 3>& h,
                       const std::vector<XdmfStep>& steps, MPI_Comm comm, OutputSet* set) {
  save_xdmf(
      h5_path,
      [&](std::ostream& o) {
        o << "  <Grid Name=\"halo3d series\" GridType=\"Collection\" "
             "CollectionType=\"Temporal\">\n";
        for (const XdmfStep& s : steps)
          xdmf_uniform_grid(o, "   ", s.dataset.substr(s.dataset.find_last_of('/') + 1), grid,
                            origin, h, h5_base_name(h5_path) + ":/" + s.dataset, &s.t);
        o << "  </Grid>\n";
      },
      comm, set);
}

}  // namespace halo3d
