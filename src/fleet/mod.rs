//! Fleets: many results files of many cards read together.
//!
//! Cards are grouped by GPU class and software stack ([`GroupKey`]); within a group, every
//! metric gets a class envelope (median, MAD, min, max over the cards, where a card's value is
//! the median of its runs' medians), every card a robust z-score per metric and an overall
//! outlier score, and every per-SM chip map ([`crate::results::SmMap`]) is searched for SMs that
//! stand out both within their card and against the class's value for the same SM.
//!
//! Layers: [`input`] reads files, folders and `.tar.gz` archives; [`analysis`] and [`sm`]
//! judge with the medians, MADs and modified z-scores of [`crate::stats`]; [`report`] and [`plot`] present; [`baseline`]
//! turns a group into a class baseline.

pub mod analysis;
pub mod baseline;
pub mod health;
pub mod input;
pub mod plot;
pub mod report;
pub mod sm;

pub use analysis::{CardReport, EnvelopeRow, FleetReport, FleetRule, GroupKey, GroupReport, MetricFlag, analyse};
pub use input::{Loaded, LoadedRun, NODE_SCHEMA, NodeStatus, load};
pub use sm::SmFlag;
