//! Ctrl-C and termination requests. The command line installs a signal handler that calls
//! [`request`]; the runner polls [`requested`], stops the bench process it is waiting on and
//! returns [`crate::Error::Interrupted`] so that what finished is still written.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Asks the run to stop (called from a signal handler: only sets a flag).
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Whether a stop was requested.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}
