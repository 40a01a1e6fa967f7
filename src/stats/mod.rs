//! Pure statistics for regression verdicts: order statistics, the Mann-Whitney U rank test,
//! Benjamini-Hochberg false-discovery control, Student's t quantiles for run-level prediction
//! intervals, empirical-Bayes moderated variances, a bootstrap confidence interval of the ratio of
//! two medians, and the seeded generator that makes the bootstrap reproducible. No I/O, no
//! knowledge of GPUs or results files.

mod bootstrap;
mod fdr;
mod mann_whitney;
mod moderated;
mod normal;
mod quantile;
mod rng;
mod robust;
mod student_t;

pub use bootstrap::{Interval, RatioEstimate, ratio_of_medians};
pub use fdr::benjamini_hochberg;
pub use mann_whitney::{MannWhitney, mann_whitney_u};
pub use moderated::{
    MAX_PRIOR_DF, VariancePrior, beta_reg, digamma, f_upper_tail, fit_variance_prior, ln_gamma, trigamma,
    trigamma_inverse,
};
pub use normal::{erfc, normal_cdf, normal_sf};
pub use quantile::{mad, median, percentile, percentile_sorted, robust_relative_spread};
pub use rng::{Rng, SplitMix64, fnv1a};
pub use robust::robust_z;
pub use student_t::{t_quantile, t_two_sided_cdf};
