//! Disassembled machine code as `cuobjdump -sass` and `nvdisasm` print it: the functions, their
//! instructions with addresses, and where each branch goes.
//!
//! `cuobjdump -sass` names a function with `Function : NAME` and branches to addresses
//! (`@!P1 BRA 0xae0 ;`); `nvdisasm` opens a function with a `.text.NAME:` label and branches to
//! labels (``@P0 BRA `(.L_x_3) ;``) placed on lines of their own. Both put the address of each
//! instruction in a comment before it (`/*0d00*/`) and its encoding in comments after it.

/// One instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instr {
    /// Byte offset in the function.
    pub addr: u64,
    /// The instruction without address, encoding or the closing `;`, whitespace collapsed:
    /// `@!P1 BRA 0xae0`, `LDG.E.128.STRONG.GPU R4, desc[UR4][R2.64]`.
    pub text: String,
    /// Where a branch goes (an address in the function), when the instruction is a branch with
    /// a target this parser could read.
    pub target: Option<u64>,
}

impl Instr {
    /// The opcode without its predicate: `@!P0 LDG.E R2, [R4]` -> `LDG.E`.
    pub fn opcode(&self) -> &str {
        opcode(&self.text)
    }
}

/// The opcode of an instruction's text, without its predicate.
pub fn opcode(text: &str) -> &str {
    let mut words = text.split_whitespace();
    let first = words.next().unwrap_or("");
    if first.starts_with('@') { words.next().unwrap_or("") } else { first }
}

/// One function (kernel) and its instructions, in address order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    /// The symbol, e.g. `stream_triad`.
    pub name: String,
    /// Its instructions.
    pub instrs: Vec<Instr>,
}

impl Function {
    /// The index of the instruction at `addr`.
    pub fn index_of(&self, addr: u64) -> Option<usize> {
        self.instrs.iter().position(|i| i.addr == addr)
    }
}

/// Every function of a `cuobjdump -sass` or `nvdisasm` listing, in the order printed. Lines that
/// are neither a function header, a label nor an instruction are skipped; a branch to a label
/// the function does not define keeps no target.
pub fn parse(text: &str) -> Vec<Function> {
    let mut out: Vec<Function> = Vec::new();
    // Per function: labels (name -> address) and branches still naming a label.
    let mut labels: Vec<(String, u64)> = Vec::new();
    let mut pending_labels: Vec<String> = Vec::new();
    let mut unresolved: Vec<(usize, String)> = Vec::new();
    let finish = |f: Option<&mut Function>, labels: &mut Vec<(String, u64)>, unresolved: &mut Vec<(usize, String)>| {
        if let Some(f) = f {
            for (i, label) in unresolved.drain(..) {
                f.instrs[i].target = labels.iter().find(|(l, _)| *l == label).map(|(_, a)| *a);
            }
        }
        labels.clear();
    };
    for line in text.lines() {
        let t = line.trim();
        if let Some(name) = function_header(t) {
            finish(out.last_mut(), &mut labels, &mut unresolved);
            pending_labels.clear();
            out.push(Function { name: name.to_string(), instrs: Vec::new() });
            continue;
        }
        let Some(f) = out.last_mut() else { continue };
        if let Some(label) = t.strip_suffix(':').filter(|l| l.starts_with(".L")) {
            pending_labels.push(label.to_string());
            continue;
        }
        let Some((addr, code)) = instruction(t) else { continue };
        for l in pending_labels.drain(..) {
            labels.push((l, addr));
        }
        let mut target = None;
        if opcode(&code).starts_with("BRA") {
            match branch_target(&code) {
                Some(Target::Addr(a)) => target = Some(a),
                Some(Target::Label(l)) => unresolved.push((f.instrs.len(), l)),
                None => {}
            }
        }
        f.instrs.push(Instr { addr, text: code, target });
    }
    finish(out.last_mut(), &mut labels, &mut unresolved);
    out
}

/// `Function : NAME` (cuobjdump) or `.text.NAME:` (nvdisasm).
fn function_header(t: &str) -> Option<&str> {
    if let Some(name) = t.strip_prefix("Function : ") {
        return Some(name.trim());
    }
    t.strip_prefix(".text.").and_then(|n| n.strip_suffix(':')).map(str::trim).filter(|n| !n.is_empty())
}

/// `/*0d00*/  @!P1 BRA 0xae0 ;  /* 0x... */` -> (0xd00, "@!P1 BRA 0xae0").
fn instruction(t: &str) -> Option<(u64, String)> {
    let rest = t.strip_prefix("/*")?;
    let (addr, code) = rest.split_once("*/")?;
    let addr = u64::from_str_radix(addr.trim(), 16).ok()?;
    let code = code.split("/*").next().unwrap_or("");
    let code = code.split(';').next().unwrap_or("").trim();
    if code.is_empty() {
        return None;
    }
    Some((addr, code.split_whitespace().collect::<Vec<_>>().join(" ")))
}

enum Target {
    Addr(u64),
    Label(String),
}

/// The target of `BRA 0xae0`, ``BRA `(.L_x_3)``, `BRA.U !UP0, 0x1c0`.
fn branch_target(code: &str) -> Option<Target> {
    if let Some(start) = code.find("(.L") {
        let rest = &code[start + 1..];
        let end = rest.find(')').unwrap_or(rest.len());
        return Some(Target::Label(rest[..end].to_string()));
    }
    let last = code.rsplit([' ', ',']).find(|w| !w.is_empty())?;
    let hex = last.strip_prefix("0x")?;
    u64::from_str_radix(hex, 16).ok().map(Target::Addr)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuobjdump_functions_instructions_and_branches() {
        let text = "\tcode for sm_90\n\t\tFunction : k\n\t.headerflags\t@\"EF_CUDA_SM90\"\n\
            /*0000*/                   LDC R1, c[0x0][0x28] ;   /* 0x00000a00ff017b82 */\n\
            \x20                                                 /* 0x000fe20000000800 */\n\
            /*0010*/              @!P0 BRA 0x30 ;   /* 0x0 */\n\
            /*0020*/                   BRA 0x20;   /* 0x0 */\n\
            /*0030*/                   EXIT ;   /* 0x0 */\n\t\tFunction : j\n\
            /*0000*/                   NOP ;\n";
        let f = parse(text);
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].name, "k");
        assert_eq!(f[0].instrs.len(), 4);
        assert_eq!(f[0].instrs[0].text, "LDC R1, c[0x0][0x28]");
        assert_eq!(f[0].instrs[1].target, Some(0x30));
        assert_eq!(f[0].instrs[1].opcode(), "BRA");
        assert_eq!(f[0].instrs[2].target, Some(0x20));
        assert_eq!(f[1].instrs.len(), 1);
    }

    #[test]
    fn nvdisasm_labels_resolve_to_addresses() {
        let text = "\t.section\t.text.k,\"ax\",@progbits\n.text.k:\n\
            \x20       /*0000*/                   MOV R1, c[0x0][0x28] ;\n\
            .L_x_0:\n\
            \x20       /*0010*/                   IADD3 R2, R2, 0x1, RZ ;\n\
            \x20       /*0020*/               @P0 BRA `(.L_x_0) ;\n\
            \x20       /*0030*/                   BRA `(.L_x_9) ;\n\
            \x20       /*0040*/                   EXIT ;\n";
        let f = parse(text);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].name, "k");
        assert_eq!(f[0].instrs[2].target, Some(0x10));
        assert_eq!(f[0].instrs[3].target, None, "a label the function lacks");
    }
}
