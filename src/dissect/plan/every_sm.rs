//! The L2 and DRAM latencies from every SM: an L2 or DRAM access takes longer from an SM that
//! sits farther from the L2 slices, and which SM a one-block chase lands on differs between
//! cards (SM 0 is not the same place on two chips), so a latency from one SM differs by several
//! percent between healthy cards of a class. The single-SM size sweep's fit picks one footprint
//! per level ([`l2::every_sm_footprints`]); each SM then runs the same chase on its own, one
//! after the other (a chase of all SMs at once would share one array, and their warm laps would
//! change what the L2 holds), each from its own place in the lap ([`start_for`]), so that the
//! DRAM level's cold chases read a different part of the footprint on every SM. The far level's footprint needs a lap of tens of MiB per SM, so it
//! is measured from an evenly spaced subset of at most [`FAR_SMS`] SMs.

use super::{Backend, Runner};
use crate::dissect::backend::ChaseRequest;
use crate::dissect::data::{Axis, Curve, Path};
use crate::dissect::infer::l2::{self, SmLevel};
use crate::error::Result;

/// Timed accesses of each SM's chase.
pub const SM_STEPS: u64 = 4096;
/// At most this many SMs measure the far level.
pub const FAR_SMS: u32 = 32;

/// The SMs that measure `level` on a GPU of `sm_count` SMs.
pub fn sms_for(level: SmLevel, sm_count: u32) -> Vec<u32> {
    let step = match level {
        SmLevel::Far => sm_count.div_ceil(FAR_SMS).max(1),
        SmLevel::Near | SmLevel::Dram => 1,
    };
    (0..sm_count).step_by(step as usize).collect()
}

/// Where SM `sm` starts its chase, bytes: the SMs' starts spread evenly over the lap, so that
/// from a cold start (beyond the L2) each SM reads its own pages of the footprint and the median
/// over SMs is not the latency of one page's place in DRAM.
pub fn start_for(sm: u32, sm_count: u32, footprint: u64, stride: u64) -> u64 {
    let lap = footprint / stride.max(1);
    (sm as u64 % sm_count.max(1) as u64) * lap / sm_count.max(1) as u64 * stride
}

impl<B: Backend> Runner<'_, B> {
    /// Every-SM chases at the near, far and DRAM footprints of the `size/cg` sweep.
    pub(super) fn every_sm(&mut self) -> Result<()> {
        let overhead = self.sweeps.timer_overhead_cycles;
        let Some(curve) = self.sweeps.curve("size/cg") else { return Ok(()) };
        let stride = curve.stride_bytes;
        let Some(fit) = l2::fit(curve, overhead) else { return Ok(()) };
        let l2_bytes = self.identity().l2_bytes.max(1);
        let sm_count = self.identity().sm_count.max(1);
        for (level, footprint) in l2::every_sm_footprints(&fit) {
            let mut c = Curve {
                id: level.curve_id(),
                path: Path::Cg,
                axis: Axis::Sm,
                stride_bytes: stride,
                footprint_bytes: footprint,
                carveout_percent: None,
                points: Vec::new(),
            };
            // As the sweep's own chase: a warm lap inside twice the L2, a cold start beyond.
            let warm = if footprint <= 2 * l2_bytes { footprint / stride } else { 0 };
            let req = ChaseRequest {
                path: Path::Cg,
                footprint,
                stride,
                warm_steps: warm,
                steps: SM_STEPS.min(footprint / stride).max(1),
                carveout_percent: None,
            };
            let sms = sms_for(level, sm_count);
            self.tell(format!("{} from {} SMs, {footprint} B", c.id, sms.len()));
            for sm in sms {
                if let Some(mut p) = self.b.chase_on_sm(&req, sm, start_for(sm, sm_count, footprint, stride))? {
                    p.x = sm as u64;
                    c.insert(p);
                }
            }
            self.sweeps.curves.push(c);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn far_level_uses_an_even_subset_of_at_most_32_sms() {
        assert_eq!(sms_for(SmLevel::Near, 132).len(), 132);
        assert_eq!(sms_for(SmLevel::Dram, 132).len(), 132);
        let far = sms_for(SmLevel::Far, 132);
        assert_eq!(far.len(), 27, "every 5th SM of 132");
        assert!(far.len() as u32 <= FAR_SMS && far[1] - far[0] == 5);
        assert_eq!(sms_for(SmLevel::Far, 8), (0..8).collect::<Vec<_>>());
        assert_eq!(sms_for(SmLevel::Near, 1), vec![0]);
    }

    #[test]
    fn starts_spread_over_the_lap_on_stride_boundaries() {
        let (f, s) = (200u64 << 20, 64);
        let starts: Vec<u64> = (0..132).map(|sm| start_for(sm, 132, f, s)).collect();
        assert_eq!(starts[0], 0);
        assert!(starts.iter().all(|x| x % s == 0 && *x < f));
        assert!(starts.windows(2).all(|w| w[1] > w[0] + (1 << 20)), "more than a MiB apart");
        assert!(starts[131] > f - 2 * f / 132);
    }
}
