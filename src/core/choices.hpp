// The options that pick one of a fixed list (--problem, --solver, --halo, ...): each list of
// names exists once, here, as a table of (name, value). The command line validates and
// converts with these tables (cli.cpp) and everything below compares the enums; reports,
// HDF5 attributes, --dry-run and checkpoint identities print the names with to_string.
#pragma once
#include <string>
#include <vector>

#include "errors.hpp"

namespace halo3d {

// Enumerators named after a C++ keyword carry a trailing underscore; their names do not.
enum class ProblemKind { poisson, heat };
enum class SolverKind { cg, jacobi };
enum class Precond { mg, none };
enum class Smoother { chebyshev, jacobi };
enum class MgInterp { trilinear, operator_ };
enum class Precision { double_, mixed };
enum class TimeScheme { explicit_, implicit, crank_nicolson };
enum class Backend { auto_, host, cuda };
enum class Transport { auto_, mpi, mpi_cuda, ipc, nccl };
enum class PeerAccess { auto_, off };
enum class OnOff { on, off };
enum class OverlapMode { auto_, on, off };

template <class E>
struct Choice {
  const char* name;
  E value;
};

// One table per enum, in the order the command line lists the names.
template <class E>
struct ChoiceTable;
#define HALO3D_CHOICES(E, ...)                          \
  template <>                                           \
  struct ChoiceTable<E> {                               \
    static constexpr Choice<E> items[] = {__VA_ARGS__}; \
  }
HALO3D_CHOICES(ProblemKind, {"poisson", ProblemKind::poisson}, {"heat", ProblemKind::heat});
HALO3D_CHOICES(SolverKind, {"cg", SolverKind::cg}, {"jacobi", SolverKind::jacobi});
HALO3D_CHOICES(Precond, {"mg", Precond::mg}, {"none", Precond::none});
HALO3D_CHOICES(Smoother, {"chebyshev", Smoother::chebyshev}, {"jacobi", Smoother::jacobi});
HALO3D_CHOICES(MgInterp, {"trilinear", MgInterp::trilinear}, {"operator", MgInterp::operator_});
HALO3D_CHOICES(Precision, {"double", Precision::double_}, {"mixed", Precision::mixed});
HALO3D_CHOICES(TimeScheme, {"explicit", TimeScheme::explicit_}, {"implicit", TimeScheme::implicit},
               {"crank-nicolson", TimeScheme::crank_nicolson});
HALO3D_CHOICES(Backend, {"auto", Backend::auto_}, {"host", Backend::host}, {"cuda", Backend::cuda});
HALO3D_CHOICES(Transport, {"auto", Transport::auto_}, {"mpi", Transport::mpi},
               {"mpi-cuda", Transport::mpi_cuda}, {"ipc", Transport::ipc},
               {"nccl", Transport::nccl});
HALO3D_CHOICES(PeerAccess, {"auto", PeerAccess::auto_}, {"off", PeerAccess::off});
HALO3D_CHOICES(OnOff, {"on", OnOff::on}, {"off", OnOff::off});
HALO3D_CHOICES(OverlapMode, {"auto", OverlapMode::auto_}, {"on", OverlapMode::on},
               {"off", OverlapMode::off});
#undef HALO3D_CHOICES

// Every name of E, in the table's order.
template <class E>
std::vector<std::string> choice_names() {
  std::vector<std::string> names;
  for (const Choice<E>& c : ChoiceTable<E>::items) names.emplace_back(c.name);
  return names;
}

template <class E, class = decltype(ChoiceTable<E>::items)>
std::string to_string(E value) {
  for (const Choice<E>& c : ChoiceTable<E>::items)
    if (c.value == value) return c.name;
  return "?";  // unreachable: every enumerator has a row
}

// The value named `name`; BadInput naming `option` and listing the choices otherwise.
template <class E>
E parse_choice(const std::string& name, const std::string& option) {
  std::string list;
  for (const Choice<E>& c : ChoiceTable<E>::items) {
    if (name == c.name) return c.value;
    list += (list.empty() ? "" : ", ") + std::string(c.name);
  }
  throw BadInput(option + " " + name + ": expected one of " + list);
}

// The halo transports that exist, without auto, in order of preference on a tie.
inline std::vector<Transport> concrete_transports() {
  std::vector<Transport> out;
  for (const Choice<Transport>& c : ChoiceTable<Transport>::items)
    if (c.value != Transport::auto_) out.push_back(c.value);
  return out;
}

}  // namespace halo3d
