// StartControl and StartDeadline: a start's bound is a timer on the clock its caller
// gives, so it is tested here on virtual time (a ManualClock), with no sleeps.
#include "core/launch/start_control.h"

#include <gtest/gtest.h>

#include "core/base/clock.h"

namespace plugboard::core {
namespace {

TEST(StartDeadlineTest, CancelsTheStartWhenItsTimeComesAndNotBefore) {
  ManualClock clock;
  StartControl control;
  int cancels = 0;
  control.attach([&] { ++cancels; });
  {
    StartDeadline deadline(clock, control, Millis(500));
    clock.advance(Millis(499));
    EXPECT_FALSE(control.cancelled());
    clock.advance(Millis(1));
    EXPECT_TRUE(control.cancelled());
    EXPECT_EQ(cancels, 1);  // the deployer's cancel, through the attached canceller
  }
  control.release();
  EXPECT_EQ(clock.pending(), 0u);
}

TEST(StartDeadlineTest, AStartThatEndsBeforeItsDeadlineLeavesNoTimer) {
  ManualClock clock;
  StartControl control;
  {
    StartDeadline deadline(clock, control, Millis(500));
    EXPECT_EQ(clock.pending(), 1u);
  }
  EXPECT_EQ(clock.pending(), 0u);
  clock.advance(Millis(1000));
  EXPECT_FALSE(control.cancelled());
}

}  // namespace
}  // namespace plugboard::core
