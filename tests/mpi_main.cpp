// GoogleTest main for tests run under mpirun: every rank runs every test; only rank 0
// prints progress; the verdict is all-reduced, so a failure on any rank fails all.
#include <gtest/gtest.h>
#include <mpi.h>

#include "mpi_env.hpp"

namespace {

// Prints failures from every rank (they may be rank-specific) but the rest only on 0.
class RankPrinter : public testing::EmptyTestEventListener {
 public:
  explicit RankPrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const testing::TestPartResult& r) override {
    if (r.failed())
      std::fprintf(stderr, "[rank %d] %s:%d: %s\n", rank_, r.file_name() ? r.file_name() : "?",
                   r.line_number(), r.summary());
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  // As halo3d starts MPI (thread level, MPI-IO component choices); finalized on return.
  halo3d::MpiSession mpi(&argc, &argv);
  testing::InitGoogleTest(&argc, argv);
  // An exception on one rank must end the job, not leave the other ranks waiting in a
  // collective of the next test: let it terminate the process, so mpirun aborts all.
  GTEST_FLAG_SET(catch_exceptions, false);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  auto& listeners = testing::UnitTest::GetInstance()->listeners();
  if (rank != 0) {
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankPrinter(rank));
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && any && !failed) std::fprintf(stderr, "a test failed on another rank\n");
  return any;
}
