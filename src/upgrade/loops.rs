//! The executed inner loop of a kernel and what it is made of.
//!
//! A loop is a backward branch: a `BRA` to an earlier instruction; its body runs from the target
//! to the last branch back to it. A branch to itself is the trap after `EXIT`, not a loop, and
//! so is a span that holds an unconditional `EXIT`: ptxas places out-of-line code after the
//! kernel's `EXIT` (the slow path of a `BRA.DIV` for a divergent warp shuffle, say) and ends it
//! with a branch back into the body, which is a return, not an iteration. The
//! innermost loops are those that hold no other loop. The kernel's inner loop is the one its
//! timing brackets: of the innermost loops that read the SM clock or %globaltimer or lie between
//! the function's first and last such read, the longest (ptxas places an unrolled main loop
//! beside short remainder loops, and the main loop is where the time goes); in a kernel that
//! reads no clock, the longest innermost loop. Its instructions are counted by class: memory loads and
//! stores by space, width and cache operator, atomics by space and operation, integer and float
//! arithmetic, control, other.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::sass::{Function, opcode};

/// A loop: indices into the function's instructions, both inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// First instruction (the branch target).
    pub start: usize,
    /// The last branch back to `start`.
    pub end: usize,
}

impl Span {
    fn len(&self) -> usize {
        self.end - self.start + 1
    }

    fn contains(&self, other: &Span) -> bool {
        self != other && self.start <= other.start && other.end <= self.end
    }
}

/// Every loop of `f`: one per branch target reached backwards, ending at its last branch.
pub fn loops(f: &Function) -> Vec<Span> {
    let mut by_target: BTreeMap<usize, usize> = BTreeMap::new();
    for (i, instr) in f.instrs.iter().enumerate() {
        let Some(target) = instr.target else { continue };
        if target >= instr.addr {
            continue;
        }
        if let Some(start) = f.index_of(target) {
            let end = by_target.entry(start).or_insert(i);
            *end = (*end).max(i);
        }
    }
    by_target
        .into_iter()
        .map(|(start, end)| Span { start, end })
        .filter(|s| !f.instrs[s.start..=s.end].iter().any(|i| i.text == "EXIT" || i.text.starts_with("EXIT ")))
        .collect()
}

/// The loops of `f` that hold no other loop.
pub fn innermost(f: &Function) -> Vec<Span> {
    let all = loops(f);
    all.iter().filter(|l| !all.iter().any(|o| l.contains(o))).copied().collect()
}

/// A kernel's inner loop: where it is, its instructions and their classes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopBody {
    /// Address of its first instruction.
    pub start_addr: u64,
    /// Its instructions, each as [`normalized`] prints it.
    pub code: Vec<String>,
    /// Instructions per class ([`class`]).
    pub classes: BTreeMap<String, u32>,
}

impl LoopBody {
    /// Instructions in the body.
    pub fn len(&self) -> usize {
        self.code.len()
    }

    /// Whether the body is empty (never, for a loop found by [`inner_loop`]).
    pub fn is_empty(&self) -> bool {
        self.code.is_empty()
    }
}

/// The timed inner loop of `f` (see the module documentation), if it has a loop.
pub fn inner_loop(f: &Function) -> Option<LoopBody> {
    let all = innermost(f);
    let clocks: Vec<usize> =
        f.instrs.iter().enumerate().filter(|(_, i)| reads_clock(&i.text)).map(|(k, _)| k).collect();
    let timed: Vec<Span> = match (clocks.first(), clocks.last()) {
        (Some(&first), Some(&last)) => all
            .iter()
            .filter(|l| (l.start >= first && l.end <= last) || clocks.iter().any(|&c| c >= l.start && c <= l.end))
            .copied()
            .collect(),
        _ => Vec::new(),
    };
    let pool = if timed.is_empty() { all } else { timed };
    let span = pool.into_iter().max_by(|a, b| a.len().cmp(&b.len()).then(b.start.cmp(&a.start)))?;
    Some(body(f, span))
}

/// Whether an instruction reads the SM clock or the global timer.
pub fn reads_clock(text: &str) -> bool {
    text.contains("SR_CLOCKLO") || text.contains("SR_CLOCKHI") || text.contains("SR_GLOBALTIMER")
}

/// The body of loop `span` of `f`.
pub fn body(f: &Function, span: Span) -> LoopBody {
    let instrs = &f.instrs[span.start..=span.end];
    let base = instrs[0].addr;
    let mut classes = BTreeMap::new();
    for i in instrs {
        *classes.entry(class(&i.text)).or_insert(0) += 1;
    }
    LoopBody { start_addr: base, code: instrs.iter().map(|i| normalized(&i.text, i.target, base)).collect(), classes }
}

/// An instruction with its branch target made relative to `base` (`BRA -0x240`), so that the same
/// loop placed elsewhere in the function reads the same.
pub fn normalized(text: &str, target: Option<u64>, base: u64) -> String {
    let Some(t) = target else { return text.to_string() };
    let rel = if t >= base { format!("+0x{:x}", t - base) } else { format!("-0x{:x}", base - t) };
    let cut = text.find("`(").or_else(|| text.rfind("0x")).unwrap_or(text.len());
    format!("{}{rel}", &text[..cut])
}

/// The class of an instruction: "load global 128-bit STRONG.GPU", "store shared 32-bit",
/// "atomic global ADD.F32", "float", "integer", "control", "other".
pub fn class(text: &str) -> String {
    let op = opcode(text);
    let parts: Vec<&str> = op.split('.').collect();
    let base = parts[0];
    let memory = match base {
        "LDG" | "LD" => Some(("load", "global")),
        "STG" | "ST" => Some(("store", "global")),
        "LDS" | "LDSM" => Some(("load", "shared")),
        "STS" => Some(("store", "shared")),
        "LDL" => Some(("load", "local")),
        "STL" => Some(("store", "local")),
        "LDC" => Some(("load", "constant")),
        "LDGSTS" => Some(("copy", "global->shared")),
        _ => None,
    };
    if let Some((what, space)) = memory {
        let width = parts[1..]
            .iter()
            .find_map(|p| match *p {
                "64" => Some(64),
                "128" => Some(128),
                "U8" | "S8" => Some(8),
                "U16" | "S16" => Some(16),
                _ => None,
            })
            .unwrap_or(32);
        let ops: Vec<&str> = parts[1..]
            .iter()
            .copied()
            .filter(|p| !matches!(*p, "E" | "64" | "128" | "U8" | "S8" | "U16" | "S16" | "32" | "U32" | "S32"))
            .collect();
        let mut s = format!("{what} {space} {width}-bit");
        if !ops.is_empty() {
            s.push(' ');
            s.push_str(&ops.join("."));
        }
        return s;
    }
    if matches!(base, "ATOM" | "ATOMG" | "RED" | "REDG" | "ATOMS" | "REDS") {
        let space = if base == "ATOMS" || base == "REDS" { "shared" } else { "global" };
        let ops: Vec<&str> = parts[1..]
            .iter()
            .copied()
            .filter(|p| !matches!(*p, "E" | "STRONG" | "GPU" | "SYS" | "SM" | "FTZ" | "RN"))
            .collect();
        return format!("atomic {space} {}", ops.join("."));
    }
    if op == "HFMA2.MMA" && text.contains("-RZ, RZ") {
        return "other".into();
    }
    let b = base.strip_prefix('U').filter(|rest| is_integer(rest)).unwrap_or(base);
    if is_float(b) {
        "float".into()
    } else if is_integer(b) {
        "integer".into()
    } else if is_control(b) {
        "control".into()
    } else {
        "other".into()
    }
}

fn is_float(op: &str) -> bool {
    matches!(
        op,
        "FFMA"
            | "FADD"
            | "FMUL"
            | "FMNMX"
            | "FSETP"
            | "FSET"
            | "FSEL"
            | "FCHK"
            | "FRND"
            | "FSWZADD"
            | "DFMA"
            | "DADD"
            | "DMUL"
            | "DSETP"
            | "DMNMX"
            | "HFMA2"
            | "HADD2"
            | "HMUL2"
            | "HSETP2"
            | "HMNMX2"
            | "MUFU"
            | "F2F"
            | "F2I"
            | "I2F"
            | "I2FP"
            | "F2FP"
            | "F2IP"
    )
}

fn is_integer(op: &str) -> bool {
    matches!(
        op,
        "IADD3"
            | "IADD"
            | "IMAD"
            | "IMUL"
            | "IMADSP"
            | "ISETP"
            | "ISCADD"
            | "LOP3"
            | "LOP"
            | "PLOP3"
            | "SHF"
            | "SHL"
            | "SHR"
            | "LEA"
            | "IABS"
            | "IMNMX"
            | "VIADD"
            | "VIMNMX"
            | "VIADDMNMX"
            | "POPC"
            | "FLO"
            | "BREV"
            | "BMSK"
            | "SGXT"
            | "PRMT"
            | "SEL"
            | "IDP"
            | "I2I"
            | "I2IP"
            | "REDUX"
    )
}

fn is_control(op: &str) -> bool {
    matches!(
        op,
        "BRA"
            | "BRX"
            | "JMP"
            | "JMX"
            | "CALL"
            | "RET"
            | "EXIT"
            | "BSSY"
            | "BSYNC"
            | "BREAK"
            | "BPT"
            | "WARPSYNC"
            | "BAR"
            | "NOP"
            | "YIELD"
            | "KILL"
            | "DEPBAR"
            | "MEMBAR"
            | "ERRBAR"
            | "CCTL"
            | "ACQBULK"
            | "ELECT"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_of_common_instructions() {
        assert_eq!(class("LDG.E.128.STRONG.GPU R4, desc[UR4][R2.64]"), "load global 128-bit STRONG.GPU");
        assert_eq!(class("@!P0 LDG.E R2, desc[UR4][R2.64]"), "load global 32-bit");
        assert_eq!(class("LDG.E.U8.CONSTANT R2, desc[UR4][R2.64]"), "load global 8-bit CONSTANT");
        assert_eq!(class("STG.E.64 desc[UR4][R2.64], R4"), "store global 64-bit");
        assert_eq!(class("LDS.128 R4, [R2]"), "load shared 128-bit");
        assert_eq!(class("STL [R1], R2"), "store local 32-bit");
        assert_eq!(class("LDC R3, c[0x3][R3]"), "load constant 32-bit");
        assert_eq!(class("REDG.E.ADD.F32.FTZ.RN.STRONG.GPU desc[UR4][R2.64], R5"), "atomic global ADD.F32");
        assert_eq!(class("ATOMS.CAS R2, [R3], R4, R5"), "atomic shared CAS");
        assert_eq!(class("FFMA R2, R3, R4, R2"), "float");
        assert_eq!(class("MUFU.RSQ R2, R3"), "float");
        assert_eq!(class("HFMA2.MMA R2, -RZ, RZ, 0, 0"), "other");
        assert_eq!(class("IMAD.WIDE.U32 R2, R3, 0x4, R4"), "integer");
        assert_eq!(class("UIADD3 UR4, UR4, 0x1, URZ"), "integer");
        assert_eq!(class("@P0 BRA 0x40"), "control");
        assert_eq!(class("CS2R R4, SR_CLOCKLO"), "other");
    }

    #[test]
    fn normalized_branches_are_relative_to_the_loop() {
        assert_eq!(normalized("@!P1 BRA 0xae0", Some(0xae0), 0xae0), "@!P1 BRA +0x0");
        assert_eq!(normalized("@P0 BRA `(.L_x_3)", Some(0x100), 0x140), "@P0 BRA -0x40");
        assert_eq!(normalized("FFMA R2, R3, R4, R2", None, 0), "FFMA R2, R3, R4, R2");
    }
}
