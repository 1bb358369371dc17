#include "baton/cli/analyze_command.h"

#include <algorithm>
#include <ctime>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include "baton/cli/analyze_experiment.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include "baton/analysis/analysis_report.h"
#include "baton/analysis/counted.h"
#include "baton/analysis/csv_import.h"
#include "baton/analysis/event_classes.h"
#include "baton/analysis/prometheus_strata.h"
#include "baton/analysis/regression_report.h"
#include "baton/analysis/strata.h"
#include "baton/analysis/time_window.h"
#include "baton/analysis/timeline_axis.h"
#include "baton/analysis/timeline_svg.h"
#include "baton/cli/prometheus_client.h"
#include "baton/common/clock.h"
#include "baton/common/duration.h"
#include "baton/common/exit_codes.h"
#include "baton/ledger/ledger_path.h"
#include "baton/ledger/ledger_reader.h"
#include "baton/ledger/ledger_schema.h"
#include "baton/ledger/sqlite.h"

namespace baton {
namespace {

struct Source {
  std::string label;
  ExposureInput input;
};

std::string utc_time(double unix_seconds) {
  const auto t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

// A run with no end was cut short (killed, a crash, a power loss) or is still running:
// what it had not yet written is missing from the figures, which must say so.
void warn_of_open_runs(const std::string& path, const std::vector<LedgerRun>& runs) {
  for (const LedgerRun& run : runs) {
    if (run.stop) continue;
    std::cerr << "baton analyze: warning: run " << run.id << " of " << path << " (started "
              << utc_time(run.start)
              << ") was never closed: its server is still running, or was killed before it "
                 "could close the run, and what it had not yet written is missing\n";
  }
}

// The ledger's runs under `policy`. A policy given without the options that the runs'
// name carries ("serialize/layer" for "serialize/layer+decode-first") selects those runs
// when they are the only ones it can mean, with a note that says so.
LedgerContents read_policy(const std::string& path, const std::optional<std::string>& policy) {
  try {
    return read_ledger(path, policy);
  } catch (const LedgerFormatError&) {
    throw;
  } catch (const std::invalid_argument&) {
    if (!policy || !std::filesystem::is_regular_file(path)) throw;
    std::set<std::string> with_options;
    for (const LedgerRun& run : read_ledger(path).runs) {
      if (run.policy.starts_with(*policy + "+")) with_options.insert(run.policy);
    }
    if (with_options.size() != 1) throw;
    const std::string& held = *with_options.begin();
    std::cerr << "baton analyze: note: --policy " << *policy << " is " << held << " in " << path
              << "\n";
    return read_ledger(path, held);
  }
}

// read_policy(), a file SQLite cannot read (damaged, cut short) named by its path and the
// problem, not by the statement that met it.
LedgerContents read_contents(const std::string& path, const std::optional<std::string>& policy) {
  try {
    return read_policy(path, policy);
  } catch (const SqliteError& error) {
    const bool damaged = error.code() == SQLITE_CORRUPT || error.code() == SQLITE_NOTADB;
    throw std::invalid_argument(
        "cannot read the ledger " + path + ": " + sqlite3_errstr(error.code()) +
        (damaged ? " (the file is damaged; `sqlite3 " + path + " .recover` may save what is left)"
                 : std::string()));
  }
}

Source from_ledger(const std::string& path, const std::optional<std::string>& policy) {
  LedgerContents contents = read_contents(path, policy);
  warn_of_open_runs(path, contents.runs);
  std::string label = path;
  if (policy) label += " [" + (contents.runs.empty() ? *policy : contents.runs[0].policy) + "]";
  return {.label = std::move(label), .input = std::move(contents.input)};
}

// The ledgers of a fleet, each file once, with a note for one given again (the same path,
// another spelling or a link to it: the same device and inode): counted twice, its hangs
// would be two hosts' hangs. A path that is not there is kept for read_ledger to refuse.
std::vector<std::string> distinct_files(const std::vector<std::string>& paths) {
  std::vector<std::pair<std::pair<dev_t, ino_t>, std::string>> seen;
  std::vector<std::string> kept;
  for (const std::string& path : paths) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      kept.push_back(path);
      continue;
    }
    const std::pair id{st.st_dev, st.st_ino};
    const auto same = std::find_if(seen.begin(), seen.end(),
                                   [&](const auto& s) { return s.first == id; });
    if (same != seen.end()) {
      std::cerr << "baton analyze: note: " << path << " is the same file as " << same->second
                << ": counted once\n";
      continue;
    }
    seen.emplace_back(id, path);
    kept.push_back(path);
  }
  return kept;
}

}  // namespace

CLI::App* AnalyzeCommand::attach(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "analyze", "Exposure, hang rates and exact tests from a ledger or from CSV logs");
  cmd->add_option("--ledger", ledgers,
                  "A ledger to read (default: $BATON_LEDGER or ~/.local/state/baton/ledger.db); "
                  "give two with --compare");
  cmd->add_option("--policy", policies,
                  "Only the runs under this policy (e.g. serialize/layer); give two with "
                  "--compare to compare the policies of one ledger");
  cmd->add_option("--intervals", intervals_csv, "busy.csv: engine,start,end[,context_tokens]");
  cmd->add_option("--events", events_csv, "hangs.csv: time,engine[,class]");
  cmd->add_option("--long-context", options.long_context,
                  "Context length (tokens) from which a request counts as long")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  cmd->add_option("--cluster-window", cluster_window,
                  "Hangs closer than this to the previous one are one cluster (e.g. 45m, 90s)")
      ->capture_default_str();
  cmd->add_option("--class", classes,
                  "Event classes that count as hangs (default: hang, timeout, "
                  "submissions_ignored)");
  cmd->add_option("--other-gpu-busy", options.other_client_sm_percent,
                  "Percent of SM time from which other processes' GPU use (NVML polls) counts "
                  "as another client busy")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 100.0));
  cmd->add_flag("--compare", compare, "Compare two ledgers or two policies (A/B)");
  cmd->add_flag("--experiment", experiment,
                "The verdict of the ledger's live experiments (baton serve --experiment)");
  cmd->add_option("--plot", plot_path, "Write a timeline of busy intervals and hangs (SVG)");
  cmd->add_option("--plot-gaps", plot_gaps,
                  fmt::format("collapse: cut idle gaps of an hour or more out of the time axis, "
                              "longest first, until those left take at most {:g}% of the time "
                              "drawn; keep: draw all time to one scale",
                              100.0 * kMaxIdleShare))
      ->capture_default_str()
      ->check(CLI::IsMember({"collapse", "keep"}));
  cmd->add_flag("--json", json, "Print one JSON object instead of tables");
  cmd->add_option("--since", since,
                  "Only from this time on: Unix seconds, ISO-8601 with an offset, or a UTC "
                  "date (2026-10-02)");
  cmd->add_option("--until", until, "Only before this time (the same forms as --since)");
  cmd->add_option("--prometheus", prometheus,
                  "Read the fleet's counters (baton_exposure_*) from this Prometheus server "
                  "(http://HOST:PORT) instead of ledgers; needs --by");
  cmd->add_option("--range", range,
                  "With --prometheus: the window ending now (7d, 36h, 90m; default 7d), read "
                  "a day at a time");
  cmd->add_option("--selector", selector,
                  "With --prometheus: the series to read, as a PromQL label matcher "
                  "('{job=\"baton\"}')");
  cmd->add_option("--timeout", timeout,
                  "With --prometheus: how long one request may take before analyze gives up "
                  "with exit code 1 (default 30s)");
  cmd->add_option("--by", by,
                  "Split busy time and hangs by a factor and fit a Poisson regression over "
                  "them (repeat it): " +
                      known_factors() +
                      ". Several --ledger are then one fleet, host a factor (a file given twice "
                      "counts once). A window without busy time exits with 1");
  return cmd;
}

namespace {

std::optional<double> window_end(const std::string& text, const char* flag) {
  if (text.empty()) return std::nullopt;
  const std::optional<double> t = parse_window_end(text);
  if (!t) {
    throw std::invalid_argument(std::string(flag) + ": '" + text +
                                "' is not a time (Unix seconds, 2026-10-02T12:00:00Z, or a "
                                "date 2026-10-02)");
  }
  return t;
}

// The source's input within --since/--until.
Source windowed(Source source, const AnalyzeCommand& c) {
  const std::optional<double> since = window_end(c.since, "--since");
  const std::optional<double> until = window_end(c.until, "--until");
  if (since && until && !(*since < *until)) {
    throw std::invalid_argument("--since must come before --until");
  }
  source.input = within_window(std::move(source.input), since, until);
  return source;
}

std::vector<Source> load_sources(const AnalyzeCommand& c) {
  const bool csv = !c.intervals_csv.empty() || !c.events_csv.empty();
  if (csv) {
    if (c.intervals_csv.empty() || c.events_csv.empty()) {
      throw std::invalid_argument("--intervals and --events go together");
    }
    if (!c.ledgers.empty() || !c.policies.empty() || c.compare) {
      throw std::invalid_argument("CSV logs are analysed alone: drop --ledger/--policy/--compare");
    }
    Source logs{.label = c.intervals_csv,
                .input = {.intervals = read_busy_csv(c.intervals_csv),
                          .hangs = read_hangs_csv(c.events_csv)}};
    return {windowed(std::move(logs), c)};
  }
  std::vector<std::string> ledgers = c.ledgers;
  if (ledgers.empty()) ledgers.push_back(default_ledger_path().string());
  if (c.compare) {
    const bool two_ledgers = ledgers.size() == 2 && c.policies.size() <= 1;
    const bool two_policies = ledgers.size() == 1 && c.policies.size() == 2;
    if (!two_ledgers && !two_policies) {
      throw std::invalid_argument("--compare needs two ledgers, or one ledger and two policies");
    }
    if (two_ledgers && distinct_files(ledgers).size() == 1) {
      throw std::invalid_argument("--compare: " + ledgers[0] + " and " + ledgers[1] +
                                  " are the same ledger: give two ledgers, or one ledger and "
                                  "two policies");
    }
  } else if (ledgers.size() > 1 || c.policies.size() > 1) {
    throw std::invalid_argument("two ledgers or two policies need --compare");
  }
  const std::size_t arms = c.compare ? 2 : 1;
  std::vector<Source> sources;
  for (std::size_t arm = 0; arm < arms; ++arm) {
    const std::string& ledger = ledgers[std::min(arm, ledgers.size() - 1)];
    std::optional<std::string> policy;
    if (!c.policies.empty()) policy = c.policies[std::min(arm, c.policies.size() - 1)];
    sources.push_back(windowed(from_ledger(ledger, policy), c));
  }
  return sources;
}

// The ledger's names of the classes given with --class, in any case. An unknown word
// would count nothing, so it is refused.
std::set<std::string> hang_classes(const std::vector<std::string>& given) {
  std::set<std::string> classes;
  for (const std::string& text : given) {
    const std::optional<std::string_view> name = event_class(text);
    if (!name) {
      throw std::invalid_argument("--class: unknown class '" + text + "' (want " +
                                  known_event_classes() + ")");
    }
    classes.emplace(*name);
  }
  return classes;
}

}  // namespace

namespace {

// A Prometheus duration (digits and one of s m h d w y) in seconds; nullopt otherwise.
std::optional<double> prometheus_duration(const std::string& text) {
  static const std::map<char, double> unit{{'s', 1},     {'m', 60},     {'h', 3600},
                                           {'d', 86400}, {'w', 604800}, {'y', 31536000}};
  if (text.size() < 2 || !std::all_of(text.begin(), text.end() - 1, ::isdigit) ||
      !unit.contains(text.back()) || text.size() > 12) {
    return std::nullopt;
  }
  return std::stod(text.substr(0, text.size() - 1)) * unit.at(text.back());
}

// --range, --selector and --timeout mean nothing without --prometheus: ignoring them would
// analyse another window or other series than the user asked for.
void check_prometheus_flags(const AnalyzeCommand& c) {
  if (c.prometheus.empty() && (!c.range.empty() || !c.selector.empty() || !c.timeout.empty())) {
    throw std::invalid_argument(
        "--range, --selector and --timeout go with --prometheus (a ledger's window is "
        "--since/--until)");
  }
}

// The fleet's strata from the raw samples of its counters over --range.
Strata from_prometheus(const AnalyzeCommand& c) {
  if (!c.ledgers.empty() || !c.intervals_csv.empty() || !c.policies.empty() || !c.since.empty() ||
      !c.until.empty()) {
    throw std::invalid_argument(
        "--prometheus reads the fleet's counters: drop --ledger, --intervals, --policy, "
        "--since and --until (the window is --range, ending now)");
  }
  const std::string range_text = c.range.empty() ? "7d" : c.range;
  const std::optional<double> range = prometheus_duration(range_text);
  if (!range || !(*range > 0.0)) {
    throw std::invalid_argument("--range: '" + range_text +
                                "' is not a duration of some time, such as 7d or 90m");
  }
  const std::optional<double> timeout =
      parse_duration_seconds(c.timeout.empty() ? "30s" : c.timeout);
  if (!timeout || !(*timeout >= 0.001) || *timeout > 86400.0) {
    throw std::invalid_argument("--timeout: '" + c.timeout +
                                "' is not a duration of some time up to a day, such as 30s, 2m "
                                "or 0.5");
  }
  if (!c.selector.empty() && (c.selector.front() != '{' || c.selector.back() != '}')) {
    throw std::invalid_argument("--selector: '" + c.selector + "' is not {label=\"value\",...}");
  }
  const PrometheusServer server{
      .url = c.prometheus,
      .timeout = std::chrono::milliseconds(std::llround(*timeout * 1000.0))};
  const double now = unix_seconds_now();
  const auto series = [&](const char* name) {
    return prometheus_samples(server, name + c.selector, now - *range, now);
  };
  return strata_from_prometheus(
      {series("baton_exposure_seconds_total"), series("baton_exposure_faults_total"),
       series("baton_process_start_time_seconds"), now - *range},
      c.options.hang_classes);
}

}  // namespace

// --by: every ledger (or the CSV logs) stratified, several ledgers summed as a fleet
// with each one's path as its host.
int AnalyzeCommand::run_stratified() {
  std::vector<Factor> factors;
  for (const std::string& name : by) {
    const std::optional<Factor> factor = parse_factor(name);
    if (!factor) {
      throw std::invalid_argument("--by: unknown factor '" + name + "' (want " + known_factors() +
                                  ")");
    }
    if (std::find(factors.begin(), factors.end(), *factor) == factors.end()) {
      factors.push_back(*factor);
    }
  }
  if (compare || !plot_path.empty() || policies.size() > 1) {
    throw std::invalid_argument("--by goes without --compare, --plot and a second --policy");
  }
  std::vector<Strata> parts;
  if (!prometheus.empty()) {
    parts.push_back(from_prometheus(*this));
  } else if (!intervals_csv.empty() || !events_csv.empty()) {
    const std::vector<Source> sources = load_sources(*this);
    parts.push_back(stratify(sources[0].input, options.long_context, options.hang_classes,
                             sources[0].label, options.other_client_sm_percent));
  } else {
    std::vector<std::string> paths = distinct_files(ledgers);
    if (paths.empty()) paths.push_back(default_ledger_path().string());
    const std::optional<std::string> policy =
        policies.empty() ? std::nullopt : std::optional(policies[0]);
    for (const std::string& path : paths) {
      const Source source = windowed(from_ledger(path, policy), *this);
      parts.push_back(stratify(source.input, options.long_context, options.hang_classes, path,
                               options.other_client_sm_percent));
    }
  }
  Strata strata = merge_strata(parts);
  if (!(busy_hours(strata) > 0.0)) {
    std::cerr << "baton analyze: no busy time in the window: no LLM engine was busy in what "
                 "was read"
              << (strata.hangs_while_idle > 0
                      ? " (" + count_of(strata.hangs_while_idle, "hang") + " while idle)"
                      : std::string())
              << ", so there is nothing to split by --by\n";
    return kExitFailure;
  }
  const Stratified result = stratified_analysis(std::move(strata), std::move(factors));
  if (json) {
    std::cout << to_json(result).dump(2) << "\n";
  } else {
    print_stratified(std::cout, result);
  }
  return kExitOk;
}

int AnalyzeCommand::run() {
  if (experiment) {
    if (ledgers.size() != 1 || compare || !plot_path.empty() || !by.empty() || !policies.empty() ||
        !prometheus.empty() || !intervals_csv.empty()) {
      throw std::invalid_argument(
          "--experiment reads one ledger alone: give one --ledger and no other source, "
          "--compare, --policy, --by or --plot");
    }
    return analyze_experiments(ledgers.front(), json, std::cout, std::cerr);
  }
  check_prometheus_flags(*this);
  const auto window = parse_duration_seconds(cluster_window);
  if (!window) {
    throw std::invalid_argument("--cluster-window: '" + cluster_window +
                                "' is not a duration (e.g. 45m, 90s, 2h)");
  }
  options.cluster_window_s = *window;
  if (!classes.empty()) options.hang_classes = hang_classes(classes);
  if (!prometheus.empty() && by.empty()) {
    throw std::invalid_argument(
        "--prometheus gives the fleet's strata, not its intervals: name factors with --by "
        "(for example --by dual --by host)");
  }
  if (!by.empty()) return run_stratified();

  std::vector<Source> sources = load_sources(*this);
  if (!plot_path.empty()) {
    TimelineOptions plot;
    plot.long_context = options.long_context;
    plot.title = sources.front().label;
    plot.collapse_idle_gaps = plot_gaps == "collapse";
    write_timeline_svg(plot_path, sources.front().input, plot);
  }
  if (sources.size() == 1) {
    const Analysis analysis = analyze_hangs(sources.front().input, options);
    if (json) {
      std::cout << to_json(analysis).dump(2) << "\n";
    } else {
      print_analysis(std::cout, analysis);
    }
    return kExitOk;
  }
  Comparison comparison =
      compare_arms({sources[0].label, analyze_hangs(sources[0].input, options)},
                   {sources[1].label, analyze_hangs(sources[1].input, options)});
  if (json) {
    std::cout << to_json(comparison).dump(2) << "\n";
  } else {
    for (const Arm* arm : {&comparison.a, &comparison.b}) {
      std::cout << "== " << arm->label << "\n";
      print_analysis(std::cout, arm->analysis);
      std::cout << "\n";
    }
    print_comparison(std::cout, comparison);
  }
  return kExitOk;
}

}  // namespace baton
