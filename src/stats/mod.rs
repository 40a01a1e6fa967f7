//! Pure statistics for regression verdicts: order statistics and robust spreads, Student's t
//! quantiles for run-level prediction bands, empirical-Bayes moderated variances. Distributions
//! and special functions come from `statrs`. No I/O, no knowledge of GPUs or results files.

mod distributions;
mod interval;
mod moderated;
mod quantile;
mod robust;

pub use distributions::{f_upper_tail, normal_quantile, t_quantile, t_two_sided_tail};
pub use interval::Interval;
pub use moderated::{MAX_PRIOR_DF, VariancePrior, fit_variance_prior};
pub use quantile::{mad, median, median_element, median_sorted, percentile, percentile_sorted, robust_relative_spread};
pub use robust::{modified_z, robust_z};
