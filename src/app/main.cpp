#include <hdf5.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <exception>

#include "app.hpp"
#include "checks.hpp"
#include "cli.hpp"
#include "errors.hpp"
#include "kernels.hpp"
#include "mpi_env.hpp"
#include "reduction.hpp"
#include "threads.hpp"
#include "timers.hpp"

namespace {

// Every rank prints nothing but rank 0 prints the error, then all exit with its code.
// An error only some ranks may have seen cannot be agreed on: abort the whole job,
// which ends every rank within seconds instead of leaving the others to hang.
int fail(const char* raw, int code, bool collective) {
  const int rank = halo3d::comm_rank(MPI_COMM_WORLD);
  // One line, of bounded length, whatever a message quotes (a path with a newline, a 10 MB
  // name): control bytes escaped as \xNN, cut at 2000 characters.
  const std::string line = halo3d::printable(raw, 2000);
  const char* what = line.c_str();
  if (collective) {
    if (rank == 0) std::fprintf(stderr, "halo3d: error: %s\n", what);
    return code;
  }
  std::fprintf(stderr, "halo3d: error on rank %d: %s\n", rank, what);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  return code;
}

// Ctrl-C (SIGINT) stops a solve as SIGTERM does: it calls the stop handler that
// install_stop_signal_handlers() set for SIGTERM. A second Ctrl-C ends the process at once
// (the previous checkpoint, if any, stays; a cut-off write leaves a temporary that the next
// run writing that file removes).
struct sigaction g_stop_action {};
volatile std::sig_atomic_t g_interrupts = 0;
volatile std::sig_atomic_t g_say_interrupt = 0;  // rank 0 of a solve, once MPI is up

extern "C" void on_interrupt(int sig) {
  if (g_interrupts != 0) {
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
    return;
  }
  g_interrupts = 1;
  if (g_stop_action.sa_handler == SIG_DFL || g_stop_action.sa_handler == SIG_IGN) {
    std::signal(SIGINT, SIG_DFL);  // no stop handler to call: the default action
    std::raise(SIGINT);
    return;
  }
  if (g_say_interrupt) {
    static const char msg[] =
        "\nhalo3d: interrupted: stopping at the next iteration (with --checkpoint, after writing "
        "it); Ctrl-C again quits at once\n";
    const ssize_t n = ::write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)n;
  }
  g_stop_action.sa_handler(sig);
}

void install_interrupt_handler() {
  sigaction(SIGTERM, nullptr, &g_stop_action);
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  halo3d::process_start_seconds();  // the start of the run's start-up phase
  // Before MPI starts, so a SIGUSR1/SIGTERM/SIGINT that lands during start-up (a job
  // preempted at once) is remembered and turns into a checkpoint-and-exit, not a killed rank.
  halo3d::install_stop_signal_handlers();
  install_interrupt_handler();
  // A write past the file-size limit (ulimit -f) fails with EFBIG, reported as an I/O error
  // (exit 5, the temporary removed), instead of SIGXFSZ killing the rank mid-write.
  std::signal(SIGXFSZ, SIG_IGN);
  halo3d::MpiSession mpi(&argc, &argv);
  // Errors are reported as one line by halo3d, not as HDF5's error stack.
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const int rank = halo3d::comm_rank(MPI_COMM_WORLD);

  const halo3d::Command cmd = halo3d::parse_command_line(argc, argv);
  if (cmd.exit_code >= 0) {
    if (rank == 0) std::fputs(cmd.message.c_str(), cmd.exit_code == 0 ? stdout : stderr);
    return cmd.exit_code;
  }
  try {
    halo3d::check_mpi_thread_level(mpi.provided());
    halo3d::check_host_isa(MPI_COMM_WORLD);
    // Before any OpenMP region: threads per rank from the CPUs each host has.
    const halo3d::ThreadSetup& threads = halo3d::configure_threads(MPI_COMM_WORLD);
    if (rank == 0 && !threads.warning.empty()) std::fputs(threads.warning.c_str(), stderr);
    // Only a solve can stop cleanly on a signal; the rest keep the default action.
    if (cmd.name == "solve" && !cmd.solve.dry_run) {
      g_say_interrupt = rank == 0;
      return halo3d::run_solve(cmd.solve, MPI_COMM_WORLD);
    }
    for (const int sig : {SIGTERM, SIGUSR1, SIGINT}) std::signal(sig, SIG_DFL);
    if (cmd.name == "solve") return halo3d::run_solve(cmd.solve, MPI_COMM_WORLD);
    if (cmd.name == "bench") return halo3d::run_bench(cmd.bench, MPI_COMM_WORLD);
    if (cmd.name == "probe") return halo3d::run_probe(cmd.probe, MPI_COMM_WORLD);
    return halo3d::run_info(MPI_COMM_WORLD);
  } catch (const halo3d::Error& e) {
    return fail(e.what(), e.code(), e.collective());
  } catch (const std::exception& e) {
    return fail(e.what(), halo3d::kExitFailure, false);
  }
}
