//! `cargo gpubench fleet PATH...`: many cards' results read together; class envelopes, outlier
//! cards and outlier SMs, no GPU needed.

use std::time::{SystemTime, UNIX_EPOCH};

use gpubench::error::{Error, Result, exit};
use gpubench::fleet::{self, FleetRule, report};
use gpubench::results::write_atomic;

use crate::cli::{BaselinePlace, FleetArgs};
use gpubench::pipeline::judge;

pub fn fleet(args: FleetArgs) -> Result<i32> {
    if !(args.z_limit.is_finite() && args.z_limit > 0.0) {
        return Err(Error::Usage(format!("--z-limit must be a positive number, got {}", args.z_limit)));
    }
    let place = BaselinePlace { baseline_dir: None, config: args.config.clone() };
    let config = place.get().config(&judge::current_dir()?)?;
    let rule = FleetRule {
        z_limit: args.z_limit,
        min_effect: args.min_effect / 100.0,
        verdict: config.rule,
        ..FleetRule::default()
    };
    let loaded = fleet::load(&args.paths)?;
    for (path, why) in &loaded.skipped {
        eprintln!("skipped {path}: {why}");
    }
    for w in &loaded.warnings {
        eprintln!("warning: {w}");
    }
    if loaded.runs.is_empty() && loaded.nodes.is_empty() {
        return Err(Error::Usage("no results files found in the given paths".into()));
    }
    let rep = fleet::analyse(&loaded, &rule);

    if args.format.json {
        crate::output::emit(report::json(&rep));
    } else {
        crate::output::emit(report::text(&rep, args.all).trim_end());
    }
    if let Some(path) = &args.markdown {
        write_atomic(path, report::markdown(&rep).as_bytes())?;
    }
    if let Some(path) = &args.junit {
        write_atomic(path, gpubench::report::junit::fleet(&rep).as_bytes())?;
    }
    if let Some(dir) = &args.svg {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        for g in &rep.groups {
            let path = dir.join(fleet::plot::file_name(g));
            fleet::plot::envelope_svg(&path, g)?;
            eprintln!("plot: {}", path.display());
        }
    }
    if let Some(path) = &args.save_envelope {
        let group = rep.groups.first().ok_or_else(|| Error::Usage("no cards to make a baseline of".into()))?;
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        let (baseline, replaced) = fleet::baseline::save_class_baseline(&loaded, &group.key, path, args.force, now)?;
        let before = match replaced {
            Some(old) => format!(", replacing {old} (kept in {})", gpubench::baseline::previous_path(path).display()),
            None => String::new(),
        };
        eprintln!(
            "saved the class baseline of {} ({} cards, {} runs) to {}{before}",
            group.key.describe(),
            group.cards.len(),
            baseline.runs.len(),
            path.display()
        );
    }
    if args.drain_commands {
        let (lines, refused) = report::drain_commands(&rep);
        for line in lines {
            crate::output::emit(line);
        }
        for r in refused {
            eprintln!("error: {r}");
        }
    }
    Ok(if rep.has_findings() { exit::OUTLIER } else { exit::OK })
}
