//! The one-SM chase: the L2-path histogram chase of [`super::chase`], run by the block that
//! claims the chosen SM (`dissect_hist_cg_sm`), from its own start, after an L2 flush when cold.

use super::*;

/// Where and on which SM a one-SM chase runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OnSm {
    /// The SM.
    pub sm: u32,
    /// Byte offset of the first visited element (a multiple of the stride, below the footprint).
    pub start: u64,
    /// Length of the claims buffer.
    pub slots: u32,
    /// Launch id, strictly increasing over the backend's launches (the claims start at zero).
    pub launch: u32,
    /// Evict the L2 between the initialisation and the chase (a chase without a warm lap would
    /// otherwise hit the lines the initialisation wrote last).
    pub cold: bool,
}

/// The launches of a histogram chase on one SM alone (L2 path only): the same chase as
/// [`chase`], from `on.start`, timed by the block that claims `on.sm` for launch `on.launch`.
pub fn chase_on_sm(device: &DeviceInfo, req: &ChaseRequest, on: OnSm) -> Result<ChaseLaunches> {
    const KERNEL: &str = "dissect_hist_cg_sm";
    if req.path != Path::Cg {
        return Err(refuse(KERNEL, format!("no one-SM chase for the {} path", req.path.label())));
    }
    if on.sm >= on.slots || on.launch == 0 {
        return Err(refuse(KERNEL, format!("SM {} of {} claim slots, launch id {}", on.sm, on.slots, on.launch)));
    }
    if on.start >= req.footprint || !on.start.is_multiple_of(req.stride.max(1)) {
        return Err(refuse(KERNEL, format!("start {} B in {} B at stride {} B", on.start, req.footprint, req.stride)));
    }
    let mut out = chase(device, req, 0)?;
    let mut args = out.hist.args.clone();
    args.insert(1, Arg::U32((on.start / req.path.element_bytes()) as u32));
    args.extend([Arg::Buf(Buf::Claims), Arg::U32(on.slots), Arg::U32(on.launch), Arg::U32(on.sm)]);
    let mut needs = out.hist.needs.clone();
    needs.push((Buf::Claims, on.slots as u64));
    out.flush = on.cold.then(|| flush(flush_words(device)));
    if let Some(f) = &out.flush {
        check(device, f)?;
    }
    out.hist = Launch {
        grid: Grid::Claims,
        needs,
        carveout: req.carveout_percent,
        ..Launch::new(Source::Dissect, KERNEL, args)
    };
    check(device, &out.hist)?;
    Ok(out)
}
