//! The per-access traces of the L1-like paths: the capacity the trace kernel sees (probes
//! bisecting the first miss), the line (traces one fetch unit over it, checked by a sweep at a
//! stride of one line), the sets (traces one line over it) and the policy probes.

use super::*;

/// Laps a capacity probe records at most.
const PROBE_LAPS: u64 = 8;

impl<B: Backend> Runner<'_, B> {
    /// A trace of whole laps over `footprint` at `stride` after `warm_laps` untimed ones: as
    /// many laps as the record holds, at least one.
    fn lap_trace(&self, path: Path, footprint: u64, stride: u64, warm_laps: u64) -> TraceRequest {
        let max = self.sweeps.device.max_trace_steps;
        let lap = footprint / stride;
        TraceRequest {
            path,
            footprint,
            stride,
            warm_steps: warm_laps * lap,
            steps: (max / lap).max(1) * lap,
            cold: false,
            carveout_percent: carveout_for(path),
        }
    }

    /// Records a trace-capacity probe and says whether it missed. It records several laps (two
    /// launches where one lap fills the record) so that strays, which do not repeat at the same
    /// place, can be told from misses ([`traces::probe_missed`]); its traces go to `kept`.
    fn probe(
        &mut self,
        curve: &mut Curve,
        (footprint, stride): (u64, u64),
        (window, rate): ((f64, f64), Option<f64>),
        kept: &mut Vec<Trace>,
    ) -> Result<bool> {
        let max = self.sweeps.device.max_trace_steps;
        let path = curve.path;
        let lap = footprint / stride;
        let per_launch = (max / lap).clamp(1, PROBE_LAPS);
        let launches = if per_launch >= 2 { 1 } else { 2 };
        self.tell(format!("{} capacity probe {footprint} B", path.label()));
        let mut recorded = Vec::new();
        for r in 0..launches {
            let mut req = self.lap_trace(path, footprint, stride, 2 + r);
            req.steps = (per_launch * lap).min(max);
            recorded.push(self.trace(req, format!("probe/{}/{footprint}/{r}", path.label()))?);
        }
        let lat: Vec<u32> = recorded.iter().flat_map(|t| t.latencies.iter().copied()).collect();
        let mean = lat.iter().map(|&l| l as f64).sum::<f64>() / lat.len().max(1) as f64;
        curve.insert(Point {
            x: footprint,
            steps: lat.len() as u64,
            mean_cycles: mean,
            hist: Histogram::of_latencies(HIST_BIN_CYCLES, &lat),
        });
        let refs: Vec<&Trace> = recorded.iter().collect();
        let missed = traces::probe_missed(&refs, window, rate);
        kept.extend(recorded);
        Ok(missed)
    }

    pub(super) fn l1_traces(&mut self, path: Path) -> Result<()> {
        let label = path.label();
        let Some(window) = miss_window(&self.sweeps, &format!("size/{label}")) else { return Ok(()) };
        let g = granularity_of(&self.sweeps, path);
        let overhead = self.sweeps.timer_overhead_cycles;
        let start = self
            .sweeps
            .curve(&format!("size/{label}"))
            .and_then(|c| levels::fit(c, overhead).levels.first().and_then(|l| l.capacity.clone()))
            .map(|k| k.last_clean)
            .unwrap_or(self.identity().smem_per_sm);
        // How often strays look like misses, from the size sweep's points where everything hits.
        let rate = self.sweeps.curve(&format!("size/{label}")).and_then(|c| traces::stray_rate(c, overhead, window));
        let max = self.sweeps.device.max_trace_steps;
        let mut curve = Curve {
            id: format!("trace-capacity/{label}"),
            path,
            axis: Axis::Footprint,
            stride_bytes: g,
            footprint_bytes: 0,
            carveout_percent: carveout_for(path),
            points: Vec::new(),
        };
        // Bracket the capacity with the trace kernel itself (its shared memory shrinks L1).
        let step = 2f64.powf(0.25);
        let mut f = (start / g).max(1) * g;
        let (mut lo, mut hi) = (None, None);
        let mut kept = Vec::new();
        for _ in 0..12 {
            if f / g > max {
                break;
            }
            if self.probe(&mut curve, (f, g), (window, rate), &mut kept)? {
                hi = Some(f);
                if lo.is_some() {
                    break;
                }
                f = ((f as f64 / step) as u64 / g).max(1) * g;
            } else {
                lo = Some(f);
                if hi.is_some() {
                    break;
                }
                f = ((f as f64 * step) as u64 / g + 1) * g;
            }
        }
        let (Some(mut lo), Some(mut hi)) = (lo, hi) else {
            self.sweeps.curves.push(curve);
            return Ok(());
        };
        while hi - lo > g {
            let mid = (lo + (hi - lo) / 2) / g * g;
            if self.probe(&mut curve, (mid, g), (window, rate), &mut kept)? {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        self.sweeps.curves.push(curve);
        // The probes that bracket the capacity keep their traces: the analysis judges them again.
        self.sweeps.traces.extend(kept.into_iter().filter(|t| t.footprint_bytes == lo || t.footprint_bytes == hi));
        // The line: misses at the fetch granularity, one unit over capacity, fill whole lines.
        if hi / g > max {
            return Ok(());
        }
        let mut line_traces = Vec::new();
        for r in 0..self.opts.set_traces as u64 {
            self.tell(format!("{label} line trace {}", r + 1));
            let req = self.lap_trace(path, hi, g, 2 + r);
            line_traces.push(self.trace(req, format!("line/{label}/{r}"))?);
        }
        let refs: Vec<&Trace> = line_traces.iter().collect();
        let found = traces::line_bytes(&refs, window, rate);
        let mut line = found.as_ref().map(|f| f.value).unwrap_or(g).max(g);
        self.sweeps.traces.extend(line_traces);
        if line > g {
            // The line check (Mei & Chu's stride-over-line stage): at a stride of one line, a
            // cache of such lines holds as many accesses as at the fetch granularity; a cache
            // of smaller lines, several to a set, holds line / (its line) times more.
            let lo_check = (start / 2 / line).max(1) * line;
            // Up to 16 x: a cache of 32 B lines, eight to a set, holds 8 x as much at stride
            // 256 B, and the check must see that knee too.
            let hi_check = (16 * start / line).max(2) * line;
            self.footprint_sweep_at(format!("line-check/{label}"), path, lo_check, hi_check, None, line)?;
            let size = self.sweeps.curve(&format!("size/{label}"));
            let check = self.sweeps.curve(&format!("line-check/{label}"));
            if let (Some(f), Some(size), Some(check)) = (found, size, check) {
                // The set traces run at the checked line.
                line = line_check::check(f, size, check, overhead, g).value.max(g);
            }
        }
        // The sets: one line over capacity at the line stride, several laps, several launches.
        let footprint = lo / line * line + line;
        let lap = footprint / line;
        if lap > max {
            return Ok(());
        }
        let mut sets = Vec::new();
        for r in 0..self.opts.set_traces as u64 {
            self.tell(format!("{label} set trace {}", r + 1));
            let req = self.lap_trace(path, footprint, line, 2 + r);
            sets.push(self.trace(req, format!("sets/{label}/{r}"))?);
        }
        let refs: Vec<&Trace> = sets.iter().collect();
        let probes =
            traces::set_structure(&refs, lo, window, rate).and_then(|s| traces::policy_probes(&s.conflict_lines, line));
        self.sweeps.traces.extend(sets);
        // The policy probes: sequences over the overfull set's lines, from a cold L1.
        let Some((x, y)) = probes else { return Ok(()) };
        for r in 0..self.opts.set_traces {
            for (name, order) in [("policy-x", &x), ("policy-y", &y)] {
                self.tell(format!("{label} policy probe {name} {}", r + 1));
                let latencies = self.b.sequence_trace(path, footprint, order, carveout_for(path))?;
                self.sweeps.traces.push(Trace {
                    id: format!("{name}/{label}/{r}"),
                    path,
                    footprint_bytes: footprint,
                    stride_bytes: line,
                    warm_steps: 0,
                    cold: false,
                    carveout_percent: carveout_for(path),
                    latencies,
                    order: order.clone(),
                });
            }
        }
        Ok(())
    }
}
