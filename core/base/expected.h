// core/base/expected.h: errors as values inside the core.
//
// Error, Expected<T> and Status are defined in the host kit (plugboard/host/expected.h),
// which deployers use too; this header only names them in plugboard::core.
#ifndef PLUGBOARD_CORE_BASE_EXPECTED_H_
#define PLUGBOARD_CORE_BASE_EXPECTED_H_

#include <plugboard/host/expected.h>

namespace plugboard::core {

using host::Error;
using host::Expected;
using host::Status;

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_BASE_EXPECTED_H_
