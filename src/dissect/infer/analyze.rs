//! From saved sweeps to facts: runs every inference on a [`Sweeps`] record and gathers the
//! facts (dotted names, confidence, method), the latencies (as per-point samples), the summary
//! table's rows and the knees to mark on the plots.

use serde::{Deserialize, Serialize};

use super::traces::Found;
use super::{banks, constant, granularity, l1, l2, levels, tlb, traces};
use crate::dissect::data::{Curve, Path, Sweeps};
use crate::results::{Fact, FactValue};
use crate::stats::median_element;

/// One row of the summary table (Meltzer et al.'s: level, size, line, sets, ways, latency, policy).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// "L1 (ld.ca)", "L2", "L1 TLB", ...
    pub level: String,
    /// Capacity or reach, bytes.
    pub size_bytes: Option<u64>,
    /// Footprints around which the level's share has fallen to half (a gradual knee), bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub half_bytes: Option<(u64, u64)>,
    /// Capacity the trace kernel sees (sets x ways x line), bytes.
    #[serde(default)]
    pub trace_size_bytes: Option<u64>,
    /// Line (eviction unit) or page, bytes.
    pub line_bytes: Option<u64>,
    /// Fetch granularity (sector), bytes.
    pub fetch_bytes: Option<u64>,
    /// Sets.
    pub sets: Option<u64>,
    /// Ways (or TLB entries, or banks).
    pub ways: Option<u64>,
    /// Hit latency, cycles.
    pub latency_cycles: Option<f64>,
    /// Where the latency comes from when it is a median over SMs: "132 SMs: 270 to 300".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_from: Option<String>,
    /// Replacement policy.
    pub policy: Option<String>,
    /// Set mapping.
    pub mapping: Option<String>,
}

/// A latency measured at several sweep points, in cycles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencySamples {
    /// "l1.hit", "l2.near.hit", "dram", ...
    pub name: String,
    /// One value per sweep point the level served.
    pub samples: Vec<f64>,
}

/// Knees of one curve, for the plots.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Marks {
    /// Curve or trace id.
    pub id: String,
    /// (x, label) of each knee.
    pub knees: Vec<(u64, String)>,
}

/// Everything inferred from one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Dissection {
    /// Facts, in a stable order.
    pub facts: Vec<Fact>,
    /// Latencies with their per-point samples.
    pub latencies: Vec<LatencySamples>,
    /// Summary table.
    pub rows: Vec<Row>,
    /// Plot marks.
    pub marks: Vec<Marks>,
}

impl Dissection {
    /// The fact called `name`.
    pub fn fact(&self, name: &str) -> Option<&Fact> {
        self.facts.iter().find(|f| f.name == name)
    }

    /// The numeric value of fact `name`.
    pub fn number(&self, name: &str) -> Option<f64> {
        match self.fact(name)?.value {
            FactValue::Number(v) => Some(v),
            FactValue::Text(_) => None,
        }
    }

    /// The text value of fact `name`.
    pub fn text(&self, name: &str) -> Option<&str> {
        match &self.fact(name)?.value {
            FactValue::Text(t) => Some(t),
            FactValue::Number(_) => None,
        }
    }

    pub(super) fn number_fact(&mut self, name: &str, value: u64, unit: &str, confidence: f64, method: String) {
        self.facts.push(Fact {
            name: name.into(),
            value: FactValue::Number(value as f64),
            unit: unit.into(),
            confidence: confidence.clamp(0.0, 1.0),
            method,
        });
    }

    /// A fact the sweeps cannot tell: the value "unknown", confidence 0, the reason as method.
    pub(super) fn unknown_fact(&mut self, name: &str, unit: &str, why: String) {
        self.facts.push(Fact {
            name: name.into(),
            value: FactValue::Text("unknown".into()),
            unit: unit.into(),
            confidence: 0.0,
            method: why,
        });
    }

    pub(super) fn found_number(&mut self, name: &str, f: &Found<u64>, unit: &str) {
        self.number_fact(name, f.value, unit, f.confidence, f.method.clone());
    }

    pub(super) fn found_text(&mut self, name: &str, f: &Found<String>) {
        self.facts.push(Fact {
            name: name.into(),
            value: FactValue::Text(f.value.clone()),
            unit: String::new(),
            confidence: f.confidence.clamp(0.0, 1.0),
            method: f.method.clone(),
        });
    }

    pub(super) fn latency(&mut self, name: &str, level: &levels::Level) {
        if !level.samples.is_empty() {
            self.latencies.push(LatencySamples { name: name.into(), samples: level.samples.clone() });
        }
    }

    pub(super) fn mark(&mut self, id: &str, x: u64, label: String) {
        match self.marks.iter_mut().find(|m| m.id == id) {
            Some(m) => m.knees.push((x, label)),
            None => self.marks.push(Marks { id: id.into(), knees: vec![(x, label)] }),
        }
    }
}

pub(super) fn level_title(path: Path) -> &'static str {
    match path {
        Path::Ca => "L1 (ld.ca)",
        Path::Nc => "read-only (ld.nc)",
        Path::Tex => "texture",
        Path::Cg => "L2",
        Path::Const => "constant",
        Path::Tlb => "TLB",
    }
}

pub(super) fn knee_method(curve: &Curve, level: &levels::Level, k: &levels::Knee) -> String {
    let carveout = curve.carveout_percent.map(|p| format!(", carveout {p} %")).unwrap_or_default();
    let half = k.half.map(|(a, b)| format!("; half the drop between {a} and {b} B")).unwrap_or_default();
    if level.plateau_share >= 0.9 {
        format!(
            "{}: all accesses under {:.0} cycles up to {} B, not at {} B (stride {} B{carveout}){half}",
            curve.id, k.boundary_cycles, k.last_clean, k.first_dirty, curve.stride_bytes
        )
    } else {
        format!(
            "{}: {:.0}% of accesses at {:.0} cycles up to {} B, fewer at {} B (stride {} B{carveout}){half}",
            curve.id,
            100.0 * level.plateau_share,
            level.latency_cycles,
            k.last_clean,
            k.first_dirty,
            curve.stride_bytes
        )
    }
}

/// Runs every inference on `sweeps`.
pub fn analyze(sweeps: &Sweeps) -> Dissection {
    let mut d = Dissection::default();
    let overhead = sweeps.timer_overhead_cycles;
    let mut ca = l1::Reading::default();
    for path in [Path::Ca, Path::Nc, Path::Tex] {
        let reading = l1::l1_path(&mut d, sweeps, path, overhead);
        if path == Path::Ca {
            ca = reading;
        }
    }
    l2(&mut d, sweeps, overhead);
    tlb_facts(&mut d, sweeps);
    carveouts(&mut d, sweeps, overhead, ca);
    shared(&mut d, sweeps);
    constant(&mut d, sweeps, overhead);
    d
}

pub(super) fn fetch(d: &mut Dissection, sweeps: &Sweeps, path: Path) -> Option<u64> {
    let id = format!("stride/{}", path.label());
    let g = granularity::fetch_granularity(sweeps.curve(&id)?)?;
    d.number_fact(&format!("{}.fetch_bytes", path.level_prefix()), g.bytes, "bytes", g.confidence, g.method.clone());
    d.mark(&id, g.bytes, format!("{} B", g.bytes));
    Some(g.bytes)
}

fn l2(d: &mut Dissection, sweeps: &Sweeps, overhead: f64) {
    let fetch_bytes = fetch(d, sweeps, Path::Cg);
    let mut rows = Vec::new();
    if let Some((curve, fit)) = sweeps.curve("size/cg").and_then(|c| Some((c, l2::fit(c, overhead)?))) {
        let (near, far, whole) = l2::answers(&fit, &curve.id, sweeps.device.identity.l2_bytes);
        // The sweep's stride is the fetch granularity found first: an unsure one (a stride
        // coarser than the line skips lines) makes every capacity at that stride unsure too.
        let stride_confidence = d.fact("l2.fetch_bytes").map(|f| f.confidence).unwrap_or(1.0);
        let answer = |d: &mut Dissection, name: &str, a: &l2::Answer| match a {
            l2::Answer::Bytes(b, c, m) => {
                let m = if stride_confidence < *c {
                    format!("{m}; stride from an unsure fetch granularity ({stride_confidence:.2})")
                } else {
                    m.clone()
                };
                d.number_fact(name, *b, "bytes", c.min(stride_confidence), m);
                d.mark(&curve.id, *b, format!("{} B", b));
                Some(*b)
            }
            l2::Answer::Unknown(why) => {
                d.unknown_fact(name, "bytes", why.clone());
                None
            }
        };
        let near_bytes = answer(d, "l2.near.size_bytes", &near);
        let far_bytes = answer(d, "l2.far.size_bytes", &far);
        let whole_bytes = answer(d, "l2.size_bytes", &whole);
        // Latencies from every SM where the run measured them (one value per SM), else the
        // single-SM sweep's (one value per plateau point).
        let samples = |level: l2::SmLevel, single: &[f64]| -> (Vec<f64>, Option<String>) {
            let per_sm = sweeps
                .curve(&level.curve_id())
                .map(|c| l2::per_sm_latencies(c, &fit, level, overhead))
                .filter(|v| !v.is_empty());
            match per_sm {
                Some(v) => {
                    let values: Vec<f64> = v.iter().map(|p| p.1).collect();
                    let (lo, hi) =
                        values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(*x), b.max(*x)));
                    (values.clone(), Some(format!("{} SMs: {lo:.0} to {hi:.0}", values.len())))
                }
                None => (single.to_vec(), None),
            }
        };
        let (near_samples, near_spread) = samples(l2::SmLevel::Near, &fit.near_samples);
        let (far_samples, far_spread) = samples(l2::SmLevel::Far, &fit.far_samples);
        let (dram_samples, dram_spread) = samples(l2::SmLevel::Dram, &fit.dram_samples);
        let near_hit = median_element(&near_samples);
        if !near_samples.is_empty() {
            d.latencies.push(LatencySamples { name: "l2.near.hit".into(), samples: near_samples.clone() });
        }
        rows.push(Row {
            level: "L2 near".into(),
            size_bytes: near_bytes,
            latency_cycles: near_hit,
            latency_from: near_spread,
            fetch_bytes,
            ..Row::default()
        });
        if !far_samples.is_empty() {
            d.latencies.push(LatencySamples { name: "l2.far.hit".into(), samples: far_samples.clone() });
            let far_hit = median_element(&far_samples);
            let over = far_hit.zip(near_hit).map(|(f, n)| format!("+{:.0} cycles over near", f - n));
            rows.push(Row {
                level: "L2 far".into(),
                size_bytes: far_bytes,
                latency_cycles: far_hit,
                latency_from: far_spread,
                mapping: over,
                policy: fit.far.as_ref().map(|s| format!("serves {:.0}% beyond the near step", 100.0 * s.plateau)),
                fetch_bytes,
                ..Row::default()
            });
        }
        if whole_bytes.is_some() && whole_bytes != near_bytes {
            rows.push(Row { level: "L2 (whole)".into(), size_bytes: whole_bytes, ..Row::default() });
        }
        if !dram_samples.is_empty() {
            let latency_cycles = median_element(&dram_samples);
            d.latencies.push(LatencySamples { name: "dram".into(), samples: dram_samples });
            rows.push(Row { level: "DRAM".into(), latency_cycles, latency_from: dram_spread, ..Row::default() });
        }
    }
    // L2 misses of the cold traces: slower than the L2's own hits in its size sweep.
    let window = sweeps.curve("size/cg").and_then(levels::miss_window);
    let cold = sweeps.traces.iter().find(|t| t.id == "cold/cg");
    if let Some(f) = cold.and_then(|t| window.and_then(|b| traces::cold_miss_bytes(t, b))) {
        d.found_number("l2.cold_miss_bytes", &f, "bytes");
    }
    let prefetch = sweeps.traces.iter().find(|t| t.id == "prefetch/cg");
    if let Some((p, block)) =
        prefetch.filter(|_| cold.is_some()).and_then(|t| window.and_then(|b| traces::prefetch(t, b)))
    {
        d.found_text("l2.prefetch", &p);
        if let Some(block) = block {
            d.number_fact("l2.prefetch_bytes", block, "bytes", p.confidence, p.method.clone());
        }
    }
    d.rows.extend(rows);
}

fn tlb_facts(d: &mut Dissection, sweeps: &Sweeps) {
    let curves: Vec<&Curve> = sweeps.curves.iter().filter(|c| c.path == Path::Tlb).collect();
    let Some(fit) = tlb::fit(&curves) else { return };
    d.found_number("tlb.unit_bytes", &fit.unit, "bytes");
    // Stride over page (Meltzer et al., Mei & Chu) finds the unit one entry covers. A page of that size
    // and an entry that maps several smaller pages (contiguous pages coalesced, or a larger
    // page the driver chose for the allocation) give the same latency at every stride.
    d.unknown_fact(
        "tlb.page_bytes",
        "bytes",
        format!(
            "latencies show the unit one TLB entry covers ({} B, tlb.unit_bytes), not whether it is one page or several pages mapped by one entry",
            fit.unit.value
        ),
    );
    for (i, level) in fit.levels.iter().enumerate() {
        let n = i + 1;
        d.found_number(&format!("tlb.l{n}.entries"), &level.entries, "entries");
        d.found_number(&format!("tlb.l{n}.reach_bytes"), &level.reach, "bytes");
        d.rows.push(Row {
            level: format!("L{n} TLB"),
            size_bytes: Some(level.reach.value),
            line_bytes: Some(fit.unit.value),
            ways: Some(level.entries.value),
            policy: Some(format!("+{:.0} cycles per miss", level.miss_penalty_cycles)),
            ..Row::default()
        });
    }
    for (s, knees) in &fit.knees {
        for (i, k) in knees.iter().enumerate() {
            if let Some(k) = k {
                d.mark(&format!("tlb/stride={s}"), *k, format!("L{} TLB", i + 1));
            }
        }
    }
}

/// The L1 under each preferred carveout, its first miss read as the ld.ca traces read the
/// L1's (a carveout changes the ways, not how lines map to sets).
fn carveouts(d: &mut Dissection, sweeps: &Sweeps, overhead: f64, ca: l1::Reading) {
    for curve in sweeps.curves.iter().filter(|c| c.id.starts_with("carveout=")) {
        let p = curve.carveout_percent.unwrap_or(0);
        let fit = levels::fit(curve, overhead);
        if let Some((level, k)) = fit.levels.first().and_then(|l| l.capacity.as_ref().map(|k| (l, k))) {
            let c = l1::capacity(k, curve.stride_bytes, ca);
            d.number_fact(
                &format!("l1.carveout_{p}.size_bytes"),
                c.bytes,
                "bytes",
                c.confidence,
                format!("{}{}", knee_method(curve, level, k), c.note),
            );
            d.mark(&curve.id, c.bytes, format!("{} B", c.bytes));
        }
    }
}

fn shared(d: &mut Dissection, sweeps: &Sweeps) {
    let Some(fit) = banks::fit(&sweeps.banks) else { return };
    d.found_number("smem.banks", &fit.banks, "banks");
    d.found_number("smem.bank_bytes", &fit.width, "bytes");
    // One sample per stride, so that a comparison has the strides' spread to judge by.
    let or_fit = |v: &[f64], fit: f64| if v.is_empty() { vec![fit] } else { v.to_vec() };
    d.latencies.push(LatencySamples { name: "smem.hit".into(), samples: or_fit(&fit.base_samples, fit.base_cycles) });
    d.latencies.push(LatencySamples {
        name: "smem.cycles_per_conflict_way".into(),
        samples: or_fit(&fit.per_way_samples, fit.cycles_per_way),
    });
    d.rows.push(Row {
        level: "shared memory".into(),
        line_bytes: Some(fit.width.value),
        ways: Some(fit.banks.value),
        latency_cycles: Some(fit.base_cycles),
        policy: Some(format!("+{:.1} cycles per conflict way", fit.cycles_per_way)),
        ..Row::default()
    });
}

fn constant(d: &mut Dissection, sweeps: &Sweeps, overhead: f64) {
    let fetch_bytes = fetch(d, sweeps, Path::Const);
    if let Some(curve) = sweeps.curve("size/const") {
        let fit = levels::fit(curve, overhead);
        for (i, level) in fit.caches().enumerate() {
            let name = if i == 0 { "const.l1".to_string() } else { format!("const.l1_{}", i + 4) };
            let title = if i == 0 { "constant L1".to_string() } else { format!("constant L1.{}", i + 4) };
            let mut row = Row { level: title, latency_cycles: Some(level.latency_cycles), ..Row::default() };
            d.latency(&format!("{name}.hit"), level);
            if let Some(k) = &level.capacity {
                d.number_fact(
                    &format!("{name}.size_bytes"),
                    k.value,
                    "bytes",
                    k.confidence,
                    knee_method(curve, level, k),
                );
                d.mark(&curve.id, k.value, format!("{} B", k.value));
                row.size_bytes = Some(k.value);
            }
            if i == 0 {
                row.fetch_bytes = fetch_bytes;
            }
            d.rows.push(row);
        }
    }
    if let Some(div) = constant::divergence(&sweeps.const_divergence) {
        d.found_text("const.divergent_access", &div.verdict);
        d.latencies.push(LatencySamples { name: "const.cycles_per_distinct_address".into(), samples: div.slopes });
    }
}
