//! The throughput kernels time the instructions they are meant to: each source is compiled for
//! sm_90 with NVRTC and disassembled with cuobjdump, and the machine code is checked for the
//! load widths and cache operators, the arithmetic instructions and their counts, the atomics,
//! and the absence of spills (local-memory traffic) except where spilling is the point.
//!
//! The tests that compile need libnvrtc and cuobjdump (on PATH, or in $CUDA_HOME/bin or
//! $CUDA_PATH/bin), no GPU: they are ignored by default (`cargo test --test sass -- --ignored`
//! on a machine with the CUDA toolkit) and fail there, naming what is missing. The SASS parser
//! and the dissect check run everywhere, on recorded and hand-written listings.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use gpubench::device::{compile, nvrtc_version};
use gpubench::kernels::{self, KernelSource};

const ARCH: &str = "sm_90";

fn cuobjdump() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(d) = std::env::var_os(var) {
            dirs.push(PathBuf::from(d).join("bin"));
        }
    }
    dirs.into_iter().map(|d| d.join("cuobjdump")).find(|p| p.is_file())
}

/// Which opcodes count as the operation under test.
type OpcodeTest = Box<dyn Fn(&str) -> bool>;

/// Function name -> its instructions ("LDG.E.128 R4, desc[UR4][R2.64]"), in order.
type Sass = BTreeMap<String, Vec<String>>;

fn sass(tool: &PathBuf, source: &KernelSource) -> Sass {
    let compiled = compile(source, ARCH).unwrap_or_else(|e| panic!("{}: {e}", source.file_name()));
    let dir = tempfile::tempdir().unwrap();
    let cubin = dir.path().join(format!("{}.cubin", source.name));
    std::fs::write(&cubin, &compiled.cubin).unwrap();
    let out = Command::new(tool).arg("-sass").arg(&cubin).output().expect("cuobjdump runs");
    assert!(out.status.success(), "cuobjdump failed on {}", source.file_name());
    let functions = parse_sass(&String::from_utf8_lossy(&out.stdout));
    assert!(!functions.is_empty(), "no functions in the SASS of {}", source.file_name());
    functions
}

/// The functions of `cuobjdump -sass` output and their instructions.
fn parse_sass(text: &str) -> Sass {
    let mut functions = Sass::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(name) = line.trim().strip_prefix("Function : ") {
            current = Some(name.trim().to_string());
            functions.insert(name.trim().to_string(), Vec::new());
        } else if let (Some(f), Some(rest)) = (&current, line.trim().strip_prefix("/*")) {
            // "/*0080*/   LDG.E.128 R4, desc[UR4][R2.64] ;   /* 0x... */"
            if let Some((_, code)) = rest.split_once("*/") {
                let code = code.split("/*").next().unwrap_or("").trim().trim_end_matches(';').trim();
                if !code.is_empty() {
                    functions.get_mut(f).unwrap().push(code.to_string());
                }
            }
        }
    }
    functions
}

/// The opcode of an instruction, without its predicate: "@!P0 LDG.E R2, ..." -> "LDG.E".
fn opcode(instr: &str) -> &str {
    let mut words = instr.split_whitespace();
    let first = words.next().unwrap_or("");
    if first.starts_with('@') { words.next().unwrap_or("") } else { first }
}

fn count(instrs: &[String], pred: impl Fn(&str) -> bool) -> usize {
    instrs.iter().filter(|i| pred(opcode(i))).count()
}

/// Half-precision arithmetic: ptxas spreads half2 ops over HFMA2/HADD2/HMUL2 and HFMA2.MMA (the
/// second FP16 pipe of sm_90); `HFMA2.MMA Rd, -RZ, RZ, ...` is a register move, not arithmetic.
fn half_ops(instrs: &[String], own: &str) -> usize {
    instrs
        .iter()
        .filter(|i| {
            let o = opcode(i);
            (o == own || o == "HFMA2.MMA") && !i.contains("-RZ, RZ")
        })
        .count()
}

fn function<'a>(s: &'a Sass, name: &str) -> &'a [String] {
    s.get(name).unwrap_or_else(|| panic!("no function {name} in {:?}", s.keys().collect::<Vec<_>>()))
}

fn no_spills(s: &Sass, except: &[&str]) {
    for (name, instrs) in s {
        if except.iter().any(|e| name.starts_with(e)) {
            continue;
        }
        let local = count(instrs, |o| o.starts_with("LDL") || o.starts_with("STL"));
        assert_eq!(local, 0, "{name} spills to local memory");
    }
}

/// cuobjdump, once NVRTC is known to load; panics naming what is missing (the tests that call
/// it are ignored unless asked for).
fn tools() -> PathBuf {
    if let Err(e) = nvrtc_version() {
        panic!("needs NVRTC: {e}");
    }
    cuobjdump().expect("needs cuobjdump on PATH, $CUDA_HOME/bin or $CUDA_PATH/bin")
}

/// LDG opcodes of a load of `width` bytes: "LDG.E" (4), "LDG.E.64", "LDG.E.128", with cache
/// qualifiers after the width.
fn load_width(op: &str) -> Option<u32> {
    let rest = op.strip_prefix("LDG.E")?;
    Some(if rest.contains(".128") {
        16
    } else if rest.contains(".64") {
        8
    } else if rest.contains(".U16") {
        2
    } else if rest.contains(".U8") {
        1
    } else {
        4
    })
}

#[test]
#[ignore = "needs NVRTC and cuobjdump: run with --ignored on the GPU machine"]
fn l1_kernels_load_their_width_with_their_cache_operator_every_round() {
    let tool = tools();
    for source in [kernels::L1_BANDWIDTH, kernels::L1_BANDWIDTH_SWEEP] {
        let s = sass(&tool, &source);
        for (name, instrs) in s.iter().filter(|(n, _)| n.starts_with("l1_") && n != &"l1_fold") {
            // l1_<op>_w<W>_ilp<K>
            let parts: Vec<&str> = name.split('_').collect();
            let (op, w, k): (&str, u32, usize) =
                (parts[1], parts[2][1..].parse().unwrap(), parts[3][3..].parse().unwrap());
            let loads: Vec<&str> = instrs.iter().map(|i| opcode(i)).filter(|o| o.starts_with("LDG")).collect();
            // a warm round of K loads and a loop of 4 rounds
            assert!(loads.len() >= 5 * k, "{name}: {} loads", loads.len());
            for l in &loads {
                assert_eq!(load_width(l), Some(w), "{name}: {l}");
                match op {
                    "ld" => assert!(!l.contains("STRONG") && !l.contains("CONSTANT"), "{name}: {l}"),
                    "ca" => assert!(l.contains("STRONG.SM"), "{name}: {l}"),
                    "nc" => assert!(l.contains("CONSTANT"), "{name}: {l}"),
                    other => panic!("unknown operator {other}"),
                }
            }
        }
        no_spills(&s, &[]);
    }
}

#[test]
#[ignore = "needs NVRTC and cuobjdump: run with --ignored on the GPU machine"]
fn shared_kernels_use_lds_of_their_width() {
    let tool = tools();
    let s = sass(&tool, &kernels::SHARED_BANDWIDTH);
    for w in [4, 8, 16] {
        for k in [1usize, 2, 4, 8] {
            let name = format!("smem_w{w}_ilp{k}");
            let want = match w {
                4 => "LDS",
                8 => "LDS.64",
                _ => "LDS.128",
            };
            let n = count(function(&s, &name), |o| o == want);
            assert!(n >= 5 * k, "{name}: {n} x {want}");
        }
    }
    no_spills(&s, &[]);
}

#[test]
#[ignore = "needs NVRTC and cuobjdump: run with --ignored on the GPU machine"]
fn instruction_kernels_run_the_instruction_they_name() {
    let tool = tools();
    let s = sass(&tool, &kernels::INSTRUCTIONS);
    // (op, opcode predicate, ops per throughput round, per latency round)
    let exact = |want: &'static str| move |o: &str| o == want;
    let checks: Vec<(&str, OpcodeTest, usize, usize)> = vec![
        ("fp32_fma", Box::new(exact("FFMA")), 512, 64),
        ("fp32_add", Box::new(exact("FADD")), 256, 64),
        ("fp32_mul", Box::new(exact("FMUL")), 256, 64),
        ("fp64_fma", Box::new(exact("DFMA")), 128, 64),
        ("fp64_add", Box::new(exact("DADD")), 128, 64),
        ("fp64_mul", Box::new(exact("DMUL")), 128, 64),
        ("int32_add", Box::new(|o: &str| o == "IADD3" || o == "IMAD.IADD"), 256, 64),
        ("int32_mul", Box::new(exact("IMAD")), 256, 64),
        ("int32_mad", Box::new(exact("IMAD")), 256, 64),
        ("sfu_rcp", Box::new(exact("MUFU.RCP")), 128, 64),
        ("sfu_rsqrt", Box::new(exact("MUFU.RSQ")), 128, 64),
        ("sfu_ex2", Box::new(exact("MUFU.EX2")), 128, 64),
        ("sfu_lg2", Box::new(exact("MUFU.LG2")), 128, 64),
        ("sfu_sin", Box::new(exact("MUFU.SIN")), 128, 64),
        ("sfu_cos", Box::new(exact("MUFU.COS")), 128, 64),
    ];
    for (op, pred, body, lat) in &checks {
        let thr = count(function(&s, &format!("inst_thr_{op}_ilp8")), pred);
        assert!(thr >= *body && thr <= body + 16, "inst_thr_{op}_ilp8: {thr} ops, expected {body}");
        let l = count(function(&s, &format!("inst_lat_{op}")), pred);
        assert!(l >= *lat, "inst_lat_{op}: {l} ops, expected {lat}");
    }
    for (op, own) in [("fp16x2_fma", "HFMA2"), ("fp16x2_add", "HADD2"), ("fp16x2_mul", "HMUL2")] {
        let thr = half_ops(function(&s, &format!("inst_thr_{op}_ilp8")), own);
        assert!((256..=272).contains(&thr), "inst_thr_{op}_ilp8: {thr} half2 ops, expected 256");
        let l = half_ops(function(&s, &format!("inst_lat_{op}")), own);
        assert!(l >= 64, "inst_lat_{op}: {l} half2 ops");
    }
    // the FP32 FMA loop is FFMAs and three loop instructions: nothing else steals issue slots
    let fma = function(&s, "inst_thr_fp32_fma_ilp8");
    let start = fma.iter().position(|i| i.contains("SR_CLOCKLO")).unwrap();
    let back = fma.iter().rposition(|i| opcode(i) == "BRA" && i.starts_with("@")).unwrap();
    let body = &fma[start..=back];
    let other = body.len() - count(body, |o| o == "FFMA");
    assert!(other <= 12, "{other} non-FFMA instructions around the FP32 FMA loop");
    no_spills(&s, &[]);
    let ieee = sass(&tool, &kernels::INSTRUCTIONS_IEEE);
    assert!(count(function(&ieee, "inst_thr_fp32_div_ilp8"), |o| o == "MUFU.RCP") >= 16);
    assert!(count(function(&ieee, "inst_thr_fp64_div_ilp8"), |o| o == "MUFU.RCP64H") >= 16);
    assert!(count(function(&ieee, "inst_thr_fp32_sqrt_ilp8"), |o| o == "MUFU.RSQ") >= 16);
    no_spills(&ieee, &[]);
}

#[test]
#[ignore = "needs NVRTC and cuobjdump: run with --ignored on the GPU machine"]
fn dram_kernels_move_16_bytes_per_access_with_their_hint() {
    let tool = tools();
    let s = sass(&tool, &kernels::DRAM);
    for (name, instrs) in s.iter().filter(|(n, _)| n.starts_with("dram_") && n.contains("_u")) {
        let hint = name.ends_with("_h1");
        let prefetch = name.ends_with("_h2");
        let u: usize = name.rsplit('_').nth(1).unwrap()[1..].parse().unwrap();
        let loads: Vec<&str> =
            instrs.iter().map(|i| opcode(i)).filter(|o| o.starts_with("LDG.E") && o.contains(".128")).collect();
        let stores: Vec<&str> =
            instrs.iter().map(|i| opcode(i)).filter(|o| o.starts_with("STG.E") && o.contains(".128")).collect();
        let arrays_in = if name.contains("_add_") || name.contains("_triad_") {
            2
        } else if name.contains("_write_") {
            0
        } else {
            1
        };
        assert!(loads.len() >= u * arrays_in, "{name}: {} 16-byte loads", loads.len());
        if !name.contains("_read_") {
            assert!(stores.len() >= u, "{name}: {} 16-byte stores", stores.len());
        }
        for op in loads.iter().chain(&stores) {
            assert_eq!(op.contains(".EF"), hint, "{name}: {op}");
        }
        for op in &loads {
            assert_eq!(op.contains(".LTC256B") && op.contains(".NA"), prefetch, "{name}: {op}");
        }
    }
    no_spills(&s, &[]);
}

#[test]
#[ignore = "needs NVRTC and cuobjdump: run with --ignored on the GPU machine"]
fn l2_access_pattern_and_constant_kernels_use_the_intended_loads() {
    let tool = tools();
    let l2 = sass(&tool, &kernels::L2_BANDWIDTH);
    for k in [1, 2, 4, 8] {
        let n = count(function(&l2, &format!("l2_read_ilp{k}")), |o| o == "LDG.E.128.STRONG.GPU");
        assert!(n >= k, "l2_read_ilp{k}: {n} L2 loads");
    }
    no_spills(&l2, &[]);

    let ap = sass(&tool, &kernels::ACCESS_PATTERNS);
    for (w, name) in [(1, "ap_width_1"), (2, "ap_width_2"), (4, "ap_width_4"), (8, "ap_width_8"), (16, "ap_width_16")] {
        let loads: Vec<&str> = function(&ap, name).iter().map(|i| opcode(i)).filter(|o| o.starts_with("LDG")).collect();
        assert!(loads.len() >= 4, "{name}");
        assert!(loads.iter().all(|l| load_width(l) == Some(w)), "{name}: {loads:?}");
    }
    for (op, qualifier) in [
        ("ca", ".STRONG.SM"),
        ("cg", ".STRONG.GPU"),
        ("cs", ".EF"),
        ("cv", ".STRONG.SYS"),
        ("lu", ".LU"),
        ("nc", ".CONSTANT"),
    ] {
        let name = format!("ap_op_{op}");
        let loads: Vec<&str> =
            function(&ap, &name).iter().map(|i| opcode(i)).filter(|o| o.starts_with("LDG")).collect();
        assert!(loads.len() >= 4 && loads.iter().all(|l| l.contains(qualifier)), "{name}: {loads:?}");
    }
    no_spills(&ap, &[]);

    let c = sass(&tool, &kernels::CONSTANT_MEMORY);
    for name in ["cmem_throughput", "cmem_latency"] {
        let n = function(&c, name).iter().filter(|i| opcode(i) == "LDC" && i.contains("c[0x3][")).count();
        assert!(n >= 8, "{name}: {n} constant-bank loads");
    }
    no_spills(&c, &[]);
}

#[test]
#[ignore = "needs NVRTC and cuobjdump: run with --ignored on the GPU machine"]
fn atomics_compile_to_the_intended_operations() {
    let tool = tools();
    let s = sass(&tool, &kernels::ATOMICS_VARIANTS);
    let has = |f: &str, want: &str| count(function(&s, f), |o| o == want) > 0;
    assert!(has("atomv_contention", "REDG.E.ADD.STRONG.GPU"));
    assert!(has("atomv_add_u64", "REDG.E.ADD.64.STRONG.GPU"));
    assert!(has("atomv_add_f32", "REDG.E.ADD.F32.FTZ.RN.STRONG.GPU"));
    assert!(has("atomv_add_f64", "REDG.E.ADD.F64.RN.STRONG.GPU"));
    assert!(has("atomv_cas", "ATOMG.E.CAS.STRONG.GPU"));
    assert!(has("atomv_lat_sm_global_add", "ATOMG.E.ADD.STRONG.GPU"));
    assert!(has("atomv_lat_sm_global_cas", "ATOMG.E.CAS.STRONG.GPU"));
    assert!(has("atomv_lat_shared_add", "ATOMS.ADD"));
    assert!(has("atomv_lat_shared_cas", "ATOMS.CAS"));
    assert!(count(function(&s, "atomv_shared"), |o| o.starts_with("ATOMS.")) > 0);
    no_spills(&s, &[]);
}

#[test]
#[ignore = "needs NVRTC and cuobjdump: run with --ignored on the GPU machine"]
fn only_the_capped_spilling_kernels_touch_local_memory() {
    let tool = tools();
    let s = sass(&tool, &kernels::SPILLING);
    for name in ["spill_none", "spill_regs128"] {
        assert_eq!(count(function(&s, name), |o| o.starts_with("LDL") || o.starts_with("STL")), 0, "{name}");
        assert_eq!(count(function(&s, name), |o| o == "FFMA"), 64, "{name}");
    }
    for name in ["spill_regs51", "spill_regs42", "spill_regs32"] {
        let f = function(&s, name);
        assert!(
            count(f, |o| o.starts_with("LDL")) > 0 && count(f, |o| o.starts_with("STL")) > 0,
            "{name} does not spill"
        );
        assert_eq!(count(f, |o| o == "FFMA"), 64, "{name}");
    }
}

/// A load through memory (global, texture, or the constant bank of a `__constant__` array):
/// what a timed access of a dissect chase must contain exactly one of. Kernel parameters
/// (`c[0x0][...]`) are not memory traffic.
fn is_memory_load(instr: &str) -> bool {
    let o = opcode(instr);
    o.starts_with("LDG")
        || o.starts_with("TEX")
        || o.starts_with("TLD")
        || (o.starts_with("LDC") && !instr.contains("c[0x0]"))
}

/// What the load of each dissect chase kernel must be on sm_90: `ld.global.ca` is
/// `LDG.E.STRONG.SM`, `.cg` `LDG.E.STRONG.GPU`, `.nc` (the read-only path) `LDG.E.CONSTANT`,
/// `tex.1d` a texture instruction (TEX or TLD, not an LDG), a `__constant__` array `LDC` from
/// bank 3.
fn dissect_load_ok(kernel: &str, instr: &str) -> bool {
    let o = opcode(instr);
    let path = kernel.trim_start_matches("dissect_hist_").trim_start_matches("dissect_trace_");
    match path {
        "ca" => o.starts_with("LDG.E") && o.contains("STRONG.SM") && load_width(o) == Some(4),
        "cg" => o.starts_with("LDG.E") && o.contains("STRONG.GPU") && load_width(o) == Some(4),
        "tlb" => o.starts_with("LDG.E") && o.contains("STRONG.GPU") && load_width(o) == Some(8),
        "nc" => o.starts_with("LDG.E") && o.contains("CONSTANT") && load_width(o) == Some(4),
        "tex" => o.starts_with("TEX") || o.starts_with("TLD"),
        "const" => o.starts_with("LDC") && instr.contains("c[0x3]"),
        _ => false,
    }
}

/// Checks the dissect chase kernels in `cuobjdump -sass` output: between consecutive reads of
/// the SM clock (`SR_CLOCKLO`), a stretch that loads at all holds exactly one load, of the kind
/// the kernel's path names, followed by the shared-memory store that consumes it (so the clock
/// read after it waits for the data); the timer kernel loads nothing between its clock reads;
/// nothing spills. Returns one line per kernel checked, or the first problem.
fn check_dissect_sass(s: &Sass) -> Result<Vec<String>, String> {
    let chase = ["ca", "cg", "nc", "tex"]
        .iter()
        .flat_map(|p| [format!("dissect_hist_{p}"), format!("dissect_trace_{p}")])
        .chain(["dissect_hist_const".to_string(), "dissect_hist_tlb".to_string()]);
    let mut lines = Vec::new();
    for name in chase.chain(["dissect_timer".to_string()]) {
        let instrs = s.get(&name).ok_or_else(|| format!("no function {name}"))?;
        let clocks: Vec<usize> =
            instrs.iter().enumerate().filter(|(_, i)| i.contains("SR_CLOCKLO")).map(|(k, _)| k).collect();
        if clocks.len() < 2 {
            return Err(format!("{name}: {} clock reads", clocks.len()));
        }
        let mut timed = 0;
        let mut kinds = std::collections::BTreeSet::new();
        for w in clocks.windows(2) {
            let span = &instrs[w[0] + 1..w[1]];
            let loads: Vec<&String> = span.iter().filter(|i| is_memory_load(i)).collect();
            if loads.is_empty() {
                continue;
            }
            if name == "dissect_timer" {
                return Err(format!("{name}: loads between its clock reads: {loads:?}"));
            }
            if loads.len() != 1 || !dissect_load_ok(&name, loads[0]) {
                return Err(format!("{name}: a timed access holds {loads:?}"));
            }
            let at = span.iter().position(|i| i == loads[0]).unwrap();
            if !span[at..].iter().any(|i| opcode(i).starts_with("STS")) {
                return Err(format!("{name}: nothing consumes {} before the clock is read", loads[0]));
            }
            timed += 1;
            kinds.insert(opcode(loads[0]).to_string());
        }
        if name != "dissect_timer" && timed == 0 {
            return Err(format!("{name}: no load between two clock reads"));
        }
        let local = count(instrs, |o| o.starts_with("LDL") || o.starts_with("STL"));
        if local > 0 {
            return Err(format!("{name}: spills to local memory"));
        }
        lines.push(format!("{name}: {timed} timed access(es), {}", kinds.into_iter().collect::<Vec<_>>().join(" ")));
    }
    Ok(lines)
}

#[test]
#[ignore = "needs NVRTC and cuobjdump: run with --ignored on the GPU machine"]
fn dissect_chases_time_one_load_of_their_path() {
    let tool = tools();
    let s = sass(&tool, &kernels::DISSECT);
    match check_dissect_sass(&s) {
        Ok(lines) => println!("{}", lines.join("\n")),
        Err(e) => panic!("{e}"),
    }
}

/// A dump made on a GPU machine (`scripts/gpu/dissect-sass.sh`, committed under
/// tests/fixtures/sass/) is checked here without NVRTC or cuobjdump.
#[test]
fn recorded_dissect_sass_times_one_load_of_each_path() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sass");
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut checked = 0;
    for e in entries.flatten().filter(|e| {
        let p = e.path().to_string_lossy().into_owned();
        p.ends_with("dissect.sass") || p.ends_with("dissect.sass.gz")
    }) {
        let text = if e.path().extension().is_some_and(|x| x == "gz") {
            let mut s = String::new();
            std::io::Read::read_to_string(
                &mut flate2::read::GzDecoder::new(std::fs::File::open(e.path()).unwrap()),
                &mut s,
            )
            .unwrap();
            s
        } else {
            std::fs::read_to_string(e.path()).unwrap()
        };
        checked += 1;
        if let Err(problem) = check_dissect_sass(&parse_sass(&text)) {
            panic!("{}: {problem}", e.path().display());
        }
    }
    assert!(checked > 0, "no recorded dissect SASS under {}", dir.display());
}

/// The checker itself, on hand-written SASS of the shape ptxas gives: it accepts a chase whose
/// timed access is one load of its path, and refuses an `ld.ca` compiled to the read-only path,
/// a texture chase compiled to an LDG, a load hoisted out of the bracket and a second load in it.
#[test]
fn the_dissect_sass_check_tells_paths_apart() {
    fn kernel(name: &str, load: &str, extra: &str) -> String {
        format!(
            "        Function : {name}\n\
        /*0000*/                   LDC R1, c[0x0][0x28] ;\n\
        /*0010*/                   {extra}\n\
        /*0020*/                   CS2R.32 R4, SR_CLOCKLO ;\n\
        /*0030*/                   {load} ;\n\
        /*0040*/                   STS [UR4], R2 ;\n\
        /*0050*/                   CS2R.32 R5, SR_CLOCKLO ;\n\
        /*0060*/                   IADD3 R6, -R4, R5, RZ ;\n\
        /*0070*/                   EXIT ;\n"
        )
    }
    let good = [
        ("ca", "LDG.E.STRONG.SM R2, desc[UR6][R2.64]"),
        ("cg", "LDG.E.STRONG.GPU R2, desc[UR6][R2.64]"),
        ("nc", "LDG.E.CONSTANT R2, desc[UR6][R2.64]"),
        ("tex", "TLD.SCR.LZ RZ, R2, R2, 0x0, 0x58, 1D, 0x1"),
    ];
    let mut text = String::new();
    for (p, load) in good {
        text += &kernel(&format!("dissect_hist_{p}"), load, "NOP ;");
        text += &kernel(&format!("dissect_trace_{p}"), load, "NOP ;");
    }
    text += &kernel("dissect_hist_const", "LDC R2, c[0x3][R2]", "NOP ;");
    text += &kernel("dissect_hist_tlb", "LDG.E.64.STRONG.GPU R2, desc[UR6][R2.64]", "NOP ;");
    text += &kernel("dissect_timer", "LOP3.LUT R2, R2, R3, RZ, 0x3c, !PT", "NOP ;");
    let lines = check_dissect_sass(&parse_sass(&text)).unwrap();
    assert_eq!(lines.len(), 11, "{lines:?}");
    let bad = [
        ("dissect_hist_ca", "LDG.E.CONSTANT R2, desc[UR6][R2.64]", "NOP ;", "timed access holds"),
        ("dissect_hist_tex", "LDG.E.CONSTANT R2, desc[UR6][R2.64]", "NOP ;", "timed access holds"),
        ("dissect_hist_nc", "NOP", "LDG.E.CONSTANT R2, desc[UR6][R2.64] ;", "no load between"),
        (
            "dissect_hist_cg",
            "LDG.E.STRONG.GPU R2, desc[UR6][R2.64] ;\n /*0031*/ LDG.E.STRONG.GPU R3, desc[UR6][R2.64]",
            "NOP ;",
            "timed access holds",
        ),
    ];
    for (name, load, extra, why) in bad {
        let replaced: String = parse_sass(&text)
            .keys()
            .filter(|k| *k != name)
            .map(|k| {
                let (p, l) = good.iter().find(|(p, _)| k.ends_with(&format!("_{p}"))).copied().unwrap_or(("", ""));
                let l = match k.as_str() {
                    "dissect_hist_const" => "LDC R2, c[0x3][R2]",
                    "dissect_hist_tlb" => "LDG.E.64.STRONG.GPU R2, desc[UR6][R2.64]",
                    "dissect_timer" => "NOP",
                    _ => l,
                };
                let _ = p;
                kernel(k, l, "NOP ;")
            })
            .collect::<String>()
            + &kernel(name, load, extra);
        let e = check_dissect_sass(&parse_sass(&replaced)).unwrap_err();
        assert!(e.contains(why) && e.contains(name), "{name}: {e}");
    }
}
