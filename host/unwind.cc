#include "host/unwind.h"

#include <boost/context/detail/exception.hpp>
#include <exception>

namespace devflow {

void RethrowIfForcedUnwind() {
  try {
    throw;
  } catch (const boost::context::detail::forced_unwind&) {
    throw;
  } catch (...) {
  }
}

const char* CurrentExceptionWhat() {
  RethrowIfForcedUnwind();
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

}  // namespace devflow
