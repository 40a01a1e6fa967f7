//! GPU-side timing with CUDA events.

use std::sync::Arc;

use cudarc::driver::{CudaEvent, CudaStream, sys::CUevent_flags};

use crate::error::{CudaResultExt, Result};

/// A pair of timing events on one stream: `start()`, queue work, `stop_ns()`.
pub struct EventTimer {
    stream: Arc<CudaStream>,
    start: CudaEvent,
    stop: CudaEvent,
}

impl EventTimer {
    /// Creates the two events (with timing enabled) on `stream`'s context.
    pub fn new(stream: &Arc<CudaStream>) -> Result<Self> {
        let ctx = stream.context();
        let make =
            || ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).cuda_context(|| "creating a CUDA event".into());
        Ok(EventTimer { stream: stream.clone(), start: make()?, stop: make()? })
    }

    /// Records the start event.
    pub fn start(&self) -> Result<()> {
        self.start.record(&self.stream).cuda_context(|| "recording the start event".into())
    }

    /// Records the stop event, waits for it, and returns the GPU time in between, ns.
    pub fn stop_ns(&self) -> Result<f64> {
        self.stop.record(&self.stream).cuda_context(|| "recording the stop event".into())?;
        let ms = self.start.elapsed_ms(&self.stop).cuda_context(|| "waiting for the timed work".into())?;
        Ok(ms as f64 * 1e6)
    }
}
