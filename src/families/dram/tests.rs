//! Unit tests of the DRAM family's pure functions.

use super::*;

#[test]
fn bytes_count_reads_and_writes() {
    assert_eq!(Op::Copy.bytes(1000), 16_000);
    assert_eq!(Op::Triad.bytes(1000), 24_000);
    assert_eq!(Op::Read.bytes(1000), 8_000);
    assert_eq!(Op::Write.bytes(1000), 8_000);
}

#[test]
fn values_follow_the_stream_recurrence_and_every_op_is_idempotent() {
    let mut v = INITIAL;
    let mut written = Vec::new();
    for op in Op::ALL {
        let (next, w) = op.apply(v);
        v = next;
        written.push(w);
    }
    // copy c = 1; scale b = 3 c = 3; add c = 1 + 3 = 4; triad a = 3 + 3 * 4 = 15; write c = 7
    assert_eq!(v, [15.0, 3.0, 7.0]);
    assert_eq!(written, vec![Some(2), Some(1), Some(2), Some(0), None, Some(2)]);
    for op in Op::ALL {
        let once = op.apply(INITIAL).0;
        assert_eq!(op.apply(once).0, once, "{}", op.label());
    }
}

#[test]
fn read_checksum_sums_words_modulo_2_32() {
    // 1.0 = 0x3ff00000_00000000: words 0 and 0x3ff00000
    assert_eq!(read_checksum(1.0, 1), 0x3ff0_0000);
    assert_eq!(read_checksum(1.0, 16), (0x3ff0_0000u64 * 16 % (1 << 32)) as u32);
    // many passes wrap like the kernel's u32 atomics
    let n = 1000u128 << 27;
    assert_eq!(read_checksum(15.0, n), ((15f64.to_bits() >> 32) as u128 * n % (1 << 32)) as u32);
    assert_eq!(read_checksum(0.0, n), 0);
}

#[test]
fn arrays_are_large_against_the_l2_and_fit_free_memory() {
    let mut g = crate::families::test_identity();
    g.l2_bytes = 50 << 20;
    assert_eq!(array_len(&g, 80 << 30) * 8, 1600 << 20);
    g.l2_bytes = 60 << 20;
    assert_eq!(array_len(&g, 140 << 30) * 8, 1920 << 20);
    g.l2_bytes = 1 << 20;
    assert_eq!(array_len(&g, 80 << 30) * 8, 256 << 20);
    g.l2_bytes = 128 << 20;
    assert_eq!(array_len(&g, 80 << 30) * 8, 2 << 30);
    // a quarter of 2 GiB free: 512 MiB
    g.l2_bytes = 50 << 20;
    assert_eq!(array_len(&g, 2 << 30) * 8, 512 << 20);
    assert_eq!(array_len(&g, 2 << 30) % (1 << 18), 0);
}

#[test]
fn size_sweep_doubles_up_to_the_array() {
    let s = sweep_sizes(200 << 20);
    assert_eq!(s.first(), Some(&(1 << 20)));
    assert_eq!(s.last(), Some(&(200 << 20)));
    assert_eq!(s.len(), 9); // 1, 2, ..., 128 Mi, then 200 Mi
}

#[test]
fn search_space_is_ordered_simplest_first() {
    let s = search_space();
    assert_eq!(s.len(), 2 * SEARCH_THREADS.len() * SEARCH_UNROLLS.len() * HINTS.len());
    let p = GridShape::Persistent;
    assert_eq!(s[0], Config { threads: 128, unroll: 2, hint: 0, shape: p });
    assert_eq!(s[1], Config { threads: 128, unroll: 2, hint: 1, shape: p });
    assert_eq!(kernel_name(Op::Triad, &s[1]), "dram_triad_u2_h1");
    assert_eq!(s[1].label(), "threads=128/unroll=2/evict_first");
    assert_eq!(s[2].label(), "threads=128/unroll=2/l2_prefetch_256b");
    let flat = s.iter().position(|c| c.shape == GridShape::Flat).unwrap();
    assert_eq!(flat, s.len() / 2);
    assert_eq!(s[flat].label(), "threads=128/unroll=2/plain/flat");
}

#[test]
fn finalists_are_the_best_scores_in_sweep_order() {
    let t = |v: f64| Trial { config: (), values: vec![v] };
    let trials = vec![t(1.0), t(5.0), t(f64::NAN), t(4.0), t(5.0), t(2.0)];
    assert_eq!(finalists(&trials, 2), vec![1, 4]);
    assert_eq!(finalists(&trials, 3), vec![1, 3, 4]);
    assert_eq!(finalists(&trials, 10), vec![0, 1, 3, 4, 5]);
    assert!(finalists(&trials[2..3], 4).is_empty());
}

#[test]
fn a_flat_grid_has_one_block_per_tile_a_persistent_one_a_wave() {
    // 2^27 doubles = 2^26 vectors; tiles of 256 threads x 4 vectors
    assert_eq!(grid_blocks(GridShape::Flat, 132, 8, 1 << 27, 256, 4, 1), 1 << 16);
    assert_eq!(grid_blocks(GridShape::Flat, 132, 8, 1 << 27 | 2, 256, 4, 1), (1 << 16) + 1);
    assert_eq!(grid_blocks(GridShape::Persistent, 132, 8, 1 << 27, 256, 4, 1), 1056);
    assert_eq!(grid_blocks(GridShape::Flat, 132, 8, 2, 256, 4, 1), 1);
    // several passes: a flat grid has a block per tile of every pass, a persistent one its wave
    assert_eq!(grid_blocks(GridShape::Flat, 132, 8, 1 << 27 | 2, 256, 4, 3), 3 * ((1 << 16) + 1));
    assert_eq!(grid_blocks(GridShape::Persistent, 132, 8, 1 << 27, 256, 4, 3), 1056);
}

#[test]
fn a_launch_of_every_op_lasts_the_minimum_at_peak_bandwidth() {
    use crate::measure::launch_size::MIN_LAUNCH_US;
    let g = crate::families::test_identity();
    let n = array_len(&g, 80 << 30);
    for op in Op::ALL {
        let p = passes(&g, op, n);
        let at_peak_ns = (p as u64 * op.bytes(n)) as f64 / (g.peak_dram_bytes_per_s() / 1e9);
        assert!(at_peak_ns >= MIN_LAUNCH_US as f64 * 1e3, "{op:?}: {p} passes, {at_peak_ns} ns");
        assert!(p == 1 || at_peak_ns < 2.0 * MIN_LAUNCH_US as f64 * 1e3, "{op:?}: {p} passes, {at_peak_ns} ns");
    }
}

#[test]
fn bandwidth_is_bytes_over_ns_and_efficiency_uses_the_device_peak() {
    // a triad pass over 1 GiB arrays in 1 ms on an H100 SXM (3352 GB/s)
    let n = (1u64 << 30) / 8;
    let bw = gbps(Op::Triad.bytes(n), 1.0e6);
    assert!((bw - 3221.225472).abs() < 1e-6, "{bw}");
    let peak = crate::families::test_identity().peak_dram_bytes_per_s() / 1e9;
    assert!((100.0 * bw / peak - 96.09).abs() < 0.01, "{}", 100.0 * bw / peak);
}

#[test]
fn read_slots_sum_wrapping_and_match_the_kernel() {
    assert_eq!(sum_slots(&[u32::MAX, 2, 0]), 1);
    let src = include_str!("../../../kernels/dram_ops.cuh");
    assert!(src.contains(&format!("#define DRAM_READ_SLOTS {READ_SLOTS}")));
    assert!(src.contains(&format!("(blockIdx.x % DRAM_READ_SLOTS) * {READ_SLOT_STRIDE}")));
}
