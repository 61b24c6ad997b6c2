/* The Tessera version. An artifact records the version that built it and the runtime loads
 * only artifacts of its own version (runtime/artifact_info.h). Plain C, so that hand-written
 * C fixtures can include it. */
#pragma once

#define TESSERA_VERSION "0.1.0"
