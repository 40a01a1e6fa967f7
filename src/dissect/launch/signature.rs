//! Kernel parameter lists, read from the CUDA source text.

use super::*;

/// Parses the parameter lists of every `__global__` function in a CUDA source text.
pub fn parse_signatures(text: &str) -> Result<BTreeMap<String, Vec<Param>>> {
    let bad = |name: &str, why: String| Error::Launch { kernel: name.into(), reason: why };
    let mut out = BTreeMap::new();
    let mut rest = text;
    while let Some(at) = rest.find("__global__ void ") {
        rest = &rest[at + "__global__ void ".len()..];
        let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        let open = rest.find('(').ok_or_else(|| bad(&name, "no parameter list".into()))?;
        let close = rest[open..].find(')').ok_or_else(|| bad(&name, "unterminated parameter list".into()))? + open;
        let list = &rest[open + 1..close];
        let mut params = Vec::new();
        for p in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let words: Vec<&str> =
                p.split_whitespace().filter(|w| !matches!(*w, "const" | "__restrict__" | "volatile")).collect();
            let param = if p.contains('*') {
                Param::Ptr
            } else {
                match words.first().copied() {
                    Some("u32") => Param::U32,
                    Some("u64") => Param::U64,
                    other => {
                        return Err(bad(&name, format!("parameter `{p}` has a type the host cannot pass ({other:?})")));
                    }
                }
            };
            params.push(param);
        }
        out.insert(name, params);
        rest = &rest[close..];
    }
    Ok(out)
}

/// The parameter list of `kernel` in `source`, read from the embedded source text.
pub fn signature(source: Source, kernel: &str) -> Result<&'static [Param]> {
    type Parsed = std::result::Result<BTreeMap<String, Vec<Param>>, String>;
    static PARSED: OnceLock<BTreeMap<Source, Parsed>> = OnceLock::new();
    let all = PARSED.get_or_init(|| {
        [Source::Dissect, Source::SharedBanks]
            .into_iter()
            .map(|s| (s, parse_signatures(s.kernels().text).map_err(|e| e.to_string())))
            .collect()
    });
    let parsed = all.get(&source).expect("both sources parsed").as_ref().map_err(|e| refuse(kernel, e.clone()))?;
    parsed
        .get(kernel)
        .map(|v| v.as_slice())
        .ok_or_else(|| refuse(kernel, format!("no such kernel in {}", source.kernels().file_name())))
}
