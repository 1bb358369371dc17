# R's glm on small exposure tables, the reference of tests/analysis/poisson_regression_test.cpp.
#   Rscript scripts/reference/make_poisson_reference.R > tests/data/analysis/poisson_glm.json
# Needs Debian's r-base-core, r-cran-mass (profile-likelihood confint) and r-cran-jsonlite.
# Each case: the cells (covariates, events, hours), the terms, and what R says:
# glm(events ~ ... + offset(log(hours)), family = poisson): coefficients and standard
# errors (NA: aliased), deviance, residual df; drop1(test = "LRT") per term; MASS's
# profile-likelihood 95 % intervals (log scale), and the same bounds found exactly with
# uniroot on the deviance with the coefficient fixed (MASS interpolates a spline; it also
# gives up where a level saw no event, where only one bound exists).
suppressMessages(library(MASS))
library(jsonlite)

fit_case <- function(name, cells, terms) {
  columns <- setdiff(names(cells), c("events", "hours"))
  formula <- as.formula(paste("events ~", paste(columns, collapse = " + "),
                              "+ offset(log(hours))"))
  used <- cells[cells$hours > 0, ]
  fit <- suppressWarnings(glm(formula, family = poisson, data = used))
  s <- summary(fit)$coefficients
  coef <- coef(fit)
  se <- sapply(names(coef), function(n) if (n %in% rownames(s)) s[n, "Std. Error"] else NA)
  tests <- lapply(names(terms), function(t) {
    reduced <- setdiff(columns, terms[[t]])
    rhs <- if (length(reduced) == 0) "1" else paste(reduced, collapse = " + ")
    small <- suppressWarnings(glm(as.formula(paste("events ~", rhs, "+ offset(log(hours))")),
                                  family = poisson, data = used))
    a <- anova(small, fit, test = "LRT")
    list(name = t, df = a$Df[2], statistic = a$Deviance[2], p_value = a[2, "Pr(>Chi)"])
  })
  ci <- tryCatch(suppressMessages(suppressWarnings(confint(fit))), error = function(e) NULL)
  kept <- names(coef)[!is.na(coef)]
  target <- deviance(fit) + qchisq(0.95, 1)
  fixed <- function(j, b) {  # the deviance with coefficient j fixed at b
    column <- if (j == "(Intercept)") rep(1, nrow(used)) else used[[j]]
    rest <- setdiff(kept, c(j, "(Intercept)"))
    rhs <- paste(c(if (j == "(Intercept)") "-1" else "1", rest), collapse = " + ")
    used$fixed_offset <- log(used$hours) + b * column
    deviance(suppressWarnings(glm(as.formula(paste("events ~", rhs, "+ offset(fixed_offset)")),
                                  family = poisson, data = used)))
  }
  bound <- function(j, from, to) {
    if (fixed(j, to) < target) return(NA)
    uniroot(function(b) fixed(j, b) - target, sort(c(from, to)), tol = 1e-12)$root
  }
  exact <- lapply(names(coef), function(j) {
    b <- coef[[j]]
    if (is.na(b)) return(c(NA, NA))
    if (abs(b) > 15) return(if (b < 0) c(NA, bound(j, -25, 0)) else c(bound(j, 25, 0), NA))
    c(bound(j, b, b - 8), bound(j, b, b + 8))
  })
  list(name = name,
       columns = columns,
       terms = lapply(names(terms), function(t) list(name = t, columns = terms[[t]])),
       cells = lapply(seq_len(nrow(cells)), function(i) list(
         covariates = unname(as.numeric(cells[i, columns])), events = cells$events[i],
         hours = cells$hours[i])),
       estimate = unname(coef), std_error = unname(se),
       deviance = deviance(fit), df_residual = df.residual(fit), tests = tests,
       profile_low = if (is.null(ci)) NULL else unname(ci[, 1]),
       profile_high = if (is.null(ci)) NULL else unname(ci[, 2]),
       exact_low = sapply(exact, function(e) e[1]), exact_high = sapply(exact, function(e) e[2]))
}

grid <- expand.grid(dual = 0:1, prefill = 0:1)
cases <- list(
  fit_case("two factors", cbind(grid, events = c(3, 9, 5, 20), hours = c(120, 40, 30, 25)),
           list(dual = "dual", prefill = "prefill")),
  fit_case("a three-level factor",
           data.frame(busy2 = c(0, 1, 0, 0, 1, 0), busy3 = c(0, 0, 1, 0, 0, 1),
                      prefill = c(0, 0, 0, 1, 1, 1), events = c(2, 6, 4, 3, 11, 9),
                      hours = c(200, 90, 20, 60, 50, 15)),
           list(busy = c("busy2", "busy3"), prefill = "prefill")),
  fit_case("small counts", cbind(grid, events = c(0, 2, 1, 3), hours = c(50, 10, 20, 8)),
           list(dual = "dual", prefill = "prefill")),
  fit_case("collinear", data.frame(dual = c(0, 1, 0, 1), prefill = c(0, 1, 0, 1),
                                   long = c(0, 0, 1, 1), events = c(2, 10, 3, 12),
                                   hours = c(100, 30, 50, 20)),
           list(dual = "dual", prefill = "prefill", long = "long")),
  fit_case("no events with a factor", cbind(grid, events = c(4, 9, 0, 0), hours = c(100, 30, 40, 12)),
           list(dual = "dual", prefill = "prefill")))
cat(toJSON(cases, auto_unbox = TRUE, digits = NA, na = "null", null = "null", pretty = TRUE))
