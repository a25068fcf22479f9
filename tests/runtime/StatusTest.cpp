// tests/runtime/StatusTest.cpp: the runtime's error type keeps its code and
// message through copies and moves, and success stays one null pointer.
#include "runtime/Status.h"

#include <gtest/gtest.h>

#include <type_traits>

namespace collc::rt {
namespace {

TEST(Status, SuccessHasNoCodeAndNoMessage) {
  Status s = Status::success();
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::Ok);
  EXPECT_EQ(s.message(), "");
}

TEST(Status, IsOnePointerWide) {
  // The interpreter returns a Status from every step; success must not cost
  // a string's construction and destruction.
  EXPECT_EQ(sizeof(Status), sizeof(void *));
}

TEST(Status, ErrorKeepsCodeAndMessage) {
  Status s = Status::error(ErrorCode::Mpi, "MPI_Isend: MPI_ERR_TAG: invalid tag");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::Mpi);
  EXPECT_EQ(s.message(), "MPI_Isend: MPI_ERR_TAG: invalid tag");
}

TEST(Status, CopiesAreIndependent) {
  Status a = Status::error(ErrorCode::Corrupt, "checksum mismatch");
  Status b = a;
  a = Status::error(ErrorCode::Io, "cannot read x.cplan");
  EXPECT_EQ(b.code(), ErrorCode::Corrupt);
  EXPECT_EQ(b.message(), "checksum mismatch");
  EXPECT_EQ(a.code(), ErrorCode::Io);
  const Status &same = b;
  b = same; // self-assignment keeps the failure
  EXPECT_EQ(b.message(), "checksum mismatch");
  Status c;
  c = a;
  EXPECT_EQ(c.message(), "cannot read x.cplan");
  c = Status::success();
  EXPECT_TRUE(c.ok());
}

TEST(Status, MovesCarryTheFailure) {
  Status a = Status::error(ErrorCode::Shape, "the plan is for 4 ranks");
  Status b = std::move(a);
  EXPECT_EQ(b.code(), ErrorCode::Shape);
  EXPECT_EQ(b.message(), "the plan is for 4 ranks");
  static_assert(std::is_nothrow_move_constructible_v<Status>);
}

} // namespace
} // namespace collc::rt
