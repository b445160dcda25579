// The symlinks a path goes through (issue 7 item 8): one walk, used wherever the gate decides
// whether a path the judged agent could redirect lies in its workspace — `config check`'s
// trust warnings (config/config.h TrustWarnings) and the $PATH entries the checker's program
// search keeps (checker/sandbox.h SearchPath).
#pragma once

#include <string>
#include <vector>

namespace devflow {

/// The symlinks met resolving the absolute `path` the way the kernel does, in order, each as
/// where the link itself lies (its directory resolved, then its own name): a link in the
/// workspace can be retargeted by the judged agent even when both ends lie outside it. A
/// component that does not exist ends the symlinks (the rest is lexical). At most 40 links, as
/// the kernel's ELOOP.
std::vector<std::string> SymlinksAlong(const std::string& path);

}  // namespace devflow
