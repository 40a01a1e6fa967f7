//! Tests of the sweep plan on the simulator.

use super::*;

#[test]
fn geometric_grid_is_aligned_and_bounded() {
    let g = geometric(4096, 65536, 4, 32);
    assert_eq!(g.first(), Some(&4096));
    assert_eq!(g.last(), Some(&65536));
    assert_eq!(g.len(), 17);
    assert!(g.iter().all(|f| f % 32 == 0) && g.windows(2).all(|w| w[1] > w[0]));
}
