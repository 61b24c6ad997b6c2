# Fails when a compiler layer asks the host CPU anything (issue 13: the target is named, never
# assumed; `native` is resolved once, in src/driver). Allowed: src/driver, src/runtime (the runtime
# checks an artifact against the machine it loads on) and tools/. Usage:
#   cmake -DROOT=<repository root> -P no_host_query.cmake
set(patterns "__builtin_cpu" "getHost" "sys::getProcessTriple" "hardware_concurrency" "sysconf" "cpuid"
             "/proc/cpuinfo" "getauxval")
file(GLOB_RECURSE files RELATIVE ${ROOT} ${ROOT}/src/*.cc ${ROOT}/src/*.h ${ROOT}/include/tessera/*.h)
set(bad "")
foreach(f IN LISTS files)
  if(f MATCHES "^src/(driver|runtime)/" OR f MATCHES "^include/tessera/(driver|runtime)/")
    continue()
  endif()
  file(STRINGS ${ROOT}/${f} lines)
  set(n 0)
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    foreach(p IN LISTS patterns)
      string(FIND "${line}" "${p}" at)
      if(NOT at EQUAL -1)
        string(APPEND bad "  ${f}:${n}: ${line}\n")
      endif()
    endforeach()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "host queries below the driver (pass the target down instead; see docs/CONTRIBUTING.md, \"Targets\"):\n${bad}")
endif()
message(STATUS "no host query below the driver (${ROOT})")
