// Stackful coroutines (the server's attempts: asio::spawn on Boost.Context, docs/server.md "How
// attempts run") are destroyed by throwing boost::context::detail::forced_unwind through their
// stack. It is no std::exception, so `catch (const std::exception&)` lets it pass, but a
// `catch (...)` that swallows it leaves a destroyed coroutine running on: undefined behaviour
// (a double free, a SIGSEGV, a "failed with an unknown error" ledger row; issue 7 item 10).
// The Boost header stays in host/unwind.cc: this header is plain C++.
#pragma once

namespace devflow {

/// Call first in every `catch (...)` whose try block may suspend a coroutine (anything that can
/// run a check: the waterfall, a move): rethrows the exception being handled when it is a
/// coroutine's forced unwind, and returns otherwise. Only valid inside a catch handler.
void RethrowIfForcedUnwind();

/// What the exception being handled says: what() of a std::exception, else "an exception that
/// is not a std::exception". Calls RethrowIfForcedUnwind first. Only valid inside a catch
/// handler.
const char* CurrentExceptionWhat();

}  // namespace devflow
