//! The host-side checks of a launch: its arguments against the kernel's parameters, and the
//! elements it indexes against what its buffers, shared memory and launch limits hold.

use super::*;

impl Launch {
    pub(super) fn new(source: Source, kernel: &'static str, args: Vec<Arg>) -> Self {
        Launch { source, kernel, args, grid: Grid::One, block: 1, dynamic_smem: 0, carveout: None, needs: Vec::new() }
    }

    /// The arguments match the kernel's parameters in number and kind.
    pub fn check_signature(&self) -> Result<()> {
        let params = signature(self.source, self.kernel)?;
        let passed: Vec<Param> = self.args.iter().map(|a| a.param()).collect();
        if passed != params {
            return Err(refuse(
                self.kernel,
                format!("{} arguments {passed:?} for the {} parameters {params:?}", passed.len(), params.len()),
            ));
        }
        Ok(())
    }

    /// Every buffer this launch passes holds at least what the launch needs, by `capacity`.
    pub fn check_buffers(&self, capacity: impl Fn(Buf) -> u64) -> Result<()> {
        for &(buf, n) in &self.needs {
            let have = capacity(buf);
            if have < n {
                return Err(refuse(self.kernel, format!("{buf:?} holds {have} elements, the launch indexes {n}")));
            }
        }
        for a in &self.args {
            if let Arg::Buf(b) = a
                && !self.needs.iter().any(|(n, _)| n == b)
            {
                return Err(refuse(self.kernel, format!("{b:?} is passed but its extent is not stated")));
            }
        }
        Ok(())
    }
}

pub(super) fn probe_needs() -> (Buf, u64) {
    (Buf::Probe, 1)
}

/// Capacity of the fixed buffers (those the backend allocates once, sized from the device).
pub fn fixed_capacity(device: &DeviceInfo, buf: Buf) -> Option<u64> {
    match buf {
        Buf::Hist => Some(HIST_BINS as u64),
        Buf::Trace => Some(device.max_trace_steps),
        Buf::Probe | Buf::Clock | Buf::MaxCycles => Some(1),
        Buf::Claims => Some(crate::measure::per_sm::slots_for(&device.identity) as u64),
        Buf::Chase | Buf::Chase64 | Buf::Flush => None,
    }
}

/// Checks a launch as the simulator can: signature, fixed buffers, and the chase arrays against
/// the device's free memory.
pub fn check(device: &DeviceInfo, l: &Launch) -> Result<()> {
    l.check_signature()?;
    l.check_buffers(|b| match b {
        Buf::Chase => device.free_bytes / 4,
        Buf::Chase64 => device.free_bytes / 8,
        Buf::Flush => device.free_bytes / 4,
        other => fixed_capacity(device, other).unwrap_or(0),
    })?;
    if l.block == 0 || l.block > 1024 {
        return Err(refuse(l.kernel, format!("{} threads per block", l.block)));
    }
    let smem_limit = device.identity.smem_per_block_optin.max(48 << 10);
    if l.dynamic_smem as u64 > smem_limit {
        return Err(refuse(l.kernel, format!("{} B of shared memory exceed {smem_limit} B", l.dynamic_smem)));
    }
    Ok(())
}
