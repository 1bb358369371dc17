#include "baton/analysis/analysis_report.h"

#include <fmt/format.h>

#include <algorithm>

#include "baton/common/json_or_null.h"

namespace baton {
namespace {

using nlohmann::json;

json rate_json(const RateEstimate& r) {
  return {{"hangs", r.events},
          {"hours", r.hours},
          {"per_hour", json_or_null(r.per_hour)},
          {"ci95_low", json_or_null(r.low)},
          {"ci95_high", json_or_null(r.high)}};
}

std::string number(const std::optional<double>& value, const char* missing) {
  return value ? fmt::format("{:.3g}", *value) : std::string(missing);
}

std::string rate_text(const RateEstimate& r) {
  if (!r.per_hour) return "-";
  return fmt::format("{:.3g}/h [{:.3g}, {:.3g}]", *r.per_hour, *r.low, *r.high);
}

std::int64_t attributed_in_busy(const Analysis& a) { return a.uniform.n; }

json stream_json(const std::optional<StreamExposure>& stream) {
  if (!stream) return nullptr;
  return {{"busy_hours", stream->busy_hours},
          {"dual_hours", stream->dual_hours},
          {"dual_share", json_or_null(stream->dual_share)}};
}

void print_busy_dual(std::ostream& out, double busy_hours, double dual_hours,
                     const std::optional<double>& dual_share) {
  out << fmt::format("    busy  {:>10.4g} h\n    dual  {:>10.4g} h", busy_hours, dual_hours);
  out << (dual_share ? fmt::format("  ({:.1f}% of busy)\n", 100.0 * *dual_share) : "\n");
}

// Both exposures, each named: under serialize an engine waiting for the turn is busy on
// the first and idle on the second, so one word "dual" for both would mislead.
void print_exposures(std::ostream& out, const Analysis& a) {
  out << "Exposure\n  engines with requests in progress (in a ledger: from asking for the GPU "
         "turn\n  to completion; the hang statistics below use it)\n";
  print_busy_dual(out, a.exposure.busy_hours, a.exposure.dual_hours, a.dual_share);
  if (!a.stream) {
    out << "  streams with work in flight: not recorded (CSV logs, and ledger runs written\n"
           "  before schema version 3, have no stream intervals)\n";
    return;
  }
  out << "  streams with work in flight (on the device: what baton repro meters as overlap)\n";
  print_busy_dual(out, a.stream->busy_hours, a.stream->dual_hours, a.stream->dual_share);
}

void print_rates(std::ostream& out, const Analysis& a) {
  out << "Hang rates on the engine exposure (95% exact Garwood intervals)\n";
  out << fmt::format("  {:<28} {:>10} {:>6}  {}\n", "while", "hours", "hangs", "rate");
  const auto row = [&](const char* name, const RateEstimate& r) {
    out << fmt::format("  {:<28} {:>10.4g} {:>6}  {}\n", name, r.hours, r.events, rate_text(r));
  };
  row("any LLM engine busy", a.busy_rate);
  row("two or more busy (dual)", a.dual_rate);
  row("exactly one busy", a.single_rate);
}

void print_by_engine(std::ostream& out, const Analysis& a) {
  out << "By blamed engine\n";
  out << fmt::format("  {:<16} {:>10} {:>6} {:>24}   {:>10} {:>6} {:>24}\n", "engine", "alone h",
                     "hangs", "rate", "others h", "hangs", "rate");
  for (const EngineExposure& e : a.exposure.by_engine) {
    out << fmt::format(
        "  {:<16} {:>10.4g} {:>6} {:>24}   {:>10.4g} {:>6} {:>24}\n", e.engine, e.alone_hours,
        e.alone_hangs, rate_text(poisson_rate(e.alone_hangs, e.alone_hours)), e.with_others_hours,
        e.with_others_hangs, rate_text(poisson_rate(e.with_others_hangs, e.with_others_hours)));
  }
}

void print_tests(std::ostream& out, const Analysis& a) {
  const UniformTest& u = a.uniform;
  const DependenceTest& d = a.dependence;
  out << fmt::format(
      "Uniform placement: {} of {} attributed hangs in busy time fell in dual time;\n"
      "  if hangs fell uniformly over busy time, P(at least that many) = {:.3g}\n",
      u.in_dual, u.n, u.p);
  out << fmt::format("Dependence (hangs cluster when clients retry):\n");
  out << fmt::format("  clusters ({:g} min window): {} of {} in dual, p = {:.3g}\n",
                     d.cluster_window_s / 60.0, d.clusters_in_dual, d.clusters, d.p_clusters);
  out << fmt::format("  UTC days: {} of {} in dual, p = {:.3g}\n", d.days_in_dual, d.days,
                     d.p_days);
  const double low = std::min({u.p, d.p_clusters, d.p_days});
  const double high = std::max({u.p, d.p_clusters, d.p_days});
  out << fmt::format("  the honest answer: p between {:.3g} and {:.3g}\n", low, high);
}

std::string verdict(const Comparison& c, double alpha) {
  const RateRatio& r = c.ratio;
  const std::int64_t n = c.a.analysis.busy_rate.events + c.b.analysis.busy_rate.events;
  if (c.a.analysis.busy_rate.hours == 0.0 || c.b.analysis.busy_rate.hours == 0.0) {
    return "One arm has no busy time: nothing to compare.";
  }
  if (n == 0) return "Neither arm saw a hang: the data say nothing about the ratio yet.";
  const std::string ci = r.high ? fmt::format("between {:.3g} and {:.3g}", r.low, *r.high)
                                : fmt::format("at least {:.3g}", r.low);
  if (r.p_value >= alpha) {
    return fmt::format(
        "No significant difference (p = {:.3g} >= {:g}); the rate ratio {}/{} is {}.", r.p_value,
        alpha, c.a.label, c.b.label, ci);
  }
  const bool a_lower = c.a.analysis.busy_rate.per_hour < c.b.analysis.busy_rate.per_hour;
  return fmt::format("{} hangs {} often than {} (p = {:.3g} < {:g}); the rate ratio is {}.",
                     c.a.label, a_lower ? "less" : "more", c.b.label, r.p_value, alpha, ci);
}

std::string process_label(const OtherGpuProcess& p) {
  return p.process.empty() ? fmt::format("pid {} (unnamed)", p.pid)
                           : fmt::format("{} (pid {})", p.process, p.pid);
}

// The figure in one sentence: ruled in, ruled out, or not known.
std::string gpu_client_verdict(const GpuClients& g) {
  if (g.sampled_busy_hours <= 0.0) {
    return "no GPU poll covers baton's busy time: other clients are unknown";
  }
  const double covered = g.busy_hours > 0.0 ? g.sampled_busy_hours / g.busy_hours : 0.0;
  const std::string cover = fmt::format("(polls cover {:.1f}% of its busy time)", 100.0 * covered);
  if (g.other_busy_share > 0.0) {
    return fmt::format(
        "another GPU client was busy (at least {:g}% SM) for {:.1f}% of baton's polled busy "
        "time {}",
        g.threshold_sm_percent, 100.0 * g.other_busy_share, cover);
  }
  if (g.unresolved_busy_share > 0.0) {
    return fmt::format(
        "not known: processes that could not be told from baton used at least {:g}% SM for "
        "{:.1f}% of baton's polled busy time {}",
        g.threshold_sm_percent, 100.0 * g.unresolved_busy_share, cover);
  }
  return fmt::format("ruled out: no other process reached {:g}% SM in baton's polled busy time {}",
                     g.threshold_sm_percent, cover);
}

json gpu_clients_json(const std::optional<GpuClients>& clients) {
  if (!clients) return nullptr;
  const GpuClients& g = *clients;
  json top = json::array();
  for (const OtherGpuProcess& p : g.top_others) {
    top.push_back({{"pid", p.pid},
                   {"process", p.process.empty() ? json(nullptr) : json(p.process)},
                   {"mean_sm_percent", p.mean_sm_percent}});
  }
  json unresolved = nullptr;
  if (g.unresolved) {
    unresolved = {{"mean_sm_percent", g.unresolved_mean_sm},
                  {"max_sm_percent", g.unresolved_max_sm},
                  {"busy_share", g.unresolved_busy_share}};
  }
  return {{"threshold_sm_percent", g.threshold_sm_percent},
          {"busy_hours", g.busy_hours},
          {"sampled_busy_hours", g.sampled_busy_hours},
          {"baton_mean_sm_percent", g.baton_mean_sm},
          {"other_mean_sm_percent", g.other_mean_sm},
          {"other_max_sm_percent", g.other_max_sm},
          {"other_busy_share", g.other_busy_share},
          {"unresolved", std::move(unresolved)},
          {"top_others", std::move(top)},
          {"verdict", gpu_client_verdict(g)}};
}

void print_gpu_clients(std::ostream& out, const std::optional<GpuClients>& clients) {
  if (!clients) {
    out << "Other GPU clients: not polled (CPU runs, runs before schema version 5, NVML\n"
           "  unavailable or --no-gpu-sampling)\n";
    return;
  }
  const GpuClients& g = *clients;
  out << fmt::format(
      "Other GPU clients (NVML; busy from {:g}% of SM time, other processes summed)\n",
      g.threshold_sm_percent);
  out << fmt::format("  LLM engines busy {:.4g} h, of which polled {:.4g} h\n", g.busy_hours,
                     g.sampled_busy_hours);
  if (g.sampled_busy_hours > 0.0) {
    out << fmt::format(
        "  other processes: mean {:.1f}% SM, max {:.1f}%, busy {:.1f}% of the polled time\n",
        g.other_mean_sm, g.other_max_sm, 100.0 * g.other_busy_share);
    out << fmt::format("  baton itself: mean {:.1f}% SM\n", g.baton_mean_sm);
    if (g.unresolved) {
      out << fmt::format(
          "  not told apart from baton (a PID namespace of its own): mean {:.1f}% SM, max "
          "{:.1f}%, busy {:.1f}%\n",
          g.unresolved_mean_sm, g.unresolved_max_sm, 100.0 * g.unresolved_busy_share);
    }
    for (const OtherGpuProcess& p : g.top_others) {
      out << fmt::format("    {:<36} mean {:.1f}% SM\n", process_label(p), p.mean_sm_percent);
    }
  }
  out << "  " << gpu_client_verdict(g) << "\n";
}

}  // namespace

Comparison compare_arms(Arm a, Arm b, double alpha) {
  Comparison c{.a = std::move(a), .b = std::move(b), .ratio = {}, .verdict = {}};
  const RateEstimate& ra = c.a.analysis.busy_rate;
  const RateEstimate& rb = c.b.analysis.busy_rate;
  c.ratio = compare_rates(ra.events, ra.hours, rb.events, rb.hours, 1.0 - alpha);
  c.verdict = verdict(c, alpha);
  return c;
}

json to_json(const Analysis& a) {
  const Exposure& e = a.exposure;
  json by_engine = json::array();
  for (const EngineExposure& x : e.by_engine) {
    by_engine.push_back(
        {{"engine", x.engine},
         {"alone_hours", x.alone_hours},
         {"alone_hangs", x.alone_hangs},
         {"with_others_hours", x.with_others_hours},
         {"with_others_hangs", x.with_others_hangs},
         {"alone_rate", rate_json(poisson_rate(x.alone_hangs, x.alone_hours))},
         {"with_others_rate", rate_json(poisson_rate(x.with_others_hangs, x.with_others_hours))}});
  }
  const LongContextExposure& l = e.long_context;
  const DependenceTest& d = a.dependence;
  return {
      {"exposure", "engine"},  // of every figure but stream_exposure
      {"busy_hours", e.busy_hours},
      {"dual_hours", e.dual_hours},
      {"dual_share", json_or_null(a.dual_share)},
      {"hangs",
       {{"total", a.hangs.total},
        {"attributed_in_busy", attributed_in_busy(a)},
        {"unattributed", a.hangs.unattributed},
        {"outside_busy", a.hangs.outside_busy},
        {"in_dual", a.hangs.in_dual}}},
      {"rates",
       {{"busy", rate_json(a.busy_rate)},
        {"dual", rate_json(a.dual_rate)},
        {"single", rate_json(a.single_rate)}}},
      {"by_engine", std::move(by_engine)},
      {"long_context",
       {{"threshold", l.threshold},
        {"two_or_more_hours", l.two_or_more_hours},
        {"two_or_more_hangs", l.two_or_more_hangs},
        {"exactly_one_hours", l.exactly_one_hours},
        {"exactly_one_hangs", l.exactly_one_hangs}}},
      {"uniform_test", {{"n", a.uniform.n}, {"in_dual", a.uniform.in_dual}, {"p", a.uniform.p}}},
      {"dependence",
       {{"cluster_window_s", d.cluster_window_s},
        {"clusters", d.clusters},
        {"clusters_in_dual", d.clusters_in_dual},
        {"p_clusters", d.p_clusters},
        {"days", d.days},
        {"days_in_dual", d.days_in_dual},
        {"p_days", d.p_days}}},
      {"stream_exposure", stream_json(a.stream)},
      {"gpu_clients", gpu_clients_json(a.gpu_clients)},
  };
}

json to_json(const Comparison& c) {
  const auto arm = [](const Arm& x) {
    json j = to_json(x.analysis);
    j["label"] = x.label;
    return j;
  };
  return {{"a", arm(c.a)},
          {"b", arm(c.b)},
          {"rate_ratio", json_or_null(c.ratio.ratio)},
          {"ci95_low", c.ratio.low},
          {"ci95_high", json_or_null(c.ratio.high)},
          {"p_value", c.ratio.p_value},
          {"verdict", c.verdict}};
}

void print_analysis(std::ostream& out, const Analysis& a) {
  const Exposure& e = a.exposure;
  print_exposures(out, a);
  out << fmt::format("Hangs: {} ({} unattributed, {} outside busy time, {} in dual time)\n",
                     a.hangs.total, a.hangs.unattributed, a.hangs.outside_busy, a.hangs.in_dual);
  print_rates(out, a);
  print_by_engine(out, a);
  const LongContextExposure& l = e.long_context;
  out << fmt::format("Long context (requests of at least {} tokens)\n", l.threshold);
  out << fmt::format("  two or more engines long  {:>10.4g} h {:>6} hangs\n", l.two_or_more_hours,
                     l.two_or_more_hangs);
  out << fmt::format("  exactly one engine long   {:>10.4g} h {:>6} hangs\n", l.exactly_one_hours,
                     l.exactly_one_hangs);
  print_tests(out, a);
  print_gpu_clients(out, a.gpu_clients);
}

void print_comparison(std::ostream& out, const Comparison& c) {
  out << "A/B comparison of hangs per busy hour of the engine exposure (exact conditional "
         "test,\ntwo-sided)\n";
  for (const Arm* arm : {&c.a, &c.b}) {
    const RateEstimate& r = arm->analysis.busy_rate;
    out << fmt::format("  {:<24} {:>10.4g} h {:>6} hangs  {}\n", arm->label, r.hours, r.events,
                       rate_text(r));
  }
  out << fmt::format("  rate ratio A/B: {} (95% CI {:.3g} to {}), p = {:.3g}\n",
                     number(c.ratio.ratio, "unbounded"), c.ratio.low,
                     number(c.ratio.high, "unbounded"), c.ratio.p_value);
  out << "  " << c.verdict << "\n";
}

}  // namespace baton
