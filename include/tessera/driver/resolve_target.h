// Target resolution: the one place where the compiler asks the machine it runs on what it is
// (issue 13: nothing below the driver queries the host; tests/target/no_host_query.cmake
// checks it). build() resolves its target string once and passes the explicit Target down.
#pragma once

#include <string>

#include "tessera/target/target.h"

namespace tessera::driver {

/// Parses `spec` (target::Target::Parse) and makes it explicit:
///  * an empty triple becomes this process's triple;
///  * CPU `native` becomes the host's CPU name and its full feature list (LLVM's
///    getHostCPUName / getHostCPUFeatures) followed by any -mattr, when the triple's
///    architecture is the host's; else CPU "generic";
///  * an unset -num-cores becomes the host's core count for a native CPU (else stays 0);
///  * triple, CPU and features are checked against LLVM's tables, and an explicit CPU's
///    default features are written out (codegen::CompleteTarget);
///  * for a native CPU, the cache sizes are the host's where the OS reports them.
/// Throws UserError for a bad string (naming the token) or an unknown triple / CPU / feature.
target::Target ResolveTarget(const std::string& spec);

/// ResolveTarget("native"): the machine this process runs on.
target::Target HostTarget();

/// True when code for `t` runs on this machine: the same architecture, and every feature
/// `t` enables that the host reports is enabled on the host.
bool RunsOnHost(const target::Target& t);

}  // namespace tessera::driver
