//! One module per command; each returns the process exit code or an error.

mod archive;
mod baseline;
mod calibrate;
mod chipmap;
mod compare;
mod devices;
mod dissect;
mod fleet;
mod health;
mod history;
mod info;
mod kernels;
mod load;
mod ramp;
mod report;
mod run;
mod upgrade;

use gpubench::Result;

use crate::cli::{Cli, Command};

/// Runs the command the user asked for.
pub fn dispatch(cli: Cli) -> Result<i32> {
    match cli.command {
        None => run::run(cli.run),
        Some(Command::Upgrade(u)) => upgrade::upgrade(u),
        Some(Command::Archive(a)) => archive::archive(a),
        Some(Command::Kernels(k)) => kernels::kernels(k),
        Some(Command::Report(r)) => report::report(r),
        Some(Command::Chipmap(c)) => chipmap::chipmap(c),
        Some(Command::Info(i)) => info::info(i),
        Some(Command::Ramp(r)) => ramp::ramp(r),
        Some(Command::Load(l)) => load::load(l),
        Some(Command::Dissect(d)) => dissect::dissect(d),
        Some(Command::Compare(c)) => compare::compare(c),
        Some(Command::Calibrate(c)) => calibrate::calibrate(c),
        Some(Command::Baseline(b)) => baseline::baseline(b),
        Some(Command::History(h)) => history::history(h),
        Some(Command::Fleet(f)) => fleet::fleet(f),
        Some(Command::Health(h)) => health::health(h),
    }
}
