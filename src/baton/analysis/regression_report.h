// How `baton analyze --by FACTOR...` shows its strata and the Poisson regression over
// them: a table of busy hours and hangs per state, then each factor's rate ratio with its
// interval and tests, and the notes on what the data cannot separate; or the same as JSON
// (docs/analysis.md).
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "baton/analysis/poisson_regression.h"
#include "baton/analysis/strata.h"
#include "baton/analysis/uniform_placement.h"

namespace baton {

struct Stratified {
  std::vector<Factor> factors;
  Strata strata;
  PoissonDesign design;
  PoissonFit fit;
  // The study's exact test over all the strata (a fleet's too): the attributed hangs in
  // busy time against Binomial(n, dual share), as uniform_placement.h does for one input.
  UniformTest uniform;
  double dual_share = 0.0;
};

// Fits the regression of `strata`'s hangs on `factors`.
Stratified stratified_analysis(Strata strata, std::vector<Factor> factors);

nlohmann::json to_json(const Stratified& result);
void print_stratified(std::ostream& out, const Stratified& result);

}  // namespace baton
