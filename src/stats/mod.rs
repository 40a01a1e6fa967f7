//! Pure statistics for regression verdicts: order statistics and robust spreads, Student's t
//! quantiles for run-level prediction bands, empirical-Bayes moderated variances. No I/O, no
//! knowledge of GPUs or results files.

mod interval;
mod moderated;
mod normal;
mod quantile;
mod robust;
mod student_t;

pub use interval::Interval;
pub use moderated::{
    MAX_PRIOR_DF, VariancePrior, beta_reg, digamma, f_upper_tail, fit_variance_prior, ln_gamma, trigamma,
    trigamma_inverse,
};
pub use normal::normal_cdf;
pub use quantile::{mad, median, percentile, percentile_sorted, robust_relative_spread};
pub use robust::robust_z;
pub use student_t::{t_quantile, t_two_sided_cdf};
