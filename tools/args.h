// A small declarative command-line parser shared by the subcommands. Each subcommand lists its
// positional arguments and options, bound to variables that hold their defaults; the parser fills them
// in, prints --help (usage line, every option with its default) and reports usage errors.
//
//   ArgParser p("run", "Run a model once and print its outputs.");
//   p.positional("MODEL", "model file", &model_path);
//   p.option_int("--threads", "N", "worker threads (0 = one per core)", &threads, 0, 1024);
//   p.flag("--json", "print one JSON object", &json);
//   int exit_code;
//   if (!p.parse(argc, argv, &exit_code)) return exit_code;  // --help (0) or a usage error (2)
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace ninegrid::cli {

// Exit code of a command-line usage error (unknown option, missing or malformed value).
constexpr int kUsageExitCode = 2;

class ArgParser {
 public:
  // `command` is the subcommand's name ("run"); `description` is printed under the usage line.
  ArgParser(std::string command, std::string description);

  // A required positional argument.
  void positional(const std::string& metavar, const std::string& help, std::string* target);
  // A boolean switch, false unless given.
  void flag(const std::string& name, const std::string& help, bool* target);
  // An option with a string value. The default shown in --help is `default_text` when given, else the
  // target's initial value (or "none" when that is empty).
  void option(const std::string& name, const std::string& metavar, const std::string& help, std::string* target,
              const std::string& default_text = "");
  // An option with an integer value in [min_value, max_value].
  void option_int(const std::string& name, const std::string& metavar, const std::string& help, int* target,
                  int min_value, int max_value, const std::string& default_text = "");
  // An option that may be given any number of times; values are appended in order. `validate` (optional)
  // throws ninegrid::Error with a message when a value is malformed, which becomes a usage error.
  void repeated(const std::string& name, const std::string& metavar, const std::string& help,
                std::vector<std::string>* target, std::function<void(const std::string&)> validate = nullptr);
  // A paragraph printed at the end of --help (examples, notes).
  void epilog(const std::string& text) { epilog_ = text; }

  // Parses argv[1..argc) (argv[0] is the subcommand name). Returns true to proceed; on --help (exit 0)
  // or a usage error (message on stderr, exit 2) returns false with the exit code in *exit_code.
  bool parse(int argc, char** argv, int* exit_code);

  void print_help(std::FILE* out) const;

 private:
  enum class Kind { Flag, String, Int, Repeated };
  struct Opt {
    std::string name, metavar, help, default_text;
    Kind kind = Kind::Flag;
    bool* flag = nullptr;
    std::string* str = nullptr;
    int* integer = nullptr;
    int min_value = 0, max_value = 0;
    std::vector<std::string>* list = nullptr;
    std::function<void(const std::string&)> validate;
  };
  struct Positional {
    std::string metavar, help;
    std::string* target = nullptr;
  };

  Opt& add(const std::string& name, const std::string& metavar, const std::string& help, Kind kind);
  const Opt* find(const std::string& name) const;
  // Stores `value` into the option's target; returns an error message, or "" on success.
  std::string apply(const Opt& opt, const std::string& value) const;
  // The parse proper: sets *help on --help; returns a usage error message, or "" on success.
  std::string parse_args(int argc, char** argv, bool* help);

  std::string command_, description_, epilog_;
  std::vector<Opt> options_;
  std::vector<Positional> positionals_;
};

}  // namespace ninegrid::cli
