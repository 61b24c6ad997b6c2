// tessera: compile ONNX models to native shared libraries, tune their schedules, run and inspect them.
// Exit codes: 0 success, 1 a user error (bad file, unsupported op, wrong input),
// 2 a command-line error, 3 an internal error (a bug in Tessera: please report it).
#include <exception>
#include <iostream>

#include "commands.h"
#include "tessera/support/error.h"

int main(int argc, char** argv) {
  CLI::App app{"Tessera: an end-to-end optimizing compiler for deep learning models"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show the help of every subcommand");
  auto compile = tessera::cli::AddCompileCommand(app);
  auto run = tessera::cli::AddRunCommand(app);
  auto inspect = tessera::cli::AddInspectCommand(app);
  auto tune = tessera::cli::AddTuneCommand(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    if (app.got_subcommand("compile")) return compile();
    if (app.got_subcommand("run")) return run();
    if (app.got_subcommand("inspect")) return inspect();
    if (app.got_subcommand("tune")) return tune();
  } catch (const tessera::InternalError& e) {
    std::cerr << "tessera: " << e.what() << "\n(this is a bug in Tessera)\n";
    return 3;
  } catch (const tessera::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "tessera: internal error: " << e.what() << "\n";
    return 3;
  }
  return 2;
}
