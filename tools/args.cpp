#include "args.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ninegrid/tensor.h"

namespace ninegrid::cli {

ArgParser::ArgParser(std::string command, std::string description)
    : command_(std::move(command)), description_(std::move(description)) {}

void ArgParser::positional(const std::string& metavar, const std::string& help, std::string* target) {
  positionals_.push_back({metavar, help, target});
}

ArgParser::Opt& ArgParser::add(const std::string& name, const std::string& metavar, const std::string& help,
                               Kind kind) {
  options_.emplace_back();
  Opt& o = options_.back();
  o.name = name;
  o.metavar = metavar;
  o.help = help;
  o.kind = kind;
  return o;
}

void ArgParser::flag(const std::string& name, const std::string& help, bool* target) {
  add(name, "", help, Kind::Flag).flag = target;
}

void ArgParser::option(const std::string& name, const std::string& metavar, const std::string& help,
                       std::string* target, const std::string& default_text) {
  Opt& o = add(name, metavar, help, Kind::String);
  o.str = target;
  o.default_text = !default_text.empty() ? default_text : target->empty() ? "none" : *target;
}

void ArgParser::option_int(const std::string& name, const std::string& metavar, const std::string& help, int* target,
                           int min_value, int max_value, const std::string& default_text) {
  Opt& o = add(name, metavar, help, Kind::Int);
  o.integer = target;
  o.min_value = min_value;
  o.max_value = max_value;
  o.default_text = !default_text.empty() ? default_text : std::to_string(*target);
}

void ArgParser::repeated(const std::string& name, const std::string& metavar, const std::string& help,
                         std::vector<std::string>* target, std::function<void(const std::string&)> validate) {
  Opt& o = add(name, metavar, help, Kind::Repeated);
  o.list = target;
  o.validate = std::move(validate);
}

const ArgParser::Opt* ArgParser::find(const std::string& name) const {
  for (const Opt& o : options_)
    if (o.name == name) return &o;
  return nullptr;
}

std::string ArgParser::apply(const Opt& opt, const std::string& value) const {
  switch (opt.kind) {
    case Kind::Flag:
      return "option '" + opt.name + "' takes no value";
    case Kind::String:
      *opt.str = value;
      return "";
    case Kind::Int: {
      errno = 0;
      char* end = nullptr;
      long v = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || errno == ERANGE)
        return "option '" + opt.name + "' expects an integer, got '" + value + "'";
      if (v < opt.min_value || v > opt.max_value)
        return "option '" + opt.name + "' must be between " + std::to_string(opt.min_value) + " and " +
               std::to_string(opt.max_value) + ", got " + value;
      *opt.integer = static_cast<int>(v);
      return "";
    }
    case Kind::Repeated:
      if (opt.validate) {
        try {
          opt.validate(value);
        } catch (const Error& e) {
          return "option '" + opt.name + "': " + e.what();
        }
      }
      opt.list->push_back(value);
      return "";
  }
  return "";
}

std::string ArgParser::parse_args(int argc, char** argv, bool* help) {
  size_t next_positional = 0;
  bool options_done = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (!options_done && (arg == "--help" || arg == "-h")) {
      *help = true;
      return "";
    }
    if (!options_done && arg == "--") {
      options_done = true;
      continue;
    }
    if (!options_done && arg.size() > 1 && arg[0] == '-') {
      // "--name=value" or "--name value".
      std::string name = arg, value;
      bool inline_value = false;
      size_t eq = arg.find('=');
      if (arg.compare(0, 2, "--") == 0 && eq != std::string::npos) {
        name = arg.substr(0, eq);
        value = arg.substr(eq + 1);
        inline_value = true;
      }
      const Opt* opt = find(name);
      if (!opt) return "unknown option '" + name + "'";
      if (opt->kind == Kind::Flag && !inline_value) {
        *opt->flag = true;
        continue;
      }
      if (!inline_value) {
        // A following "--option" is not taken as a value: `--threads --json` is a missing value.
        if (i + 1 >= argc || std::strncmp(argv[i + 1], "--", 2) == 0)
          return "option '" + name + "' needs a value " + opt->metavar;
        value = argv[++i];
      }
      std::string err = apply(*opt, value);
      if (!err.empty()) return err;
      continue;
    }
    if (next_positional >= positionals_.size()) return "unexpected argument '" + arg + "'";
    *positionals_[next_positional++].target = arg;
  }
  if (next_positional < positionals_.size()) return "missing argument " + positionals_[next_positional].metavar;
  return "";
}

bool ArgParser::parse(int argc, char** argv, int* exit_code) {
  bool help = false;
  std::string err = parse_args(argc, argv, &help);
  if (help) {
    print_help(stdout);
    *exit_code = 0;
    return false;
  }
  if (!err.empty()) {
    std::fprintf(stderr, "ninegrid %s: error: %s (see 'ninegrid %s --help')\n", command_.c_str(), err.c_str(),
                 command_.c_str());
    *exit_code = kUsageExitCode;
    return false;
  }
  return true;
}

void ArgParser::print_help(std::FILE* out) const {
  std::string usage = "usage: ninegrid " + command_;
  for (const Positional& p : positionals_) usage += " " + p.metavar;
  if (!options_.empty()) usage += " [options]";
  std::fprintf(out, "%s\n\n%s\n", usage.c_str(), description_.c_str());

  // Left column "--name METAVAR", help text wrapped to fit 100 columns beside it (or under it when the
  // left column is too wide).
  const size_t column = 26, width = 100;
  auto row = [&](const std::string& left, const std::string& help) {
    std::vector<std::string> lines(1);
    size_t pos = 0;
    while (pos < help.size()) {
      size_t end = help.find(' ', pos);
      if (end == std::string::npos) end = help.size();
      std::string word = help.substr(pos, end - pos);
      if (!lines.back().empty() && column + lines.back().size() + 1 + word.size() > width) lines.emplace_back();
      lines.back() += (lines.back().empty() ? "" : " ") + word;
      pos = end + 1;
    }
    size_t first = 0;
    if (left.size() + 4 <= column) {
      std::fprintf(out, "  %-*s%s\n", static_cast<int>(column - 2), left.c_str(), lines[0].c_str());
      first = 1;
    } else {
      std::fprintf(out, "  %s\n", left.c_str());
    }
    for (size_t i = first; i < lines.size(); ++i)
      std::fprintf(out, "%-*s%s\n", static_cast<int>(column), "", lines[i].c_str());
  };
  if (!positionals_.empty()) {
    std::fprintf(out, "\narguments:\n");
    for (const Positional& p : positionals_) row(p.metavar, p.help);
  }
  std::fprintf(out, "\noptions:\n");
  for (const Opt& o : options_) {
    std::string left = o.name + (o.metavar.empty() ? "" : " " + o.metavar);
    std::string help = o.help;
    if (o.kind == Kind::String || o.kind == Kind::Int) help += " (default: " + o.default_text + ")";
    if (o.kind == Kind::Repeated) help += " (repeatable)";
    row(left, help);
  }
  row("-h, --help", "show this help and exit");
  if (!epilog_.empty()) std::fprintf(out, "\n%s\n", epilog_.c_str());
}

}  // namespace ninegrid::cli
